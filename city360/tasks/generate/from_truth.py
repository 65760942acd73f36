"""Tasks for a synthetic city, from its exact ground truth (``groundtruth/scene.json``).

All seven families:

- Localization: a random start; the answer is the grid cell it lies in.
- Landmark search (text / image): the goal is the pose in front of a POI's signboard; the
  image variant carries a view rendered from that pose looking at the sign.
- Map navigation: a route between junctions, shown on a map with a BLUE start and a RED goal.
- VLN: directions written turn by turn from the oracle's route to a POI (see ``vln_text``).
- Object count: objects of one kind along a stretch of street (see ``tasks.stretch``).
- Relational spatial reasoning: the neighbour to the left/right of a POI along its facade
  row, or the POI across the street, from the facade order in the ground truth.

Every navigation goal is reached by the oracle during generation; a candidate it cannot reach
within the step budget is rejected (and counted in the report), never kept.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from city360.errors import TaskError
from city360.synth.groundtruth import PoiTruth, SceneTruth
from city360.tasks.difficulty import (
    CountFeatures,
    LocalizationFeatures,
    RelationalFeatures,
    count_difficulty,
    localization_difficulty,
    relational_difficulty,
    route_difficulty,
)
from city360.tasks.families import get_family
from city360.tasks.generate.common import (
    GenerationContext,
    GenerationReport,
    balanced_pick,
    route_features,
)
from city360.tasks.generate.vln_text import Landmark, directions, side_of
from city360.tasks.schema import Difficulty, Family, TaskBase
from city360.tasks.stretch import (
    CountableObject,
    StretchIndex,
    describe_stretch,
    objects_in_stretch,
    stretch_length_m,
    walk_stretch,
)

__all__ = [
    "COUNT_LATERAL_RANGE_M",
    "PlacedPoi",
    "countable_objects",
    "facade_neighbours",
    "generate_from_truth",
    "landmark_tasks",
    "localization_tasks",
    "map_navigation_tasks",
    "object_count_tasks",
    "place_pois",
    "relational_tasks",
    "vln_tasks",
]

COUNT_LATERAL_RANGE_M = 12.0
"""Objects further than this from the walked line are not on the stretch (sidewalk + verge)."""

POI_ON_GRAPH_M = 4.0
"""A POI's view pose must lie this close to a filmed segment to be used."""

STEP_HEADROOM = 0.8
"""Navigation candidates must be solvable in this share of the step limit, leaving the agent
room to look around."""

CANDIDATE_FACTOR = 6
"""Candidates drawn per task wanted, before balancing difficulties."""


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


def _street_lengths(truth: SceneTruth) -> dict[frozenset[int], float]:
    return {frozenset((s.u, s.v)): s.length_m for s in truth.streets}


def facade_neighbours(
    truth: SceneTruth, *, max_gap_m: float = 40.0, max_across_m: float = 15.0
) -> dict[str, dict[str, PoiTruth]]:
    """For each POI id: its ``left_of``/``right_of`` neighbour along the same facade row as seen
    by someone facing its sign, and the POI ``across_from`` it, where unambiguous.

    Positions are put on each street's canonical direction (smaller junction id first): a POI on
    the right of that direction, faced, has its left towards the street's start.
    """
    lengths = _street_lengths(truth)
    rows: dict[tuple[frozenset[int], str], list[tuple[float, PoiTruth]]] = {}
    canon: dict[str, tuple[frozenset[int], str, float]] = {}
    for poi in truth.pois:
        u, v = poi.view.edge
        key = frozenset((u, v))
        offset, side = poi.view.offset_m, str(poi.street_side)
        if u > v:
            offset = lengths.get(key, offset) - offset
            side = "left" if side == "right" else "right"
        rows.setdefault((key, side), []).append((offset, poi))
        canon[poi.id] = (key, side, offset)
    result: dict[str, dict[str, PoiTruth]] = {}
    for (key, side), row in rows.items():
        row.sort(key=lambda item: item[0])
        for k, (offset, poi) in enumerate(row):
            rel: dict[str, PoiTruth] = {}
            before = row[k - 1] if k > 0 else None
            after = row[k + 1] if k + 1 < len(row) else None
            # Facing a sign on the right of travel you have turned right, so your left points
            # along travel, towards the street's end (larger offset); on the left, the reverse.
            towards_start = "right_of" if side == "right" else "left_of"
            towards_end = "left_of" if side == "right" else "right_of"
            if before and offset - before[0] <= max_gap_m:
                rel[towards_start] = before[1]
            if after and after[0] - offset <= max_gap_m:
                rel[towards_end] = after[1]
            other = "left" if side == "right" else "right"
            across = [
                (abs(o - offset), p)
                for o, p in rows.get((key, other), [])
                if abs(o - offset) <= max_across_m
            ]
            across.sort(key=lambda item: item[0])
            if across and (len(across) == 1 or across[1][0] - across[0][0] > 5.0):
                rel["across_from"] = across[0][1]
            result[poi.id] = rel
    return result


