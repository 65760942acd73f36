"""Request bodies bounded while they are read, not after.

A body announced larger than the limit (``Content-Length``) is refused with 413 before a byte
of it is read; a body without a length (chunked) is counted as it arrives and refused with 413
the moment it passes the limit. Before this a 400 MB body was read whole (360 MB -> 1.5 GB).
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["DEFAULT_MAX_BODY_BYTES", "BodyLimit"]

DEFAULT_MAX_BODY_BYTES = 1_000_000
"""1 MB: the viewer's largest body (a task draft) is a few kB; pictures go by capture id."""


def _too_large(limit: int) -> str:
    return f"request body larger than {limit} bytes; the viewer accepts at most {limit} bytes"


class BodyLimit:
    """ASGI middleware refusing bodies over ``max_bytes`` with 413."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers", [])}
        length = headers.get("content-length")
        if length is not None:
            try:
                announced = int(length)
            except ValueError:
                announced = -1
            if announced < 0 or announced > limit:
                await _refuse(send, 413 if announced > limit else 400, limit, announced)
                return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise HTTPException(413, _too_large(limit))
            return message

        await self.app(scope, counted, send)


async def _refuse(send: Send, status: int, limit: int, announced: int) -> None:
    import json

    from city360.viewer.security import SECURITY_HEADERS

    message = _too_large(limit) if status == 413 else "Content-Length must be a whole number"
    body = json.dumps({"error": message}).encode("utf-8")
    headers: list[Any] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"connection", b"close"),
        *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in SECURITY_HEADERS.items()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
