"""Headless OpenGL contexts for the synth renderer and the simulator.

A process may hold several contexts (a synth renderer, a simulator renderer, a probe); only
one is current per thread, and creating one makes it current. Users of a context therefore
enter it around their GL work (``with ctx: ...``), which makes it current and restores the
previous one afterwards.

On a server there is no display, so the context must come from EGL (Mesa's llvmpipe on a
CPU-only machine, the vendor driver where there is a GPU). :func:`create_context` tries EGL
first, then moderngl's default backend (X11/GLX or WGL/CGL on a desktop), and raises
:class:`~city360.errors.RenderError` naming every attempt and the fix when none works.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from city360.errors import RenderError

if TYPE_CHECKING:
    import moderngl

__all__ = ["MIN_GL_VERSION", "create_context", "gl_available"]

logger = logging.getLogger(__name__)

MIN_GL_VERSION = 330
"""Lowest OpenGL core version the shaders need (``#version 330``)."""

_FIX = (
    "install Mesa's EGL (Debian/Ubuntu: `apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri`), "
    "or run on a machine with a GPU driver or a display"
)


def _egl() -> moderngl.Context:
    import moderngl

    # moderngl's inferred signature types every keyword as a dict, hence the Any-typed mapping
    options: dict[str, Any] = {"require": MIN_GL_VERSION, "backend": "egl"}
    return moderngl.create_standalone_context(**options)


def _default() -> moderngl.Context:
    import moderngl

    return moderngl.create_standalone_context(require=MIN_GL_VERSION)


_ATTEMPTS: tuple[tuple[str, Callable[[], moderngl.Context]], ...] = (
    ("EGL (headless)", _egl),
    ("default backend", _default),
)


def create_context(
    *, attempts: Sequence[tuple[str, Callable[[], moderngl.Context]]] | None = None
) -> moderngl.Context:
    """Create a standalone moderngl context, trying headless EGL first.

    ``attempts`` overrides the ordered list of ``(name, factory)`` pairs (tests use it to
    simulate a machine without OpenGL). Raises :class:`RenderError` listing each attempt's
    failure and how to fix it when no backend works.
    """
    try:
        import moderngl  # noqa: F401  (imported here so a missing wheel is reported clearly)
    except ImportError as exc:
        msg = f"moderngl is not importable ({exc}); reinstall city360: pip install city360"
        raise RenderError(msg) from exc
    failures: list[str] = []
    for name, factory in _ATTEMPTS if attempts is None else attempts:
        try:
            ctx = factory()
        except Exception as exc:  # every backend fails in its own way (Exception, OSError, ...)
            failures.append(f"{name}: {type(exc).__name__}: {exc}".strip())
            logger.debug("OpenGL backend %s failed: %s", name, exc)
            continue
        logger.debug("OpenGL context from %s: %s", name, ctx.info.get("GL_RENDERER"))
        return ctx
    tried = "; ".join(failures) if failures else "no backend was tried"
    version = f"{MIN_GL_VERSION // 100}.{MIN_GL_VERSION % 100 // 10}"
    msg = f"cannot create an OpenGL {version} context (tried {tried}); {_FIX}"
    raise RenderError(msg)


@functools.cache
def gl_available() -> bool:
    """True when :func:`create_context` works on this machine (probed once, then cached).

    The probe creates and releases a context, which leaves no context current: code that
    keeps its own context should make it current around its GL calls (``with ctx: ...``),
    as :class:`city360.synth.render.EquirectRenderer` does.
    """
    try:
        ctx = create_context()
    except RenderError as exc:
        logger.info("OpenGL unavailable: %s", exc)
        return False
    ctx.release()
    return True
