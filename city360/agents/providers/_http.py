"""Helpers shared by the SDK-backed providers: classify HTTP failures, read Retry-After."""

from __future__ import annotations

from collections.abc import Mapping

from city360.agents.retry import TransientCallError

__all__ = ["is_transient_status", "not_a_reply", "retry_after_s"]


def is_transient_status(status: int) -> bool:
    """408 (timeout), 409 (conflict, often a lock), 429 (rate limit) and every 5xx are worth
    repeating; other statuses will fail the same way again."""
    return status in (408, 409, 429) or status >= 500


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (numeric form), or None."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if 0 <= seconds < 3600:
            return seconds
    return None


def not_a_reply(where: str, protocol: str, body: object) -> TransientCallError:
    """The error for a successful HTTP status whose body is not what ``protocol`` promises
    (an HTML error page from a proxy, a captive portal, a half-started server): counted and
    retried like a 5xx, since such pages usually go away, and named plainly when they do not."""
    from city360.scrub import scrub_text

    shown = " ".join(str(body).split())[:80]
    msg = (
        f"{where} answered with a body that is not a {protocol} reply "
        f"({type(body).__name__}: {scrub_text(shown)!r}); check base_url points at the API "
        "itself, not a web page or proxy"
    )
    return TransientCallError(msg)
