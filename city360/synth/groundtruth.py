"""Ground truth a synthetic city carries beside its videos (``groundtruth/`` in a city dir).

These files are the contract between ``synth`` (which writes them) and the tests and task
generators (which read them). Positions are metres in the city CRS (``city.json``) plus WGS84
degrees; headings/bearings are degrees clockwise from north.

Files::

    groundtruth/poses/<video>.csv   true camera pose of every video frame (TRUE_POSE_COLUMNS)
    groundtruth/scene.json          SceneTruth: junctions, street graph, POIs, objects, videos
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from city360._atomic import atomic_write_json, atomic_write_text
from city360.city import format_validation_error
from city360.errors import CityFormatError, InputFileError

__all__ = [
    "TRUE_POSE_COLUMNS",
    "Junction",
    "ObjectTruth",
    "PoiTruth",
    "SceneTruth",
    "StreetEdge",
    "VideoTruth",
    "ViewPose",
    "read_true_poses",
    "write_true_poses",
]

TRUE_POSE_COLUMNS = ("frame", "t_s", "x_m", "y_m", "lat", "lon", "heading_deg")
"""``frame`` counts decoded frames from 0; ``t_s`` is that frame's time in the video (pts *
time_base); ``heading_deg`` is the direction of travel, which is the camera's forward axis."""

_STRICT = ConfigDict(extra="forbid", frozen=True)


class Junction(BaseModel):
    """A street-graph node: an intersection (degree >= 3), a bend or a dead end (degree 1)."""

    model_config = _STRICT
    id: int
    x_m: float
    y_m: float
    lat: float
    lon: float
    degree: int


class StreetEdge(BaseModel):
    """An undirected filmed street between two junctions, with its centreline polyline."""

    model_config = _STRICT
    u: int
    v: int
    length_m: float
    name: str = ""
    polyline_xy: list[tuple[float, float]] = Field(description="from u to v, metres")


class ViewPose(BaseModel):
    """Where to stand to see something: a point on the filmed centreline and the travel heading
    there, plus the absolute bearing to look at the target."""

    model_config = _STRICT
    x_m: float
    y_m: float
    lat: float
    lon: float
    heading_deg: float
    look_bearing_deg: float
    edge: tuple[int, int] = Field(description="street edge (u, v) the pose lies on, u->v travel")
    offset_m: float = Field(description="distance from u along the edge polyline")


class PoiTruth(BaseModel):
    """A named place with a signboard on a facade."""

    model_config = _STRICT
    id: str
    name: str
    kind: str = Field(description="OSM-like kind: shop=convenience, amenity=cafe, ...")
    invented_name: bool = Field(description="True when the OSM extract had no name for it")
    x_m: float = Field(description="centre of the signboard")
    y_m: float
    lat: float
    lon: float
    facade_normal_deg: float = Field(description="bearing the sign faces (towards the street)")
    street_side: Literal["left", "right"] = Field(description="side when walking view.edge u->v")
    view: ViewPose


class ObjectTruth(BaseModel):
    """A countable street object."""

    model_config = _STRICT
    id: str
    kind: str = Field(description="tree, vending_machine, bench, traffic_light, ...")
    x_m: float
    y_m: float
    lat: float
    lon: float
    edge: tuple[int, int] | None = None


class VideoTruth(BaseModel):
    """What the synthetic camera and GPS did for one video."""

    model_config = _STRICT
    name: str
    junction_sequence: list[int] = Field(description="junction ids in the order passed")
    fps: float
    frame_count: int
    width: int
    height: int
    clock_offset_s: float = Field(description="GPS time minus camera (MP4 creation) time")
    gps_noise_sigma_m: float
    gps_outlier_indices: list[int] = Field(
        default_factory=list, description="indices into the GPX's written track points"
    )
    gps_dropout_spans_s: list[tuple[float, float]] = Field(
        default_factory=list, description="(start, end) of each GPS gap, in video seconds"
    )
    creation_time_utc: str
    gps_model: str = "phone"
    gps_canyon_spans_s: list[tuple[float, float]] = Field(
        default_factory=list, description="(start, end) of each urban-canyon burst, video seconds"
    )


class SceneTruth(BaseModel):
    """Everything true about a synthetic city, in ``groundtruth/scene.json``."""

    model_config = ConfigDict(extra="forbid")
    seed: int
    junctions: list[Junction]
    streets: list[StreetEdge]
    pois: list[PoiTruth]
    objects: list[ObjectTruth]
    videos: list[VideoTruth]

    @classmethod
    def load(cls, path: str | Path) -> SceneTruth:
        path = Path(path)
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            msg = f"{path} not found; only cities made by `city360 synth` have ground truth"
            raise InputFileError(msg) from None
        except ValidationError as exc:
            raise CityFormatError(format_validation_error(path, exc)) from None

    def save(self, path: str | Path) -> Path:
        return atomic_write_json(path, self.model_dump(mode="json"))


def write_true_poses(path: Path, table: npt.NDArray[np.float64]) -> Path:
    """Write an (N, 7) array with :data:`TRUE_POSE_COLUMNS` as CSV."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(TRUE_POSE_COLUMNS)
    for row in table:
        writer.writerow(
            [
                int(row[0]),
                f"{row[1]:.6f}",
                f"{row[2]:.4f}",
                f"{row[3]:.4f}",
                f"{row[4]:.9f}",
                f"{row[5]:.9f}",
                f"{row[6]:.4f}",
            ]
        )
    return atomic_write_text(path, buffer.getvalue())


def read_true_poses(path: Path) -> npt.NDArray[np.float64]:
    """Read a true-pose CSV into an (N, 7) float array with :data:`TRUE_POSE_COLUMNS`."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None or tuple(header) != TRUE_POSE_COLUMNS:
                msg = f"{path}: header must be {','.join(TRUE_POSE_COLUMNS)}, got {header}"
                raise CityFormatError(msg)
            return np.asarray([[float(v) for v in row] for row in reader if row], np.float64)
    except FileNotFoundError:
        msg = f"{path} not found"
        raise InputFileError(msg) from None
