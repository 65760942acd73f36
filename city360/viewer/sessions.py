"""Browser sessions: one environment per session, a cap on how many, and idle expiry.

Each browser tab makes a random session id and sends it with every API call. A session holds
one :class:`~city360.simulator.env.CityEnv` (walking, authoring and playing share it, one mode
at a time), the reference-image captures it has taken, and the episode it is playing.

Environments are driven under one process-wide lock: uvicorn answers requests from a thread
pool, an environment is not thread-safe, and a page may send a key press while the previous one
is still rendering. (The GL renderer makes its own context current for every call, so an
environment may be used from whichever thread holds the lock.)
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from city360.simulator.env import CityEnv
    from city360.viewer.play import HumanEpisode

__all__ = ["Session", "SessionStore"]

MAX_CAPTURES = 16
"""Reference-image captures a session keeps (oldest dropped first)."""


@dataclass
class Session:
    """One browser session's state. ``walk_pose`` is where walking resumes after playing."""

    id: str
    env: CityEnv
    last_used: float
    mode: str = "walk"
    obs: dict[str, Any] | None = None
    info: dict[str, Any] | None = None
    walk_pose: dict[str, Any] | None = None
    captures: dict[str, bytes] = field(default_factory=dict)
    episode: HumanEpisode | None = None

    def add_capture(self, capture_id: str, png: bytes) -> None:
        self.captures[capture_id] = png
        while len(self.captures) > MAX_CAPTURES:
            self.captures.pop(next(iter(self.captures)))

    def close(self) -> None:
        if self.episode is not None:
            self.episode.close()
            self.episode = None
        self.env.close()


class SessionStore:
    """Sessions by id, at most ``max_sessions``; idle ones expire after ``idle_timeout_s``.

    ``env_factory`` makes the environment of a new session. ``clock`` is injectable for tests.
    """

    def __init__(
        self,
        env_factory: Callable[[], CityEnv],
        *,
        max_sessions: int,
        idle_timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._factory = env_factory
        self._max = max_sessions
        self._idle_s = idle_timeout_s
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    @contextlib.contextmanager
    def use(self, session_id: str) -> Iterator[Session]:
        """The session ``session_id`` (made when new), held under the simulation lock."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            session = self._sessions.get(session_id)
            if session is None:
                if len(self._sessions) >= self._max:
                    idlest = min(self._sessions.values(), key=lambda s: s.last_used)
                    self._drop(idlest.id)
                session = Session(id=session_id, env=self._factory(), last_used=now)
                self._sessions[session_id] = session
            session.last_used = now
            yield session

    def _expire(self, now: float) -> None:
        for sid in [s.id for s in self._sessions.values() if now - s.last_used > self._idle_s]:
            self._drop(sid)

    def _drop(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.close()

    def close(self) -> None:
        """Close every session (on server shutdown)."""
        with self._lock:
            for sid in list(self._sessions):
                self._drop(sid)
