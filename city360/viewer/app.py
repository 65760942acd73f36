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
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from city360.errors import City360Error, TaskError
from city360.simulator.actions import BRANCH_ACTIONS, Action, parse_action
from city360.viewer.authoring import SuiteEditor, TaskDraft, draft_of
from city360.viewer.config import ViewerConfig
from city360.viewer.images import data_url
from city360.viewer.play import HumanEpisode, HumanRun
from city360.viewer.security import (
    SESSION_HEADER,
    TOKEN_HEADER,
    TOKEN_QUERY,
    PathRefused,
    token_matches,
    valid_session_id,
)
from city360.viewer.sessions import Session, SessionStore

__all__ = ["create_app", "default_run_id"]

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
_STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_ASSET_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
_TASK_ID = r"^[A-Za-z0-9_.\-]+$"


def default_run_id() -> str:
    """``human-YYYYmmdd-HHMMSS`` (UTC): a fresh run folder per server start."""
    return "human-" + dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")


# --- request bodies ---------------------------------------------------------------------------


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ActionRequest(_Body):
    action: str = Field(min_length=1, max_length=16)
    magnitude: str | None = Field(None, max_length=16)
    answer: str | None = Field(None, max_length=500)


class GotoRequest(_Body):
    """Where to stand: a base-map pixel (a click), a graph pose, or a lat/lon."""

    col: float | None = Field(None, ge=-1e6, le=1e6)
    row: float | None = Field(None, ge=-1e6, le=1e6)
    segment: str | None = Field(None, min_length=1, max_length=200)
    offset_m: float | None = Field(None, ge=0, le=1e6)
    yaw_deg: float = Field(0.0, ge=-180, le=180)
    lat: float | None = Field(None, ge=-90, le=90)
    lon: float | None = Field(None, ge=-180, le=180)

    @model_validator(mode="after")
    def _one_way(self) -> GotoRequest:
        ways = [
            self.col is not None and self.row is not None,
            self.segment is not None,
            self.lat is not None and self.lon is not None,
        ]
        if sum(ways) != 1:
            msg = "give exactly one of: col+row (base-map pixel), segment(+offset_m), lat+lon"
            raise ValueError(msg)
        return self


class AuthorRequest(_Body):
    draft: TaskDraft
    replacing: str | None = Field(None, max_length=80, pattern=_TASK_ID)


class PlayRequest(_Body):
    task_id: str = Field(min_length=1, max_length=80, pattern=_TASK_ID)


# --- state ------------------------------------------------------------------------------------


@dataclass
class _State:
    config: ViewerConfig
    store: SessionStore
    editor: SuiteEditor
    run: HumanRun
    graph: Any
    citymap: Any
    city_name: str


class _Refused(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.extra = extra


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def create_app(config: ViewerConfig) -> FastAPI:
    """The viewer for ``config.city_dir`` (see the module docstring)."""
    import city360
    from city360.city import CityDir
    from city360.maps.citymap import CityMap
    from city360.tasks.walk import WalkGraph

    city = CityDir(config.city_dir)
    manifest = city.read_manifest()
    graph = WalkGraph.from_city(city.root)
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
    state = _State(config, store, editor, run, graph, citymap, manifest.name)

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
    _install_walk(app, state)
    _install_author(app, state)
    _install_play(app, state)
    return app


# --- guards -----------------------------------------------------------------------------------


def _install_guards(app: FastAPI, config: ViewerConfig) -> None:
    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        if config.token is not None:
            given = request.headers.get(TOKEN_HEADER) or request.query_params.get(TOKEN_QUERY)
            if not token_matches(config.token, given):
                why = "missing" if not given else "wrong"
                return _error(
                    401,
                    f"access token {why}: open the address `city360 view` printed (it ends with "
                    f"?token=...) or send the {TOKEN_HEADER} header",
                )
        response: Response = await call_next(request)
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "draft", "query")]
            problems.append({"field": ".".join(loc) or "request", "message": err.get("msg", "")})
        listed = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        return _error(422, f"invalid request ({listed})", problems=problems)

    @app.exception_handler(_Refused)
    async def refused(_request: Request, exc: _Refused) -> JSONResponse:
        return _error(exc.status, str(exc), **exc.extra)

    @app.exception_handler(PathRefused)
    async def path_refused(_request: Request, exc: PathRefused) -> JSONResponse:
        return _error(exc.status, str(exc))

    @app.exception_handler(City360Error)
    async def city360_error(_request: Request, exc: City360Error) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = "not found" if exc.status_code == 404 else str(exc.detail)
        return _error(exc.status_code, message)

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, exc: Exception) -> JSONResponse:
        logger.exception("viewer request failed")
        return _error(500, f"internal error ({type(exc).__name__}: {exc}); see the server log")


