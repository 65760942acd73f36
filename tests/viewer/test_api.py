"""The viewer's HTTP API through FastAPI's TestClient: walk, author, play, and refusals."""

from __future__ import annotations

import base64
import csv
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.viewer.conftest import LOCAL_URL, ViewerPaths, make_config

pytest.importorskip("fastapi", reason="fastapi is needed for the viewer tests")

FAMILY_EXAMPLES = {
    "Localization": "loc-001",
    "LandmarkSearchText": "lmt-001",
    "LandmarkSearchImage": "lmi-001",
    "MapNavigation": "map-001",
    "VLN": "vln-001",
    "ObjectCount": "cnt-001",
    "RelationalSpatial": "rel-001",
}


def headers(name: str) -> dict[str, str]:
    return {"X-City360-Session": f"session-{name}"}


def pixels(url: str) -> np.ndarray:
    import cv2

    data = base64.b64decode(url.split(",", 1)[1])
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    return np.asarray(image, dtype=np.int16)


def suite_json(paths: ViewerPaths) -> dict[str, Any]:
    return json.loads((paths.suite / "suite.json").read_text(encoding="utf-8"))


# --- pages --------------------------------------------------------------------------------


def test_the_osm_credit_follows_the_city_s_maps(
    client: Any, viewer_paths: ViewerPaths, tmp_path: Path
) -> None:
    """The page's footer said "Map data © OpenStreetMap contributors" on every city, one
    drawn only from the user's own walks too (issue 17, newuser4). The page shows the credit
    the city's maps carry."""
    from fastapi.testclient import TestClient

    from city360.city import CityDir
    from city360.viewer.app import create_app

    assert "OpenStreetMap" not in client.get("/").text  # filled in from /api/info
    assert client.get("/api/info").json()["attribution"] == "© OpenStreetMap contributors"
    # the same walks without any OSM data: no credit
    own = tmp_path / "own"
    own.mkdir()
    (own / "trajectories").symlink_to(viewer_paths.city / "trajectories")
    shutil.copyfile(viewer_paths.city / "graph.json", own / "graph.json")
    manifest = CityDir(viewer_paths.city).read_manifest()
    sources = [s for s in manifest.sources if s.kind not in ("osm", "route")]
    CityDir(own).write_manifest(manifest.model_copy(update={"sources": sources}))
    paths = ViewerPaths(city=own, suite=viewer_paths.suite, outputs=tmp_path / "outputs")
    with TestClient(create_app(make_config(paths)), base_url=LOCAL_URL) as other:  # type: ignore[arg-type]
        assert other.get("/api/info").json()["attribution"] is None


