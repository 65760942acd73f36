"""Relational spatial reasoning: name the place left of / right of / across from another.

Scored by fuzzy_match (an LLM judge where one is configured, else the offline similarity).
Made from ground truth only: OSM point positions do not give the order of facades along a
street reliably. The facade order comes from :func:`facade_neighbours`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from city360.tasks.difficulty import RelationalFeatures, relational_difficulty
from city360.tasks.families._registry import FamilySpec
from city360.tasks.schema import Family, Metric, MetricName, PromptRules, TaskBase, Told, Truth

if TYPE_CHECKING:
    from city360.synth.groundtruth import PoiTruth, SceneTruth
    from city360.tasks.check import CheckContext, CheckIssue
    from city360.tasks.generate.common import GenerationContext, GenerationReport
    from city360.tasks.generate.sources import GenerationSource, PlacedPoi
    from city360.viewer.authoring import DraftForm

__all__ = [
    "SPEC",
    "RelationalSpatialTask",
    "RelationalTold",
    "RelationalTruth",
    "facade_neighbours",
    "generate",
]


class RelationalTold(Told):
    question: str = Field(min_length=1)


class RelationalTruth(Truth):
    answer: str = Field(min_length=1)
    answer_id: str | None = None
    relation: Literal["left_of", "right_of", "across_from", "free"]
    """``free``: an annotator's free-text relation ("three doors to the left of X", "which
    floor ..."), whose free-text answer only an LLM judge can score reliably."""
    anchor_id: str
    anchor_name: str

    def expected(self) -> str:
        return self.answer


class RelationalSpatialTask(TaskBase):
    EXPECTED_METRIC: ClassVar[str | None] = MetricName.FUZZY_MATCH
    PROMPT_TEMPLATE: ClassVar[str] = (
        "{question} Walk and look around as much as you need. Answer with the name of the "
        "place, written as on its sign."
    )
    ANSWER_FORMAT: ClassVar[str] = "ANSWER with the name of the place, exactly as its sign shows it"
    FREE_PROMPT_TEMPLATE: ClassVar[str] = (
        "{question} Walk and look around as much as you need. Answer in a few words."
    )
    FREE_ANSWER_FORMAT: ClassVar[str] = "ANSWER in a few words"
    family: Literal[Family.RELATIONAL] = Family.RELATIONAL
    told: RelationalTold
    truth: RelationalTruth
    metric: Metric = Metric(name=MetricName.FUZZY_MATCH)

    def prompt_template(self) -> str:
        """A free-text relation asks for a free-text answer, not a sign's name."""
        if self.truth.relation == "free":
            return type(self).FREE_PROMPT_TEMPLATE
        return type(self).PROMPT_TEMPLATE

    def answer_format_for(self, rules: PromptRules) -> str:
        if self.truth.relation == "free":
            return type(self).FREE_ANSWER_FORMAT
        return type(self).ANSWER_FORMAT


def generate(
    ctx: GenerationContext, source: GenerationSource, n: int, report: GenerationReport
) -> list[TaskBase]:
    if source.truth is None:
        report.notes.append("RelationalSpatial: needs the facade order of a city's ground truth")
        return []
    return relational_tasks(ctx, source.truth, source.placed, n, report)


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
    from city360.tasks.generate.candidates import CANDIDATE_FACTOR, STEP_HEADROOM, task_ids
    from city360.tasks.generate.common import balanced_pick

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
            report.reject(SPEC.name, "anchor not reachable within the step budget")
            continue
        features = RelationalFeatures(result.path_m, relation)
        candidates.append(
            (relational_difficulty(features), (start, anchor, relation, other, features))
        )
    chosen = balanced_pick(candidates, n, key=lambda c: f"{c[1].poi.id}:{c[2]}")
    tasks: list[TaskBase] = []
    for task_id, (level, (start, anchor, relation, other, features)) in zip(
        task_ids(SPEC.short, n), chosen, strict=False
    ):
        tasks.append(
            RelationalSpatialTask.model_validate(
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


# --- check ------------------------------------------------------------------------------------


def check(task: TaskBase, checker: CheckContext) -> list[CheckIssue]:
    """Where the city has ground truth, the answer is the anchor's neighbour in the relation."""
    from city360.tasks.check import CheckIssue

    truth = task.truth
    scene = checker.truth
    if not isinstance(truth, RelationalTruth):
        return []
    if truth.relation == "free":
        checker.skip("free-text relations: no ground truth to check; an LLM judge scores them")
        return []
    if scene is None:
        checker.skip("relations: the city has no facade ground truth")
        return []
    neighbours = checker.cached("facade_neighbours", lambda: facade_neighbours(scene))
    other = neighbours.get(truth.anchor_id, {}).get(truth.relation)
    name = None if other is None else other.name
    if name != truth.answer:
        return [
            CheckIssue(
                task.id,
                "truth.answer",
                f"{truth.relation} {truth.anchor_name!r} the ground truth has "
                f"{name!r}, not {truth.answer!r}",
            )
        ]
    return []


# --- authoring --------------------------------------------------------------------------------


def author(form: DraftForm) -> tuple[dict[str, Any], dict[str, Any]]:
    from city360.tasks.families._landmark import slug

    question, answer, anchor = form.text("question"), form.text("answer"), form.text("anchor")
    for name, value, hint in (
        ("question", question, "write the question the agent is asked"),
        ("answer", answer, "give the place's name as its sign shows it"),
        ("anchor", anchor, "name the place the question is about"),
    ):
        if not value:
            form.problem(name, hint)
    relation = form.draft.relation
    if relation is None:
        form.problem("relation", "pick left_of, right_of, across_from or free (free text)")
    truth = {
        "answer": answer or "?",
        "relation": relation or "left_of",
        "anchor_id": f"viewer:{slug(anchor)}",
        "anchor_name": anchor or "?",
    }
    return {"question": question or "?"}, truth


def draft_fields(task: TaskBase) -> dict[str, Any]:
    told, truth = task.told.model_dump(), task.truth.model_dump()
    return {
        "question": told["question"],
        "answer": truth["answer"],
        "relation": truth["relation"],
        "anchor": truth["anchor_name"],
    }


SPEC = FamilySpec(
    results_name="RelationalSpatialReasoning",
    model=RelationalSpatialTask,
    short="rel",
    from_truth=generate,
    osm_note="OSM point positions do not give the order of facades",
    check=check,
    author=author,
    draft_fields=draft_fields,
)
