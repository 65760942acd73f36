"""How good each GPS fix says it is: DOP, satellites, fix type and horizontal accuracy.

Receivers report the quality of every fix, each format in its own words:

| format | fields read |
| --- | --- |
| GPX 1.1 | ``<fix>`` none/2d/3d/dgps/pps, ``<sat>``, ``<hdop>``, ``<vdop>``, ``<pdop>`` |
| NMEA 0183 | GGA fix quality, satellites, HDOP; GSA 1/2/3 (none/2D/3D), PDOP, HDOP, VDOP |
| GoPro GPMF | GPS5: GPSF (0/2/3), GPSP (DOP x 100) per payload; GPS9: DOP, fix per sample |
| CAMM type 6 | fix type; horizontal accuracy, metres |
| EXIF | GPSDOP (kept as HDOP), GPSMeasureMode 2/3 |
| CSV | ``accuracy`` (metres, as phone loggers write), ``hdop``/``vdop``/``pdop``, ``fix``, |
|     | ``satellites`` |

Units: DOPs are dimensionless; ``accuracy_m`` is the horizontal accuracy in metres as phones
report it (the radius of the 68 % circle, Android's ``Location.getAccuracy``); ``satellites`` a
count. A column is ``None`` when the file has no such field at all, and NaN (or
:data:`FIX_UNKNOWN`) for a fix that lacks it.

Measurement noise from quality (:func:`horizontal_sigma_m`): a 68 % radius of ``r`` is a
per-axis sigma of ``r / 1.515`` for a round Gaussian; an HDOP times the user-equivalent range
error (UERE, metres) is the horizontal RMS error (DRMS), a per-axis sigma of
``hdop * uere / sqrt(2)`` (a PDOP stands in where a fix has no HDOP: PDOP >= HDOP, so the
fix is weighted cautiously). Accuracy wins over DOP when both are there (the receiver already
folded its own UERE and multipath estimate in). The result is clamped to
``[min_sigma_m, max_sigma_m]``: a receiver's 0.5 HDOP under open sky does not make a fix good
to 20 cm, and one bad report must not make a fix weightless either.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from city360.errors import GpsError

__all__ = [
    "ACCURACY_68_PER_SIGMA",
    "FIX_NAMES",
    "FIX_NONE",
    "FIX_UNKNOWN",
    "FixQuality",
    "QualityNoise",
    "fix_code",
    "horizontal_sigma_m",
]

FloatArray = npt.NDArray[np.float64]
FixArray = npt.NDArray[np.int8]

FIX_UNKNOWN = -1
"""Fix type code of a fix that does not say."""
FIX_NONE = 0
"""Fix type code of a record the receiver marked as without a position."""
FIX_NAMES: dict[str, int] = {
    "none": FIX_NONE,
    "gps": 1,  # NMEA GGA quality 1: a fix, its dimension not said
    "2d": 2,
    "3d": 3,
    "dgps": 4,
    "pps": 5,
    "rtk": 6,
    "estimated": 7,  # dead reckoning (GGA quality 6)
}
"""Fix type names (GPX's five plus NMEA's) and their codes in :attr:`FixQuality.fix_type`."""

ACCURACY_68_PER_SIGMA = 1.515
"""Radius of the 68 % circle of a round 2-D Gaussian, in per-axis sigmas."""


def fix_code(name: str, *, source: Path, field: str) -> int:
    """The code of fix type ``name`` (case-insensitive); :class:`GpsError` naming the file and
    field for an unknown one."""
    key = name.strip().lower()
    if key in FIX_NAMES:
        return FIX_NAMES[key]
    close = difflib.get_close_matches(key, FIX_NAMES, n=1)
    hint = f". Did you mean {close[0]!r}?" if close else ""
    msg = (
        f"GPS track {source}: `{field}` has unknown fix type {name!r}; expected one of "
        f"{', '.join(FIX_NAMES)}{hint}"
    )
    raise GpsError(msg)


def _optional(values: npt.ArrayLike | None) -> FloatArray | None:
    return None if values is None else np.asarray(values, np.float64)


@dataclass(frozen=True, slots=True)
class FixQuality:
    """Optional per-fix quality columns, each as long as the track (see the module docstring).

    ``hdop``/``vdop``/``pdop``: dimensionless; ``satellites``: satellites used; ``accuracy_m``:
    horizontal 68 % radius, metres; ``fix_type``: codes of :data:`FIX_NAMES`, -1 unknown.
    """

    hdop: FloatArray | None = None
    vdop: FloatArray | None = None
    pdop: FloatArray | None = None
    satellites: FloatArray | None = None
    accuracy_m: FloatArray | None = None
    fix_type: FixArray | None = None

    @classmethod
    def from_columns(
        cls,
        *,
        hdop: npt.ArrayLike | None = None,
        vdop: npt.ArrayLike | None = None,
        pdop: npt.ArrayLike | None = None,
        satellites: npt.ArrayLike | None = None,
        accuracy_m: npt.ArrayLike | None = None,
        fix_type: npt.ArrayLike | None = None,
    ) -> FixQuality:
        """Columns as arrays; a column whose every value is unknown is dropped (None)."""

        def known(column: FloatArray | None) -> FloatArray | None:
            return None if column is None or not np.isfinite(column).any() else column

        fix = None if fix_type is None else np.asarray(fix_type, np.int8)
        return cls(
            hdop=known(_optional(hdop)),
            vdop=known(_optional(vdop)),
            pdop=known(_optional(pdop)),
            satellites=known(_optional(satellites)),
            accuracy_m=known(_optional(accuracy_m)),
            fix_type=None if fix is None or not (fix != FIX_UNKNOWN).any() else fix,
        )

    @property
    def columns(self) -> dict[str, FloatArray | FixArray]:
        """The columns present, by name."""
        names = ("hdop", "vdop", "pdop", "satellites", "accuracy_m", "fix_type")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}

    def __bool__(self) -> bool:
        return bool(self.columns)

    def take(self, index: npt.NDArray[np.intp] | npt.NDArray[np.bool_]) -> FixQuality:
        """The quality of the fixes ``index`` selects (a mask or integer indices)."""

        def pick(column: FloatArray | None) -> FloatArray | None:
            return None if column is None else column[index]

        return FixQuality(
            hdop=pick(self.hdop),
            vdop=pick(self.vdop),
            pdop=pick(self.pdop),
            satellites=pick(self.satellites),
            accuracy_m=pick(self.accuracy_m),
            fix_type=None if self.fix_type is None else self.fix_type[index],
        )

    def check(self, source: Path, length: int) -> None:
        """:class:`GpsError` naming the file and field for a column of the wrong length or a
        negative DOP, accuracy or satellite count (NaN means unknown and is allowed)."""
        for name, column in self.columns.items():
            if column.shape != (length,):
                msg = f"GPS track {source}: `{name}` has {column.shape[0]} values for {length}"
                raise GpsError(msg)
            if name == "fix_type":
                bad = (column < FIX_UNKNOWN) | (column > max(FIX_NAMES.values()))
            else:
                bad = np.isfinite(column) & (column < 0)
            if bad.any():
                first = int(np.flatnonzero(bad)[0])
                msg = (
                    f"GPS track {source}: `{name}` of fix {first} (from 0, in file order) is "
                    f"{column[first].item()}; it must be >= 0 (or missing when unknown)"
                )
                raise GpsError(msg)


@dataclass(frozen=True, slots=True)
class QualityNoise:
    """How reported quality becomes measurement noise (:func:`horizontal_sigma_m`)."""

    uere_m: float = 2.5
    """User-equivalent range error, metres: HDOP x UERE is the horizontal RMS error. 2.5 m is
    a consumer single-frequency receiver's budget in a city (clock, ephemeris, ionosphere,
    troposphere, some multipath); open-sky figures are nearer 1.5 m."""
    min_sigma_m: float = 1.5
    """Smallest per-axis sigma a fix is given, metres."""
    max_sigma_m: float = 25.0
    """Largest per-axis sigma a fix is given, metres."""

    def __post_init__(self) -> None:
        if not (self.uere_m > 0 and 0 < self.min_sigma_m <= self.max_sigma_m):
            msg = (
                "quality noise needs uere_m > 0 and 0 < min_sigma_m <= max_sigma_m, got "
                f"{self.uere_m}, {self.min_sigma_m}, {self.max_sigma_m}"
            )
            raise GpsError(msg)


def horizontal_sigma_m(
    quality: FixQuality, *, fallback_sigma_m: float, noise: QualityNoise | None = None
) -> FloatArray | None:
    """Per-axis measurement sigma of each fix, metres, from its accuracy or HDOP (see the
    module docstring); ``fallback_sigma_m`` where a fix reports none of them. None when the
    track reports no accuracy and no DOP for any fix (callers then keep their constant sigma)."""
    noise = noise or QualityNoise()
    if quality.accuracy_m is None and quality.hdop is None and quality.pdop is None:
        return None
    length = next(iter(quality.columns.values())).shape[0]
    dop = np.full(length, np.nan)
    for column in (quality.hdop, quality.pdop):
        if column is not None:
            dop = np.where(np.isfinite(dop), dop, column)
    sigma = dop * noise.uere_m / math.sqrt(2.0)
    if quality.accuracy_m is not None:
        from_accuracy = quality.accuracy_m / ACCURACY_68_PER_SIGMA
        sigma = np.where(np.isfinite(from_accuracy), from_accuracy, sigma)
    sigma = np.where(np.isfinite(sigma), sigma, fallback_sigma_m)
    return np.clip(sigma, noise.min_sigma_m, noise.max_sigma_m)
