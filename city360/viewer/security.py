"""What keeps the viewer safe: the token check, paths confined to their folders, session ids.

Paths that come from a request are suite- or city-relative POSIX paths. They are refused when
absolute, when they hold ``..`` or a backslash, and when they resolve (following symlinks)
outside their root, so neither ``../../etc/passwd`` nor a symlink planted in ``assets/`` can
read or write outside the suite or the city.
"""

from __future__ import annotations

import hmac
import re
from pathlib import Path, PurePosixPath

__all__ = [
    "SESSION_HEADER",
    "TOKEN_HEADER",
    "TOKEN_QUERY",
    "PathRefused",
    "safe_path",
    "token_matches",
    "valid_session_id",
]

TOKEN_HEADER = "X-City360-Token"
TOKEN_QUERY = "token"
SESSION_HEADER = "X-City360-Session"
_SESSION_RE = re.compile(r"^[A-Za-z0-9_\-]{8,64}$")


class PathRefused(ValueError):
    """A requested path is malformed (``status`` 400) or escapes its root (403)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def safe_path(root: Path, relative: str) -> Path:
    """``root / relative`` resolved, or :class:`PathRefused` when it would leave ``root``."""
    pure = PurePosixPath(relative)
    if not relative or "\\" in relative or "\0" in relative:
        msg = f"path {relative!r} must be a non-empty relative path with '/' separators"
        raise PathRefused(msg, 400)
    if pure.is_absolute() or relative.startswith("~"):
        msg = f"path {relative!r} is absolute; give a path inside {root.name}/"
        raise PathRefused(msg, 400)
    if ".." in pure.parts:
        msg = f"path {relative!r} holds '..'; give a path inside {root.name}/"
        raise PathRefused(msg, 400)
    base = root.resolve()
    target = (base / pure).resolve()
    if not target.is_relative_to(base):
        msg = f"path {relative!r} leads outside {root.name}/ (through a symlink)"
        raise PathRefused(msg, 403)
    return target


def token_matches(expected: str, given: str | None) -> bool:
    """Constant-time comparison, so response timing says nothing about the token."""
    if given is None:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8"))


def valid_session_id(value: str | None) -> bool:
    """Session ids are 8..64 characters of letters, digits, '-' and '_' (the page makes one)."""
    return value is not None and bool(_SESSION_RE.match(value))