# --- shared candidate search ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _NavCandidate:
    start: tuple[str, float]
    goal_xy: tuple[float, float]
    result: Any
    payload: Any


def _navigation_candidates(
    ctx: GenerationContext,
    goals: Sequence[tuple[tuple[float, float], Any]],
    threshold_m: float,
    wanted: int,
    family: str,
    report: GenerationReport,
    *,
    route_threshold_m: float | None = None,
) -> list[tuple[Difficulty, _NavCandidate]]:
    candidates: list[tuple[Difficulty, _NavCandidate]] = []
    budget = int(ctx.step_limit * STEP_HEADROOM)
    attempts = wanted * CANDIDATE_FACTOR
    for _ in range(attempts):
        goal_xy, payload = goals[int(ctx.rng.integers(len(goals)))]
        start = ctx.random_start()
        sx, sy = ctx.graph.position(*start)
        if math.hypot(sx - goal_xy[0], sy - goal_xy[1]) <= 2 * threshold_m:
            report.reject(family, "start too close to the goal")
            continue
        result = ctx.oracle(start, goal_xy, route_threshold_m or threshold_m)
        if not result.reachable or (result.steps or 0) > budget:
            report.reject(family, "goal not reachable within the step budget")
            continue
        if route_threshold_m is not None:
            check = ctx.oracle(start, goal_xy, threshold_m)
            if not check.reachable:
                report.reject(family, "goal not reachable within the step budget")
                continue
        features = route_features(ctx.graph, result)
        candidates.append(
            (route_difficulty(features), _NavCandidate(start, goal_xy, result, payload))
        )
    return candidates


def _ids(prefix: str, n: int) -> list[str]:
    return [f"{prefix}-{k:03d}" for k in range(1, n + 1)]


# --- families ---------------------------------------------------------------------------------


def localization_tasks(
    ctx: GenerationContext,
    signs: Sequence[tuple[float, float]],
    n: int,
    report: GenerationReport,
    *,
    source: str,
) -> list[TaskBase]:
    """Localization tasks; ``signs`` are where named places can be read (metres)."""
    spec = get_family(Family.LOCALIZATION)
    grid_map = ctx.add_asset("grid_map", ctx.images.grid_map())
    candidates = []
    for _ in range(n * CANDIDATE_FACTOR):
        seg, offset = ctx.random_start()
        x, y = ctx.graph.position(seg, offset)
        nearest = min((math.hypot(x - px, y - py) for px, py in signs), default=math.inf)
        cell = ctx.grid.cell_of(x, y)
        margin = _border_margin(ctx, x, y, cell)
        features = LocalizationFeatures(nearest, margin)
        candidates.append((localization_difficulty(features), (seg, offset, cell, features)))
    tasks: list[TaskBase] = []
    chosen = balanced_pick(candidates, n, key=lambda c: f"{c[0]}@{round(c[1] / 10)}")
    for task_id, (level, (seg, offset, cell, features)) in zip(
        _ids(spec.short, n), chosen, strict=False
    ):
        x, y = ctx.graph.position(seg, offset)
        tasks.append(
            spec.model.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(seg, offset, yaw_deg=_random_yaw(ctx)),
                    "told": {"grid_size": ctx.grid.n, "grid_map": grid_map},
                    "truth": {"cell": cell, "x_m": round(x, 3), "y_m": round(y, 3)},
                    "step_limit": ctx.step_limit,
                    "meta": {**features.as_meta(), "source": source},
                }
            )
        )
    return tasks


def _border_margin(ctx: GenerationContext, x: float, y: float, cell: tuple[int, int]) -> float:
    """Metres to the nearest grid line, probed at 5 and 15 m in eight directions."""
    margin = 0.0
    for probe in (5.0, 15.0):
        for k in range(8):
            a = math.radians(45 * k)
            try:
                probed = ctx.grid.cell_of(x + probe * math.sin(a), y + probe * math.cos(a))
            except ValueError:  # outside the grid area: the outer edge is a grid line too
                return margin
            if probed != cell:
                return margin
        margin = probe
    return margin


