"""Settings of one viewer server, validated once when it starts.

Safe by default: the server binds ``127.0.0.1``; binding any other host needs a token, and with
a token every request (pages, API, images) must carry it.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from city360.errors import ConfigError

__all__ = ["DEFAULT_PORT", "TOKEN_MIN_CHARS", "ViewerConfig", "is_loopback"]

DEFAULT_PORT = 8360
TOKEN_MIN_CHARS = 16
"""A shorter token is refused: it would be guessable by anyone on the network."""
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_\-.~]+$")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class ViewerConfig:
    """Everything ``city360 view`` is started with. Paths are resolved to absolute ones."""

    city_dir: Path
    suite_dir: Path
    """Suite folder the Author screen edits and the Play screen plays (created on first save)."""
    output_root: Path
    """Human runs go to ``<output_root>/<run_id>/`` in the eval results format."""
    run_id: str
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    renderer: str = "auto"
    player: str = ""
    """Who plays (the ``model`` column of human results rows), e.g. an annotator's initials."""
    play_map: bool = True
    """Show the location map while playing (False is the "without location" ablation)."""
    max_sessions: int = 8
    """Browser sessions held at once (each holds an environment); the idlest is dropped."""
    idle_timeout_s: float = 1800.0
    """A session unused this long is closed."""
    max_body_bytes: int = 1_000_000
    """Largest request body accepted (413 beyond it, refused before it is read)."""

    def __post_init__(self) -> None:
        if self.token is not None and (
            len(self.token) < TOKEN_MIN_CHARS or not _TOKEN_RE.match(self.token)
        ):
            msg = (
                f"--token must be at least {TOKEN_MIN_CHARS} characters of letters, digits, "
                "'-', '_', '.' or '~'; make one with: python -c \"import secrets; "
                'print(secrets.token_urlsafe(24))"'
            )
            raise ConfigError(msg)
        if not is_loopback(self.host) and self.token is None:
            msg = (
                f"refusing to serve on {self.host!r} without --token: anyone who can reach it "
                "could walk the city and edit the suite. Pass --token TOKEN (at least "
                f"{TOKEN_MIN_CHARS} characters) or bind 127.0.0.1"
            )
            raise ConfigError(msg)
        if not 0 <= self.port <= 65535:
            msg = f"--port must be in 0..65535, got {self.port}"
            raise ConfigError(msg)
        if self.max_sessions < 1:
            msg = f"`max_sessions` must be >= 1, got {self.max_sessions}"
            raise ConfigError(msg)
        if self.max_body_bytes < 1024:
            msg = f"`max_body_bytes` must be >= 1024, got {self.max_body_bytes}"
            raise ConfigError(msg)
        if not self.idle_timeout_s > 0:
            msg = f"`idle_timeout_s` must be > 0, got {self.idle_timeout_s}"
            raise ConfigError(msg)
        if self.renderer not in ("auto", "gl", "cpu"):
            msg = f"--renderer must be auto, gl or cpu, got {self.renderer!r}"
            raise ConfigError(msg)
        if len(self.player) > 64 or any(c in self.player for c in '\r\n,"'):
            msg = f"--player must be up to 64 characters without commas or quotes: {self.player!r}"
            raise ConfigError(msg)
        if not re.match(r"^[A-Za-z0-9_.\-]+$", self.run_id):
            msg = f"run id {self.run_id!r} may only hold letters, digits, '.', '_' and '-'"
            raise ConfigError(msg)
        if not (self.city_dir / "city.json").is_file():
            from city360.errors import InputFileError

            msg = f"{self.city_dir} is not a city directory (no city.json); build one first"
            raise InputFileError(msg)
        if not (self.city_dir / "graph.json").is_file():
            from city360.errors import InputFileError

            msg = (
                f"{self.city_dir} has no graph.json; build the pose graph first with "
                f"`city360 build {self.city_dir}`"
            )
            raise InputFileError(msg)
