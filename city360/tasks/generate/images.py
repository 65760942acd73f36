"""Pictures tasks carry, for a city on disk: grid map, route map, landmark views.

Maps come from ``city360.maps`` (the city's cached base map, north up, with the OSM
attribution), so the grid a localization task is scored on is the one every map shows.
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
from city360.streets import StreetGraph
from city360.types import Image

if TYPE_CHECKING:
    from city360.maps.citymap import CityMap
    from city360.maps.grid import MapGrid

__all__ = ["ATTRIBUTION", "CityImages", "grid_for_graph"]

ATTRIBUTION = "© OpenStreetMap contributors"
MAP_PX = 768
VIEW_SIZE = (640, 480)
VIEW_FOV_DEG = 90.0


def grid_for_graph(graph: StreetGraph, n: int) -> MapGrid:
    """The localization grid: the one ``city360.maps`` records in ``map/map.json`` for the
    graph's city (so maps, tasks and the simulator share one grid), with ``n`` cells a side.

    A graph not read from a city folder (a hand-made one) gets the same rule: the maps'
    exploration area over its nodes and segment polylines.
    """
    if graph.city_dir is not None:
        from city360.maps.citymap import CityMap

        return CityMap.open(graph.city_dir, grid_n=n).grid
    from city360.maps.grid import MapGrid
    from city360.maps.layers import exploration_area

    points = np.vstack(
        [np.asarray(list(graph.node_xy.values()), np.float64).reshape(-1, 2)]
        + [seg.xy for seg in graph.segments.values()]
    )
    area = exploration_area(points, "pose graph")
    return MapGrid(area.x_min_m, area.y_min_m, area.x_max_m, area.y_max_m, n)


class CityImages:
    """:class:`~city360.tasks.generate.common.ImageSource` for a city directory.

    A context manager: the scene renderer (synthetic cities) holds a GL context until closed.
    """

    def __init__(self, city_dir: str | Path, graph: StreetGraph, grid: MapGrid) -> None:
        self.city_dir = Path(city_dir)
        self.graph = graph
        self.grid = grid
        self._renderer: Any = None
        self._map: CityMap | None = None

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
    def _city_map(self) -> CityMap:
        """The city's cached base map (``city360.maps``) with this suite's grid size."""
        if self._map is None:
            from city360.maps.citymap import CityMap

            self._map = CityMap.open(self.city_dir, grid_n=self.grid.n)
        return self._map

    def grid_map(self) -> Image:
        """The exploration area with the N x N grid, columns x:1.. from the west and rows y:1..
        from the north labelled in every cell (drawn by ``city360.maps``)."""
        return self._city_map().grid_map(size_px=MAP_PX)

    def route_map(self, start_xy: tuple[float, float], goal_xy: tuple[float, float]) -> Image:
        """The exploration area with a BLUE start marker and a RED goal marker."""
        return self._city_map().route_map(start_xy, goal_xy, size_px=MAP_PX)

    # views -------------------------------------------------------------------------------
    def _scene_renderer(self) -> Any:
        if self._renderer is None:
            from city360.city import CityDir
            from city360.synth.render import EquirectRenderer
            from city360.synth.variants import city_scene

            city = CityDir(self.city_dir)
            manifest = city.read_manifest()
            if not manifest.synthetic:
                msg = f"{self.city_dir} is not a synthetic city; it has no 3D scene to render"
                raise TaskError(msg)
            # the scene synth filmed, checked against the truth's counts: a city filmed by
            # older code (another cut at its bbox) would show signs where the tasks have none
            scene = city_scene(city, dict(manifest.build.get("synth", {})))
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
