"""Render a :class:`~city360.synth.scene.Scene` with moderngl: 360° equirect and perspective views.

An equirect frame is made the way a 360° camera stitches one: six 90° cube faces (turned
with the camera) are rendered into one 3 x 2 texture, then resampled to longitude/latitude
and read back once. The resampling runs in a full-screen shader (``resample="gpu"``), or, on
a software rasterizer such as Mesa's llvmpipe, with OpenCV's ``remap`` on the read-back
faces (``"cpu"``; fixed maps, since the faces turn with the camera), which costs about half
the CPU time there. ``"auto"`` (the default) picks by ``GL_RENDERER``. Both paths share one
mapping and agree to within interpolation rounding. Conventions follow docs/contracts.md: the
centre column looks along ``heading_deg``, longitude grows to the right, row 0 is straight up.

The visual condition (``look``, :mod:`city360.synth.looks`: day, dusk, night, rain, fog) is a
set of shader uniforms (sky, ambient and sun, haze, sign glow, lit windows, the street lamps
nearest the camera, wet ground) plus rain streaks drawn as world-space lines; ``day`` renders
exactly what the renderer drew before conditions existed.

Static geometry (ground, walls, signs, street objects) is uploaded once, sorted into 40 m
chunks; each view draws the chunks inside its frustum and the material's draw distance with
one indirect multi-draw per material. Only the moving pedestrians and vehicles near the
camera are re-uploaded, once per frame.

Measured on the 2-core llvmpipe machine while ~8 other jobs shared it (process CPU time per
frame, all threads): a 3 x 3 block grid 39 ms at 1024 x 512 and 103 ms at 2048 x 1024; a
Helsinki centre crop (385 buildings, 863 signs, 1,013 objects) 83 ms and 137-171 ms.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from city360.errors import ClosedResourceError, ConfigError, RenderError
from city360.synth._chunks import RECORD_BYTES, Chunks, frustum_planes, make_chunks
from city360.synth._meshes import expand_boxes
from city360.synth.looks import MAX_LAMPS, Look, get_look, lamp_positions, sun_for_look
from city360.types import Image

if TYPE_CHECKING:
    import moderngl

    from city360.synth.scene import Scene

__all__ = ["DEFAULT_EYE_HEIGHT_M", "EquirectRenderer", "look_features"]

DEFAULT_EYE_HEIGHT_M = 1.6
"""Camera height above the street, metres (a 360° camera held or worn at head height)."""

NEAR_M = 0.1
FAR_M = 4000.0
BAY_WIDTH_M = 3.0
STOREY_M = 3.2

# cube faces: (forward, up); right = forward x up. Order fixes the 3 x 2 packing.
_FACES: tuple[tuple[tuple[float, float, float], tuple[float, float, float]], ...] = (
    ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
    ((-1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
    ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
    ((0.0, -1.0, 0.0), (0.0, 0.0, 1.0)),
    ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0)),
    ((0.0, 0.0, -1.0), (0.0, 1.0, 0.0)),
)

_SOFTWARE_GL = ("llvmpipe", "softpipe", "swrast", "lavapipe")
"""Renderers whose shader resampling is slower than OpenCV's remap on the same CPU."""

SIGN_REACH_M = 400.0
"""Signboards further than this are not drawn (under 2 pixels tall at 4K equirect)."""
OBJECT_REACH_M = 250.0
"""Street objects, people and vehicles further than this are not drawn (sub-pixel)."""
RAIN_BOX_M = (30.0, 30.0, 14.0)
"""Rain falls in this box (east, north, up; metres) kept centred on the camera; drops further
away are sub-pixel streaks that the haze covers anyway."""
RAIN_FALL_MPS = (1.2, 0.4, -9.0)
"""Velocity of a raindrop (a light wind from the south-west), metres per second."""
RAIN_STREAK_S = 0.05
"""A streak is how far a drop falls in this exposure, seconds (about 0.45 m)."""
RAIN_COLOR = (0.80, 0.83, 0.87)

F32 = npt.NDArray[np.float32]