def _random_yaw(ctx: GenerationContext) -> float:
    return float(ctx.rng.choice([-90.0, 0.0, 0.0, 90.0, 180.0]))


def landmark_tasks(
    ctx: GenerationContext,
    placed: Sequence[PlacedPoi],
    n: int,
    report: GenerationReport,
    *,
    family: Family,
) -> list[TaskBase]:
    spec = get_family(family)
    threshold = spec.threshold_m or 10.0
    goals = [((p.poi.view.x_m, p.poi.view.y_m), p) for p in placed]
    if not goals:
        report.notes.append(f"{family.value}: no POI with a unique name stands on a filmed street")
        return []
    candidates = _navigation_candidates(ctx, goals, threshold, n, family.value, report)
    chosen = balanced_pick(candidates, n, key=lambda c: c.payload.poi.id)
    tasks: list[TaskBase] = []
    for task_id, (level, cand) in zip(_ids(spec.short, n), chosen, strict=False):
        place: PlacedPoi = cand.payload
        poi = place.poi
        if family is Family.LANDMARK_IMAGE:
            image = ctx.images.landmark_view(
                poi.view.x_m,
                poi.view.y_m,
                heading_deg=poi.view.heading_deg,
                look_bearing_deg=poi.view.look_bearing_deg,
            )
            told: dict[str, Any] = {"reference_image": ctx.add_asset(task_id, image)}
        else:
            told = {"landmark": poi.name}
        tasks.append(
            spec.model.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(*cand.start),
                    "told": told,
                    "truth": {
                        "goal": ctx.goal(
                            poi.view.x_m,
                            poi.view.y_m,
                            threshold,
                            segment=place.segment,
                            offset_m=place.offset_m,
                        ),
                        "landmark_id": poi.id,
                        "landmark_name": poi.name,
                    },
                    "step_limit": ctx.step_limit,
                    "meta": {**route_features(ctx.graph, cand.result).as_meta()},
                }
            )
        )
    return tasks


def map_navigation_tasks(
    ctx: GenerationContext,
    goals: Sequence[tuple[tuple[float, float], Any]],
    n: int,
    report: GenerationReport,
) -> list[TaskBase]:
    """Map-navigation tasks to ``goals`` (junction positions, metres, with an id each)."""
    spec = get_family(Family.MAP_NAVIGATION)
    threshold = spec.threshold_m or 20.0
    candidates = _navigation_candidates(ctx, goals, threshold, n, spec.family.value, report)
    chosen = balanced_pick(
        candidates, n, key=lambda c: f"{c.payload}:{c.start[0]}:{round(c.start[1] / 20)}"
    )
    tasks: list[TaskBase] = []
    for task_id, (level, cand) in zip(_ids(spec.short, n), chosen, strict=False):
        start_xy = ctx.graph.position(*cand.start)
        image = ctx.images.route_map(start_xy, cand.goal_xy)
        goal_seg, goal_off, _ = ctx.graph.locate(*cand.goal_xy)
        tasks.append(
            spec.model.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(*cand.start),
                    "told": {"route_map": ctx.add_asset(task_id, image)},
                    "truth": {
                        "goal": ctx.goal(
                            cand.goal_xy[0],
                            cand.goal_xy[1],
                            threshold,
                            segment=goal_seg,
                            offset_m=goal_off,
                        ),
                        "route": list(cand.result.segments),
                    },
                    "step_limit": ctx.step_limit,
                    "meta": {
                        **route_features(ctx.graph, cand.result).as_meta(),
                        "goal_junction": cand.payload,
                    },
                }
            )
        )
    return tasks


