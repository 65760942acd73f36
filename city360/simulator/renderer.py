"""The GL renderer: equirect -> perspective in a fragment shader, through moderngl and EGL.

Frames are uploaded as decoded, three R8 textures (Y, U, V at half resolution), and converted to
RGB in the shader with the CPU path's matrix. Branch arrows and the route ribbon are drawn as 3D
triangles on the ground in a second pass. GL objects (textures per source size, framebuffers
per view size, the overlay vertex buffer) are made once and reused, so a step allocates none;
a frame already on the GPU is not uploaded again (rotations only re-render).

:func:`make_renderer` picks this path on a GPU; where no context can be made, or the only
OpenGL is a software rasterizer (slower than OpenCV's remap on the same CPU), it picks the
OpenCV renderer, which draws the same picture (PSNR >= 40 dB, tested).
"""

from __future__ import annotations

import logging
from collections.abc import Hashable
from typing import TYPE_CHECKING, Protocol

import numpy as np

from city360.errors import ClosedResourceError, RenderError
from city360.simulator.arrows import Overlay
from city360.simulator.camera import ViewSpec, rotation
from city360.simulator.renderer_cv import YUV_TO_RGB, CpuRenderer, Planes
from city360.types import Image

if TYPE_CHECKING:
    import moderngl

__all__ = ["SOFTWARE_GL_NAMES", "GlRenderer", "Renderer", "is_software_gl", "make_renderer"]

logger = logging.getLogger(__name__)

_MAX_OVERLAY_VERTICES = 1 << 14

_FULLSCREEN_VS = """
#version 330
void main() {
    vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
"""

_EQUIRECT_FS = """
#version 330
uniform sampler2D tex_y;
uniform sampler2D tex_u;
uniform sampler2D tex_v;
uniform mat3 rot;          // camera -> frame (x right, y up, z = frame centre column)
uniform vec2 tan_half;     // tan of half the horizontal / vertical FOV
uniform vec2 size;         // output size in pixels
uniform mat3 yuv_m;        // YUV -> RGB (columns Y, U, V), 0..255 units
uniform vec3 yuv_b;        // offset, 0..255 units
out vec4 color;
const float PI = 3.14159265358979;
void main() {
    vec2 ndc = gl_FragCoord.xy / size * 2.0 - 1.0;
    vec3 ray = rot * vec3(ndc.x * tan_half.x, ndc.y * tan_half.y, 1.0);
    float lon = atan(ray.x, ray.z);
    float lat = atan(ray.y, length(ray.xz));
    vec2 tc = vec2(lon / (2.0 * PI) + 0.5, 0.5 - lat / PI);
    vec3 yuv = vec3(textureLod(tex_y, tc, 0.0).r, textureLod(tex_u, tc, 0.0).r,
                    textureLod(tex_v, tc, 0.0).r) * 255.0;
    color = vec4(clamp((yuv_m * yuv + yuv_b) / 255.0, 0.0, 1.0), 1.0);
}
"""

_OVERLAY_VS = """
#version 330
uniform mat3 world_to_cam;
uniform vec2 tan_half;
in vec3 in_pos;
in vec3 in_color;
out vec3 v_color;
void main() {
    vec3 c = world_to_cam * in_pos;
    const float near = 0.05;
    const float far = 1000.0;
    float z = (c.z * (far + near) - 2.0 * far * near) / (far - near);
    gl_Position = vec4(c.x / tan_half.x, c.y / tan_half.y, z, c.z);
    v_color = in_color;
}
"""

_OVERLAY_FS = """
#version 330
in vec3 v_color;
out vec4 color;
void main() { color = vec4(v_color, 1.0); }
"""


def _uniform(program: moderngl.Program, name: str) -> moderngl.Uniform:
    import moderngl

    member = program[name]
    if not isinstance(member, moderngl.Uniform):  # pragma: no cover - shaders are ours
        msg = f"shader member {name!r} is not a uniform"
        raise RenderError(msg)
    return member