def _session_id(
    x_city360_session: str | None = Header(default=None, alias=SESSION_HEADER),
) -> str:
    if not valid_session_id(x_city360_session):
        msg = f"the {SESSION_HEADER} header must hold a session id (8-64 letters, digits, - or _)"
        raise _Refused(400, msg)
    assert x_city360_session is not None
    return x_city360_session


SessionId = Depends(_session_id)


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
            raise _Refused(404, f"no static file {name!r}")
        return FileResponse(path, media_type=media)


# --- walk -------------------------------------------------------------------------------------


def _branches(obs: dict[str, Any]) -> dict[str, bool]:
    return {a.value: bool(m) for a, m in zip(BRANCH_ACTIONS, obs["branch_mask"], strict=True)}


def _walk_payload(state: _State, session: Session) -> dict[str, Any]:
    obs, info = session.obs, session.info
    assert obs is not None
    assert info is not None
    pose = info["pose"]
    col, row = state.citymap.transform.xy_to_px(pose["x_m"], pose["y_m"])
    grid = state.editor.grid()
    cell = grid.cell_of(pose["x_m"], pose["y_m"], clip=True)
    return {
        "mode": "walk",
        "view": data_url(obs["view"]),
        "map": data_url(obs["map"], kind="png") if "map" in obs else None,
        "branches": _branches(obs),
        "feedback": obs["feedback"],
        "step": int(obs["step"]),
        "pose": {
            "lat": round(float(pose["lat"]), 7),
            "lon": round(float(pose["lon"]), 7),
            "x_m": round(float(pose["x_m"]), 2),
            "y_m": round(float(pose["y_m"]), 2),
            "segment": info["segment"],
            "offset_m": round(float(info["offset_m"]), 2),
            "heading_deg": round(float(pose["heading_deg"]), 1),
            "view_bearing_deg": round(float(pose["view_bearing_deg"]), 1),
            "yaw_deg": round(float(pose["yaw_deg"]), 1),
            "pitch_deg": round(float(pose["pitch_deg"]), 1),
            "at_junction": bool(info.get("at_junction", False)),
            "cell": f"x:{cell[0]} y:{cell[1]}",
            "map_px": [round(float(col), 1), round(float(row), 1)],
        },
    }


def _walking(session: Session) -> None:
    """Make sure the session's environment is in walk mode (resuming after a played task)."""
    if session.episode is not None and not session.episode.done:
        msg = (
            f"task {session.episode.task.id!r} is being played in this tab; answer it or give "
            "up (Play screen) before walking"
        )
        raise _Refused(409, msg)
    if session.mode == "walk" and session.obs is not None:
        return
    options: dict[str, Any] | None = None
    if session.walk_pose is not None:
        options = session.walk_pose
    obs, info = session.env.reset(seed=0, options=options)
    session.obs, session.info, session.mode = obs, info, "walk"


def _remember_pose(session: Session) -> None:
    info = session.info
    if info is not None and session.mode == "walk":
        session.walk_pose = {
            "segment": info["segment"],
            "offset_m": float(info["offset_m"]),
            "yaw_deg": float(info["pose"]["yaw_deg"]),
            "pitch_deg": float(info["pose"]["pitch_deg"]),
        }


