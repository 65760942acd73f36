"""Both renderers against geometry, py360convert and each other, on the GVR test room."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from city360._gl import gl_available
from city360.errors import RenderError
from city360.simulator import renderer as renderer_module
from city360.simulator.arrows import ARROW_RGB, arrow_triangles
from city360.simulator.camera import ViewSpec
from city360.simulator.renderer import GlRenderer, make_renderer
from city360.simulator.renderer_cv import CpuRenderer, Planes
from tests.simulator.conftest import EnvFactory
from tests.simulator.handmade import ARM_M

needs_gl = pytest.mark.skipif(not gl_available(), reason="no OpenGL context (EGL) on this machine")


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255.0**2 / mse)


@pytest.fixture(scope="module")
def room(shared_data: Path) -> tuple[Planes, np.ndarray]:
    """The GVR test room as decoded 4:2:0 planes and the RGB those planes decode to."""
    bgr = cv2.imread(str(shared_data / "pano360" / "testRoom1_2kMono.jpg"))
    assert bgr is not None
    h, w = bgr.shape[:2]
    i420 = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV_I420)
    planes = (
        i420[:h],
        i420[h : h + h // 4].reshape(h // 2, w // 2),
        i420[h + h // 4 :].reshape(h // 2, w // 2),
    )
    return planes, cv2.cvtColor(i420, cv2.COLOR_YUV2RGB_I420)


VIEWS = [(0.0, 0.0), (30.0, 20.0), (170.0, -40.0), (-100.0, 80.0), (52.0, 0.0)]


@pytest.mark.parametrize(("yaw", "pitch"), VIEWS)
def test_cpu_matches_py360convert(
    room: tuple[Planes, np.ndarray], yaw: float, pitch: float
) -> None:
    import py360convert

    planes, rgb = room
    w, h = 640, 480
    spec = ViewSpec(w, h, 90.0, yaw, pitch)
    ours = CpuRenderer().render(0, planes, spec)
    tx, ty = spec.tan_half
    # e2p spreads its rays from edge pixel centre to edge pixel centre (np.linspace), we from
    # image edge to image edge: the same rays need its FOV shrunk by one pixel
    fov = (
        2 * math.degrees(math.atan(tx * (w - 1) / w)),
        2 * math.degrees(math.atan(ty * (h - 1) / h)),
    )
    reference = py360convert.e2p(rgb, fov, yaw, pitch, (h, w))  # u_deg: + right, like our yaw
    assert psnr(ours, reference) >= 35.0


@needs_gl
@pytest.mark.parametrize(("yaw", "pitch"), VIEWS)
def test_gl_matches_cpu_with_arrows(
    room: tuple[Planes, np.ndarray], yaw: float, pitch: float
) -> None:
    planes, _ = room
    spec = ViewSpec(640, 480, 90.0, yaw, pitch)
    overlay = arrow_triangles([yaw + 10.0, yaw - 60.0, yaw + 100.0], camera_height_m=2.0)
    with GlRenderer() as gl:
        a = gl.render(("room", 0), planes, spec, overlay)
        again = gl.render(("room", 0), planes, spec, overlay)  # frame already on the GPU
    b = CpuRenderer().render(0, planes, spec, overlay)
    assert psnr(a, b) >= 40.0
    assert np.array_equal(a, again)
    if pitch <= 0:
        assert (np.all(a == ARROW_RGB, axis=-1)).sum() > 100


def _runs(profile: np.ndarray, threshold: float) -> list[float]:
    """Centres of the runs of ``profile`` above ``threshold``."""
    bright = np.flatnonzero(profile > threshold)
    if bright.size == 0:
        return []
    groups = np.split(bright, np.flatnonzero(np.diff(bright) > 1) + 1)
    return [float(g.mean()) for g in groups]


def test_room_grid_lines_land_where_geometry_says(room: tuple[Planes, np.ndarray]) -> None:
    planes, rgb = room
    h_src, w_src = rgb.shape[:2]
    # the panorama itself: white lines every 15 degrees of longitude and latitude
    lat_row = int((0.5 - 37.5 / 180.0) * h_src)
    pano_cols = _runs(rgb[lat_row].mean(-1), 235)  # 5-degree lines peak near 215
    pano_lons = [((u + 0.5) / w_src) * 360.0 - 180.0 for u in pano_cols]
    assert all(abs(lon / 15.0 - round(lon / 15.0)) < 0.02 for lon in pano_lons)

    w, h, yaw, pitch = 640, 480, 52.0, 0.0
    spec = ViewSpec(w, h, 90.0, yaw, pitch)
    tx, ty = spec.tan_half
    view = CpuRenderer().render(0, planes, spec)
    # meridians stay vertical lines at x = f tan(lon - yaw) in a level view
    row = 91  # latitude 25 at the centre, 18 at the edges: between horizontal grid lines
    seen = _runs(view[row].mean(-1), 235)
    expected = []
    for lon in range(-180, 180, 15):
        d = math.radians(((lon - yaw + 180.0) % 360.0) - 180.0)
        if abs(d) < math.pi / 2:
            x = (math.tan(d) / tx + 1) / 2 * w - 0.5
            if 3 <= x <= w - 4:
                expected.append(x)
    assert len(expected) >= 5
    assert len(seen) == len(expected)
    for x_seen, x_expected in zip(sorted(seen), sorted(expected), strict=True):
        assert abs(x_seen - x_expected) <= 1.0

    # parallels cross the centre column at y = f tan(lat - pitch), for a tilted view too
    pitch = 20.0
    spec = ViewSpec(w, h, 90.0, yaw, pitch)
    view = CpuRenderer().render(0, planes, spec)
    column = view[:, w // 2 - 1 : w // 2 + 1].mean(axis=(1, 2))
    seen = _runs(column, 235)
    expected = []
    for lat in range(-75, 90, 15):
        y_n = math.tan(math.radians(lat - pitch)) / ty
        y = (1 - y_n) / 2 * h - 0.5
        if 3 <= y <= h - 4:
            expected.append(y)
    assert len(expected) >= 4
    assert len(seen) == len(expected)
    for y_seen, y_expected in zip(sorted(seen), sorted(expected), strict=True):
        assert abs(y_seen - y_expected) <= 1.0


def test_auto_falls_back_to_opencv_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, make_env: EnvFactory
) -> None:
    def no_gl() -> GlRenderer:
        msg = "cannot create an OpenGL 3.3 context (tried EGL (headless): none)"
        raise RenderError(msg)

    monkeypatch.setattr(renderer_module, "GlRenderer", no_gl)
    with caplog.at_level(logging.WARNING, logger="city360.simulator.renderer"):
        chosen = make_renderer("auto")
    assert isinstance(chosen, CpuRenderer)
    assert "OpenGL unavailable, using the OpenCV renderer" in caplog.text
    with pytest.raises(RenderError, match="cannot create an OpenGL"):
        make_renderer("gl")
    env = make_env(renderer="auto")
    _, info = env.reset(seed=0)
    assert env.renderer_name == "cpu"
    assert info["renderer"] == "cpu"


@needs_gl
def test_gl_env_matches_cpu_env(make_env: EnvFactory) -> None:
    gl_env = make_env(renderer="gl", view_width=160, view_height=120)
    cpu_env = make_env(renderer="cpu", view_width=160, view_height=120)
    for env in (gl_env, cpu_env):
        env.reset(options={"segment": "ns_a", "offset_m": ARM_M - 2.0, "yaw_deg": 10.0})
    for action, magnitude in (("W", "SMALL"), ("A", None), ("Q", "SMALL"), ("LEFT", None)):
        a, *_ = gl_env.step(action, magnitude)
        b, *_ = cpu_env.step(action, magnitude)
        assert psnr(a["view"], b["view"]) >= 40.0
    assert gl_env.renderer_name == "gl"


def test_branch_arrows_lie_on_the_ground_at_branch_bearings(make_env: EnvFactory) -> None:
    env = make_env(view_width=160, view_height=120)
    obs, info = env.reset(options={"segment": "ns_a", "offset_m": ARM_M})
    assert info["branches"] == ["LEFT", "UP", "RIGHT"]

    def red_centroid(view: np.ndarray) -> tuple[float, float, int]:
        ys, xs = np.nonzero(np.all(view == ARROW_RGB, axis=-1))
        return (float(xs.mean()), float(ys.mean()), int(xs.size)) if xs.size else (0, 0, 0)

    # facing travel (south): only the UP arrow is in view, straight ahead, below the horizon
    x, y, n = red_centroid(obs["view"])
    assert n > 50
    assert abs(x - 79.5) < 2.0
    assert y > 60
    # face east (A LARGE): the LEFT branch (east) arrow is now straight ahead
    obs, *_ = env.step("A", "LARGE")
    x, _, n = red_centroid(obs["view"])
    assert n > 50
    assert abs(x - 79.5) < 2.0
    # mid-street there are no arrows
    env.reset(options={"segment": "ns_a", "offset_m": 10.0})
    assert red_centroid(env.render())[2] == 0


def test_cpu_rerenders_equal_a_first_render(room: tuple[Planes, np.ndarray]) -> None:
    """Turning on one frame reuses cached yaw maps and, from the frame's second render, its
    interleaved chroma: every view equals what a renderer new to the frame draws."""
    planes, _ = room
    reused = CpuRenderer()
    turns = [(0.0, 0.0), (24.0, 0.0), (0.0, 0.0), (0.0, 30.0), (0.0, 0.0), (24.0, 0.0)]
    for yaw, pitch in turns:
        spec = ViewSpec(160, 120, 90.0, yaw, pitch, frame_bearing_deg=12.5)
        expected = CpuRenderer().render(("room", 0), planes, spec)
        assert np.array_equal(reused.render(("room", 0), planes, spec), expected)


def test_cpu_takes_new_planes_under_a_reused_key(room: tuple[Planes, np.ndarray]) -> None:
    """The interleaved chroma of a frame is not reused for other planes, even when a caller
    passes the same ``frame_key``."""
    planes, _ = room
    mirrored = (
        np.ascontiguousarray(planes[0][:, ::-1]),
        np.ascontiguousarray(planes[1][:, ::-1]),
        np.ascontiguousarray(planes[2][:, ::-1]),
    )
    spec = ViewSpec(160, 120, 90.0, 40.0, 0.0)
    renderer = CpuRenderer()
    for _ in range(2):
        renderer.render(0, planes, spec)
    expected = CpuRenderer().render(0, mirrored, spec)
    assert not np.array_equal(expected, renderer.render(0, planes, spec))
    for _ in range(2):
        assert np.array_equal(renderer.render(0, mirrored, spec), expected)


@needs_gl
def test_gl_renderers_coexist_across_threads(room: tuple[Planes, np.ndarray]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    planes, _ = room
    spec = ViewSpec(160, 120, 90.0, 33.0, 10.0)
    reference = CpuRenderer().render(0, planes, spec)
    with GlRenderer() as first, GlRenderer() as second:
        # the first renders after the second made its own context (current) on this thread
        assert psnr(first.render("a", planes, spec), reference) >= 40.0
        assert psnr(second.render("b", planes, spec), reference) >= 40.0
        with ThreadPoolExecutor(max_workers=1) as pool:
            other = pool.submit(first.render, "a", planes, spec).result()
        assert psnr(other, reference) >= 40.0


class _FakeGl:
    """Stands in for GlRenderer with a given GL_RENDERER string."""

    name = "gl"
    renderer_string = ""

    def __init__(self) -> None:
        self.ctx = type("Ctx", (), {"info": {"GL_RENDERER": self.renderer_string}})()
        self.closed = False
        _FakeGl.made.append(self)

    def close(self) -> None:
        self.closed = True

    made: list[_FakeGl] = []  # noqa: RUF012 - test bookkeeping


@pytest.mark.parametrize(
    ("gl_renderer", "expected"),
    [("llvmpipe (LLVM 15.0.6, 256 bits)", "cpu"), ("NVIDIA GeForce RTX 4090/PCIe/SSE2", "gl")],
)
def test_auto_prefers_opencv_over_software_gl(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    gl_renderer: str,
    expected: str,
) -> None:
    fake = type("Fake", (_FakeGl,), {"renderer_string": gl_renderer})
    _FakeGl.made.clear()
    monkeypatch.setattr(renderer_module, "GlRenderer", fake)
    with caplog.at_level(logging.INFO, logger="city360.simulator.renderer"):
        chosen = make_renderer("auto")
    assert chosen.name == expected
    assert _FakeGl.made[0].closed is (expected == "cpu")
    if expected == "cpu":
        assert "OpenGL is software (llvmpipe" in caplog.text
    assert make_renderer("gl").name == "gl"  # forcing GL still gives GL