class Renderer(Protocol):
    """What the env needs from a renderer."""

    name: str

    def render(
        self, frame_key: Hashable, planes: Planes, spec: ViewSpec, overlay: Overlay | None = None
    ) -> Image: ...

    def close(self) -> None: ...


class GlRenderer:
    """moderngl renderer; a context manager. ``ctx`` defaults to
    :func:`city360._gl.create_context` (EGL first); raises RenderError when none can be made."""

    name = "gl"

    def __init__(self, ctx: moderngl.Context | None = None) -> None:
        if ctx is None:
            from city360._gl import create_context

            ctx = create_context()
        self.ctx = ctx
        with ctx:  # GL contexts are per thread and per env: make ours current for every call
            self._setup(ctx)
        logger.info("simulator renderer: OpenGL %s", ctx.info.get("GL_RENDERER"))

    def _setup(self, ctx: moderngl.Context) -> None:
        try:
            self._equirect = ctx.program(vertex_shader=_FULLSCREEN_VS, fragment_shader=_EQUIRECT_FS)
            self._overlay_prog = ctx.program(vertex_shader=_OVERLAY_VS, fragment_shader=_OVERLAY_FS)
        except Exception as exc:
            msg = f"the OpenGL driver rejected the simulator shaders: {exc}"
            raise RenderError(msg) from exc
        self._fullscreen = ctx.vertex_array(self._equirect, [])
        self._overlay_vbo = ctx.buffer(reserve=_MAX_OVERLAY_VERTICES * 6 * 4, dynamic=True)
        self._overlay_vao = ctx.vertex_array(
            self._overlay_prog, [(self._overlay_vbo, "3f 3f", "in_pos", "in_color")]
        )
        m = YUV_TO_RGB
        _uniform(self._equirect, "yuv_m").value = tuple(
            float(m[r, c]) for c in range(3) for r in range(3)
        )
        _uniform(self._equirect, "yuv_b").value = tuple(float(v) for v in m[:, 3])
        _uniform(self._equirect, "tex_y").value = 0
        _uniform(self._equirect, "tex_u").value = 1
        _uniform(self._equirect, "tex_v").value = 2
        self._textures: dict[tuple[int, int], tuple[moderngl.Texture, ...]] = {}
        self._loaded: dict[tuple[int, int], Hashable] = {}
        self._targets: dict[tuple[int, int], tuple[moderngl.Framebuffer, bytearray]] = {}
        self._closed = False

    def __repr__(self) -> str:
        return f"GlRenderer({self.ctx.info.get('GL_RENDERER')!r})"

    def __enter__(self) -> GlRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release every GL object and the context; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        with self.ctx:
            self._release_objects()
        self.ctx.release()

    def _release_objects(self) -> None:
        for textures in self._textures.values():
            for texture in textures:
                texture.release()
        for fbo, _ in self._targets.values():
            for attachment in fbo.color_attachments:
                attachment.release()
            fbo.release()
        for obj in (self._overlay_vao, self._overlay_vbo, self._fullscreen):
            obj.release()
        self._equirect.release()
        self._overlay_prog.release()
        self._textures.clear()
        self._targets.clear()

    def _upload(self, frame_key: Hashable, planes: Planes) -> None:
        size = (planes[0].shape[1], planes[0].shape[0])
        textures = self._textures.get(size)
        if textures is None:
            textures = tuple(
                self.ctx.texture((p.shape[1], p.shape[0]), 1, dtype="f1", alignment=1)
                for p in planes
            )
            for texture in textures:
                texture.filter = (self.ctx.LINEAR, self.ctx.LINEAR)
                texture.repeat_x = True
                texture.repeat_y = False
            self._textures[size] = textures
        if self._loaded.get(size) != frame_key:
            for texture, plane in zip(textures, planes, strict=True):
                texture.write(np.ascontiguousarray(plane))
            self._loaded[size] = frame_key
        for unit, texture in enumerate(textures):
            texture.use(unit)

    def _target(self, width: int, height: int) -> tuple[moderngl.Framebuffer, bytearray]:
        target = self._targets.get((width, height))
        if target is None:
            fbo = self.ctx.framebuffer(
                color_attachments=[self.ctx.renderbuffer((width, height), 4)]
            )
            target = (fbo, bytearray(width * height * 3))
            self._targets[(width, height)] = target
        return target

    def render(
        self, frame_key: Hashable, planes: Planes, spec: ViewSpec, overlay: Overlay | None = None
    ) -> Image:
        """Render one view; ``frame_key`` identifies ``planes`` so a frame already uploaded is
        not uploaded again."""
        if self._closed:
            msg = "GlRenderer is closed"
            raise ClosedResourceError(msg)
        with self.ctx:
            return self._render(frame_key, planes, spec, overlay)

    def _render(
        self, frame_key: Hashable, planes: Planes, spec: ViewSpec, overlay: Overlay | None
    ) -> Image:
        self._upload(frame_key, planes)
        fbo, buffer = self._target(spec.width, spec.height)
        fbo.use()
        tx, ty = spec.tan_half
        rot = rotation(spec.relative_yaw_deg, spec.pitch_deg)
        _uniform(self._equirect, "rot").value = tuple(float(v) for v in rot.T.flat)  # column-major
        _uniform(self._equirect, "tan_half").value = (tx, ty)
        _uniform(self._equirect, "size").value = (float(spec.width), float(spec.height))
        self._fullscreen.render(mode=self.ctx.TRIANGLES, vertices=3)
        if overlay is not None and overlay.triangle_count:
            self._draw_overlay(overlay, spec)
        fbo.read_into(buffer, components=3, alignment=1)
        image = np.frombuffer(buffer, np.uint8).reshape(spec.height, spec.width, 3)
        return np.ascontiguousarray(image[::-1])

    def _draw_overlay(self, overlay: Overlay, spec: ViewSpec) -> None:
        count = min(len(overlay.vertices), _MAX_OVERLAY_VERTICES)
        data = np.empty((count, 6), np.float32)
        data[:, :3] = overlay.vertices[:count]
        data[:, 3:] = overlay.colors[:count] / np.float32(255.0)
        self._overlay_vbo.write(data.tobytes())
        world_to_cam = rotation(spec.yaw_deg, spec.pitch_deg).T
        _uniform(self._overlay_prog, "world_to_cam").value = tuple(
            float(v) for v in world_to_cam.T.flat
        )
        _uniform(self._overlay_prog, "tan_half").value = spec.tan_half
        self._overlay_vao.render(mode=self.ctx.TRIANGLES, vertices=count - count % 3)