def test_page_static_and_security_headers(client: Any) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert '<script type="importmap"' in page.text
    assert "/static/app.js" in page.text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self' 'nonce-" in csp
    assert "connect-src 'self'" in csp
    assert page.headers["x-frame-options"] == "DENY"
    script = client.get("/static/app.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert client.get("/static/nope.js").status_code == 404
    assert client.get("/no/such/page").json() == {"error": "not found"}
    wrong_method = client.put("/api/walk/step", json={})
    assert wrong_method.status_code == 405
    assert wrong_method.json() == {"error": "Method Not Allowed"}
    assert client.get("/api/basemap.png").headers["content-type"] == "image/png"


def test_api_requires_a_session_id(client: Any) -> None:
    response = client.get("/api/walk")
    assert response.status_code == 400
    assert "X-City360-Session" in response.json()["error"]
    bad = client.get("/api/walk", headers={"X-City360-Session": "../x"})
    assert bad.status_code == 400


# --- walk ---------------------------------------------------------------------------------


def test_walk_moves_and_turns(client: Any) -> None:
    h = headers("walk")
    first = client.get("/api/walk", headers=h).json()
    assert set(first["pose"]) >= {"lat", "lon", "segment", "heading_deg", "yaw_deg", "pitch_deg"}
    assert first["map"].startswith("data:image/png;base64,")
    turned = client.post("/api/walk/step", headers=h, json={"action": "d", "magnitude": "large"})
    assert turned.status_code == 200
    assert turned.json()["pose"]["yaw_deg"] == pytest.approx(90.0, abs=0.5)
    assert np.abs(pixels(turned.json()["view"]) - pixels(first["view"])).mean() > 5
    client.post("/api/walk/step", headers=h, json={"action": "S"})
    walked = client.post("/api/walk/step", headers=h, json={"action": "W", "magnitude": "SMALL"})
    pose = walked.json()["pose"]
    moved = pose["segment"] != first["pose"]["segment"] or (
        pose["offset_m"] > first["pose"]["offset_m"]
    )
    assert moved or "junction" in walked.json()["feedback"].lower()


def test_walk_takes_a_branch(client: Any) -> None:
    h = headers("branch")
    state = client.get("/api/walk", headers=h).json()
    for _ in range(40):
        if any(state["branches"].values()):
            break
        state = client.post(
            "/api/walk/step", headers=h, json={"action": "W", "magnitude": "LARGE"}
        ).json()
    offered = [label for label, on in state["branches"].items() if on]
    assert offered, "no junction reached in 40 LARGE steps"
    before = state["pose"]["segment"]
    after = client.post("/api/walk/step", headers=h, json={"action": offered[0]}).json()
    assert after["pose"]["segment"] != before
    assert after["pose"]["offset_m"] == pytest.approx(0.0, abs=0.5)


def test_walk_goto_map_pixel_and_pose(client: Any, viewer_paths: ViewerPaths) -> None:
    from city360.tasks.suite import load_suite

    h = headers("goto")
    task = load_suite(viewer_paths.suite).task("map-001")
    target = client.post(
        "/api/walk/goto",
        headers=h,
        json={"segment": task.start.segment, "offset_m": task.start.offset_m},
    ).json()["pose"]
    assert target["segment"] == task.start.segment
    assert abs(target["offset_m"] - task.start.offset_m) < 1.5
    assert target["lat"] == pytest.approx(task.start.lat, abs=3e-5)
    client.post("/api/walk/step", headers=h, json={"action": "W", "magnitude": "LARGE"})
    col, row = target["map_px"]
    clicked = client.post("/api/walk/goto", headers=h, json={"col": col, "row": row}).json()
    gap = np.hypot(clicked["pose"]["x_m"] - target["x_m"], clicked["pose"]["y_m"] - target["y_m"])
    assert gap < 3.0


def test_walk_refusals(client: Any) -> None:
    h = headers("refuse")
    answer = client.post("/api/walk/step", headers=h, json={"action": "ANSWER", "answer": "x"})
    assert answer.status_code == 400
    assert "only offered on the Play screen" in answer.json()["error"]
    unknown = client.post("/api/walk/step", headers=h, json={"action": "WW"})
    assert unknown.status_code == 400
    assert "Did you mean 'W'?" in unknown.json()["error"]
    off = client.post("/api/walk/goto", headers=h, json={"segment": "no-such-edge"})
    assert off.status_code == 400
    assert "not in the pose graph" in off.json()["error"]
    both = client.post("/api/walk/goto", headers=h, json={"segment": "x", "lat": 1.0, "lon": 2.0})
    assert both.status_code == 422
    extra = client.post("/api/walk/step", headers=h, json={"action": "W", "sneaky": 1})
    assert extra.status_code == 422
    assert extra.json()["problems"][0]["field"] == "sneaky"


# --- author -------------------------------------------------------------------------------


def draft_from(client: Any, task_id: str, new_id: str) -> dict[str, Any]:
    draft = client.get(f"/api/suite/tasks/{task_id}").json()["draft"]
    draft["id"] = new_id
    return draft


@pytest.mark.parametrize("family", list(FAMILY_EXAMPLES))
def test_author_saves_each_family(client: Any, viewer_paths: ViewerPaths, family: str) -> None:
    from city360.tasks.suite import load_suite

    h = headers("author")
    new_id = f"authored-{family.lower()}"
    draft = draft_from(client, FAMILY_EXAMPLES[family], new_id)
    if family == "LandmarkSearchImage":
        client.post("/api/walk/goto", headers=h, json=draft["start"])
        shot = client.post("/api/author/capture", headers=h).json()
        assert shot["image"].startswith("data:image/jpeg;base64,")
        draft.pop("reference_image")
        draft["reference_capture"] = shot["capture"]
    checked = client.post("/api/author/verify", headers=h, json={"draft": draft}).json()
    assert checked["ok"], checked["problems"]
    assert checked["prompt"].splitlines()[-1].startswith("Answer format:")
    if family in ("MapNavigation", "LandmarkSearchImage"):  # drawn / captured for this draft
        assert [i[:22] for i in checked["images"]] == ["data:image/png;base64,"]
    elif family == "Localization":
        assert checked["images"] == ["/api/suite/asset?path=assets/grid_map.png"]
    else:
        assert checked["images"] == []
    saved = client.post("/api/suite/tasks", headers=h, json={"draft": draft})
    assert saved.status_code == 201, saved.json()
    suite = load_suite(viewer_paths.suite)  # validates the written suite
    task = suite.task(new_id)
    assert task.family.value == family
    assert task.start.segment == draft["start"]["segment"]
    for image in task.reference_image_paths():
        assert (viewer_paths.suite / image).is_file()
    if family == "LandmarkSearchImage":
        assert task.reference_image_paths() == [f"assets/{new_id}.png"]
    listed = client.get("/api/suite").json()["tasks"]
    assert {"id": new_id, "family": family, "difficulty": task.difficulty.value} in listed


def test_author_edit_and_delete(client: Any, viewer_paths: ViewerPaths) -> None:
    h = headers("edit")
    draft = draft_from(client, "map-002", "edit-me")
    assert client.post("/api/suite/tasks", headers=h, json={"draft": draft}).status_code == 201
    again = client.post("/api/suite/tasks", headers=h, json={"draft": draft})
    assert again.status_code == 422
    assert again.json()["problems"][0]["field"] == "id"
    draft["difficulty"] = "Hard"
    draft["id"] = "edited"
    replaced = client.post(
        "/api/suite/tasks", headers=h, json={"draft": draft, "replacing": "edit-me"}
    )
    assert replaced.status_code == 201
    ids = [t["id"] for t in suite_json(viewer_paths)["tasks"]]
    assert "edited" in ids
    assert "edit-me" not in ids
    assert (viewer_paths.suite / "assets" / "edited.png").is_file()
    assert not (viewer_paths.suite / "assets" / "edit-me.png").exists()
    assert client.delete("/api/suite/tasks/edited").status_code == 200
    assert "edited" not in [t["id"] for t in suite_json(viewer_paths)["tasks"]]
    assert not (viewer_paths.suite / "assets" / "edited.png").exists()
    missing = client.delete("/api/suite/tasks/edited")
    assert missing.status_code == 404
    assert "has no task 'edited'" in missing.json()["error"]


def problems_of(response: Any) -> dict[str, str]:
    assert response.status_code == 422, response.json()
    return {p["field"]: p["message"] for p in response.json()["problems"]}


def test_invalid_tasks_are_refused_with_the_field(client: Any, viewer_paths: ViewerPaths) -> None:
    h = headers("invalid")
    before = (viewer_paths.suite / "suite.json").read_bytes()

    def save(draft: dict[str, Any]) -> dict[str, str]:
        return problems_of(client.post("/api/suite/tasks", headers=h, json={"draft": draft}))

    bad_id = draft_from(client, "loc-001", "has space")
    refused = client.post("/api/suite/tasks", headers=h, json={"draft": bad_id})
    assert refused.status_code == 400  # ids are checked before the form: see tests/reliability
    assert "a task id is a slug" in refused.json()["problems"][0]["message"]
    wrong_cell = draft_from(client, "loc-001", "wrong-cell")
    wrong_cell["answer"] = "x:9 y:9"
    assert "is not the start's grid cell" in save(wrong_cell)["answer"]
    not_a_cell = draft_from(client, "loc-001", "not-a-cell")
    not_a_cell["answer"] = "somewhere"
    assert "not of the form x:i y:j" in save(not_a_cell)["answer"]
    far = draft_from(client, "map-003", "too-far")
    far["step_limit"] = 2
    assert "goal unreachable" in save(far)["goal"]
    no_goal = draft_from(client, "vln-001", "no-goal")
    no_goal.pop("goal")
    assert "pick a goal" in save(no_goal)["goal"]
    count = draft_from(client, "cnt-001", "bad-count")
    count["answer"] = "lots"
    assert "whole number" in save(count)["answer"]
    relation = draft_from(client, "rel-001", "no-answer")
    relation["answer"] = " "
    assert "sign shows it" in save(relation)["answer"]
    off_graph = draft_from(client, "lmt-001", "off-graph")
    off_graph["start"]["segment"] = "nowhere"
    assert "off the graph" in save(off_graph)["start"]
    image = draft_from(client, "lmi-001", "stale-capture")
    image.pop("reference_image")
    image["reference_capture"] = "deadbeefdeadbeef"
    assert "expired" in save(image)["reference_capture"]
    assert (viewer_paths.suite / "suite.json").read_bytes() == before


def test_paths_outside_the_suite_are_refused(
    client: Any, viewer_paths: ViewerPaths, tmp_path: Path
) -> None:
    h = headers("paths")
    ok = client.get("/api/suite/asset", params={"path": "assets/grid_map.png"})
    assert ok.status_code == 200
    assert ok.headers["content-type"] == "image/png"
    for path in ("../suite.json", "assets/../../x.png", "/etc/passwd", "assets\\x.png"):
        refused = client.get("/api/suite/asset", params={"path": path})
        assert refused.status_code == 400, path
        assert (
            "inside suite/" in refused.json()["error"] or "relative path" in refused.json()["error"]
        )
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG not yours")
    link = viewer_paths.suite / "assets" / "link.png"
    link.symlink_to(secret)
    try:
        escaped = client.get("/api/suite/asset", params={"path": "assets/link.png"})
        assert escaped.status_code == 403
        assert "outside suite/" in escaped.json()["error"]
    finally:
        link.unlink()
    draft = draft_from(client, "lmi-002", "sneaky-image")
    draft["reference_image"] = "../../../etc/passwd"
    refused = client.post("/api/suite/tasks", headers=h, json={"draft": draft})
    assert refused.status_code == 400
    assert "holds '..'" in refused.json()["error"]
    assert client.get("/static/..%2Fapp.py").status_code in (400, 404)


# --- play ---------------------------------------------------------------------------------


def test_a_tab_that_plays_no_task_is_told_so_without_an_error(client: Any) -> None:
    """The Play screen asks which task its tab plays; with none it got a 409, which the page
    handled but the browser logged as an error (issue 17, round twenty-one: newuser4)."""
    current = client.get("/api/play", headers=headers("newcomer"))
    assert current.status_code == 200
    assert current.json() == {"mode": "play", "task_id": None}


def test_play_to_answer_writes_a_result_row(client: Any, viewer_paths: ViewerPaths) -> None:
    from city360.eval.report import write_report
    from city360.eval.results import read_results
    from city360.tasks.suite import load_suite

    h = headers("player")
    task = load_suite(viewer_paths.suite).task("loc-002")
    started = client.post("/api/play/start", headers=h, json={"task_id": task.id})
    assert started.status_code == 200
    body = started.json()
    assert "x:1 y:1" not in body["prompt"] or "form x:i y:j" in body["prompt"]
    assert body["images"] == ["/api/suite/asset?path=assets/grid_map.png"]
    assert "pose" not in body
    assert not {"lat", "lon", "segment", "x_m", "expected"} & set(body)
    assert client.get("/api/walk", headers=h).status_code == 409  # no pose while playing
    step = client.post("/api/play/step", headers=h, json={"action": "D", "magnitude": "SMALL"})
    assert step.json()["step"] == 1
    assert "pose" not in step.json()
    done = client.post(
        "/api/play/step", headers=h, json={"action": "ANSWER", "answer": task.expected_answer()}
    ).json()
    assert done["done"]
    assert done["outcome"]["score"] == 1.0
    assert done["outcome"]["status"] == "answered"
    rows = read_results(viewer_paths.run_dir / "results.csv")
    row = next(r for r in rows if r.task_id == task.id)
    assert (row.agent, row.status, row.is_correct, row.steps) == ("human", "answered", True, 2)
    with open(viewer_paths.run_dir / "results.csv", encoding="utf-8") as handle:
        from city360.eval.results import RESULT_COLUMNS

        assert tuple(next(csv.reader(handle))) == RESULT_COLUMNS
    log = (viewer_paths.run_dir / "episodes" / f"{task.id}.jsonl").read_text().splitlines()
    assert json.loads(log[0])["type"] == "episode"
    assert [json.loads(line).get("action") for line in log[2:]] == ["D", "ANSWER"]
    metadata = json.loads((viewer_paths.run_dir / "run_metadata.json").read_text())
    assert metadata["agent"]["kind"] == "human"
    assert metadata["suite_hash"] == load_suite(viewer_paths.suite).content_hash()
    assert (write_report(viewer_paths.run_dir, city_dir=viewer_paths.city)).is_file()
    replay = client.post("/api/play/start", headers=h, json={"task_id": task.id})
    assert replay.status_code == 409
    assert "already played" in replay.json()["error"]
    listed = {t["id"]: t for t in client.get("/api/play/tasks").json()["tasks"]}
    assert listed[task.id]["played"]
    assert listed[task.id]["score"] == 1.0
    assert client.get("/api/walk", headers=h).status_code == 200  # walking resumes


def test_play_navigation_scores_by_position_and_stops(
    client: Any, viewer_paths: ViewerPaths
) -> None:
    from city360.eval.results import read_results

    h = headers("stopper")
    draft = draft_from(client, "loc-003", "short-limit")
    draft["step_limit"] = 3
    assert client.post("/api/suite/tasks", headers=h, json={"draft": draft}).status_code == 201
    client.post("/api/play/start", headers=h, json={"task_id": "short-limit"})
    for _ in range(3):
        state = client.post("/api/play/step", headers=h, json={"action": "A"}).json()
    assert state["done"]
    assert state["outcome"]["status"] == "step_limit"
    assert state["outcome"]["score"] == 0.0
    late = client.post("/api/play/step", headers=h, json={"action": "W"})
    assert late.status_code == 409
    # a navigation task answered on the spot, far from its goal
    client.post("/api/play/start", headers=h, json={"task_id": "map-003"})
    far = client.post("/api/play/step", headers=h, json={"action": "ANSWER", "answer": ""})
    assert far.json()["outcome"]["correct"] is False
    rows = read_results(viewer_paths.run_dir / "results.csv")
    row = next(r for r in rows if r.task_id == "map-003")
    assert row.distance_to_goal_m is not None
    assert row.distance_to_goal_m > 20.0
    assert row.spl == 0.0
    # giving up is recorded as interrupted
    client.post("/api/play/start", headers=h, json={"task_id": "vln-002"})
    gave_up = client.post("/api/play/abandon", headers=h).json()
    assert gave_up["outcome"]["status"] == "interrupted"


def test_a_task_is_played_by_one_session_at_a_time(client: Any) -> None:
    first, second = headers("first-player"), headers("second-player")
    started = client.post("/api/play/start", headers=first, json={"task_id": "rel-002"})
    assert started.status_code == 200
    client.post("/api/play/step", headers=first, json={"action": "D"})
    again = client.post("/api/play/start", headers=first, json={"task_id": "rel-002"}).json()
    assert again["step"] == 1  # the same episode, not a new one
    taken = client.post("/api/play/start", headers=second, json={"task_id": "rel-002"})
    assert taken.status_code == 409
    assert "is being played" in taken.json()["error"]
    client.post("/api/play/step", headers=first, json={"action": "ANSWER", "answer": "?"})
    after = client.post("/api/play/start", headers=second, json={"task_id": "rel-002"})
    assert after.status_code == 409
    assert "already played" in after.json()["error"]


def test_play_unknown_task(client: Any) -> None:
    missing = client.post("/api/play/start", headers=headers("x1"), json={"task_id": "nope"})
    assert missing.status_code == 404
    assert "has no task 'nope'" in missing.json()["error"]
    idle = client.post("/api/play/step", headers=headers("x2"), json={"action": "W"})
    assert idle.status_code == 409


def test_a_missing_suite_is_created_on_the_first_save(
    viewer_paths: ViewerPaths, tmp_path: Path
) -> None:
    from fastapi.testclient import TestClient

    from city360.tasks.suite import load_suite
    from city360.viewer.app import create_app
    from tests.viewer.conftest import make_config

    fresh = ViewerPaths(city=viewer_paths.city, suite=tmp_path / "new-suite", outputs=tmp_path)
    template = load_suite(viewer_paths.suite).task("loc-001")
    with TestClient(create_app(make_config(fresh)), base_url=LOCAL_URL) as new_client:  # type: ignore[arg-type]
        info = new_client.get("/api/suite").json()
        assert (info["exists"], info["tasks"], info["name"]) == (False, [], "new-suite")
        h = headers("creator")
        here = new_client.post(
            "/api/walk/goto",
            headers=h,
            json={"segment": template.start.segment, "offset_m": template.start.offset_m},
        ).json()["pose"]
        draft = {
            "id": "first",
            "family": "Localization",
            "difficulty": "Easy",
            "start": {"segment": here["segment"], "offset_m": here["offset_m"]},
            "answer": here["cell"],
        }
        saved = new_client.post("/api/suite/tasks", headers=h, json={"draft": draft})
        assert saved.status_code == 201, saved.json()
    suite = load_suite(fresh.suite)
    assert [t.id for t in suite.tasks] == ["first"]
    assert suite.grid_area_m is not None
    assert suite.created["generator"] == "city360.viewer (authored)"
    assert "assets/grid_map.png" in suite.assets
    assert suite.task("first").expected_answer() == here["cell"]


def test_a_suite_of_another_city_is_refused(viewer_paths: ViewerPaths, tmp_path: Path) -> None:
    import shutil

    from city360.errors import TaskError
    from city360.viewer.app import create_app
    from tests.viewer.conftest import make_config

    other = tmp_path / "other"
    shutil.copytree(viewer_paths.suite, other)
    data = json.loads((other / "suite.json").read_text(encoding="utf-8"))
    data["city"] = "elsewhere"
    (other / "suite.json").write_text(json.dumps(data), encoding="utf-8")
    paths = ViewerPaths(city=viewer_paths.city, suite=other, outputs=tmp_path)
    with pytest.raises(TaskError, match="is for city 'elsewhere'"):
        create_app(make_config(paths))  # type: ignore[arg-type]


def test_gl_sessions_keep_their_own_views(viewer_paths: ViewerPaths, tmp_path: Path) -> None:
    """Two sessions, two GL contexts, requests on whichever worker thread: each session's view
    is still rendered from its own frame (the store makes the session's context current)."""
    from fastapi.testclient import TestClient

    from city360.errors import RenderError
    from city360.simulator.renderer import make_renderer
    from city360.tasks.suite import load_suite
    from city360.viewer.app import create_app
    from tests.viewer.conftest import make_config

    try:
        make_renderer("gl").close()
    except RenderError as exc:
        pytest.skip(f"no OpenGL context here: {exc}")
    suite = load_suite(viewer_paths.suite)
    here, there = suite.task("map-001").start, suite.task("vln-002").start
    paths = ViewerPaths(city=viewer_paths.city, suite=viewer_paths.suite, outputs=tmp_path)
    with TestClient(create_app(make_config(paths, renderer="gl")), base_url=LOCAL_URL) as gl_client:
        a, b = headers("gl-a"), headers("gl-b")
        pose_a = {"segment": here.segment, "offset_m": here.offset_m}
        pose_b = {"segment": there.segment, "offset_m": there.offset_m, "yaw_deg": 90.0}
        view_a = pixels(gl_client.post("/api/walk/goto", headers=a, json=pose_a).json()["view"])
        view_b = pixels(gl_client.post("/api/walk/goto", headers=b, json=pose_b).json()["view"])
        assert np.abs(view_a - view_b).mean() > 5
        # interleaved turns away and back: every response is a fresh render
        for action in ("D", "A"):
            for h in (a, b):
                gl_client.post("/api/walk/step", headers=h, json={"action": action})
        again_a = pixels(
            gl_client.post("/api/walk/step", headers=a, json={"action": "Q"}).json()["view"]
        )
        again_b = pixels(
            gl_client.post("/api/walk/step", headers=b, json={"action": "Q"}).json()["view"]
        )
        assert np.abs(again_a - view_a).mean() > 1  # looked up: a new picture ...
        again_a = pixels(
            gl_client.post("/api/walk/step", headers=a, json={"action": "E"}).json()["view"]
        )
        again_b = pixels(
            gl_client.post("/api/walk/step", headers=b, json={"action": "E"}).json()["view"]
        )
    assert np.abs(again_a - view_a).mean() < 1.0  # ... and back: each session's own frame
    assert np.abs(again_b - view_b).mean() < 1.0


def test_play_holds_the_run_folder_lock_against_an_eval(viewer_paths: ViewerPaths) -> None:
    """Play appends to results.csv like an eval does: both take the run folder's lock, so
    neither can write rows into a run the other is writing."""
    from fastapi.testclient import TestClient

    from city360.errors import RunLockedError
    from city360.eval.runlock import run_lock
    from city360.viewer.app import create_app

    paths = ViewerPaths(viewer_paths.city, viewer_paths.suite, viewer_paths.outputs, "locked")
    task = {"task_id": "rel-001"}
    app = create_app(make_config(paths))  # type: ignore[arg-type]
    with TestClient(app, base_url=LOCAL_URL) as client:
        with run_lock(paths.run_dir):  # an eval writing this run
            refused = client.post("/api/play/start", headers=headers("p"), json=task)
        assert refused.status_code == 409
        assert "being written by another city360 eval or viewer" in refused.json()["error"]
        started = client.post("/api/play/start", headers=headers("p"), json=task)
        assert started.status_code == 200
        with pytest.raises(RunLockedError), run_lock(paths.run_dir):
            pass
    with run_lock(paths.run_dir):  # the viewer let go when it closed
        pass
