"""The city directory: one self-contained folder per city (see DESIGN.md "A city on disk").

This module is the contract between stages. ``synth`` writes ``videos/``, ``map/`` and
``groundtruth/`` plus a manifest; ``video_store`` writes ``trajectories/``; ``pose_graph`` writes
``graph.json``; ``maps`` writes ``map/``; ``tasks`` writes ``tasks/``. Nobody reaches into
another stage's internals: they read and write the files described here.

Layout::

    city.json                    CityManifest
    trajectories/<id>/trajectory.json   TrajectoryMeta
    trajectories/<id>/frames.mp4        all-intra H.264, frame i has pts i
    trajectories/<id>/poses.csv         one row per frame, POSE_COLUMNS
    graph.json                   networkx node-link data (pose_graph)
    map/                         OSM extract used, base map + geotransform (maps)
    tasks/                       task suites (tasks)
    videos/                      synth only: the "camera" output, <name>.mp4 + <name>.gpx
    groundtruth/                 synth only: true poses, junctions, street graph, POIs, objects
    conditions/<name>/condition.json               synth only: a visual condition (ConditionMeta)
    conditions/<name>/trajectories/<id>/frames*.mp4  its frames, same count and poses as the base

A condition (``dusk``, ``night``, ``rain``, ``fog``) is a variant of the same city: the same
routes filmed again with the same camera poses and times, so graph, poses and tasks hold
unchanged and only the pictures differ. The base frames are condition ``day``.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from city360._atomic import atomic_write_json, atomic_write_text, folder_lock
from city360.errors import CityFormatError, ConditionMissingError, InputFileError
from city360.geo import LocalProjection

__all__ = [
    "BASE_CONDITION",
    "MAX_STEP_FACTOR",
    "OSM_ATTRIBUTION",
    "OSM_EXTRACT",
    "POSE_COLUMNS",
    "SCHEMA_VERSION",
    "CityDir",
    "CityManifest",
    "ConditionMeta",
    "SourceFile",
    "TrajectoryMeta",
    "TrajectoryPoses",
    "file_sha256",
    "format_validation_error",
    "max_pose_step_m",
]

SCHEMA_VERSION = 1

OSM_EXTRACT = "map/extract.osm"
"""Where a city keeps its OSM data, relative to the city root: written by ``synth`` and by
``build --osm`` (cropped to the city), so a city directory is self-contained and movable."""
OSM_ATTRIBUTION = "© OpenStreetMap contributors, ODbL 1.0 (https://www.openstreetmap.org/copyright)"

POSE_COLUMNS = ("index", "x_m", "y_m", "lat", "lon", "heading_deg", "t_s", "source_pts")
"""Columns of ``poses.csv``: frame index in frames.mp4; metres in the city CRS; WGS84 degrees;
travel heading clockwise from north; seconds since the start of the source video; the frame's
pts in the source video's stream time_base (-1 when unknown)."""

BASE_CONDITION = "day"
"""The condition of a city's own frames (``trajectories/<id>/frames.mp4``)."""

MAX_STEP_FACTOR = 10.0
"""Consecutive poses of a trajectory may be at most this many ``spacing_m`` (and 10 m) apart:
ingest never writes a larger step and the pose-graph build rejects one inside an edge."""


MAX_CITY_RADIUS_M = 100_000.0
"""Farthest a trajectory may lie from its city's CRS origin, metres: one city is one area
(its transverse Mercator stays true to 0.01 % there), and a walk farther off was filmed in
another city (ingest refuses it rather than stretch the city's bbox over both)."""


def max_pose_step_m(spacing_m: float) -> float:
    """Largest distance between consecutive poses a trajectory may have, metres."""
    return max(10.0, MAX_STEP_FACTOR * float(spacing_m))


def format_validation_error(path: Path, exc: ValidationError) -> str:
    """One readable line per pydantic error, each naming the file and field."""
    lines = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "<root>"
        lines.append(f"{path}: field '{field}': {err['msg']}")
    return "\n".join(lines)