def _install_walk(app: FastAPI, state: _State) -> None:
    store = state.store

    @app.get("/api/info")
    def info() -> dict[str, Any]:
        from city360.tasks.families import all_families
        from city360.tasks.prompts import answer_format

        transform = state.citymap.transform
        return {
            "city": state.city_name,
            "suite": state.config.suite_dir.name,
            "run": state.config.run_id,
            "play_map": state.config.play_map,
            "basemap": {"width": transform.width, "height": transform.height},
            "families": [
                {
                    "family": f.family.value,
                    "navigation": f.navigation,
                    "threshold_m": f.threshold_m,
                    "short": f.short,
                    "answer_format": answer_format(f.family),
                }
                for f in all_families()
            ],
            "magnitudes": ["SMALL", "MEDIUM", "LARGE"],
        }

    @app.get("/api/basemap.png")
    def basemap() -> FileResponse:
        from city360.city import CityDir
        from city360.maps.citymap import BASEMAP_NAME

        return FileResponse(
            CityDir(state.config.city_dir).map_dir / BASEMAP_NAME, media_type="image/png"
        )

    @app.get("/api/walk")
    def walk_state(sid: str = SessionId) -> dict[str, Any]:
        with store.use(sid) as session:
            _walking(session)
            return _walk_payload(state, session)

    @app.post("/api/walk/step")
    def walk_step(body: ActionRequest, sid: str = SessionId) -> dict[str, Any]:
        if parse_action(body.action) is Action.ANSWER:
            raise _Refused(400, "ANSWER ends a task; it is only offered on the Play screen")
        with store.use(sid) as session:
            _walking(session)
            obs, _, _, _, info = session.env.step(body.action, body.magnitude)
            session.obs, session.info = obs, info
            _remember_pose(session)
            return _walk_payload(state, session)

    @app.post("/api/walk/goto")
    def walk_goto(body: GotoRequest, sid: str = SessionId) -> dict[str, Any]:
        options: dict[str, Any]
        if body.segment is not None:
            options = {"segment": body.segment, "offset_m": body.offset_m or 0.0}
            options["yaw_deg"] = body.yaw_deg
        elif body.col is not None and body.row is not None:
            x, y = state.citymap.transform.px_to_xy(body.col, body.row)
            options = {"x_m": float(x), "y_m": float(y)}
        else:
            options = {"lat": body.lat, "lon": body.lon}
        if body.segment is not None and body.segment not in state.graph.segments:
            state.graph.segment(body.segment)  # raises TaskError with a close match
        with store.use(sid) as session:
            _walking(session)
            obs, info = session.env.reset(seed=0, options=options)
            session.obs, session.info, session.mode = obs, info, "walk"
            _remember_pose(session)
            return _walk_payload(state, session)


# --- author -----------------------------------------------------------------------------------


def _task_summary(task: Any) -> dict[str, Any]:
    return {"id": task.id, "family": task.family.value, "difficulty": task.difficulty.value}


def _prompt_of(task: Any) -> dict[str, Any]:
    view = task.agent_view()
    return {
        "prompt": view.prompt,
        "answer_format": view.answer_format,
        "images": [f"/api/suite/asset?path={p}" for p in view.reference_images],
        "step_limit": view.step_limit,
    }


def _install_author(app: FastAPI, state: _State) -> None:
    store, editor = state.store, state.editor

    @app.get("/api/suite")
    def suite_info() -> dict[str, Any]:
        suite = editor.load()
        return {
            "exists": editor.exists(),
            "name": suite.name,
            "city": suite.city,
            "grid_size": suite.grid_size,
            "hash": suite.content_hash() if editor.exists() else None,
            "tasks": [_task_summary(t) for t in suite.tasks],
        }

    @app.get("/api/suite/tasks/{task_id}")
    def get_task(task_id: str) -> dict[str, Any]:
        task = _find(editor, task_id)
        return {
            "task": task.model_dump(mode="json"),
            "draft": draft_of(task, state.graph),
            **_prompt_of(task),
        }

    @app.get("/api/suite/asset")
    def asset(path: str) -> FileResponse:
        target = editor.asset(path)
        media = _ASSET_TYPES.get(target.suffix.lower())
        if media is None:
            raise _Refused(400, f"only PNG and JPEG assets are served, not {path!r}")
        if not target.is_file():
            raise _Refused(404, f"the suite has no asset {path!r}")
        return FileResponse(target, media_type=media)

    @app.post("/api/author/capture")
    def capture(sid: str = SessionId) -> dict[str, Any]:
        import dataclasses

        from city360.viewer.images import png_bytes

        with store.use(sid) as session:
            _walking(session)
            env = session.env
            config = env.config
            env.config = dataclasses.replace(config, arrows=False)  # a clean picture
            try:
                image = env.render()
            finally:
                env.config = config
            capture_id = secrets.token_hex(8)
            session.add_capture(capture_id, png_bytes(image))
            return {"capture": capture_id, "image": data_url(image)}

    def verified(body: AuthorRequest, sid: str) -> Any:
        with store.use(sid) as session:
            captures = dict(session.captures)
        return editor.verify(body.draft, captures=captures, replacing=body.replacing)

    def verdict(result: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": result.ok,
            "problems": [p.to_json() for p in result.problems],
            "oracle_steps": result.oracle_steps,
        }
        if result.task is not None:
            out["task"] = result.task.model_dump(mode="json")
            out["prompt"] = result.task.agent_view().prompt
            out["images"] = [
                _image_preview(editor, result.assets, p)
                for p in (result.task.reference_image_paths())
            ]
        return out

    @app.post("/api/author/verify")
    def verify(body: AuthorRequest, sid: str = SessionId) -> dict[str, Any]:
        return verdict(verified(body, sid))

    @app.post("/api/suite/tasks", status_code=201)
    def save(body: AuthorRequest, sid: str = SessionId) -> dict[str, Any]:
        if body.replacing is not None:
            _find(editor, body.replacing)
        result = verified(body, sid)
        if not result.ok:
            listed = "; ".join(f"{p.field}: {p.message}" for p in result.problems)
            raise _Refused(422, f"task not saved ({listed})", **verdict(result))
        suite = editor.save(result, replacing=body.replacing)
        return {**verdict(result), "saved": result.task.id, "hash": suite.content_hash()}

    @app.delete("/api/suite/tasks/{task_id}")
    def delete(task_id: str) -> dict[str, Any]:
        _find(editor, task_id)
        suite = editor.delete(task_id)
        return {"deleted": task_id, "tasks": len(suite.tasks)}


