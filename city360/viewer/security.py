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
    "SECURITY_HEADERS",
    "SESSION_HEADER",
    "TASK_ID_PATTERN",
    "TASK_ID_RULE",
    "TOKEN_HEADER",
    "TOKEN_QUERY",
    "PathRefused",
    "allowed_host_names",
    "host_allowed",
    "origin_allowed",
    "safe_path",
    "task_id_problem",
    "token_matches",
    "valid_session_id",
]

TOKEN_HEADER = "X-City360-Token"
TOKEN_QUERY = "token"
SESSION_HEADER = "X-City360-Session"
_SESSION_RE = re.compile(r"^[A-Za-z0-9_\-]{8,64}$")

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
"""Sent with every response, refusals (401, 403, 413) included."""

TASK_ID_PATTERN = r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,79}$"
TASK_ID_RULE = (
    "a task id is a slug of 1-80 letters, digits, '_', '-' and '.', not starting with '.' "
    "(so never '..' or a hidden name)"
)
_TASK_ID_RE = re.compile(TASK_ID_PATTERN)
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


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


def task_id_problem(task_id: str) -> str | None:
    """Why ``task_id`` cannot name a task (None when it can): ids become file names (step
    logs, assets), so ``..`` or ``.hidden`` would point outside or hide files."""
    if _TASK_ID_RE.match(task_id):
        return None
    return f"task id {task_id[:100]!r} refused: {TASK_ID_RULE}"


def allowed_host_names(bound_host: str) -> frozenset[str]:
    """Names a browser may use to reach a server bound to ``bound_host``: the loopback names
    and the bound host itself (lower case, IPv6 without brackets)."""
    return frozenset({*_LOOPBACK_NAMES, bound_host.strip("[]").lower()})


def _host_name(authority: str) -> str:
    """``example.org:8360`` -> ``example.org``; ``[::1]:8360`` -> ``::1``."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1:].split("]", 1)[0]
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


def host_allowed(host_header: str | None, allowed: frozenset[str]) -> bool:
    """Whether the request's ``Host`` names this server. A page on an attacker's domain that
    resolves to 127.0.0.1 (DNS rebinding) sends its own domain here and is refused."""
    return bool(host_header) and _host_name(host_header or "") in allowed


def origin_allowed(origin: str | None, allowed: frozenset[str]) -> bool:
    """Whether a state-changing request's ``Origin`` is this server (no Origin: a non-browser
    client, allowed; ``null``: an opaque origin, refused)."""
    if origin is None:
        return True
    scheme, _, rest = origin.partition("://")
    if scheme not in ("http", "https") or not rest:
        return False
    return _host_name(rest.split("/", 1)[0]) in allowed
