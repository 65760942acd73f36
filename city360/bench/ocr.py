"""How well each OCR backend reads the landmark signs of a synthetic city's landmark-search
tasks, the way the sign reader sees them.

The views: for every landmark of the suite's ``LandmarkSearchText`` tasks (or the families
given), the simulator's view (640x480 at 90 degrees FOV by default) looking square on to the
side of the street the sign is on (yaw +90 or -90, as the sign reader looks), from the street
3 m before, at, 3 m and 6 m past the task's goal pose (``truth.goal``'s segment and offset, in
front of the sign); positions past either end of the goal's segment are left out.

Per backend: **read** = views whose best line matches the landmark's name
(:func:`~city360.agents.sign_reader.text_match` >= the sign reader's ``match_threshold``);
**false reads** = (view, name) pairs where a line matches another landmark of the suite whose
sign stands more than :data:`NEARBY_M` from the camera, which is where the sign reader would
answer wrongly; **seconds per view**: CPU seconds of this process and its child processes
(tesseract runs as one), so a loaded machine inflates it far less than the wall clock; run
with one thread per backend (rapidocr's ``THREADS``, ``OMP_THREAD_LIMIT=1`` for tesseract)
for a one-core figure.
"""

from __future__ import annotations

import math
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from city360.agents.ocr_backends import OcrBackend
from city360.agents.sign_reader import text_match
from city360.errors import ConfigError
from city360.types import Image

__all__ = [
    "ALONG_M",
    "FAMILIES",
    "NEARBY_M",
    "BackendScore",
    "SignView",
    "compare_backends",
    "score_backend",
    "side_yaw_deg",
    "sign_views",
]

ALONG_M = (-3.0, 0.0, 3.0, 6.0)
"""Where the views are taken, metres along the street from the goal pose in front of the sign."""

NEARBY_M = 15.0
"""A sign this close to the camera (metres) may be in the view: reading it is no false read."""

FAMILIES = ("LandmarkSearchText",)
"""Whose landmarks are looked at by default: on the demo, 25 signs (the image family's 25
share 8 of them)."""


@dataclass(frozen=True, slots=True)
class SignView:
    """One view of a landmark's sign: its name, where it was taken (``along_m`` from the goal
    pose), the RGB image, and the other landmarks' names whose signs are more than
    :data:`NEARBY_M` away (those a backend must not read here)."""

    landmark_id: str
    name: str
    along_m: float
    image: Image
    far_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BackendScore:
    """One backend's figures over a set of views (see the module docstring)."""

    backend: str
    views: int
    read: int
    false_reads: int
    cpu_s_per_view: float
    wall_s_per_view: float
    missed: tuple[str, ...]
    """``"name @ along_m"`` of every view not read."""
    wrong: tuple[str, ...]
    """``"name @ along_m -> other name"`` of every false read."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "views": self.views,
            "read": self.read,
            "false_reads": self.false_reads,
            "cpu_s_per_view": round(self.cpu_s_per_view, 3),
            "wall_s_per_view": round(self.wall_s_per_view, 3),
            "missed": list(self.missed),
            "wrong": list(self.wrong),
        }


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def score_backend(
    backend: OcrBackend, views: Sequence[SignView], *, threshold: float = 0.75
) -> BackendScore:
    """Read every view with ``backend`` and count what it got right and wrong."""
    if not views:
        msg = "no sign views to read; does the suite have landmark-search tasks?"
        raise ConfigError(msg)
    read, missed, wrong = 0, [], []
    cpu_start, wall_start = _cpu_seconds(), time.perf_counter()
    for view in views:
        lines = [sign.text for sign in backend.read_signs(view.image)]
        where = f"{view.name} @ {view.along_m:+.0f} m"
        if max((text_match(view.name, line) for line in lines), default=0.0) >= threshold:
            read += 1
        else:
            missed.append(where)
        for other in view.far_names:
            if any(text_match(other, line) >= threshold for line in lines):
                wrong.append(f"{where} -> {other}")
    cpu, wall = _cpu_seconds() - cpu_start, time.perf_counter() - wall_start
    return BackendScore(
        backend=backend.name,
        views=len(views),
        read=read,
        false_reads=len(wrong),
        cpu_s_per_view=cpu / len(views),
        wall_s_per_view=wall / len(views),
        missed=tuple(missed),
        wrong=tuple(wrong),
    )


def compare_backends(
    backends: Sequence[OcrBackend], views: Sequence[SignView], *, threshold: float = 0.75
) -> list[BackendScore]:
    """:func:`score_backend` for each backend on the same views, best (most read) first."""
    scores = [score_backend(b, views, threshold=threshold) for b in backends]
    return sorted(scores, key=lambda s: (-s.read, s.false_reads, s.cpu_s_per_view))


def sign_views(
    city_dir: str | Path,
    suite_dir: str | Path,
    *,
    families: Sequence[str] = FAMILIES,
    along_m: Sequence[float] = ALONG_M,
    view_width: int = 640,
    view_height: int = 480,
    fov_deg: float = 90.0,
) -> list[SignView]:
    """The views of the module docstring for a synthetic city (it needs the city's
    ``groundtruth/scene.json`` for where the signs are) and one of its task suites."""
    from city360.city import CityDir
    from city360.simulator.env import make
    from city360.synth.groundtruth import SceneTruth
    from city360.tasks.suite import load_suite

    city = CityDir(city_dir)
    pois = {p.id: p for p in SceneTruth.load(city.groundtruth_dir / "scene.json").pois}
    landmarks: dict[str, tuple[str, str, float]] = {}
    for task in load_suite(suite_dir).tasks:
        if task.family not in families:
            continue
        truth = task.truth.model_dump()
        goal = truth["goal"]
        landmarks.setdefault(
            truth["landmark_id"],
            (truth["landmark_name"], str(goal["segment"]), float(goal["offset_m"])),
        )
    views: list[SignView] = []
    with make(
        city.root,
        view_width=view_width,
        view_height=view_height,
        fov_deg=fov_deg,
        map=False,
        arrows=False,
        privileged_info=True,
    ) as env:
        for landmark_id, (name, segment_id, offset_m) in sorted(landmarks.items()):
            poi = pois[landmark_id]
            walk_m = env.world.segment(segment_id).walk_m
            for along in along_m:
                offset = offset_m + along
                if not 0.0 <= offset <= walk_m:
                    continue
                _, info = env.reset(options={"segment": segment_id, "offset_m": offset})
                pose = info["pose"]
                yaw = side_yaw_deg(pose, poi.x_m, poi.y_m)
                obs, info = env.reset(
                    options={"segment": segment_id, "offset_m": offset, "yaw_deg": yaw}
                )
                x_m, y_m = info["pose"]["x_m"], info["pose"]["y_m"]
                far = tuple(
                    sorted(
                        other
                        for other_id, (other, _, _) in landmarks.items()
                        if other_id != landmark_id
                        and math.dist((x_m, y_m), (pois[other_id].x_m, pois[other_id].y_m))
                        > NEARBY_M
                    )
                )
                views.append(SignView(landmark_id, name, along, obs["view"], far))
    return views


def side_yaw_deg(pose: dict[str, Any], x_m: float, y_m: float) -> float:
    """+90 when the point (city metres) is right of the direction of travel, else -90."""
    heading = math.radians(float(pose["heading_deg"]))
    dx, dy = x_m - float(pose["x_m"]), y_m - float(pose["y_m"])
    # right of travel: the cross product of (sin h, cos h) and (dx, dy) is negative
    right = math.sin(heading) * dy - math.cos(heading) * dx < 0
    return 90.0 if right else -90.0
