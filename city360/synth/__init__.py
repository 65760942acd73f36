"""city360.synth: a procedural 360° twin of an OpenStreetMap extract.

``synthesize(osm_path, out=...)`` writes GPS-tagged equirectangular videos of every street, in
both directions, with exact ground truth beside them (see docs/contracts.md, "synth output").
``demo_city_source()`` is the packaged demo extract. ``add_condition(city, "night")`` films a
visual condition (:data:`~city360.synth.looks.CONDITIONS`) as a variant of a built synthetic
city. Heavy modules load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "CONDITIONS",
    "FramePoses",
    "GpsNoise",
    "Look",
    "Route",
    "SceneTruth",
    "SynthOptions",
    "add_condition",
    "demo_city_source",
    "get_look",
    "plan_coverage_routes",
    "read_true_poses",
    "route_from_gpx",
    "sample_route",
    "synthesize",
]

_LAZY = {
    "CONDITIONS": "city360.synth.looks",
    "Look": "city360.synth.looks",
    "get_look": "city360.synth.looks",
    "add_condition": "city360.synth.variants",
    "SynthOptions": "city360.synth.pipeline",
    "demo_city_source": "city360.synth.pipeline",
    "synthesize": "city360.synth.pipeline",
    "FramePoses": "city360.synth.film",
    "sample_route": "city360.synth.film",
    "GpsNoise": "city360.synth.gps",
    "Route": "city360.synth.routes",
    "plan_coverage_routes": "city360.synth.routes",
    "route_from_gpx": "city360.synth.routes",
    "SceneTruth": "city360.synth.groundtruth",
    "read_true_poses": "city360.synth.groundtruth",
}

if TYPE_CHECKING:
    from city360.synth.film import FramePoses, sample_route
    from city360.synth.gps import GpsNoise
    from city360.synth.groundtruth import SceneTruth, read_true_poses
    from city360.synth.looks import CONDITIONS, Look, get_look
    from city360.synth.pipeline import SynthOptions, demo_city_source, synthesize
    from city360.synth.routes import Route, plan_coverage_routes, route_from_gpx
    from city360.synth.variants import add_condition


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'city360.synth' has no attribute {name!r}"
        raise AttributeError(msg)
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
