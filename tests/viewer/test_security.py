"""Safe by default: the token on every request, loopback unless a token is set, paths confined
to their folders, and a bounded number of sessions that expire when idle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from city360.errors import ConfigError
from city360.viewer.config import ViewerConfig
from city360.viewer.security import PathRefused, safe_path, token_matches, valid_session_id
from city360.viewer.sessions import SessionStore
from tests.viewer.conftest import ViewerPaths, make_config

TOKEN = "t0ken-for-the-viewer-tests"


@pytest.fixture(scope="module")
def token_client(viewer_paths: ViewerPaths) -> Iterator[Any]:
    pytest.importorskip("fastapi", reason="fastapi is needed for the viewer tests")
    from fastapi.testclient import TestClient

    from city360.viewer.app import create_app

    app = create_app(make_config(viewer_paths, token=TOKEN, run_id="human-token"))  # type: ignore[arg-type]
    with TestClient(app) as test_client:
        yield test_client


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/static/app.js",
        "/static/style.css",
        "/api/info",
        "/api/walk",
        "/api/basemap.png",
        "/api/suite/asset?path=assets/grid_map.png",
        "/api/play/tasks",
        "/nowhere",
    ],
)
def test_token_is_required_on_every_request(token_client: Any, path: str) -> None:
    session = {"X-City360-Session": "session-token"}
    missing = token_client.get(path, headers=session)
    assert missing.status_code == 401
    assert "access token missing" in missing.json()["error"]
    wrong = token_client.get(path, headers={**session, "X-City360-Token": TOKEN + "x"})
    assert wrong.status_code == 401
    assert "access token wrong" in wrong.json()["error"]
    sep = "&" if "?" in path else "?"
    wrong_query = token_client.get(f"{path}{sep}token=nope", headers=session)
    assert wrong_query.status_code == 401
    expected = 404 if path == "/nowhere" else 200
    by_header = token_client.get(path, headers={**session, "X-City360-Token": TOKEN})
    assert by_header.status_code == expected
    by_query = token_client.get(f"{path}{sep}token={TOKEN}", headers=session)
    assert by_query.status_code == expected


def test_token_reaches_the_page_modules(token_client: Any) -> None:
    page = token_client.get(f"/?token={TOKEN}").text
    assert f'"/static/api.js": "/static/api.js?token={TOKEN}"' in page
    assert f'href="/static/style.css?token={TOKEN}"' in page


def test_token_posts_are_refused_without_it(token_client: Any) -> None:
    response = token_client.post(
        "/api/walk/step", headers={"X-City360-Session": "session-token"}, json={"action": "W"}
    )
    assert response.status_code == 401
    deleted = token_client.delete("/api/suite/tasks/loc-001")
    assert deleted.status_code == 401


def test_token_comparison() -> None:
    assert token_matches(TOKEN, TOKEN)
    assert not token_matches(TOKEN, None)
    assert not token_matches(TOKEN, TOKEN[:-1])
    assert not token_matches(TOKEN, "")


def test_other_hosts_need_a_token(viewer_paths: ViewerPaths) -> None:
    with pytest.raises(ConfigError, match=r"refusing to serve on '0\.0\.0\.0' without --token"):
        make_config(viewer_paths, host="0.0.0.0")
    with pytest.raises(ConfigError, match="at least 16 characters"):
        make_config(viewer_paths, host="0.0.0.0", token="short")
    with pytest.raises(ConfigError, match="at least 16 characters"):
        make_config(viewer_paths, token="has spaces in it, sixteen+")
    config = make_config(viewer_paths, host="0.0.0.0", token=TOKEN)
    assert isinstance(config, ViewerConfig)
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert make_config(viewer_paths, host=host).host == host  # type: ignore[attr-defined]


def test_cli_refuses_a_public_host_without_token(viewer_paths: ViewerPaths) -> None:
    from typer.testing import CliRunner

    from city360.cli import app

    result = CliRunner().invoke(app, ["view", str(viewer_paths.city), "--host", "0.0.0.0"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError)
    assert "without --token" in str(result.exception)


def test_config_refuses_a_non_city(tmp_path: Path) -> None:
    from city360.errors import InputFileError

    with pytest.raises(InputFileError, match="is not a city directory"):
        ViewerConfig(city_dir=tmp_path, suite_dir=tmp_path / "s", output_root=tmp_path, run_id="r")


def test_safe_path(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    (root / "assets").mkdir(parents=True)
    assert safe_path(root, "assets/a.png") == (root / "assets" / "a.png").resolve()
    for bad in ("", "../x", "assets/../../x", "/etc/passwd", "a\\b", "~/x"):
        with pytest.raises(PathRefused) as info:
            safe_path(root, bad)
        assert info.value.status == 400
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "assets" / "out").symlink_to(outside)
    with pytest.raises(PathRefused, match="through a symlink") as info:
        safe_path(root, "assets/out/file.png")
    assert info.value.status == 403


def test_session_ids() -> None:
    assert valid_session_id("0123456789abcdef")
    assert not valid_session_id(None)
    assert not valid_session_id("short")
    assert not valid_session_id("../../../../etc")
    assert not valid_session_id("x" * 65)


class _FakeEnv:
    renderer = object()

    def __init__(self, made: list[_FakeEnv]) -> None:
        self.closed = False
        made.append(self)

    def close(self) -> None:
        self.closed = True


def test_sessions_are_capped_and_expire() -> None:
    now = [0.0]
    made: list[_FakeEnv] = []
    store = SessionStore(
        lambda: _FakeEnv(made),  # type: ignore[arg-type,return-value]
        max_sessions=2,
        idle_timeout_s=60.0,
        clock=lambda: now[0],
    )
    with store.use("aaaaaaaa") as a:
        assert a.env is made[0]
    now[0] = 10.0
    with store.use("bbbbbbbb"):
        pass
    now[0] = 20.0
    with store.use("aaaaaaaa") as again:
        assert again is a  # the same session, not a new environment
    with store.use("cccccccc"):
        pass
    # the cap dropped the idlest session (b) and closed its environment
    assert len(store) == 2
    assert "bbbbbbbb" not in store
    assert made[1].closed
    now[0] = 100.0
    with store.use("dddddddd"):
        pass
    # a (last used at 20) and c (at 20) idled past 60 s
    assert "aaaaaaaa" not in store
    assert "cccccccc" not in store
    assert made[0].closed
    store.close()
    assert len(store) == 0
    assert all(env.closed for env in made)
