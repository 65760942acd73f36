"""What a generator draws tasks from: a :class:`GenerationSource` built once per suite from a
synthetic city's ground truth or a real city's OSM places, and the POIs placed on the graph.

Family generators (``FamilySpec.from_truth`` / ``from_osm``) read only the source and the
:class:`~city360.tasks.generate.common.GenerationContext`, so one generator serves both kinds
of city where the truth allows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from city360.errors import TaskError
from city360.tasks.generate.common import GenerationContext, GenerationReport
from city360.tasks.generate.vln_text import Landmark
from city360.tasks.schema import TaskBase

if TYPE_CHECKING:
    from city360.synth.groundtruth import PoiTruth, SceneTruth

__all__ = ["POI_ON_GRAPH_M", "GenerationSource", "PlacedPoi", "generate_tasks", "place_pois"]

POI_ON_GRAPH_M = 4.0
"""A POI's view pose must lie this close to a filmed segment to be used."""


@dataclass(frozen=True, slots=True)
class GenerationSource:
    """The truth a suite is generated from.

    ``kind`` is ``"groundtruth"`` (a synthetic city: ``truth`` is its scene), ``"osm"`` (a
    real city: places from its OSM extract, possibly none) or ``"graph"`` (a real city built
    without OSM: only its own graph). ``placed`` are POIs with a unique
    name standing on a filmed street, ``signs`` where named places can be read (metres),
    ``junctions`` goal candidates ``((x_m, y_m), id)``.
    """

    kind: str
    placed: Sequence[PlacedPoi] = ()
    signs: Sequence[tuple[float, float]] = ()
    junctions: Sequence[tuple[tuple[float, float], Any]] = ()
    truth: SceneTruth | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Anything else a plugin family's generator wants to carry."""


@dataclass(frozen=True, slots=True)
class PlacedPoi:
    """A POI located on the pose graph: ``segment``/``offset_m`` of its view pose."""

    poi: PoiTruth
    segment: str
    offset_m: float

    @property
    def landmark(self) -> Landmark:
        return Landmark(self.poi.id, self.poi.name, self.poi.x_m, self.poi.y_m)


def place_pois(ctx: GenerationContext, pois: Sequence[PoiTruth]) -> list[PlacedPoi]:
    """POIs whose name is unique in the city and whose view pose lies on a filmed segment."""
    names = Counter(p.name.strip().casefold() for p in pois)
    placed = []
    for poi in pois:
        if names[poi.name.strip().casefold()] != 1 or not poi.name.strip():
            continue
        try:
            seg, offset, dist = ctx.graph.locate(
                poi.view.x_m, poi.view.y_m, heading_deg=poi.view.heading_deg
            )
        except TaskError:
            continue
        if dist <= POI_ON_GRAPH_M:
            placed.append(PlacedPoi(poi, seg, offset))
    return placed


def generate_tasks(
    ctx: GenerationContext,
    source: GenerationSource,
    *,
    per_family: int = 25,
    families: Sequence[str] | None = None,
    report: GenerationReport | None = None,
    on_family: Callable[[str], None] | None = None,
) -> list[TaskBase]:
    """``per_family`` tasks of each family (every registered one by default) that ``source``
    can carry: ``FamilySpec.from_truth`` for a synthetic city, ``from_osm`` for a real one."""
    from city360.tasks.families import all_families, get_family

    if per_family < 1:
        msg = f"`per_family` must be >= 1, got {per_family}"
        raise TaskError(msg)
    report = report if report is not None else GenerationReport()
    from_truth = source.kind == "groundtruth"
    specs = [get_family(name) for name in families] if families else all_families()
    tasks: list[TaskBase] = []
    for spec in specs:
        make = spec.from_truth if from_truth else spec.from_osm
        if make is None:
            where = "from ground truth" if from_truth else "for a real city"
            reason = spec.osm_note if not from_truth and spec.osm_note else "it has no generator"
            report.notes.append(f"{spec.name}: not generated {where}; {reason}")
            report.made[spec.name] = 0
            continue
        made = make(ctx, source, per_family, report)
        report.made[spec.name] = len(made)
        # a real city's family that made none already says why in its own note
        if len(made) < per_family and (from_truth or made):
            report.notes.append(
                f"{spec.name}: made {len(made)} of {per_family} (the city offers no more "
                "distinct candidates)"
            )
        tasks.extend(made)
        if on_family is not None:
            on_family(spec.name)
    return tasks
