"""The moderngl scene renderer: frame conventions, determinism, resource habits."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import networkx as nx
import numpy as np
import pytest

from city360._gl import create_context, gl_available
from city360.errors import ClosedResourceError, ConfigError
from city360.geo import LocalProjection, bearing_deg
from city360.synth._chunks import Chunks, make_chunks
from city360.synth.render import EquirectRenderer
from city360.synth.scene import Scene, build_scene
from tests.fixtures.scenes import grid_inputs

WIDTH = 256
CAMERA = (0.0, 0.0)


@pytest.fixture(autouse=True)
def _needs_gl() -> None:
    if not gl_available():
        pytest.skip("no OpenGL context (install Mesa EGL: apt-get install libegl1 libegl-mesa0)")


MARKERS = {  # colour -> (x, y, z): cubes 20 m along each arm of a crossing, one overhead
    (255, 0, 255): (20.0, 0.0, 1.6),  # east
    (255, 255, 0): (0.0, 20.0, 1.6),  # north
    (0, 255, 255): (-20.0, 0.0, 1.6),  # west
    (255, 0, 0): (0.0, -20.0, 1.6),  # south
    (0, 0, 255): (0.0, 0.0, 40.0),  # overhead
}


@pytest.fixture(scope="module")
def marker_scene() -> Scene:
    """Two straight streets crossing at the origin, no objects but coloured marker cubes."""
    graph = nx.MultiGraph()
    graph.add_node(1, x_m=-150.0, y_m=0.0)
    graph.add_node(2, x_m=150.0, y_m=0.0)
    graph.add_node(3, x_m=0.0, y_m=-150.0)
    graph.add_node(4, x_m=0.0, y_m=150.0)
    graph.add_node(5, x_m=0.0, y_m=0.0)
    for end in (1, 2, 3, 4):
        data = graph.nodes[end]
        graph.add_edge(
            5, end, highway="residential", polyline_xy=[(0.0, 0.0), (data["x_m"], data["y_m"])]
        )
    scene = build_scene(
        streets=graph,
        buildings=[],
        pois=[],
        projection=LocalProjection(60.0, 25.0),
        seed=1,
        min_pois_per_km=0.0,
    )
    markers = np.array(
        [[*xyz, 1.5, 1.5, 1.5, 0.0, *(c / 255 for c in rgb)] for rgb, xyz in MARKERS.items()],
        np.float32,
    )
    return dataclasses.replace(scene, boxes=markers)


@pytest.fixture(scope="module", params=["gpu", "cpu"])
def marker_renderer(
    marker_scene: Scene, request: pytest.FixtureRequest
) -> Iterator[EquirectRenderer]:
    """The marker scene's renderer, once per resampling path (shader, OpenCV remap)."""
    with EquirectRenderer(marker_scene, width=WIDTH, resample=request.param) as renderer:
        yield renderer


def _centroid(image: np.ndarray, rgb: tuple[int, int, int]) -> tuple[float, float]:
    """(row, column) median of pixels close to a saturated colour (the median ignores a stray
    pixel of a passer-by's shirt)."""
    target = np.array(rgb) > 0
    strong = np.where(target, image > 120, image < 70).all(axis=2)
    rows, cols = np.nonzero(strong)
    assert len(rows) > 0, f"no {rgb} pixels found"
    return float(np.median(rows)), float(np.median(cols))


