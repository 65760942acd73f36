"""The Author screen's API: the suite's tasks, captures, verification, save and delete."""

from __future__ import annotations

import base64
import dataclasses
import secrets
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse
from pydantic import Field

from city360.viewer.api_common import (
    TASK_ID_PATTERN,
    Body,
    Refused,
    SessionId,
    ViewerState,
    find_task,
    prompt_of,
    task_summary,
)
from city360.viewer.api_walk import ensure_walking
from city360.viewer.authoring import SuiteEditor, TaskDraft, draft_of
from city360.viewer.images import data_url
from city360.viewer.security import task_id_problem

__all__ = ["AuthorRequest", "install"]

_ASSET_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


class AuthorRequest(Body):
    draft: TaskDraft
    replacing: str | None = Field(None, max_length=80, pattern=TASK_ID_PATTERN)


# --- author -----------------------------------------------------------------------------------


def install(app: FastAPI, state: ViewerState) -> None:
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
            "tasks": [task_summary(t) for t in suite.tasks],
        }

    @app.get("/api/suite/tasks/{task_id}")
    def get_task(task_id: str) -> dict[str, Any]:
        task = find_task(editor, task_id)
        return {
            "task": task.model_dump(mode="json"),
            "draft": draft_of(task, state.graph),
            **prompt_of(task),
        }

    @app.get("/api/suite/asset")
    def asset(path: str) -> FileResponse:
        target = editor.asset(path)
        media = _ASSET_TYPES.get(target.suffix.lower())
        if media is None:
            raise Refused(400, f"only PNG and JPEG assets are served, not {path!r}")
        if not target.is_file():
            raise Refused(404, f"the suite has no asset {path!r}")
        return FileResponse(target, media_type=media)

    @app.post("/api/author/capture")
    def capture(sid: str = SessionId) -> dict[str, Any]:

        from city360.viewer.images import png_bytes

        with store.use(sid) as session:
            ensure_walking(session)
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
        problem = task_id_problem(body.draft.id)
        if problem is not None:
            raise Refused(400, problem, problems=[{"field": "id", "message": problem}])
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
            find_task(editor, body.replacing)
        result = verified(body, sid)
        if not result.ok:
            listed = "; ".join(f"{p.field}: {p.message}" for p in result.problems)
            raise Refused(422, f"task not saved ({listed})", **verdict(result))
        suite = editor.save(result, replacing=body.replacing)
        return {**verdict(result), "saved": result.task.id, "hash": suite.content_hash()}

    @app.delete("/api/suite/tasks/{task_id}")
    def delete(task_id: str) -> dict[str, Any]:
        find_task(editor, task_id)
        suite = editor.delete(task_id)
        return {"deleted": task_id, "tasks": len(suite.tasks)}


def _image_preview(editor: SuiteEditor, new_assets: dict[str, bytes], path: str) -> str:
    """A reference image of a verified task as the page can show it: a new asset inline (it is
    not on disk yet), a saved one by its URL."""

    data = new_assets.get(path)
    if data is not None:
        return "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    editor.asset(path)
    return f"/api/suite/asset?path={path}"