def file_sha256(path: str | os.PathLike[str], *, chunk_bytes: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()


class SourceFile(BaseModel):
    """An input a city was made from, with its hash so that runs can be traced to data."""

    model_config = ConfigDict(extra="forbid")
    kind: str = Field(description="video | gps | osm | route | other")
    path: str
    sha256: str
    attribution: str | None = Field(
        default=None, description="who must be credited for the data (ODbL for OSM)"
    )


class CityManifest(BaseModel):
    """``city.json``: what a city is, where it is, and what it was made from."""

    model_config = ConfigDict(extra="forbid")
    schema_version: int = SCHEMA_VERSION
    name: str
    crs: str = Field(description="proj4 string of the city's LocalProjection")
    origin_lat: float
    origin_lon: float
    bbox: tuple[float, float, float, float] = Field(description="south, west, north, east (deg)")
    synthetic: bool = False
    sources: list[SourceFile] = Field(default_factory=list)
    build: dict[str, Any] = Field(default_factory=dict, description="parameters of each stage")
    stats: dict[str, Any] = Field(default_factory=dict)

    @property
    def projection(self) -> LocalProjection:
        return LocalProjection(self.origin_lat, self.origin_lon)


class TrajectoryMeta(BaseModel):
    """``trajectories/<id>/trajectory.json``: one ingested video."""

    model_config = ConfigDict(extra="forbid")
    id: str
    source_video: str
    source_sha256: str
    gps_source: str
    width: int
    height: int
    frame_count: int
    spacing_m: float
    camera_yaw_offset_deg: float = Field(
        0.0, description="camera forward axis minus travel direction, degrees clockwise"
    )
    clock_offset_s: float = Field(0.0, description="GPS time minus video time, seconds")
    length_m: float = 0.0
    part: int | None = Field(
        default=None,
        description="1-based part of a source split at GPS gaps (ids <stem>, <stem>_2, ...); "
        "None when the source is one trajectory",
    )
    source_range_s: tuple[float, float] | None = Field(
        default=None,
        description="video time of the part's first and last frame, seconds (split parts)",
    )
    source_layout: Literal["equirect", "gopro-max", "dual-fisheye", "eac", "cubemap"] = Field(
        default="equirect",
        description="how the source video laid out the sphere; frames are stored equirect",
    )
    dead_reckoned_s: list[tuple[float, float]] | None = Field(
        default=None,
        description="video time ranges (first and last frame) posed by dead reckoning where "
        "the GPS had no fix (the video's head or tail); None when every pose is from GPS",
    )


class ConditionMeta(BaseModel):
    """``conditions/<name>/condition.json``: one visual condition of a synthetic city."""

    model_config = ConfigDict(extra="forbid")
    name: str
    look: dict[str, Any] = Field(description="the shader settings it was filmed with")
    frame_counts: dict[str, int] = Field(description="trajectory id -> frames (= the base's)")
    synth: dict[str, Any] = Field(description="the city's synth parameters it reused")
    code_version: str = ""


@dataclass(frozen=True, slots=True)
class TrajectoryPoses:
    """Per-frame poses of one trajectory as numpy columns (see :data:`POSE_COLUMNS`)."""

    x_m: npt.NDArray[np.float64]
    y_m: npt.NDArray[np.float64]
    lat: npt.NDArray[np.float64]
    lon: npt.NDArray[np.float64]
    heading_deg: npt.NDArray[np.float64]
    t_s: npt.NDArray[np.float64]
    source_pts: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.x_m.shape[0])

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(POSE_COLUMNS)
        for i in range(len(self)):
            writer.writerow(
                [
                    i,
                    f"{self.x_m[i]:.4f}",
                    f"{self.y_m[i]:.4f}",
                    f"{self.lat[i]:.9f}",
                    f"{self.lon[i]:.9f}",
                    f"{self.heading_deg[i]:.4f}",
                    f"{self.t_s[i]:.6f}",
                    int(self.source_pts[i]),
                ]
            )
        return buffer.getvalue()

    @classmethod
    def from_csv(cls, path: Path) -> TrajectoryPoses:
        try:
            with open(path, encoding="utf-8") as handle:
                header = handle.readline().strip()
                if header != ",".join(POSE_COLUMNS):
                    msg = f"{path}: header must be {','.join(POSE_COLUMNS)}, got {header!r}"
                    raise CityFormatError(msg)
                body = handle.read()
            if not body.strip():
                msg = f"{path} has no poses"
                raise CityFormatError(msg)
            # One vectorised parse: a city has ~1 pose per metre of street.
            table = np.loadtxt(io.StringIO(body), delimiter=",", dtype=np.float64, ndmin=2)
        except FileNotFoundError:
            msg = f"{path} is missing; re-run `city360 ingest` for this trajectory"
            raise InputFileError(msg) from None
        except ValueError as exc:
            if isinstance(exc, CityFormatError):
                raise
            msg = f"{path}: a value is not a number or a row has the wrong length ({exc})"
            raise CityFormatError(msg) from None
        if table.shape[1] != len(POSE_COLUMNS):
            msg = f"{path}: rows must have {len(POSE_COLUMNS)} values, got {table.shape[1]}"
            raise CityFormatError(msg)
        if not np.array_equal(table[:, 0], np.arange(len(table))):
            msg = f"{path}: column 'index' must count 0, 1, 2, ... without gaps"
            raise CityFormatError(msg)
        return cls(
            x_m=table[:, 1],
            y_m=table[:, 2],
            lat=table[:, 3],
            lon=table[:, 4],
            heading_deg=table[:, 5],
            t_s=table[:, 6],
            source_pts=table[:, 7].astype(np.int64),
        )


