"""Images for the page: numpy RGB arrays as ``data:`` URLs (JPEG for views, PNG for maps)."""

from __future__ import annotations

import base64

import numpy as np

from city360.types import Image

__all__ = ["data_url", "jpeg_bytes", "png_bytes"]

JPEG_QUALITY = 88


def jpeg_bytes(image: Image, *, quality: int = JPEG_QUALITY) -> bytes:
    import cv2

    ok, buf = cv2.imencode(
        ".jpg", np.ascontiguousarray(image[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, quality]
    )
    if not ok:  # pragma: no cover - OpenCV encodes any uint8 HxWx3
        msg = "JPEG encoding failed"
        raise RuntimeError(msg)
    return buf.tobytes()


def png_bytes(image: Image) -> bytes:
    import cv2

    ok, buf = cv2.imencode(".png", np.ascontiguousarray(image[:, :, ::-1]))
    if not ok:  # pragma: no cover
        msg = "PNG encoding failed"
        raise RuntimeError(msg)
    return buf.tobytes()


def data_url(image: Image, *, kind: str = "jpeg") -> str:
    """``data:image/jpeg;base64,...`` (or png) of an RGB uint8 image."""
    data = jpeg_bytes(image) if kind == "jpeg" else png_bytes(image)
    return f"data:image/{kind};base64," + base64.b64encode(data).decode("ascii")