def _image_preview(editor: SuiteEditor, new_assets: dict[str, bytes], path: str) -> str:
    """A reference image of a verified task as the page can show it: a new asset inline (it is
    not on disk yet), a saved one by its URL."""
    import base64

    data = new_assets.get(path)
    if data is not None:
        return "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    editor.asset(path)
    return f"/api/suite/asset?path={path}"


def _find(editor: SuiteEditor, task_id: str) -> Any:
    suite = editor.load()
    try:
        return suite.task(task_id)
    except TaskError as exc:
        raise _Refused(404, str(exc)) from None


# --- play -------------------------------------------------------------------------------------


def _play_payload(state: _State, episode: HumanEpisode) -> dict[str, Any]:
    obs = episode.observation
    out: dict[str, Any] = {
        "mode": "play",
        "task_id": episode.task.id,
        "view": data_url(obs["view"]),
        "map": data_url(obs["map"], kind="png") if state.config.play_map and "map" in obs else None,
        "branches": _branches(obs),
        "feedback": obs["feedback"],
        "step": int(obs["step"]),
        "step_limit": episode.task.step_limit,
        "done": episode.done,
    }
    if episode.done:
        out["outcome"] = episode.outcome()
    return out


@contextlib.contextmanager
def _episode(state: _State, sid: str) -> Iterator[tuple[Session, HumanEpisode]]:
    with state.store.use(sid) as session:
        if session.episode is None:
            raise _Refused(409, "no task is being played in this tab; pick one on the Play screen")
        yield session, session.episode


def _install_play(app: FastAPI, state: _State) -> None:
    store, editor, run = state.store, state.editor, state.run

    @app.get("/api/play/tasks")
    def play_tasks() -> dict[str, Any]:
        suite = editor.load()
        tasks = []
        for task in suite.tasks:
            item = _task_summary(task)
            played = run.played.get(task.id)
            item["played"] = played is not None
            if played is not None:
                item["score"] = played.evaluation_score
                item["status"] = played.status
            tasks.append(item)
        return {"run": state.config.run_id, "tasks": tasks}

    @app.post("/api/play/start")
    def play_start(body: PlayRequest, sid: str = SessionId) -> dict[str, Any]:
        from city360.eval.runner import task_seed

        suite = editor.load()
        task = _find(editor, body.task_id)
        with store.use(sid) as session:
            current = session.episode
            if current is not None and not current.done and current.task.id == task.id:
                return {**_prompt_of(task), **_play_payload(state, current)}  # already on it
            if task.id in run.played or task.id in run.active:
                when = "was already played" if task.id in run.played else "is being played"
                msg = (
                    f"task {task.id!r} {when} in run {state.config.run_id!r}; each task is "
                    "played once per run (start the viewer with another --run-id to replay it)"
                )
                raise _Refused(409, msg)
            if session.episode is not None and not session.episode.done:
                session.episode.abandon()
            _remember_pose(session)
            episode = HumanEpisode(
                session.env, task, suite, run=run, graph=state.graph, seed=task_seed(0, task.id)
            )
            session.mode = "play"
            session.episode = episode
            episode.start()
            return {**_prompt_of(task), **_play_payload(state, episode)}

    @app.get("/api/play")
    def play_current(sid: str = SessionId) -> dict[str, Any]:
        with _episode(state, sid) as (_session, episode):
            return {**_prompt_of(episode.task), **_play_payload(state, episode)}

    @app.post("/api/play/step")
    def play_step(body: ActionRequest, sid: str = SessionId) -> dict[str, Any]:
        with _episode(state, sid) as (_session, episode):
            if episode.done:
                raise _Refused(409, f"task {episode.task.id!r} is over; pick another task")
            episode.step(body.action, body.magnitude, body.answer)
            return _play_payload(state, episode)

    @app.post("/api/play/abandon")
    def play_abandon(sid: str = SessionId) -> dict[str, Any]:
        with _episode(state, sid) as (_session, episode):
            episode.abandon()
            return _play_payload(state, episode)
