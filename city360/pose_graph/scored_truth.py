"""The part of a twin's ground truth its videos filmed: what a build of it is scored against.

A twin filmed along a route (``synth --route``) or by long random walks (``--pattern
wander``) films some of its window's streets; the others cannot be in its pose graph, so its
junctions and streets are scored against the streets the camera passed along
(:func:`filmed_truth`). A twin filmed street by street (``coverage``, ``one-way``) is scored
against all of them. The accuracy suite and ``city360 score`` read the truth here, so a kept
twin scores the same from either.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from city360.synth.groundtruth import SceneTruth

__all__ = [
    "PATTERNS_FILMING_EVERYTHING",
    "filmed_truth",
    "films_everything",
    "true_path",
    "truth_to_score",
]

FloatArray = npt.NDArray[np.float64]

PATTERNS_FILMING_EVERYTHING = frozenset({"coverage", "one-way"})
"""``synth --pattern`` values that film every street of the window (without ``--route``)."""


def films_everything(*, pattern: str, route: bool) -> bool:
    """Whether a twin filmed with ``pattern`` (and along a GPX ``route`` or not) filmed every
    street of its window."""
    return not route and pattern in PATTERNS_FILMING_EVERYTHING


def filmed_truth(
    truth: SceneTruth, path_xy: FloatArray, *, radius_m: float = 6.0, share: float = 0.8
) -> SceneTruth:
    """``truth`` with only the streets the camera filmed: ``share`` of a street's length lies
    within ``radius_m`` of ``path_xy`` (the true camera path, metres). A walk through a
    district films a few of its streets; the others cannot be in its pose graph."""
    from scipy.spatial import cKDTree

    tree = cKDTree(path_xy)
    kept = []
    for street in truth.streets:
        line = np.asarray(street.polyline_xy, np.float64)
        arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))])
        marks = np.linspace(0.0, arc[-1], max(2, int(arc[-1]) + 1))
        points = np.column_stack(
            [np.interp(marks, arc, line[:, 0]), np.interp(marks, arc, line[:, 1])]
        )
        near = np.isfinite(tree.query(points, distance_upper_bound=radius_m)[0])
        if near.mean() >= share:
            kept.append(street)
    return truth.model_copy(update={"streets": kept})


def true_path(city: Path, truth: SceneTruth) -> FloatArray:
    """The true camera positions (N, 2), metres in the city CRS, of every video of the twin
    at ``city``, from ``groundtruth/poses/<video>.csv``."""
    from city360.synth.groundtruth import read_true_poses

    tables = [
        read_true_poses(city / "groundtruth" / "poses" / f"{v.name}.csv") for v in truth.videos
    ]
    return np.concatenate([t[:, 2:4] for t in tables])


def truth_to_score(city_dir: str | Path) -> tuple[SceneTruth, bool]:
    """The ground truth a build of the twin at ``city_dir`` is scored against, and whether it
    is the filmed part only (see the module docstring). The twin's filming is read from its
    ``city.json``: a ``route`` source, and ``build.synth.pattern`` (without a ``city.json``,
    every street)."""
    from city360.city import CityDir
    from city360.synth.groundtruth import SceneTruth

    city = CityDir(city_dir)
    truth = SceneTruth.load(city.groundtruth_dir / "scene.json")
    if not city.manifest_path.is_file():  # a truth written by hand: nothing says how it was filmed
        return truth, False
    manifest = city.read_manifest()
    route = any(source.kind == "route" for source in manifest.sources)
    pattern = str(manifest.build.get("synth", {}).get("pattern", "coverage"))
    if films_everything(pattern=pattern, route=route):
        return truth, False
    return filmed_truth(truth, true_path(city.root, truth)), True
