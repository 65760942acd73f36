"""The Walk screen's API: the view, map and pose readout; steps; jumps to a pose."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse
from pydantic import Field, model_validator

from city360.simulator.actions import Action, parse_action
from city360.viewer.api_common import (
    ActionRequest,
    Body,
    Refused,
    SessionId,
    ViewerState,
    branches_of,
)
from city360.viewer.images import data_url
from city360.viewer.sessions import Session

__all__ = ["GotoRequest", "ensure_walking", "install", "remember_pose", "walk_payload"]


class GotoRequest(Body):
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


# --- walk -------------------------------------------------------------------------------------


def walk_payload(state: ViewerState, session: Session) -> dict[str, Any]:
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
        "branches": branches_of(obs),
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


def ensure_walking(session: Session) -> None:
    """Make sure the session's environment is in walk mode (resuming after a played task)."""
    if session.episode is not None and not session.episode.done:
        msg = (
            f"task {session.episode.task.id!r} is being played in this tab; answer it or give "
            "up (Play screen) before walking"
        )
        raise Refused(409, msg)
    if session.mode == "walk" and session.obs is not None:
        return
    options: dict[str, Any] | None = None
    if session.walk_pose is not None:
        options = session.walk_pose
    obs, info = session.env.reset(seed=0, options=options)
    session.obs, session.info, session.mode = obs, info, "walk"


def remember_pose(session: Session) -> None:
    info = session.info
    if info is not None and session.mode == "walk":
        session.walk_pose = {
            "segment": info["segment"],
            "offset_m": float(info["offset_m"]),
            "yaw_deg": float(info["pose"]["yaw_deg"]),
            "pitch_deg": float(info["pose"]["pitch_deg"]),
        }


def install(app: FastAPI, state: ViewerState) -> None:
    store = state.store

    @app.get("/api/info")
    def info() -> dict[str, Any]:
        from city360.tasks.families import all_families

        transform = state.citymap.transform
        return {
            "city": state.city_name,
            "suite": state.config.suite_dir.name,
            "run": state.config.run_id,
            "play_map": state.config.play_map,
            "basemap": {"width": transform.width, "height": transform.height},
            "attribution": state.citymap.meta.attribution,
            "families": [
                {
                    "family": f.name,
                    "navigation": f.navigation,
                    "threshold_m": f.threshold_m,
                    "short": f.short,
                    "answer_format": f.answer_format,
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
            ensure_walking(session)
            return walk_payload(state, session)

    @app.post("/api/walk/step")
    def walk_step(body: ActionRequest, sid: str = SessionId) -> dict[str, Any]:
        if parse_action(body.action) is Action.ANSWER:
            raise Refused(400, "ANSWER ends a task; it is only offered on the Play screen")
        with store.use(sid) as session:
            ensure_walking(session)
            obs, _, _, _, info = session.env.step(body.action, body.magnitude)
            session.obs, session.info = obs, info
            remember_pose(session)
            return walk_payload(state, session)

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
            ensure_walking(session)
            obs, info = session.env.reset(seed=0, options=options)
            session.obs, session.info, session.mode = obs, info, "walk"
            remember_pose(session)
            return walk_payload(state, session)
