"""Partial panoramas described by Photo Sphere XMP (GPano): where the picture sits in the full
equirectangular sphere.

A phone's photo sphere (Google Camera, the Street View app) or an edited 360° photo often
covers less than the whole sphere: a band around the horizon, say 8704x3000 pixels, whose XMP
says it was cropped from an 8704x4352 full panorama (``GPano:FullPanoWidthPixels`` /
``FullPanoHeightPixels``) at column ``CroppedAreaLeftPixels`` and row ``CroppedAreaTopPixels``,
``CroppedAreaImageWidthPixels`` x ``CroppedAreaImageHeightPixels`` in size. Such a photo is
not 2:1, but placed in its full panorama (the rest black) it is an equirectangular frame like
any other. XMP writes the fields as elements (``<GPano:X>1</GPano:X>``) or as attributes
(``GPano:X="1"``); both are read.

``PoseHeadingDegrees`` is not read: the GoPro MAX writes 0.0 whatever way it faces (the photo
in ../shared/data), so a zero cannot be told from "no compass".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["PanoCrop", "place_in_full_pano", "read_pano_crop"]

_FIELDS = (
    "FullPanoWidthPixels",
    "FullPanoHeightPixels",
    "CroppedAreaLeftPixels",
    "CroppedAreaTopPixels",
    "CroppedAreaImageWidthPixels",
    "CroppedAreaImageHeightPixels",
)


@dataclass(frozen=True, slots=True)
class PanoCrop:
    """Where a photo's pixels sit in its full equirectangular panorama, in the photo's own
    pixels (the XMP's numbers scaled by the photo's width over ``CroppedAreaImageWidthPixels``,
    for a photo resized after it was tagged): ``full_width`` x ``full_height`` (2:1), the
    photo's top-left corner at column ``left``, row ``top``."""

    full_width: int
    full_height: int
    left: int
    top: int


def _field(xmp: str, name: str) -> float | None:
    match = re.search(rf"GPano:{name}\s*(?:=\s*[\"']|>)\s*(-?[0-9.]+)", xmp)
    return float(match.group(1)) if match is not None else None


def read_pano_crop(path: Path, width: int, height: int) -> PanoCrop | None:
    """The full panorama a ``width`` x ``height`` photo was cropped from, from its GPano XMP;
    None when the XMP does not say, or says something that does not fit the photo (a crop
    area of another shape, a full panorama that is not 2:1, a crop outside it)."""
    from PIL import Image

    with Image.open(path) as image:
        raw = image.info.get("xmp") or b""
    xmp = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if "GPano:" not in xmp:
        return None
    values = [_field(xmp, name) for name in _FIELDS]
    if any(v is None or v < 0 for v in values):
        return None
    full_w, full_h, left, top, crop_w, crop_h = (float(v or 0.0) for v in values)
    if min(full_w, full_h, crop_w, crop_h) <= 0 or abs(full_w / full_h / 2.0 - 1.0) > 0.01:
        return None
    scale = width / crop_w
    if abs(height / crop_h - scale) > 0.01 * scale or top + crop_h > full_h + 1:
        return None
    return PanoCrop(
        full_width=round(full_w * scale),
        full_height=round(full_h * scale),
        left=round(left * scale),
        top=round(top * scale),
    )


def place_in_full_pano(image: npt.NDArray[np.uint8], crop: PanoCrop) -> npt.NDArray[np.uint8]:
    """``image`` (H, W, 3) placed in its full panorama, black elsewhere; a crop that runs
    past the right edge wraps round to the left, as the sphere does."""
    height, width = image.shape[:2]
    full = np.zeros((crop.full_height, crop.full_width, 3), np.uint8)
    rows = slice(crop.top, min(crop.top + height, crop.full_height))
    columns = (crop.left + np.arange(min(width, crop.full_width))) % crop.full_width
    full[rows, columns] = image[: rows.stop - rows.start, : columns.size]
    return full