def test_frame_shape_and_type(marker_renderer: EquirectRenderer) -> None:
    frame = marker_renderer.render(*CAMERA, 0.0, 0.0)
    assert frame.shape == (WIDTH // 2, WIDTH, 3)
    assert frame.dtype == np.uint8
    assert frame.flags.writeable


def _longitude(colour: tuple[int, int, int], heading_deg: float) -> float:
    x, y, _ = MARKERS[colour]
    return (bearing_deg(x, y) - heading_deg + 180.0) % 360.0 - 180.0


@pytest.mark.parametrize(
    ("heading_deg", "colour"),
    [  # every side face, at several headings; markers straddling the frame's seam left out
        (heading, colour)
        for heading in (0.0, 90.0, 180.0, 45.0, 300.0)
        for colour in list(MARKERS)[:4]
        if abs(_longitude(colour, heading)) < 170.0
    ],
)
def test_equirect_longitude_convention(
    marker_renderer: EquirectRenderer, heading_deg: float, colour: tuple[int, int, int]
) -> None:
    """A marker at bearing b appears at longitude b - heading (positive to the right)."""
    longitude = _longitude(colour, heading_deg)
    frame = marker_renderer.render(*CAMERA, heading_deg, 0.0)
    row, column = _centroid(frame, colour)
    assert column + 0.5 == pytest.approx((longitude + 180.0) / 360.0 * WIDTH, abs=1.5)
    assert row + 0.5 == pytest.approx(WIDTH / 4, abs=1.5)  # eye height: on the horizon


def test_equirect_top_row_is_up(marker_renderer: EquirectRenderer) -> None:
    frame = marker_renderer.render(*CAMERA, 30.0, 0.0)
    row, _ = _centroid(frame, (0, 0, 255))
    assert row < 4
    assert frame[0].mean(axis=0)[2] > frame[-1].mean(axis=0)[2]  # sky above, street below


def test_perspective_convention(marker_renderer: EquirectRenderer) -> None:
    view = marker_renderer.render_perspective(
        *CAMERA, yaw_deg=90.0, pitch_deg=0.0, fov_deg=60.0, width=160, height=120
    )
    assert view.shape == (120, 160, 3)
    row, column = _centroid(view, (255, 0, 255))
    assert (row + 0.5, column + 0.5) == pytest.approx((60.0, 80.0), abs=1.5)
    up = marker_renderer.render_perspective(
        *CAMERA, yaw_deg=90.0, pitch_deg=-10.0, fov_deg=60.0, width=160, height=120
    )
    row_up, _ = _centroid(up, (255, 0, 255))
    assert row_up < row - 10  # looking down moves the marker up the image
    right = marker_renderer.render_perspective(
        *CAMERA, yaw_deg=80.0, pitch_deg=0.0, fov_deg=60.0, width=160, height=120
    )
    assert _centroid(right, (255, 0, 255))[1] > column + 10  # turning left moves it right


def test_same_scene_same_bytes(small_scene: Scene) -> None:
    again = build_scene(**grid_inputs(), seed=7)
    with (
        EquirectRenderer(small_scene, width=WIDTH) as one,
        EquirectRenderer(again, width=WIDTH) as two,
    ):
        a = one.render(40.0, 0.0, 90.0, 12.5)
        b = two.render(40.0, 0.0, 90.0, 12.5)
        assert a.tobytes() == b.tobytes()
        later = one.render(40.0, 0.0, 90.0, 20.0)
        assert later.tobytes() != a.tobytes()  # pedestrians and cars moved
        p = one.render_perspective(40.0, 0.0, yaw_deg=10.0, width=64, height=48, t_s=3.0)
        q = two.render_perspective(40.0, 0.0, yaw_deg=10.0, width=64, height=48, t_s=3.0)
        assert p.tobytes() == q.tobytes()


def test_multisampled_faces_render(small_scene: Scene) -> None:
    with EquirectRenderer(small_scene, width=128, samples=4) as renderer:
        frame = renderer.render(40.0, 0.0, 0.0, 0.0)
    assert frame.shape == (64, 128, 3)
    assert frame.std() > 10


def test_close_twice_and_use_after_close(small_scene: Scene) -> None:
    renderer = EquirectRenderer(small_scene, width=64)
    assert "64x32" in repr(renderer)
    assert "open" in repr(renderer)
    renderer.close()
    renderer.close()
    assert "closed" in repr(renderer)
    with pytest.raises(ClosedResourceError, match="is closed; create a new EquirectRenderer"):
        renderer.render(0.0, 0.0, 0.0, 0.0)
    with pytest.raises(ClosedResourceError):
        renderer.render_perspective(0.0, 0.0, yaw_deg=0.0)
    with pytest.raises(ClosedResourceError), renderer:
        pass


def test_borrowed_context_survives_close(small_scene: Scene) -> None:
    ctx = create_context()
    try:
        with EquirectRenderer(small_scene, width=64, ctx=ctx) as renderer:
            renderer.render(0.0, 0.0, 0.0, 0.0)
        with ctx:  # the renderer restored whatever context was current before it
            fbo = ctx.simple_framebuffer((2, 2))
            fbo.use()
            fbo.clear(0.0, 1.0, 0.0, 1.0)
            assert fbo.read(components=3)[:3] == bytes([0, 255, 0])
    finally:
        ctx.release()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"width": 15}, "`width` must be an even number >= 16, got 15"),
        ({"width": 64, "face_px": 8}, "`face_px` must be >= 16, got 8"),
        ({"width": 64, "samples": -1}, "`samples` must be >= 0, got -1"),
        (
            {"width": 64, "resample": "fast"},
            "`resample` must be 'auto', 'gpu' or 'cpu', got 'fast'",
        ),
    ],
)
def test_bad_renderer_options(small_scene: Scene, kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        EquirectRenderer(small_scene, **kwargs)


def test_bad_perspective_options(marker_renderer: EquirectRenderer) -> None:
    with pytest.raises(ConfigError, match=r"`fov_deg` must be in \[1, 170\], got 180"):
        marker_renderer.render_perspective(0.0, 0.0, yaw_deg=0.0, fov_deg=180.0)
    with pytest.raises(ConfigError, match=r"`pitch_deg` must be in \[-89, 89\], got 95"):
        marker_renderer.render_perspective(0.0, 0.0, yaw_deg=0.0, pitch_deg=95.0)


def test_other_contexts_do_not_disturb_rendering(marker_renderer: EquirectRenderer) -> None:
    before = marker_renderer.render(*CAMERA, 0.0, 0.0)
    other = create_context()  # becomes current, as a simulator's context would
    try:
        after = marker_renderer.render(*CAMERA, 0.0, 0.0)
    finally:
        other.release()
    assert after.tobytes() == before.tobytes()


def test_culling_changes_no_pixel(small_scene: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawing only the chunks each view can see gives the same frame as drawing them all."""
    with EquirectRenderer(small_scene, width=WIDTH) as renderer:
        culled = renderer.render(40.0, 3.0, 200.0, 4.0)
        perspective = renderer.render_perspective(40.0, 3.0, yaw_deg=30.0, width=96, height=64)
        monkeypatch.setattr(
            Chunks, "visible", lambda self, *_: np.ones(len(self.first), dtype=bool)
        )
        assert renderer.render(40.0, 3.0, 200.0, 4.0).tobytes() == culled.tobytes()
        again = renderer.render_perspective(40.0, 3.0, yaw_deg=30.0, width=96, height=64)
        assert again.tobytes() == perspective.tobytes()


def test_chunks_keep_every_triangle_and_the_layer_order(small_scene: Scene) -> None:
    chunks = make_chunks(small_scene.ground, group=small_scene.ground_layers)
    assert len(chunks) > 1
    assert int(chunks.count.sum()) == len(small_scene.ground)
    original = {tuple(t) for t in small_scene.ground.reshape(-1, 27).tolist()}
    assert {tuple(t) for t in chunks.rows.reshape(-1, 27).tolist()} == original
    # every chunk's triangles belong to one layer, and layers never go backwards
    triangles = small_scene.ground.reshape(-1, 27).tolist()
    layer_of = {
        tuple(t): layer for t, layer in zip(triangles, small_scene.ground_layers, strict=True)
    }
    rows = chunks.rows.reshape(-1, 27).tolist()
    layers = [layer_of[tuple(t)] for t in rows]
    assert layers == sorted(layers)


def test_resampling_paths_agree(small_scene: Scene) -> None:
    frames = {}
    for mode in ("gpu", "cpu"):
        with EquirectRenderer(small_scene, width=WIDTH, resample=mode) as renderer:
            assert renderer.resample == mode
            frames[mode] = renderer.render(40.0, 3.0, 123.0, 5.0).astype(np.float64)
    mse = np.mean((frames["gpu"] - frames["cpu"]) ** 2)
    assert 10 * np.log10(255**2 / max(mse, 1e-9)) > 35.0


def test_auto_resampling_uses_opencv_on_software_gl(small_scene: Scene) -> None:
    with EquirectRenderer(small_scene, width=64) as renderer:
        software = "llvmpipe" in str(renderer.ctx.info["GL_RENDERER"]).lower()
        assert renderer.resample == ("cpu" if software else "gpu")