@dataclass(frozen=True, eq=False)
class _StaticDraw:
    """Geometry uploaded once, drawn per view as the chunks that view can see."""

    vao: Any
    commands: Any
    chunks: Chunks
    reach_m: float

    def render(
        self, planes: npt.NDArray[np.float64], eye: npt.NDArray[np.float64], slot: int
    ) -> None:
        records = self.chunks.commands(self.chunks.visible(planes, eye, self.reach_m))
        if len(records):
            first = slot * len(self.chunks)
            self.commands.write(records.tobytes(), offset=first * RECORD_BYTES)
            self.vao.render_indirect(self.commands, count=len(records), first=first)


@cache
def _shader(name: str, features: tuple[str, ...] = ()) -> str:
    """The GLSL source of ``name`` with ``common.glsl`` included and each of ``features``
    (``LOOK_LAMPS``, ...: :func:`look_features`) defined right after ``#version``."""
    source = resources.files("city360.synth").joinpath("shaders", name).read_text("utf-8")
    if "//#include common" in source:
        common = resources.files("city360.synth").joinpath("shaders", "common.glsl")
        source = source.replace("//#include common", common.read_text("utf-8"))
    if features:
        version, _, body = source.partition("\n")
        defines = "".join(f"#define {feature}\n" for feature in features)
        source = f"{version}\n{defines}{body}"
    return source


def look_features(look: Look) -> tuple[str, ...]:
    """The optional shader parts ``look`` uses: street lamps, wet ground, lit windows.

    They are compiled in only where a look uses them, not skipped by a branch on a uniform:
    llvmpipe shades both sides of a branch, so a day shader carrying the night's lamp loop
    and the rain's sky reflection ran 2.7x slower per frame (read-back time, demo crop)."""
    parts = (
        ("LOOK_LAMPS", look.lamp_gain > 0),
        ("LOOK_WET", look.wet > 0),
        ("LOOK_WINDOW_GLOW", look.window_glow > 0),
    )
    return tuple(name for name, used in parts if used)


def _u(prog: moderngl.Program, name: str) -> moderngl.Uniform:
    """The uniform ``name`` of ``prog`` (typed access for mypy)."""
    return cast("moderngl.Uniform", prog[name])


def _camera_basis(forward: npt.ArrayLike, up_hint: npt.ArrayLike) -> tuple[F32, F32, F32]:
    f = np.asarray(forward, np.float64)
    f = f / np.linalg.norm(f)
    r = np.cross(f, np.asarray(up_hint, np.float64))
    r = r / np.linalg.norm(r)
    u = np.cross(r, f)
    return f.astype(np.float32), r.astype(np.float32), u.astype(np.float32)


def _view_proj(
    eye: npt.NDArray[np.float64],
    basis: tuple[F32, F32, F32],
    tan_half_x: float,
    tan_half_y: float,
) -> npt.NDArray[np.float64]:
    """The 4x4 view-projection matrix (row-major, acting on column vectors)."""
    f, r, u = (b.astype(np.float64) for b in basis)
    view = np.eye(4)
    view[0, :3], view[1, :3], view[2, :3] = r, u, -f
    view[:3, 3] = -view[:3, :3] @ eye
    proj = np.zeros((4, 4))
    proj[0, 0] = 1.0 / tan_half_x
    proj[1, 1] = 1.0 / tan_half_y
    proj[2, 2] = (FAR_M + NEAR_M) / (NEAR_M - FAR_M)
    proj[2, 3] = 2.0 * FAR_M * NEAR_M / (NEAR_M - FAR_M)
    proj[3, 2] = -1.0
    return proj @ view


def _turn(bases: list[tuple[F32, F32, F32]], heading_deg: float) -> list[tuple[F32, F32, F32]]:
    """Camera-frame axes (x right, y forward, z up) -> world axes for ``heading_deg``."""
    h = math.radians(heading_deg)
    right = np.array([math.cos(h), -math.sin(h), 0.0])
    forward = np.array([math.sin(h), math.cos(h), 0.0])
    up = np.array([0.0, 0.0, 1.0])
    rotation = np.stack([right, forward, up], axis=1).astype(np.float32)
    return [(rotation @ f, rotation @ r, rotation @ u) for f, r, u in bases]


