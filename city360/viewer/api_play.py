"""The Play screen's API: a task played with exactly an agent's observation and actions."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI
from pydantic import Field

from city360.viewer.api_common import (
    TASK_ID_PATTERN,
    ActionRequest,
    Body,
    Refused,
    SessionId,
    ViewerState,
    branches_of,
    find_task,
    prompt_of,
    task_summary,
)
from city360.viewer.api_walk import remember_pose
from city360.viewer.images import data_url
from city360.viewer.play import HumanEpisode
from city360.viewer.sessions import Session

__all__ = ["PlayRequest", "install"]


class PlayRequest(Body):
    task_id: str = Field(min_length=1, max_length=80, pattern=TASK_ID_PATTERN)


# --- play -------------------------------------------------------------------------------------


def _play_payload(state: ViewerState, episode: HumanEpisode) -> dict[str, Any]:
    obs = episode.observation
    out: dict[str, Any] = {
        "mode": "play",
        "task_id": episode.task.id,
        "view": data_url(obs["view"]),
        "map": data_url(obs["map"], kind="png") if state.config.play_map and "map" in obs else None,
        "branches": branches_of(obs),
        "feedback": obs["feedback"],
        "step": int(obs["step"]),
        "step_limit": episode.task.step_limit,
        "done": episode.done,
    }
    if episode.done:
        out["outcome"] = episode.outcome()
    return out


@contextlib.contextmanager
def _episode(state: ViewerState, sid: str) -> Iterator[tuple[Session, HumanEpisode]]:
    with state.store.use(sid) as session:
        if session.episode is None:
            raise Refused(409, "no task is being played in this tab; pick one on the Play screen")
        yield session, session.episode


def install(app: FastAPI, state: ViewerState) -> None:
    store, editor, run = state.store, state.editor, state.run

    @app.get("/api/play/tasks")
    def play_tasks() -> dict[str, Any]:
        suite = editor.load()
        tasks = []
        for task in suite.tasks:
            item = task_summary(task)
            played = run.played.get(task.id)
            item["played"] = played is not None
            if played is not None:
                item["score"] = played.evaluation_score
                item["status"] = played.status
            tasks.append(item)
        return {"run": state.config.run_id, "tasks": tasks}

    @app.post("/api/play/start")
    def play_start(body: PlayRequest, sid: str = SessionId) -> dict[str, Any]:
        from city360.eval.specs import task_seed

        suite = editor.load()
        task = find_task(editor, body.task_id)
        with store.use(sid) as session:
            current = session.episode
            if current is not None and not current.done and current.task.id == task.id:
                return {**prompt_of(task), **_play_payload(state, current)}  # already on it
            if task.id in run.played or task.id in run.active:
                when = "was already played" if task.id in run.played else "is being played"
                msg = (
                    f"task {task.id!r} {when} in run {state.config.run_id!r}; each task is "
                    "played once per run (start the viewer with another --run-id to replay it)"
                )
                raise Refused(409, msg)
            if session.episode is not None and not session.episode.done:
                session.episode.abandon()
            remember_pose(session)
            episode = HumanEpisode(
                session.env, task, suite, run=run, graph=state.graph, seed=task_seed(0, task.id)
            )
            episode.start()  # may refuse (the run folder is locked): the session keeps none
            session.mode = "play"
            session.episode = episode
            return {**prompt_of(task), **_play_payload(state, episode)}

    @app.get("/api/play")
    def play_current(sid: str = SessionId) -> dict[str, Any]:
        """The episode this tab plays, or ``task_id`` None when it plays none (the Play screen
        then shows the task list; a 409 here was logged by the browser as an error)."""
        with store.use(sid) as session:
            episode = session.episode
            if episode is None:
                return {"mode": "play", "task_id": None}
            return {**prompt_of(episode.task), **_play_payload(state, episode)}

    @app.post("/api/play/step")
    def play_step(body: ActionRequest, sid: str = SessionId) -> dict[str, Any]:
        with _episode(state, sid) as (_session, episode):
            if episode.done:
                raise Refused(409, f"task {episode.task.id!r} is over; pick another task")
            episode.step(body.action, body.magnitude, body.answer)
            return _play_payload(state, episode)

    @app.post("/api/play/abandon")
    def play_abandon(sid: str = SessionId) -> dict[str, Any]:
        with _episode(state, sid) as (_session, episode):
            episode.abandon()
            return _play_payload(state, episode)
