"""The viewer's FastAPI application: pages, the walk / author / play API, and its guards.

``create_app(config)`` builds everything a server needs once (the city's walkable graph, its
base map, the suite editor, the human run) and holds one environment per browser session. Every
error comes back as JSON ``{"error": message}`` (plus ``problems`` naming form fields for a task
that does not verify); with a token configured, every request must carry it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import json
import logging
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from city360.errors import City360Error, RunLockedError, TaskError
from city360.viewer import api_author, api_play, api_walk
from city360.viewer.api_common import Refused, ViewerState, error_response
from city360.viewer.authoring import SuiteEditor
from city360.viewer.body_limit import BodyLimit
from city360.viewer.config import ViewerConfig
from city360.viewer.play import HumanRun
from city360.viewer.security import (
    SECURITY_HEADERS,
    TOKEN_HEADER,
    TOKEN_QUERY,
    PathRefused,
    allowed_host_names,
    host_allowed,
    origin_allowed,
    token_matches,
)
from city360.viewer.sessions import SessionStore

__all__ = ["create_app", "default_run_id"]

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


def default_run_id() -> str:
    """``human-YYYYmmdd-HHMMSS`` (UTC): a fresh run folder per server start."""
    return "human-" + dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")


def create_app(config: ViewerConfig) -> FastAPI:
    """The viewer for ``config.city_dir`` (see the module docstring)."""
    import city360
    from city360.city import CityDir
    from city360.maps.citymap import CityMap
    from city360.streets import StreetGraph

    city = CityDir(config.city_dir)
    manifest = city.read_manifest()
    graph = StreetGraph.open(city.root)
    citymap = CityMap.open(city.root)
    from city360.simulator.config import EnvConfig

    move_m = EnvConfig().move_m
    editor = SuiteEditor(
        config.suite_dir,
        config.city_dir,
        graph=graph,
        projection=manifest.projection,
        city_name=manifest.name,
        move_m=move_m,
    )
    if editor.exists():
        existing = editor.load()  # a broken suite stops the server here, with every problem
        if existing.city != manifest.name:
            msg = (
                f"suite {existing.name!r} ({config.suite_dir}) is for city {existing.city!r}, "
                f"but {city.root} is {manifest.name!r}; pass the suite of this city or a new folder"
            )
            raise TaskError(msg)
        recorded = existing.created.get("move_m")
        if recorded:
            editor.move_m = (float(recorded[0]), float(recorded[1]), float(recorded[2]))
    run = HumanRun(
        config.output_root / config.run_id,
        city_dir=config.city_dir,
        suite_dir=config.suite_dir,
        use_map=config.play_map,
        player=config.player,
    )

    def make_env() -> Any:
        return city360.make(
            city.root,
            renderer=config.renderer,
            privileged_info=True,
            map=True,
            frame_cache_mb=64.0,
        )

    store = SessionStore(
        make_env, max_sessions=config.max_sessions, idle_timeout_s=config.idle_timeout_s
    )
    state = ViewerState(config, store, editor, run, graph, citymap, manifest.name)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        store.close()
        run.close()

    app = FastAPI(
        title="city360 viewer",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.viewer = state
    _install_guards(app, config)
    _install_pages(app, config)
    api_walk.install(app, state)
    api_author.install(app, state)
    api_play.install(app, state)
    return app


# --- guards -----------------------------------------------------------------------------------


def _install_guards(app: FastAPI, config: ViewerConfig) -> None:
    # Added first, so it runs inside the guard: its 413s get the security headers too.
    app.add_middleware(BodyLimit, max_bytes=config.max_body_bytes)
    allowed = allowed_host_names(config.host)

    def refusal(request: Request) -> Response | None:
        if config.token is not None:
            given = request.headers.get(TOKEN_HEADER) or request.query_params.get(TOKEN_QUERY)
            if not token_matches(config.token, given):
                why = "missing" if not given else "wrong"
                return error_response(
                    401,
                    f"access token {why}: open the address `city360 view` printed (it ends with "
                    f"?token=...) or send the {TOKEN_HEADER} header",
                )
            return None
        # Without a token only this machine's browser may talk to us: a page elsewhere whose
        # name resolves to 127.0.0.1 (DNS rebinding) sends its own name as Host / Origin.
        host = request.headers.get("host")
        if not host_allowed(host, allowed):
            return error_response(
                403,
                f"Host {host!r} is not this viewer's; open it as http://127.0.0.1:{config.port}/ "
                f"(allowed names: {', '.join(sorted(allowed))}), or start it with --token",
            )
        origin = request.headers.get("origin")
        if request.method not in _SAFE_METHODS and not origin_allowed(origin, allowed):
            return error_response(
                403,
                f"Origin {origin!r} may not change this viewer's state; use the viewer's own "
                "page (requests from other sites are refused)",
            )
        return None

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        response = refusal(request)
        if response is None:
            response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "draft", "query")]
            problems.append({"field": ".".join(loc) or "request", "message": err.get("msg", "")})
        listed = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        return error_response(422, f"invalid request ({listed})", problems=problems)

    @app.exception_handler(Refused)
    async def refused(_request: Request, exc: Refused) -> JSONResponse:
        return error_response(exc.status, str(exc), **exc.extra)

    @app.exception_handler(PathRefused)
    async def path_refused(_request: Request, exc: PathRefused) -> JSONResponse:
        return error_response(exc.status, str(exc))

    @app.exception_handler(City360Error)
    async def city360_error(_request: Request, exc: City360Error) -> JSONResponse:
        # a run folder another process writes is a conflict, not a bad request
        return error_response(409 if isinstance(exc, RunLockedError) else 400, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = "not found" if exc.status_code == 404 else str(exc.detail)
        return error_response(exc.status_code, message)

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, exc: Exception) -> JSONResponse:
        logger.exception("viewer request failed")
        return error_response(
            500, f"internal error ({type(exc).__name__}: {exc}); see the server log"
        )


# --- pages ------------------------------------------------------------------------------------


def _install_pages(app: FastAPI, config: ViewerConfig) -> None:
    modules = sorted(p.name for p in STATIC_DIR.glob("*.js"))

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        nonce = secrets.token_urlsafe(16)
        suffix = "" if config.token is None else f"?{TOKEN_QUERY}={config.token}"
        import_map = {"imports": {f"/static/{m}": f"/static/{m}{suffix}" for m in modules}}
        page = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
        page = page.replace("{{NONCE}}", nonce)
        page = page.replace("{{SUFFIX}}", html.escape(suffix))
        page = page.replace("{{IMPORTMAP}}", json.dumps(import_map).replace("<", "\\u003c"))
        csp = (
            "default-src 'none'; "
            f"script-src 'self' 'nonce-{nonce}'; style-src 'self'; img-src 'self' data: blob:; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
        return HTMLResponse(page, headers={"Content-Security-Policy": csp})

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        from city360.viewer.security import safe_path

        path = safe_path(STATIC_DIR, name)
        media = _STATIC_TYPES.get(path.suffix)
        if media is None or not path.is_file():
            raise Refused(404, f"no static file {name!r}")
        return FileResponse(path, media_type=media)
