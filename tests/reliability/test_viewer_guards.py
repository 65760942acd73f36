"""The viewer as an attacker meets it: foreign Host/Origin, huge bodies, hostile task ids."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.viewer.conftest import LOCAL_URL, ViewerPaths, make_config, make_paths

pytest.importorskip("fastapi", reason="fastapi is needed for the viewer tests")

SESSION = {"X-City360-Session": "session-guards"}
TOKEN = "a-long-enough-token-0123456789"
SECURITY = ("X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy", "Cache-Control")


@pytest.fixture(scope="module")
def paths(built_city: Path, built_suite: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return make_paths(built_city, built_suite, tmp_path_factory.mktemp("guards"))


@pytest.fixture(scope="module")
def app(paths: ViewerPaths) -> Any:
    from city360.viewer.app import create_app

    return create_app(make_config(paths))  # type: ignore[arg-type]


@pytest.fixture
def client(app: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    with TestClient(app, base_url=LOCAL_URL) as test_client:
        yield test_client


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8360", "localhost:8360", "[::1]:8360", "LOCALHOST", "127.0.0.1"]
)
def test_the_bound_names_are_served(client: Any, host: str) -> None:
    assert client.get("/api/suite", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example:8360", "127.0.0.1.evil.example", "", "0.0.0.0"])
def test_dns_rebinding_is_refused_by_host(client: Any, paths: ViewerPaths, host: str) -> None:
    before = (paths.suite / "suite.json").read_bytes()
    for method, path in (("GET", "/api/suite"), ("DELETE", "/api/suite/tasks/loc-001")):
        response = client.request(method, path, headers={"Host": host})
        assert response.status_code == 403, response.text
        assert "is not this viewer's" in response.json()["error"]
        assert all(name in response.headers for name in SECURITY)
    assert (paths.suite / "suite.json").read_bytes() == before


def test_state_changes_from_another_origin_are_refused(client: Any, paths: ViewerPaths) -> None:
    before = (paths.suite / "suite.json").read_bytes()
    for origin in ("http://evil.example", "null", "http://127.0.0.1.evil.example:8360"):
        response = client.delete("/api/suite/tasks/loc-001", headers={"Origin": origin})
        assert response.status_code == 403, origin
        assert "may not change this viewer's state" in response.json()["error"]
    assert (paths.suite / "suite.json").read_bytes() == before
    same = client.get("/api/suite", headers={"Origin": "http://evil.example"})
    assert same.status_code == 200  # reads are guarded by Host (and the browser's CORS)
    ours = client.post(
        "/api/walk/step", headers={**SESSION, "Origin": LOCAL_URL}, json={"action": "S"}
    )
    assert ours.status_code != 403


def test_a_huge_body_is_refused_before_it_is_read(client: Any) -> None:
    big = b"{" + b" " * 5_000_000 + b"}"
    response = client.post(
        "/api/author/verify",
        headers={**SESSION, "Content-Type": "application/json"},
        content=big,
    )
    assert response.status_code == 413
    assert "request body larger than 1000000 bytes" in response.json()["error"]
    assert all(name in response.headers for name in SECURITY)


def test_a_huge_chunked_body_is_refused_while_read(client: Any) -> None:
    read: list[int] = []

    def chunks() -> Iterator[bytes]:
        for _ in range(200):  # 200 x 64 kB = 12.8 MB if it were all read
            read.append(1)
            yield b" " * 65536

    response = client.post(
        "/api/author/verify",
        headers={**SESSION, "Content-Type": "application/json"},
        content=chunks(),
    )
    assert response.status_code == 413
    assert "request body larger than" in response.json()["error"]


def test_a_10_mb_instruction_is_refused(client: Any, paths: ViewerPaths) -> None:
    draft = client.get("/api/suite/tasks/vln-001").json()["draft"]
    draft["id"] = "vln-huge"
    draft["instructions"] = ["walk " * 2_000_000]
    response = client.post("/api/suite/tasks", headers=SESSION, json={"draft": draft})
    assert response.status_code == 413  # refused at the door: never read whole
    draft["instructions"] = ["walk " * 200]  # 1000 characters: under the body limit
    response = client.post("/api/suite/tasks", headers=SESSION, json={"draft": draft})
    assert response.status_code == 422
    assert "at most 500 characters" in json.dumps(response.json())
    assert "vln-huge" not in (paths.suite / "suite.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("bad_id", ["..", ".hidden", ".", "../up", "a/b", "x" * 81])
def test_hostile_task_ids_are_refused_and_the_suite_stays_usable(
    client: Any, paths: ViewerPaths, bad_id: str
) -> None:
    draft = client.get("/api/suite/tasks/loc-001").json()["draft"]
    draft["id"] = bad_id
    response = client.post("/api/suite/tasks", headers=SESSION, json={"draft": draft})
    assert response.status_code == 400, response.text
    assert "a task id is a slug of 1-80 letters, digits" in response.json()["error"]
    assert "not starting with '.'" in response.json()["error"]
    assert client.get("/api/suite").status_code == 200
    assert client.get("/api/suite/tasks/loc-001").status_code == 200
    from city360.tasks.suite import load_suite

    assert all(not t.id.startswith(".") for t in load_suite(paths.suite).tasks)


def test_401_carries_the_security_headers(paths: ViewerPaths) -> None:
    from fastapi.testclient import TestClient

    from city360.viewer.app import create_app

    app = create_app(make_config(paths, token=TOKEN, run_id="human-guards"))  # type: ignore[arg-type]
    with TestClient(app, base_url="http://anything.example") as token_client:
        refused = token_client.get("/api/suite")
        assert refused.status_code == 401
        assert all(name in refused.headers for name in SECURITY)
        # With a token the Host is not checked: the token is what a rebinding page lacks.
        ok = token_client.get("/api/suite", headers={"X-City360-Token": TOKEN})
        assert ok.status_code == 200
