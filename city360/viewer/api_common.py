"""What the viewer's API modules share: the server state, request bodies, refusals, the
session id dependency, and small payload helpers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Depends, Header
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from city360.errors import TaskError
from city360.simulator.actions import BRANCH_ACTIONS
from city360.viewer.authoring import SuiteEditor
from city360.viewer.config import ViewerConfig
from city360.viewer.play import HumanRun
from city360.viewer.security import SESSION_HEADER, TASK_ID_PATTERN, valid_session_id
from city360.viewer.sessions import SessionStore

__all__ = [
    "TASK_ID_PATTERN",
    "ActionRequest",
    "Body",
    "Refused",
    "SessionId",
    "ViewerState",
    "branches_of",
    "error_response",
    "find_task",
    "prompt_of",
    "task_summary",
]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ActionRequest(Body):
    action: str = Field(min_length=1, max_length=16)
    magnitude: str | None = Field(None, max_length=16)
    answer: str | None = Field(None, max_length=500)


# --- state ------------------------------------------------------------------------------------


@dataclass
class ViewerState:
    config: ViewerConfig
    store: SessionStore
    editor: SuiteEditor
    run: HumanRun
    graph: Any
    citymap: Any
    city_name: str


class Refused(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.extra = extra


def error_response(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def session_id(
    x_city360_session: str | None = Header(default=None, alias=SESSION_HEADER),
) -> str:
    if not valid_session_id(x_city360_session):
        msg = f"the {SESSION_HEADER} header must hold a session id (8-64 letters, digits, - or _)"
        raise Refused(400, msg)
    assert x_city360_session is not None
    return x_city360_session


SessionId = Depends(session_id)


def branches_of(obs: dict[str, Any]) -> dict[str, bool]:
    return {a.value: bool(m) for a, m in zip(BRANCH_ACTIONS, obs["branch_mask"], strict=True)}


def task_summary(task: Any) -> dict[str, Any]:
    return {"id": task.id, "family": str(task.family), "difficulty": task.difficulty.value}


def prompt_of(task: Any) -> dict[str, Any]:
    view = task.agent_view()
    return {
        "prompt": view.prompt,
        "answer_format": view.answer_format,
        "images": [f"/api/suite/asset?path={p}" for p in view.reference_images],
        "step_limit": view.step_limit,
    }


def find_task(editor: SuiteEditor, task_id: str) -> Any:
    suite = editor.load()
    try:
        return suite.task(task_id)
    except TaskError as exc:
        raise Refused(404, str(exc)) from None
