"""The headless OpenGL context factory."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from city360 import _gl
from city360.errors import RenderError


def _fail(message: str) -> Callable[[], Any]:
    def factory() -> Any:
        raise RuntimeError(message)

    return factory


def test_create_context_renders() -> None:
    if not _gl.gl_available():
        pytest.skip("no OpenGL backend on this machine (Mesa EGL / libegl1 missing)")
    ctx = _gl.create_context()
    try:
        assert ctx.version_code >= _gl.MIN_GL_VERSION
        fbo = ctx.simple_framebuffer((4, 4))
        fbo.use()
        fbo.clear(1.0, 0.0, 0.0, 1.0)
        pixels = fbo.read(components=3)
        assert pixels[:3] == bytes([255, 0, 0])
    finally:
        ctx.release()


def test_falls_back_to_next_backend() -> None:
    if not _gl.gl_available():
        pytest.skip("no OpenGL backend on this machine (Mesa EGL / libegl1 missing)")
    ctx = _gl.create_context(attempts=[("EGL (headless)", _fail("no EGL")), ("real", _gl._egl)])
    ctx.release()


def test_no_backend_raises_with_attempts_and_fix() -> None:
    attempts = [("EGL (headless)", _fail("libEGL.so not found")), ("default", _fail("no display"))]
    with pytest.raises(RenderError) as info:
        _gl.create_context(attempts=attempts)
    message = str(info.value)
    assert re.search(r"EGL \(headless\): RuntimeError: libEGL.so not found", message)
    assert "default: RuntimeError: no display" in message
    assert "apt-get install libegl1" in message
    assert isinstance(info.value, RuntimeError)


def test_gl_available_is_cached() -> None:
    assert _gl.gl_available() is _gl.gl_available()
    assert _gl.gl_available.cache_info().hits >= 1