def vln_tasks(
    ctx: GenerationContext, placed: Sequence[PlacedPoi], n: int, report: GenerationReport
) -> list[TaskBase]:
    spec = get_family(Family.VLN)
    threshold = spec.threshold_m or 10.0
    goals = [((p.poi.view.x_m, p.poi.view.y_m), p) for p in placed]
    if not goals:
        report.notes.append("VLN: no POI with a unique name stands on a filmed street")
        return []
    # The route is planned to within 2 m of the goal so that it ends on the goal's street.
    candidates = _navigation_candidates(
        ctx, goals, threshold, n, spec.family.value, report, route_threshold_m=2.0
    )
    chosen = balanced_pick(candidates, n, key=lambda c: f"{c.payload.poi.id}:{c.start[0]}")
    landmarks = [p.landmark for p in placed]
    tasks: list[TaskBase] = []
    for task_id, (level, cand) in zip(_ids(spec.short, n), chosen, strict=False):
        place: PlacedPoi = cand.payload
        final_seg, final_off = cand.result.final
        heading = ctx.graph.segment(final_seg).heading(final_off)
        fx, fy = ctx.graph.position(final_seg, final_off)
        side = side_of(heading, place.poi.x_m - fx, place.poi.y_m - fy)
        lines = directions(
            ctx.graph, cand.result.segments, place.landmark, side, landmarks=landmarks
        )
        tasks.append(
            spec.model.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(*cand.start),
                    "told": {"instructions": lines},
                    "truth": {
                        "goal": ctx.goal(
                            place.poi.view.x_m,
                            place.poi.view.y_m,
                            threshold,
                            segment=place.segment,
                            offset_m=place.offset_m,
                        ),
                        "route": list(cand.result.segments),
                        "goal_landmark_id": place.poi.id,
                    },
                    "step_limit": ctx.step_limit,
                    "meta": {**route_features(ctx.graph, cand.result).as_meta(), "goal_side": side},
                }
            )
        )
    return tasks


def countable_objects(truth: SceneTruth) -> list[CountableObject]:
    return [CountableObject(o.id, o.kind, o.x_m, o.y_m) for o in truth.objects]


def object_count_tasks(
    ctx: GenerationContext,
    objects: Sequence[CountableObject],
    n: int,
    report: GenerationReport,
    *,
    source: str,
) -> list[TaskBase]:
    spec = get_family(Family.OBJECT_COUNT)
    kinds = sorted({o.kind for o in objects})
    if not kinds:
        report.notes.append("ObjectCount: the city has no countable objects")
        return []
    index = StretchIndex(ctx.graph)
    candidates = []
    for _ in range(n * CANDIDATE_FACTOR):
        seg, offset = ctx.random_start()
        through = int(ctx.rng.choice([0, 0, 1, 1, 2]))
        stretch = walk_stretch(
            ctx.graph, seg, offset, through=through, lateral_range_m=COUNT_LATERAL_RANGE_M
        )
        if stretch is None:
            report.reject(spec.family.value, "no straight stretch of that length ahead")
            continue
        kind = kinds[int(ctx.rng.integers(len(kinds)))]
        ids = objects_in_stretch(ctx.graph, stretch, objects, kind=kind, index=index)
        length = stretch_length_m(ctx.graph, stretch)
        if length > ctx.step_limit * STEP_HEADROOM * max(ctx.move_m) / 2:
            report.reject(spec.family.value, "stretch too long to walk in the step budget")
            continue
        features = CountFeatures(len(ids), length)
        candidates.append((count_difficulty(features), (stretch, kind, ids, features)))
    chosen = balanced_pick(
        candidates,
        n,
        key=lambda c: f"{c[0].segments[0]}:{round(c[0].start_offset_m / 10)}:{c[1]}",
    )
    tasks: list[TaskBase] = []
    for task_id, (level, (stretch, kind, ids, features)) in zip(
        _ids(spec.short, n), chosen, strict=False
    ):
        tasks.append(
            spec.model.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(stretch.segments[0], stretch.start_offset_m),
                    "told": {"object_kind": kind, "stretch": describe_stretch(ctx.graph, stretch)},
                    "truth": {"count": len(ids), "object_ids": ids, "stretch": stretch},
                    "step_limit": ctx.step_limit,
                    "meta": {**features.as_meta(), "source": source},
                }
            )
        )
    return tasks


_QUESTIONS: dict[str, str] = {
    "left_of": (
        "Go to {anchor} and stand facing its sign. What is the name of the place right next "
        "to it on your left?"
    ),
    "right_of": (
        "Go to {anchor} and stand facing its sign. What is the name of the place right next "
        "to it on your right?"
    ),
    "across_from": "What is the name of the place directly across the street from {anchor}?",
}


