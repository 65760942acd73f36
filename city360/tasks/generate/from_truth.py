"""Tasks for a synthetic city, from its exact ground truth (``groundtruth/scene.json``).

Every registered family with a ``from_truth`` generator (all seven built-ins) draws from one
:class:`~city360.tasks.generate.sources.GenerationSource`: POIs with a unique name placed on
the graph, where signs can be read, junction goals, and the scene itself (objects, facades).
What each family makes is described in its module under :mod:`city360.tasks.families`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from city360.synth.groundtruth import SceneTruth
from city360.tasks.generate.common import GenerationContext, GenerationReport
from city360.tasks.generate.sources import GenerationSource, generate_tasks, place_pois
from city360.tasks.schema import TaskBase

__all__ = ["generate_from_truth", "truth_source"]


def truth_source(ctx: GenerationContext, truth: SceneTruth) -> GenerationSource:
    """What the generators read from a synthetic city's ground truth."""
    junctions = [((j.x_m, j.y_m), j.id) for j in truth.junctions if j.degree >= 3]
    return GenerationSource(
        kind="groundtruth",
        placed=place_pois(ctx, truth.pois),
        signs=[(p.view.x_m, p.view.y_m) for p in truth.pois if p.name.strip()],
        junctions=junctions or [((j.x_m, j.y_m), j.id) for j in truth.junctions],
        truth=truth,
    )


def generate_from_truth(
    ctx: GenerationContext,
    truth: SceneTruth,
    *,
    per_family: int = 25,
    families: Sequence[str] | None = None,
    report: GenerationReport | None = None,
    on_family: Callable[[str], None] | None = None,
) -> list[TaskBase]:
    """``per_family`` tasks of each family (every registered one by default), balanced over
    difficulty where the city allows. Images go to ``ctx.assets``."""
    return generate_tasks(
        ctx,
        truth_source(ctx, truth),
        per_family=per_family,
        families=families,
        report=report,
        on_family=on_family,
    )