def _remap_maps(width: int, face_px: int) -> tuple[Any, Any]:
    """OpenCV remap maps from equirect pixels to the read-back 3 x 2 face atlas.

    Mirrors ``shaders/equirect.frag`` exactly (same face choice and clamping); the atlas is
    read bottom row first, so atlas row = GL y and no flip is needed.
    """
    import cv2

    height = width // 2
    lon = ((np.arange(width) + 0.5) / width * 2.0 - 1.0) * math.pi
    lat = 0.5 * math.pi - (np.arange(height) + 0.5) / height * math.pi
    lon, lat = np.meshgrid(lon, lat)
    d = np.stack([np.cos(lat) * np.sin(lon), np.cos(lat) * np.cos(lon), np.sin(lat)])
    a = np.abs(d)
    x_major = (a[0] >= a[1]) & (a[0] >= a[2])
    y_major = ~x_major & (a[1] >= a[2])
    positive = np.select([x_major, y_major], [d[0] > 0, d[1] > 0], d[2] > 0)
    axis = np.select([x_major, y_major], [0, 1], 2)
    face = 2 * axis + np.where(positive, 0, 1)
    major = np.take_along_axis(a, axis[None], axis=0)[0]
    # face coordinates along each face's right and up axes (see the shader)
    right = np.select(
        [x_major, y_major],
        [np.where(positive, -d[1], d[1]), np.where(positive, d[0], -d[0])],
        np.where(positive, -d[0], d[0]),
    )
    up = np.where(x_major | y_major, d[2], d[1])
    s = right / major
    t = up / major
    half = 0.5 / face_px
    s = np.clip(0.5 * s + 0.5, half, 1.0 - half)
    t = np.clip(0.5 * t + 0.5, half, 1.0 - half)
    map_x = ((face % 3) + s) * face_px - 0.5
    map_y = ((face // 3) + t) * face_px - 0.5
    return cv2.convertMaps(map_x.astype(np.float32), map_y.astype(np.float32), cv2.CV_16SC2)


class EquirectRenderer:
    """Draws a scene from any pose: ``render`` (equirect) and ``render_perspective``.

    ``width`` is the equirect width (height is ``width // 2``, width must be even and >= 16);
    cube faces are ``face_px`` square (default ``width // 4``, about one face pixel per output
    pixel at the equator). ``samples`` > 0 multisamples the cube faces (slower, smoother
    edges). ``resample`` is ``"auto"``, ``"gpu"`` or ``"cpu"`` (see the module docstring);
    :attr:`resample` tells which was chosen. ``look`` is the visual condition
    (a :class:`~city360.synth.looks.Look` or its name; default ``day``): sky, light, fog,
    glowing signs, street lamps, wet ground and rain streaks, all drawn in 3D. ``ctx`` reuses
    a moderngl context, which ``close()`` then leaves open; otherwise the renderer makes a
    headless one
    (:func:`city360._gl.create_context`) and releases it. Each call makes the renderer's
    context current and restores the caller's afterwards.

    Use as a context manager; ``close()`` is safe to call twice and any other method raises
    :class:`~city360.errors.ClosedResourceError` afterwards. Not thread-safe.
    """

    def __init__(
        self,
        scene: Scene,
        *,
        width: int,
        ctx: moderngl.Context | None = None,
        face_px: int | None = None,
        samples: int = 0,
        resample: str = "auto",
        look: Look | str | None = None,
    ) -> None:
        if width < 16 or width % 2:
            msg = f"`width` must be an even number >= 16, got {width}"
            raise ConfigError(msg)
        face = face_px if face_px is not None else max(16, width // 4)
        if face < 16:
            msg = f"`face_px` must be >= 16, got {face}"
            raise ConfigError(msg)
        if samples < 0:
            msg = f"`samples` must be >= 0, got {samples}"
            raise ConfigError(msg)
        if resample not in ("auto", "gpu", "cpu"):
            msg = f"`resample` must be 'auto', 'gpu' or 'cpu', got {resample!r}"
            raise ConfigError(msg)
        self._closed = True  # until everything below exists
        self.look = get_look(look) if isinstance(look, str) else (look or get_look("day"))
        self.scene = scene
        self.width = width
        self.height = width // 2
        self.face_px = face
        self.samples = samples
        if ctx is None:
            from city360._gl import create_context

            ctx = create_context()
            self._owns_ctx = True
        else:
            self._owns_ctx = False
        self.ctx = ctx
        if resample == "auto":
            renderer = str(ctx.info.get("GL_RENDERER", "")).lower()
            resample = "cpu" if any(sw in renderer for sw in _SOFTWARE_GL) else "gpu"
        self.resample = resample
        self._objects: list[Any] = []
        try:
            with ctx:
                self._setup()
        except Exception as exc:
            self._release()
            if isinstance(exc, RenderError | ConfigError):
                raise
            msg = f"cannot set up the scene renderer on {ctx.info.get('GL_RENDERER')}: {exc}"
            raise RenderError(msg) from exc
        self._closed = False

    # -- set-up ------------------------------------------------------------------------------
    def _keep(self, obj: Any) -> Any:
        self._objects.append(obj)
        return obj

    def _program(self, vertex: str, fragment: str) -> moderngl.Program:
        features = look_features(self.look)
        return self._keep(
            self.ctx.program(
                vertex_shader=_shader(vertex, features),
                fragment_shader=_shader(fragment, features),
            )
        )

    def _setup(self) -> None:
        ctx, scene = self.ctx, self.scene
        self.prog_sky = self._program("sky.vert", "sky.frag")
        self.prog_lit = self._program("lit.vert", "lit.frag")
        self.prog_walls = self._program("walls.vert", "walls.frag")
        self.prog_signs = self._program("signs.vert", "signs.frag")
        self.prog_equirect = self._program("sky.vert", "equirect.frag")
        self.prog_rain = self._program("rain.vert", "rain.frag")
        self.vao_sky = self._keep(ctx.vertex_array(self.prog_sky, []))
        self.vao_equirect = self._keep(ctx.vertex_array(self.prog_equirect, []))
        lit = "in_pos in_normal in_color"
        self.draw_ground = self._static(
            self.prog_lit,
            make_chunks(scene.ground, group=scene.ground_layers),
            "3f 3f 3f",
            lit,
            reach_m=FAR_M,
        )
        self.draw_walls = self._static(
            self.prog_walls,
            make_chunks(scene.walls),
            "3f 2f 1f 1f 3f 1f",
            "in_pos in_normal in_along in_height in_tint in_style",
            reach_m=FAR_M,
        )
        self.draw_signs = self._static(
            self.prog_signs,
            make_chunks(scene.signs),
            "3f 2f 1f",
            "in_pos in_uv in_page",
            reach_m=SIGN_REACH_M,
        )
        self.draw_boxes = self._static(
            self.prog_lit, make_chunks(expand_boxes(scene.boxes)), "3f 3f 3f", lit,
            reach_m=OBJECT_REACH_M,
        )  # fmt: skip
        self.dynamic_vertices = 0
        self.vbo_dynamic = self._keep(ctx.buffer(reserve=max(1, scene.dynamic_box_count * 36) * 36))
        self.vao_dynamic = self._keep(
            ctx.vertex_array(self.prog_lit, [(self.vbo_dynamic, "3f 3f 3f", *lit.split())])
        )
        tiles = scene.window_tiles
        self.tex_windows = self._keep(
            ctx.texture((tiles.shape[1], tiles.shape[0]), 4, tiles.tobytes())
        )
        # mipmapped but not anisotropic: llvmpipe's anisotropic filtering costs ~10x per pixel
        self.tex_windows.build_mipmaps()
        pages = scene.sign_atlas.pages
        self.tex_signs = self._keep(
            ctx.texture_array(
                (pages.shape[2], pages.shape[1], pages.shape[0]), 3, pages.tobytes(), alignment=1
            )
        )
        self.tex_signs.build_mipmaps()
        self.tex_signs.anisotropy = 8.0
        self._set_look_uniforms()
        _u(self.prog_walls, "u_windows").value = 0
        _u(self.prog_walls, "u_bay").value = (BAY_WIDTH_M, STOREY_M)
        _u(self.prog_signs, "u_signs").value = 1
        _u(self.prog_equirect, "u_faces").value = 2
        # cube faces, packed 3 x 2
        size = (3 * self.face_px, 2 * self.face_px)
        self.tex_faces = self._keep(ctx.texture(size, 4))
        self.tex_faces.repeat_x = self.tex_faces.repeat_y = False
        depth = self._keep(ctx.depth_renderbuffer(size))
        self.fbo_faces = self._keep(ctx.framebuffer([self.tex_faces], depth))
        self.fbo_faces_ms = None
        if self.samples:
            colour_ms = self._keep(ctx.renderbuffer(size, 4, samples=self.samples))
            depth_ms = self._keep(ctx.depth_renderbuffer(size, samples=self.samples))
            self.fbo_faces_ms = self._keep(ctx.framebuffer([colour_ms], depth_ms))
        self.fbo_equirect = self._keep(
            ctx.framebuffer([self._keep(ctx.renderbuffer((self.width, self.height), 3))])
        )
        # faces in the camera frame (x right, y forward, z up), turned to the heading per frame
        self.face_bases = [_camera_basis(f, u) for f, u in _FACES]
        self._remap = _remap_maps(self.width, self.face_px) if self.resample == "cpu" else None
        prog = self.prog_equirect
        _u(prog, "u_size").value = (float(self.width), float(self.height))
        _u(prog, "u_face_px").value = float(self.face_px)
        self._perspective_fbos: dict[tuple[int, int, int], tuple[Any, Any]] = {}
        self._setup_weather()

    def _scene_programs(self) -> tuple[moderngl.Program, ...]:
        return (self.prog_sky, self.prog_lit, self.prog_walls, self.prog_signs, self.prog_rain)

    def _set_look_uniforms(self) -> None:
        """Write the look's uniforms into every scene program that uses them (the compiler
        drops uniforms a shader never reads, so each is set only where it exists)."""
        look = self.look
        values: dict[str, Any] = {
            "u_sun": sun_for_look(look, self.scene.sun_direction),
            "u_sky_zenith": look.sky_zenith,
            "u_sky_horizon": look.sky_horizon,
            "u_ground_far": look.ground_far,
            "u_fog_color": look.fog_color,
            "u_haze_m": look.haze_m,
            "u_ambient": look.ambient,
            "u_sun_gain": look.sun_gain,
            "u_sun_color": look.sun_color,
            "u_sun_glow": look.sun_glow,
            "u_sun_disc": 1.0 if look.sun_disc else 0.0,
            "u_lamp_count": 0,
            "u_lamp_light": tuple(look.lamp_gain * c for c in look.lamp_color),
            "u_lamp_range_m": look.lamp_range_m,
            "u_sign_gain": look.sign_gain,
            "u_window_glow": look.window_glow,
            "u_window_lit_share": look.window_lit_share,
            "u_wet": look.wet,
            "u_rain_color": RAIN_COLOR,
        }
        for prog in self._scene_programs():
            for name, value in values.items():
                if name in prog:
                    _u(prog, name).value = value

    def _setup_weather(self) -> None:
        """Street lamps (when the look lights them) and raindrops (when it rains)."""
        from city360.synth._streets import street_list

        look = self.look
        self._lamps = (
            lamp_positions(street_list(self.scene.streets))
            if look.lamp_gain > 0
            else np.zeros((0, 3))
        )
        self._rain_vertices = 0
        self.vao_rain: Any = None
        if look.rain_drops:
            # seeded by the scene, so every frame of every video of a city rains the same way
            rng = np.random.default_rng([self.scene.seed, 0x7A1E])
            self._rain_drops = rng.random((look.rain_drops, 3)) * np.asarray(RAIN_BOX_M)
            self.vbo_rain = self._keep(self.ctx.buffer(reserve=look.rain_drops * 2 * 16))
            self.vao_rain = self._keep(
                self.ctx.vertex_array(
                    self.prog_rain, [(self.vbo_rain, "3f 1f", "in_pos", "in_alpha")]
                )
            )

    def _upload_weather(self, t_s: float, eye: npt.NDArray[np.float64]) -> None:
        """Light the lamps nearest ``eye`` and move the rain to time ``t_s`` (seconds)."""
        if len(self._lamps):
            d2 = np.sum((self._lamps[:, :2] - eye[:2]) ** 2, axis=1)
            nearest = self._lamps[np.argsort(d2, kind="stable")[:MAX_LAMPS]]
            padded = np.zeros((MAX_LAMPS, 3), np.float32)
            padded[: len(nearest)] = nearest
            for prog in (self.prog_lit, self.prog_walls):
                if "u_lamps" in prog:
                    _u(prog, "u_lamps").write(padded.tobytes())
                    _u(prog, "u_lamp_count").value = len(nearest)
        if self.vao_rain is not None:
            box = np.asarray(RAIN_BOX_M)
            fall = np.asarray(RAIN_FALL_MPS)
            corner = np.array([eye[0] - box[0] / 2, eye[1] - box[1] / 2, 0.0])
            # drops fixed in the world, wrapped into the box that follows the camera
            heads = corner + np.mod(self._rain_drops + fall * float(t_s) - corner, box)
            tails = heads - fall * RAIN_STREAK_S
            rows = np.zeros((len(heads), 2, 4), np.float32)
            rows[:, 0, :3], rows[:, 0, 3] = heads, 0.55
            rows[:, 1, :3], rows[:, 1, 3] = tails, 0.08
            self.vbo_rain.write(rows.tobytes())
            self._rain_vertices = 2 * len(heads)

    def _static(
        self, prog: moderngl.Program, chunks: Chunks, fmt: str, names: str, *, reach_m: float
    ) -> _StaticDraw | None:
        if len(chunks) == 0:
            return None
        vbo = self._keep(self.ctx.buffer(chunks.rows.tobytes()))
        vao = self._keep(self.ctx.vertex_array(prog, [(vbo, fmt, *names.split())]))
        # one slot of draw commands per view of a frame (6 cube faces), so writing the next
        # face's commands never waits for the previous face's draw to finish reading them
        commands = self._keep(self.ctx.buffer(reserve=len(_FACES) * len(chunks) * RECORD_BYTES))
        return _StaticDraw(vao, commands, chunks, reach_m)

    # -- drawing -----------------------------------------------------------------------------
    def _draw_view(
        self,
        eye: npt.NDArray[np.float64],
        basis: tuple[F32, F32, F32],
        tan_x: float,
        tan_y: float,
        slot: int = 0,
    ) -> None:
        """Draw what this view can see into the bound framebuffer and viewport; ``slot``
        (0-5) picks where the view's draw commands go (one per view of a frame)."""
        import moderngl

        ctx = self.ctx
        matrix = _view_proj(eye, basis, tan_x, tan_y)
        view_proj = np.ascontiguousarray(matrix.T, np.float32).tobytes()  # GLSL: column-major
        planes = frustum_planes(matrix)
        f, r, u = basis
        eye32 = tuple(float(v) for v in eye)
        for prog in (self.prog_lit, self.prog_walls, self.prog_signs, self.prog_rain):
            _u(prog, "u_view_proj").write(view_proj)
            if "u_eye" in prog:
                _u(prog, "u_eye").value = eye32
        ctx.disable(moderngl.CULL_FACE)
        ctx.enable(moderngl.DEPTH_TEST)
        # the ground is painted in layer order and writes depth whatever is there: from above
        # the street nothing hides behind it, so later geometry still tests correctly against it
        ctx.depth_func = "1"
        if self.draw_ground is not None:
            self.draw_ground.render(planes, eye, slot)
        ctx.depth_func = "<"
        if self.draw_walls is not None:
            self.tex_windows.use(0)
            self.draw_walls.render(planes, eye, slot)
        if self.draw_signs is not None:
            self.tex_signs.use(1)
            self.draw_signs.render(planes, eye, slot)
        if self.draw_boxes is not None:
            self.draw_boxes.render(planes, eye, slot)
        if self.dynamic_vertices:
            self.vao_dynamic.render(moderngl.TRIANGLES, vertices=self.dynamic_vertices)
        # the sky last, at the far plane: shaded only where nothing else was drawn
        ctx.depth_func = "<="
        sky = self.prog_sky
        _u(sky, "u_cam_to_world").write(np.stack([r, u, -f]).astype(np.float32).tobytes())
        _u(sky, "u_tan_half").value = (tan_x, tan_y)
        self.vao_sky.render(moderngl.TRIANGLES, vertices=3)
        ctx.depth_func = "<"
        if self.vao_rain is not None and self._rain_vertices:
            # translucent streaks, hidden behind nearer geometry; drawn last, so the depth
            # they write can only hide a farther streak crossing a nearer one
            ctx.enable(moderngl.BLEND)
            ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
            self.vao_rain.render(moderngl.LINES, vertices=self._rain_vertices)
            ctx.disable(moderngl.BLEND)

    def _upload_movers(self, t_s: float, eye: npt.NDArray[np.float64]) -> None:
        """Upload the pedestrians and vehicles near enough to be seen at time ``t_s``."""
        self.dynamic_vertices = 0
        if self.scene.dynamic_box_count:
            boxes = self.scene.dynamic_boxes(t_s)
            near = np.hypot(boxes[:, 0] - eye[0], boxes[:, 1] - eye[1]) < OBJECT_REACH_M
            rows = expand_boxes(boxes[near])
            if len(rows):
                self.vbo_dynamic.write(rows.tobytes())
            self.dynamic_vertices = len(rows)

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self!r} is closed; create a new EquirectRenderer"
            raise ClosedResourceError(msg)

    def render(
        self,
        x_m: float,
        y_m: float,
        heading_deg: float,
        t_s: float,
        *,
        eye_height_m: float = DEFAULT_EYE_HEIGHT_M,
    ) -> Image:
        """The equirect frame seen from (``x_m``, ``y_m``) at ``eye_height_m``, centre column
        looking along ``heading_deg``, with movers at time ``t_s``: (height, width, 3) RGB."""
        self._check_open()
        # another context (the simulator's, a probe's) may have been made current since the
        # last call: entering ours makes it current and restores the previous one afterwards
        with self.ctx:
            return self._render(x_m, y_m, heading_deg, t_s, eye_height_m)

    def _render(
        self, x_m: float, y_m: float, heading_deg: float, t_s: float, eye_height_m: float
    ) -> Image:
        import moderngl

        ctx = self.ctx
        eye = np.array([x_m, y_m, eye_height_m], np.float64)
        self._upload_movers(t_s, eye)
        self._upload_weather(t_s, eye)
        target = self.fbo_faces_ms or self.fbo_faces
        target.use()
        target.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
        s = self.face_px
        for index, basis in enumerate(_turn(self.face_bases, heading_deg)):
            ctx.viewport = ((index % 3) * s, (index // 3) * s, s, s)
            self._draw_view(eye, basis, 1.0, 1.0, slot=index)
        if self.fbo_faces_ms is not None:
            ctx.copy_framebuffer(self.fbo_faces, self.fbo_faces_ms)
        if self._remap is not None:
            # read the faces once and resample on the CPU (faster than llvmpipe's shader)
            faces = bytearray(6 * s * s * 3)
            self.fbo_faces.read_into(faces, components=3, alignment=1)
            atlas = np.frombuffer(faces, np.uint8).reshape(2 * s, 3 * s, 3)
            import cv2

            frame = cv2.remap(atlas, *self._remap, interpolation=cv2.INTER_LINEAR)
            return np.asarray(frame, np.uint8)
        self.fbo_equirect.use()
        ctx.viewport = (0, 0, self.width, self.height)
        ctx.disable(moderngl.DEPTH_TEST)
        self.tex_faces.use(2)
        self.vao_equirect.render(moderngl.TRIANGLES, vertices=3)
        data = bytearray(self.width * self.height * 3)
        self.fbo_equirect.read_into(data, components=3, alignment=1)
        # GL rows run bottom-up and the shader put latitude +90 at GL row 0: no flip needed
        return np.frombuffer(data, np.uint8).reshape(self.height, self.width, 3)

    def render_perspective(
        self,
        x_m: float,
        y_m: float,
        *,
        yaw_deg: float,
        pitch_deg: float = 0.0,
        fov_deg: float = 90.0,
        width: int = 640,
        height: int = 480,
        t_s: float = 0.0,
        eye_height_m: float = DEFAULT_EYE_HEIGHT_M,
        samples: int = 4,
    ) -> Image:
        """A pinhole view looking at bearing ``yaw_deg`` (absolute, clockwise from north),
        ``pitch_deg`` up, ``fov_deg`` horizontal field of view: (height, width, 3) RGB."""

        self._check_open()
        if not 1.0 <= fov_deg <= 170.0:
            msg = f"`fov_deg` must be in [1, 170], got {fov_deg}"
            raise ConfigError(msg)
        if not -89.0 <= pitch_deg <= 89.0:
            msg = f"`pitch_deg` must be in [-89, 89], got {pitch_deg}"
            raise ConfigError(msg)
        if width < 8 or height < 8:
            msg = f"`width` and `height` must be >= 8, got {width}x{height}"
            raise ConfigError(msg)
        yaw, pitch = math.radians(yaw_deg), math.radians(pitch_deg)
        forward = (
            math.sin(yaw) * math.cos(pitch),
            math.cos(yaw) * math.cos(pitch),
            math.sin(pitch),
        )
        basis = _camera_basis(forward, (0.0, 0.0, 1.0))
        tan_x = math.tan(math.radians(fov_deg) / 2)
        tan_y = tan_x * height / width
        eye = np.array([x_m, y_m, eye_height_m], np.float64)
        with self.ctx:
            return self._render_perspective(eye, basis, tan_x, tan_y, width, height, samples, t_s)

    def _render_perspective(
        self,
        eye: npt.NDArray[np.float64],
        basis: tuple[F32, F32, F32],
        tan_x: float,
        tan_y: float,
        width: int,
        height: int,
        samples: int,
        t_s: float,
    ) -> Image:
        import moderngl

        self._upload_movers(t_s, eye)
        self._upload_weather(t_s, eye)
        resolve, target = self._perspective_target(width, height, samples)
        target.use()
        target.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
        self.ctx.viewport = (0, 0, width, height)
        self._draw_view(eye, basis, tan_x, tan_y)
        if target is not resolve:
            self.ctx.copy_framebuffer(resolve, target)
        data = bytearray(width * height * 3)
        resolve.read_into(data, components=3, alignment=1)
        self.ctx.disable(moderngl.DEPTH_TEST)
        return np.frombuffer(data, np.uint8).reshape(height, width, 3)[::-1].copy()

    def _perspective_target(self, width: int, height: int, samples: int) -> tuple[Any, Any]:
        key = (width, height, samples)
        if key not in self._perspective_fbos:
            ctx = self.ctx
            resolve = self._keep(
                ctx.framebuffer(
                    [self._keep(ctx.renderbuffer((width, height), 3))],
                    self._keep(ctx.depth_renderbuffer((width, height))),
                )
            )
            target = resolve
            if samples:
                target = self._keep(
                    ctx.framebuffer(
                        [self._keep(ctx.renderbuffer((width, height), 3, samples=samples))],
                        self._keep(ctx.depth_renderbuffer((width, height), samples=samples)),
                    )
                )
            self._perspective_fbos[key] = (resolve, target)
        return self._perspective_fbos[key]

    # -- lifetime ----------------------------------------------------------------------------
    def _release(self) -> None:
        with self.ctx:
            for obj in reversed(self._objects):
                obj.release()
        self._objects.clear()
        if self._owns_ctx:
            self.ctx.release()

    def close(self) -> None:
        """Free the GPU resources (and the context if this renderer made it). Safe twice."""
        if self._closed:
            return
        self._closed = True
        self._release()

    def __enter__(self) -> EquirectRenderer:
        self._check_open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # best effort only: GL objects must be released on the thread that owns the context
        if not getattr(self, "_closed", True):
            with contextlib.suppress(Exception):
                self.close()

    def __repr__(self) -> str:
        state = "closed" if getattr(self, "_closed", True) else "open"
        return (
            f"EquirectRenderer({self.width}x{self.height}, face_px={self.face_px}, "
            f"look={self.look.name!r}, scene={self.scene!r}, {state})"
        )
