"""Authoring what the reference benchmark has: free-text relation questions with a free-text
expected answer (scored by the LLM judge), and counting over a range the annotator marks on the
map (its beginning and side), in the schema and in the viewer's Author API."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from city360.eval.metrics import ScoringContext, score_answer
from city360.tasks.schema import CountStretch
from city360.tasks.stretch import CountableObject, side_of
from tests.viewer.conftest import ViewerPaths

pytest.importorskip("fastapi", reason="fastapi is needed for the viewer tests")

H = {"X-City360-Session": "session-reference-authoring"}


def _draft(client: Any, task_id: str, new_id: str) -> dict[str, Any]:
    draft = client.get(f"/api/suite/tasks/{task_id}", headers=H).json()["draft"]
    draft["id"] = new_id
    return draft


def test_stretch_json_is_unchanged_for_the_old_fields_and_carries_the_new() -> None:
    plain = CountStretch(segments=["a"], start_offset_m=0, end_offset_m=5, lateral_range_m=8)
    assert plain.model_dump() == {
        "segments": ["a"],
        "start_offset_m": 0,
        "end_offset_m": 5,
        "lateral_range_m": 8,
    }  # so the content hash of every existing suite stays the same
    marked = plain.model_copy(update={"side": "left", "marked": True})
    dumped = marked.model_dump(mode="json")
    assert (dumped["side"], dumped["marked"]) == ("left", True)
    assert CountStretch.model_validate(dumped) == marked


def test_side_of_a_street() -> None:
    # a street walked north along x = 0: west is left, east is right
    seg = SimpleNamespace(heading=lambda _offset: 0.0, position=lambda _offset: (0.0, 0.0))
    assert side_of(seg, 0.0, CountableObject("o", "tree", -3.0, 0.0)) == "left"  # type: ignore[arg-type]
    assert side_of(seg, 0.0, CountableObject("o", "tree", 3.0, 0.0)) == "right"  # type: ignore[arg-type]


def test_a_free_text_relation_is_authored_told_and_judged(
    client: Any, viewer_paths: ViewerPaths
) -> None:
    from city360.tasks.suite import load_suite

    draft = _draft(client, "rel-001", "rel-free-001")
    draft.update(
        relation="free",
        question="Which floor of the building to the left of the bakery has the cafe?",
        answer="the second floor",
    )
    checked = client.post("/api/author/verify", headers=H, json={"draft": draft}).json()
    assert checked["ok"], checked["problems"]
    assert "Answer in a few words." in checked["prompt"]
    assert "as its sign shows it" not in checked["prompt"]
    saved = client.post("/api/suite/tasks", headers=H, json={"draft": draft})
    assert saved.status_code == 201, saved.json()
    task = load_suite(viewer_paths.suite).task("rel-free-001")
    assert (task.truth.relation, task.expected_answer()) == ("free", "the second floor")

    class Judge:
        name = "llm-judge:test:judge"

        def __call__(self, question: str, answer: str, expected: str) -> bool:
            return "second" in answer and "floor" in expected

    judged = score_answer(
        task, "2nd floor? no: the second one", None, ScoringContext(judge=Judge())
    )
    assert (judged.score, judged.method) == (1.0, "llm-judge:test:judge")
    offline = score_answer(task, "not the second floor", None)
    assert (offline.score, offline.method) == (0.0, "offline-similarity")


def test_a_count_over_a_range_marked_on_the_map(client: Any, viewer_paths: ViewerPaths) -> None:
    from city360.tasks.suite import load_suite

    source = load_suite(viewer_paths.suite).task("cnt-001")
    stretch = source.truth.stretch
    draft = _draft(client, "cnt-001", "cnt-range-001")
    # the agent starts elsewhere: the range begins where the annotator jumped to on the map
    start = client.get("/api/walk", headers=H).json()["pose"]
    draft["start"] = {"segment": start["segment"], "offset_m": start["offset_m"], "yaw_deg": 0.0}
    draft["range_start"] = {"segment": stretch.segments[0], "offset_m": stretch.start_offset_m}
    draft["count_side"] = "right"
    draft["stretch"] = "along the right side of the street ahead of the range's beginning"
    checked = client.post("/api/author/verify", headers=H, json={"draft": draft}).json()
    problems = [p for p in checked.get("problems", []) if p["field"] != "answer"]
    assert problems == [], problems  # the count itself may differ for one side only
    assert "on the right side of the street" in checked["prompt"]
    draft["answer"] = str(_count_on_side(viewer_paths, source, "right"))
    saved = client.post("/api/suite/tasks", headers=H, json={"draft": draft})
    assert saved.status_code == 201, saved.json()
    task = load_suite(viewer_paths.suite).task("cnt-range-001")
    assert (task.truth.stretch.side, task.truth.stretch.marked) == ("right", True)
    assert task.truth.stretch.segments[0] == stretch.segments[0]
    edited = client.get("/api/suite/tasks/cnt-range-001", headers=H).json()["draft"]
    assert edited["count_side"] == "right"
    assert edited["range_start"]["segment"] == stretch.segments[0]
    raw = json.loads((viewer_paths.suite / "suite.json").read_text(encoding="utf-8"))
    old = next(t for t in raw["tasks"] if t["id"] == "cnt-001")
    assert "side" not in old["truth"]["stretch"]


def _count_on_side(paths: ViewerPaths, task: Any, side: str) -> int:
    from city360.streets import StreetGraph
    from city360.synth.groundtruth import SceneTruth
    from city360.tasks.families.object_count import countable_objects
    from city360.tasks.stretch import objects_in_stretch

    scene = SceneTruth.load(paths.city / "groundtruth" / "scene.json")
    stretch = task.truth.stretch.model_copy(update={"side": side})
    kind = task.told.object_kind
    graph = StreetGraph.open(paths.city)
    return len(objects_in_stretch(graph, stretch, countable_objects(scene), kind=kind))