SOFTWARE_GL_NAMES = ("llvmpipe", "softpipe", "swrast", "swiftshader")
"""Substrings of ``GL_RENDERER`` that mark a software rasterizer."""


def is_software_gl(ctx: moderngl.Context) -> bool:
    """True when the context rasterizes on the CPU (Mesa llvmpipe and the like)."""
    name = str(ctx.info.get("GL_RENDERER", "")).lower()
    return any(software in name for software in SOFTWARE_GL_NAMES)


def make_renderer(choice: str = "auto") -> Renderer:
    """``gl``: the GL renderer or RenderError; ``cpu``: the OpenCV one; ``auto``: GL on a GPU,
    else OpenCV — when no context can be made (logged at WARNING with the reason) or when the
    only OpenGL is a software rasterizer such as Mesa's llvmpipe, where the OpenCV path is
    measured 2-3x faster for the same picture (logged at INFO; ``gl`` forces it)."""
    if choice == "cpu":
        return CpuRenderer()
    try:
        renderer = GlRenderer()
    except RenderError as exc:
        if choice == "gl":
            raise
        logger.warning("OpenGL unavailable, using the OpenCV renderer: %s", exc)
        return CpuRenderer()
    if choice == "auto" and is_software_gl(renderer.ctx):
        name = renderer.ctx.info.get("GL_RENDERER")
        renderer.close()
        logger.info("OpenGL is software (%s): using the faster OpenCV renderer", name)
        return CpuRenderer()
    return renderer
