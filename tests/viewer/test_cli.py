"""``city360 view`` as a user starts it: a real server process with a token."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.viewer.conftest import ViewerPaths

TOKEN = "cli-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_view_serves_with_a_token(viewer_paths: ViewerPaths) -> None:
    httpx = pytest.importorskip("httpx", reason="httpx is needed for the viewer tests")
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "city360.cli",
        "view",
        str(viewer_paths.city),
        "--suite",
        str(viewer_paths.suite),
        "--port",
        str(port),
        "--token",
        TOKEN,
        "--output-root",
        str(viewer_paths.outputs),
        "--renderer",
        "cpu",
    ]
    env = {**os.environ, "CITY360_NO_PROGRESS": "1"}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"city360 view exited {process.returncode}: {process.stdout.read()}")  # type: ignore[union-attr]
            try:
                response = httpx.get(f"{base}/", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    pytest.fail("city360 view did not answer within 60 s")
                time.sleep(0.2)
        assert response.status_code == 401
        page = httpx.get(f"{base}/?token={TOKEN}", timeout=10)
        assert page.status_code == 200
        assert "city360 viewer" in page.text
        info = httpx.get(f"{base}/api/info", headers={"X-City360-Token": TOKEN}, timeout=10)
        assert info.json()["suite"] == viewer_paths.suite.name
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=30)
    assert f"open http://127.0.0.1:{port}/?token={TOKEN}" in output


def test_a_suite_name_is_the_city_s_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`city360 view demo --suite main` served a new, empty suite ./main (created on the first
    save) beside the user, not the demo's main suite that `eval demo --suite main` runs
    (issue 17, newuser4)."""
    pytest.importorskip("uvicorn", reason="uvicorn is needed for the viewer")
    from typer.testing import CliRunner

    from city360.cli import app

    city = tmp_path / "city"
    (city / "tasks" / "main").mkdir(parents=True)
    (city / "city.json").write_text("{}")  # the config checks only that these are there
    (city / "graph.json").write_text("{}")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    served: list[object] = []

    class Served(Exception):
        """Raised where the server would start: the test stops there."""

    def fake_create_app(config: object) -> None:
        served.append(config)
        raise Served

    monkeypatch.setattr("city360.viewer.app.create_app", fake_create_app)
    for suite, expected in (
        ("main", city / "tasks" / "main"),
        ("mine", elsewhere / "mine"),  # no such suite in the city: a new folder here
    ):
        result = CliRunner().invoke(app, ["view", str(city), "--suite", suite])
        assert isinstance(result.exception, Served), result.output
        assert served[-1].suite_dir == expected.resolve()  # type: ignore[attr-defined]
