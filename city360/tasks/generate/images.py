"""Pictures tasks carry, for a city on disk: grid map, route map, landmark views.

Maps are drawn from the pose graph's own geometry (every walkable segment, so the map shows
exactly the streets the agent can walk) with matplotlib, north up, with the OSM attribution.
Landmark views of a synthetic city are rendered from its 3D scene (rebuilt from the city's OSM
extract and seed, as ``city360 synth`` made it) with
:meth:`city360.synth.render.EquirectRenderer.render_perspective`, looking at the sign from the
pose in front of it.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np

from city360.errors import TaskError
from city360.tasks.walk import WalkGraph
from city360.types import Image

if TYPE_CHECKING:
    from city360.maps.grid import MapGrid

__all__ = ["ATTRIBUTION", "CityImages", "grid_for_graph"]

ATTRIBUTION = "© OpenStreetMap contributors"
MAP_PX = 768
VIEW_SIZE = (640, 480)
VIEW_FOV_DEG = 90.0
GRID_MARGIN_M = 10.0


def grid_for_graph(graph: WalkGraph, n: int) -> MapGrid:
    """The localization grid over the walkable area: the bounding box of every segment,
    widened by ``GRID_MARGIN_M`` on each side."""
    from city360.maps.grid import MapGrid

    xy = np.concatenate([s.xy for s in graph.segments.values()])
    x0, y0 = xy.min(axis=0) - GRID_MARGIN_M
    x1, y1 = xy.max(axis=0) + GRID_MARGIN_M
    return MapGrid(float(x0), float(y0), float(x1), float(y1), n)


class CityImages:
    """:class:`~city360.tasks.generate.common.ImageSource` for a city directory.

    A context manager: the scene renderer (synthetic cities) holds a GL context until closed.
    """

    def __init__(self, city_dir: str | Path, graph: WalkGraph, grid: MapGrid) -> None:
        self.city_dir = Path(city_dir)
        self.graph = graph
        self.grid = grid
        self._renderer: Any = None
        self._base_map: tuple[Image, Any] | None = None

    def __repr__(self) -> str:
        return f"CityImages({str(self.city_dir)!r})"

    def __enter__(self) -> CityImages:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    # maps --------------------------------------------------------------------------------
    def _figure(self) -> tuple[Any, Any]:
        import matplotlib

        matplotlib.use("Agg", force=False)
        from matplotlib.figure import Figure
        from matplotlib.patches import Rectangle

        grid = self.grid
        width = grid.x_max_m - grid.x_min_m
        height = grid.y_max_m - grid.y_min_m
        scale = MAP_PX / max(width, height)
        footer_in = 0.3
        fig_w, fig_h = width * scale / 100, height * scale / 100 + footer_in
        fig = Figure(figsize=(fig_w, fig_h), dpi=100)
        ax = fig.add_axes((0.0, footer_in / fig_h, 1.0, 1.0 - footer_in / fig_h))
        ax.set_xlim(grid.x_min_m, grid.x_max_m)
        ax.set_ylim(grid.y_min_m, grid.y_max_m)
        ax.set_aspect("equal")
        ax.set_axis_off()
        ax.add_patch(
            Rectangle((grid.x_min_m, grid.y_min_m), width, height, color="#f2efe9", zorder=0)
        )
        # One collection per style: far faster than a plot() call per segment.
        from matplotlib.collections import LineCollection

        lines = [seg.xy for seg in self.graph.segments.values()]
        ax.add_collection(LineCollection(lines, colors="#9a9a9a", linewidths=6, zorder=1))
        ax.add_collection(LineCollection(lines, colors="white", linewidths=4, zorder=2))
        fig.text(0.99, 0.01, ATTRIBUTION, ha="right", va="bottom", fontsize=8, color="#333333")
        return fig, ax

    def _base(self) -> tuple[Image, Any]:
        """The street map (drawn once) and a function from metres to pixel (column, row)."""
        if self._base_map is None:
            fig, ax = self._figure()
            image = self._to_image(fig)
            transform = ax.transData
            height = image.shape[0]

            def to_px(x_m: float, y_m: float) -> tuple[int, int]:
                col, row_up = transform.transform((x_m, y_m))
                return round(float(col)), round(height - float(row_up))

            self._base_map = (image, to_px)
        return self._base_map

    @staticmethod
    def _to_image(fig: Any) -> Image:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        return np.ascontiguousarray(rgba[:, :, :3], dtype=np.uint8)

    def grid_map(self) -> Image:
        """The walkable area with the N x N grid, columns x:1.. from the west and rows y:1..
        from the north labelled in every cell."""
        fig, ax = self._figure()
        grid = self.grid
        for k in range(grid.n + 1):
            x = grid.x_min_m + k * grid.cell_width_m
            y = grid.y_min_m + k * grid.cell_height_m
            ax.plot([x, x], [grid.y_min_m, grid.y_max_m], color="#1f4e9c", linewidth=1.2, zorder=3)
            ax.plot([grid.x_min_m, grid.x_max_m], [y, y], color="#1f4e9c", linewidth=1.2, zorder=3)
        for i in range(1, grid.n + 1):
            for j in range(1, grid.n + 1):
                x_min, _, _, y_max = grid.cell_bounds(i, j)
                ax.text(
                    x_min + grid.cell_width_m * 0.04,
                    y_max - grid.cell_height_m * 0.04,
                    f"x:{i} y:{j}",
                    ha="left",
                    va="top",
                    fontsize=9,
                    color="#1f4e9c",
                    zorder=4,
                    bbox={"facecolor": "white", "alpha": 0.7, "edgecolor": "none", "pad": 1},
                )
        return self._to_image(fig)

    def route_map(self, start_xy: tuple[float, float], goal_xy: tuple[float, float]) -> Image:
        """The walkable area with a BLUE start marker and a RED goal marker."""
        import cv2

        base, to_px = self._base()
        image = base.copy()
        for (x_m, y_m), colour in ((start_xy, (0, 80, 255)), (goal_xy, (224, 0, 0))):
            centre = to_px(x_m, y_m)
            cv2.circle(image, centre, 11, (255, 255, 255), -1, lineType=cv2.LINE_AA)
            cv2.circle(image, centre, 9, colour, -1, lineType=cv2.LINE_AA)
        return image

    # views -------------------------------------------------------------------------------
    def _scene_renderer(self) -> Any:
        if self._renderer is None:
            from city360.city import CityDir
            from city360.maps.osm import load_osm
            from city360.synth.render import EquirectRenderer
            from city360.synth.scene import build_scene

            city = CityDir(self.city_dir)
            manifest = city.read_manifest()
            if not manifest.synthetic:
                msg = f"{self.city_dir} is not a synthetic city; it has no 3D scene to render"
                raise TaskError(msg)
            synth = manifest.build.get("synth", {})
            osm = load_osm(
                city.map_dir / "extract.osm",
                bbox=manifest.bbox,
                projection=manifest.projection,
                network=str(synth.get("network", "street")),
            )
            scene = build_scene(
                streets=osm.streets,
                buildings=osm.buildings,
                pois=osm.pois,
                projection=manifest.projection,
                seed=int(synth.get("seed", 0)),
            )
            self._renderer = EquirectRenderer(scene, width=1024)
        return self._renderer

    def landmark_view(
        self, x_m: float, y_m: float, *, heading_deg: float, look_bearing_deg: float
    ) -> Image:
        """The scene from (x_m, y_m) looking at bearing ``look_bearing_deg``, 640 x 480, 90°."""
        del heading_deg  # the view is set by the absolute look bearing alone
        renderer = self._scene_renderer()
        image: Image = renderer.render_perspective(
            x_m,
            y_m,
            yaw_deg=look_bearing_deg,
            fov_deg=VIEW_FOV_DEG,
            width=VIEW_SIZE[0],
            height=VIEW_SIZE[1],
        )
        return image