class CityDir:
    """Paths and readers/writers of one city directory. Cheap to create; reads on demand."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"CityDir({str(self.root)!r})"

    # paths -------------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.root / "city.json"

    @property
    def graph_path(self) -> Path:
        return self.root / "graph.json"

    @property
    def trajectories_dir(self) -> Path:
        return self.root / "trajectories"

    @property
    def map_dir(self) -> Path:
        return self.root / "map"

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    @property
    def osm_extract_path(self) -> Path:
        """``map/extract.osm``: the OSM data kept inside the city (may not exist)."""
        return self.root / OSM_EXTRACT

    @property
    def videos_dir(self) -> Path:
        return self.root / "videos"

    @property
    def groundtruth_dir(self) -> Path:
        return self.root / "groundtruth"

    def trajectory_dir(self, trajectory_id: str) -> Path:
        return self.trajectories_dir / trajectory_id

    def frames_path(self, trajectory_id: str, *, condition: str = BASE_CONDITION) -> Path:
        """``frames.mp4`` of a trajectory: the base frames, or those of a visual condition."""
        if condition == BASE_CONDITION:
            return self.trajectory_dir(trajectory_id) / "frames.mp4"
        return self.condition_dir(condition) / "trajectories" / trajectory_id / "frames.mp4"

    @property
    def conditions_dir(self) -> Path:
        return self.root / "conditions"

    def condition_dir(self, condition: str) -> Path:
        return self.conditions_dir / condition

    def condition_names(self) -> list[str]:
        """``day`` (the base frames) and every complete condition variant, sorted after it."""
        found = []
        if self.conditions_dir.is_dir():
            found = sorted(
                p.name
                for p in self.conditions_dir.iterdir()
                if p.is_dir() and not p.name.startswith(".") and (p / "condition.json").is_file()
            )
        return [BASE_CONDITION, *found]

    def read_condition(self, condition: str) -> ConditionMeta:
        """``condition.json`` of a condition variant; a missing one names the available ones
        and how to add it."""
        path = self.condition_dir(condition) / "condition.json"
        if not path.is_file():
            # the looks are plain values (a leaf module): which names can be filmed at all
            from city360.synth.looks import condition_names

            filmable = [n for n in condition_names() if n != BASE_CONDITION]
            hint = (
                f"Add it with `city360 condition add {self.root} {condition}`"
                if condition in filmable
                else f"conditions that can be filmed: {', '.join(filmable)}"
            )
            msg = (
                f"{self.root} has no condition {condition!r}; it has "
                f"{', '.join(self.condition_names())}. {hint}"
            )
            raise ConditionMissingError(msg)
        try:
            return ConditionMeta.model_validate_json(path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise CityFormatError(format_validation_error(path, exc)) from None

    def check_condition(self, condition: str) -> None:
        """Raise unless ``condition`` is ``day`` or a complete variant: ``condition.json``
        present and a frame store for every trajectory with the base's frame count."""
        if condition == BASE_CONDITION:
            return
        meta = self.read_condition(condition)
        for trajectory_id in self.trajectory_ids():
            frames = self.frames_path(trajectory_id, condition=condition)
            base = self.read_trajectory_meta(trajectory_id).frame_count
            if not frames.is_file() or meta.frame_counts.get(trajectory_id) != base:
                msg = (
                    f"condition {condition!r} of {self.root} does not match trajectory "
                    f"{trajectory_id!r} ({frames}: {meta.frame_counts.get(trajectory_id)} "
                    f"frames recorded, the base has {base}); re-film it with "
                    f"`city360 condition add {self.root} {condition} --replace`"
                )
                raise CityFormatError(msg)

    def poses_path(self, trajectory_id: str) -> Path:
        return self.trajectory_dir(trajectory_id) / "poses.csv"

    def trajectory_meta_path(self, trajectory_id: str) -> Path:
        return self.trajectory_dir(trajectory_id) / "trajectory.json"

    # manifest ----------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def read_manifest(self) -> CityManifest:
        path = self.manifest_path
        if not path.is_file():
            msg = (
                f"{path} not found: {self.root} is not a city directory; create one with "
                "`city360 synth` or `city360 ingest`"
            )
            raise InputFileError(msg)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            msg = f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})"
            raise CityFormatError(msg) from None
        try:
            manifest = CityManifest.model_validate(raw)
        except ValidationError as exc:
            raise CityFormatError(format_validation_error(path, exc)) from None
        if manifest.schema_version != SCHEMA_VERSION:
            msg = (
                f"{path}: schema_version {manifest.schema_version} is not supported "
                f"(this city360 reads {SCHEMA_VERSION}); rebuild the city"
            )
            raise CityFormatError(msg)
        return manifest

    def write_manifest(self, manifest: CityManifest) -> Path:
        """Write ``city.json`` whole. A read-modify-write of it holds :meth:`manifest_lock`."""
        return atomic_write_json(self.manifest_path, manifest.model_dump(mode="json"))

    @contextlib.contextmanager
    def manifest_lock(self) -> Iterator[None]:
        """Hold the lock of ``city.json`` for a read-modify-write of it across processes: an
        ingest, a build and a map of one city at once each keep what the others wrote."""
        self.root.mkdir(parents=True, exist_ok=True)
        with folder_lock(self.manifest_path):
            yield

    # data sources ------------------------------------------------------------------------
    def osm_source(self) -> Path | None:
        """The OSM extract of this city, or None when it has none.

        The one answer to "where is this city's OSM data" for maps, tasks, ``info`` and the
        viewer: ``map/extract.osm`` inside the city. Cities built before the extract was kept
        inside may name an OSM file in ``city.json`` ``sources`` instead; such a file is used
        while it still exists (relative paths are taken from the city root).
        """
        if self.osm_extract_path.is_file():
            return self.osm_extract_path
        if not self.exists():
            return None
        for source in self.read_manifest().sources:
            if source.kind == "osm":
                path = Path(source.path)
                path = path if path.is_absolute() else self.root / path
                if path.is_file():
                    return path
        return None

    # trajectories ------------------------------------------------------------------------
    def trajectory_ids(self) -> list[str]:
        """Ids of complete trajectories (those with a trajectory.json), sorted."""
        if not self.trajectories_dir.is_dir():
            return []
        return sorted(
            p.name
            for p in self.trajectories_dir.iterdir()
            if p.is_dir() and not p.name.startswith(".") and (p / "trajectory.json").is_file()
        )

    def incomplete_trajectory_dirs(self) -> list[Path]:
        """Trajectory folders (not hidden, so not an ingest's work in progress) that hold
        files but no trajectory.json: what a lost or deleted trajectory.json leaves."""
        if not self.trajectories_dir.is_dir():
            return []
        return sorted(
            p
            for p in self.trajectories_dir.iterdir()
            if p.is_dir()
            and not p.name.startswith(".")
            and not (p / "trajectory.json").is_file()
            and any(p.iterdir())
        )

    def read_trajectory_meta(self, trajectory_id: str) -> TrajectoryMeta:
        path = self.trajectory_meta_path(trajectory_id)
        try:
            return TrajectoryMeta.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            msg = f"{path} not found; re-run `city360 ingest` for trajectory {trajectory_id!r}"
            raise InputFileError(msg) from None
        except ValidationError as exc:
            raise CityFormatError(format_validation_error(path, exc)) from None

    def read_poses(self, trajectory_id: str) -> TrajectoryPoses:
        return TrajectoryPoses.from_csv(self.poses_path(trajectory_id))

    @staticmethod
    def write_trajectory_files(folder: Path, meta: TrajectoryMeta, poses: TrajectoryPoses) -> None:
        """Write trajectory.json and poses.csv into ``folder`` (frames.mp4 is the writer's job).

        Call this inside :func:`city360._atomic.atomic_dir` so a trajectory appears whole or not
        at all.
        """
        if len(poses) != meta.frame_count:
            msg = f"trajectory {meta.id}: {len(poses)} poses for {meta.frame_count} frames"
            raise CityFormatError(msg)
        atomic_write_text(folder / "poses.csv", poses.to_csv())
        atomic_write_json(folder / "trajectory.json", meta.model_dump(mode="json"))
