"""Helpers shared by the SDK-backed providers: classify HTTP failures, read Retry-After."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["is_transient_status", "retry_after_s"]


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