def relational_tasks(
    ctx: GenerationContext,
    truth: SceneTruth,
    placed: Sequence[PlacedPoi],
    n: int,
    report: GenerationReport,
) -> list[TaskBase]:
    spec = get_family(Family.RELATIONAL)
    unique = {p.poi.id: p for p in placed}
    neighbours = facade_neighbours(truth)
    pairs: list[tuple[PlacedPoi, str, PoiTruth]] = []
    for poi_id, rel in sorted(neighbours.items()):
        if poi_id not in unique:
            continue
        for relation, other in sorted(rel.items()):
            if other.id in unique:
                pairs.append((unique[poi_id], relation, other))
    if not pairs:
        report.notes.append("RelationalSpatial: no pair of uniquely named neighbouring places")
        return []
    candidates = []
    for attempt in range(n * CANDIDATE_FACTOR):
        anchor, relation, other = pairs[int(ctx.rng.integers(len(pairs)))]
        if attempt % 3 == 0:
            # Random starts rarely fall near an anchor; a third start a short walk before it,
            # on its street, so the Easy level gets candidates too.
            before = float(ctx.rng.uniform(5.0, 90.0))
            start = (anchor.segment, round(max(0.5, anchor.offset_m - before), 1))
        else:
            start = ctx.random_start()
        goal = (anchor.poi.view.x_m, anchor.poi.view.y_m)
        result = ctx.oracle(start, goal, 5.0)
        if not result.reachable or (result.steps or 0) > ctx.step_limit * STEP_HEADROOM:
            report.reject(spec.family.value, "anchor not reachable within the step budget")
            continue
        features = RelationalFeatures(result.path_m, relation)
        candidates.append(
            (relational_difficulty(features), (start, anchor, relation, other, features))
        )
    chosen = balanced_pick(candidates, n, key=lambda c: f"{c[1].poi.id}:{c[2]}")
    tasks: list[TaskBase] = []
    for task_id, (level, (start, anchor, relation, other, features)) in zip(
        _ids(spec.short, n), chosen, strict=False
    ):
        tasks.append(
            spec.model.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(*start),
                    "told": {"question": _QUESTIONS[relation].format(anchor=anchor.poi.name)},
                    "truth": {
                        "answer": other.name,
                        "answer_id": other.id,
                        "relation": relation,
                        "anchor_id": anchor.poi.id,
                        "anchor_name": anchor.poi.name,
                    },
                    "step_limit": ctx.step_limit,
                    "meta": features.as_meta(),
                }
            )
        )
    return tasks


def generate_from_truth(
    ctx: GenerationContext,
    truth: SceneTruth,
    *,
    per_family: int = 25,
    families: Sequence[Family] | None = None,
    report: GenerationReport | None = None,
    on_family: Callable[[Family], None] | None = None,
) -> list[TaskBase]:
    """``per_family`` tasks of each family (all seven by default), balanced over difficulty
    where the city allows. Images go to ``ctx.assets``."""
    if per_family < 1:
        msg = f"`per_family` must be >= 1, got {per_family}"
        raise TaskError(msg)
    report = report if report is not None else GenerationReport()
    placed = place_pois(ctx, truth.pois)
    signs = [(p.view.x_m, p.view.y_m) for p in truth.pois if p.name.strip()]
    junctions = [((j.x_m, j.y_m), j.id) for j in truth.junctions if j.degree >= 3]
    junctions = junctions or [((j.x_m, j.y_m), j.id) for j in truth.junctions]
    makers: dict[Family, Callable[[], list[TaskBase]]] = {
        Family.LOCALIZATION: lambda: localization_tasks(
            ctx, signs, per_family, report, source="groundtruth"
        ),
        Family.LANDMARK_TEXT: lambda: landmark_tasks(
            ctx, placed, per_family, report, family=Family.LANDMARK_TEXT
        ),
        Family.LANDMARK_IMAGE: lambda: landmark_tasks(
            ctx, placed, per_family, report, family=Family.LANDMARK_IMAGE
        ),
        Family.MAP_NAVIGATION: lambda: map_navigation_tasks(ctx, junctions, per_family, report),
        Family.VLN: lambda: vln_tasks(ctx, placed, per_family, report),
        Family.OBJECT_COUNT: lambda: object_count_tasks(
            ctx, countable_objects(truth), per_family, report, source="groundtruth"
        ),
        Family.RELATIONAL: lambda: relational_tasks(ctx, truth, placed, per_family, report),
    }
    tasks: list[TaskBase] = []
    for family in families or list(Family):
        made = makers[family]()
        report.made[family.value] = len(made)
        if len(made) < per_family:
            report.notes.append(
                f"{family.value}: made {len(made)} of {per_family} (the city offers no more "
                "distinct candidates)"
            )
        tasks.extend(made)
        if on_family is not None:
            on_family(family)
    return tasks
