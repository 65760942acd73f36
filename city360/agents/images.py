"""Images for model requests: JPEG-encode, and shrink until a provider's limits are met.

Providers cap the pixel size of an image, its encoded bytes and the bytes of all images in one
request (base64 inflates them by 4/3). :func:`encode_images` downscales every image to the long
edge limit, then shrinks further, all images together, until each image and the whole request
fit. Images are RGB uint8 (H, W, 3) arrays in, JPEG bytes out.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from city360.errors import ConfigError, ProviderError
from city360.types import Image

__all__ = ["EncodedImage", "ImageLimits", "encode_image", "encode_images"]

_MIN_SIDE_PX = 64
_SHRINK = 0.8


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """A provider's image limits.

    ``max_side_px``: longest edge in pixels; ``max_image_bytes``: one encoded image, bytes;
    ``max_request_bytes``: all images of one request, base64 bytes; ``max_images``: images per
    request.
    """

    max_side_px: int
    max_image_bytes: int
    max_request_bytes: int
    max_images: int

    def __post_init__(self) -> None:
        if min(self.max_side_px, self.max_image_bytes, self.max_request_bytes) <= 0:
            msg = f"image limits must be > 0, got {self}"
            raise ConfigError(msg)
        if self.max_images < 1:
            msg = f"`max_images` must be >= 1, got {self.max_images}"
            raise ConfigError(msg)


@dataclass(frozen=True, slots=True)
class EncodedImage:
    """One encoded image with its caption (how the prompt refers to it)."""

    caption: str
    data: bytes
    width: int
    height: int
    media_type: str = "image/jpeg"

    def __repr__(self) -> str:
        return (
            f"EncodedImage(caption={self.caption!r}, {self.width}x{self.height}, "
            f"{len(self.data)} bytes)"
        )

    def b64(self) -> str:
        """The payload as base64 text."""
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        """``data:image/jpeg;base64,...`` as OpenAI-style APIs take it."""
        return f"data:{self.media_type};base64,{self.b64()}"

    @property
    def b64_size(self) -> int:
        return 4 * ((len(self.data) + 2) // 3)


def _check_image(caption: str, image: Image) -> Image:
    array = np.asarray(image)
    if array.dtype != np.uint8 or array.ndim != 3 or array.shape[2] != 3:
        msg = (
            f"image {caption!r} must be uint8 RGB of shape (H, W, 3), got dtype {array.dtype} "
            f"and shape {array.shape}"
        )
        raise ConfigError(msg)
    if min(array.shape[:2]) < 1:
        msg = f"image {caption!r} is empty (shape {array.shape})"
        raise ConfigError(msg)
    return array


def encode_image(
    caption: str, image: Image, *, scale: float = 1.0, quality: int = 85
) -> EncodedImage:
    """Resize ``image`` by ``scale`` (area interpolation) and JPEG-encode it."""
    import cv2

    array = _check_image(caption, image)
    height, width = array.shape[:2]
    if scale < 1.0:
        new_w = max(1, round(width * scale))
        new_h = max(1, round(height * scale))
        array = np.asarray(
            cv2.resize(array, (new_w, new_h), interpolation=cv2.INTER_AREA), dtype=np.uint8
        )
        height, width = new_h, new_w
    ok, buffer = cv2.imencode(
        ".jpg", np.ascontiguousarray(array[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, quality]
    )
    if not ok:  # pragma: no cover - OpenCV fails only on invalid input, checked above
        msg = f"could not JPEG-encode image {caption!r}"
        raise ProviderError(msg)
    return EncodedImage(caption=caption, data=buffer.tobytes(), width=width, height=height)


def encode_images(
    images: Sequence[tuple[str, Image]], limits: ImageLimits, *, quality: int = 85
) -> tuple[list[EncodedImage], int]:
    """Encode ``(caption, image)`` pairs within ``limits``; return them and how many shrank.

    Raises :class:`ProviderError` when there are more images than the provider takes, or when
    they cannot fit even at the smallest size tried (64 px).
    """
    if len(images) > limits.max_images:
        msg = (
            f"{len(images)} images in one request, but this provider takes at most "
            f"{limits.max_images}; send fewer reference images or disable the location map"
        )
        raise ProviderError(msg)
    checked = [(caption, _check_image(caption, image)) for caption, image in images]
    scales = [min(1.0, limits.max_side_px / max(image.shape[:2])) for _, image in checked]
    while True:
        encoded = [
            encode_image(caption, image, scale=scale, quality=quality)
            for (caption, image), scale in zip(checked, scales, strict=True)
        ]
        too_big = [i for i, e in enumerate(encoded) if len(e.data) > limits.max_image_bytes]
        total = sum(e.b64_size for e in encoded)
        if not too_big and total <= limits.max_request_bytes:
            break
        shrink = too_big or list(range(len(encoded)))
        if any(max(encoded[i].width, encoded[i].height) * _SHRINK < _MIN_SIDE_PX for i in shrink):
            msg = (
                f"{len(images)} images do not fit the provider's limits "
                f"({limits.max_image_bytes} bytes per image, {limits.max_request_bytes} base64 "
                "bytes per request) even at 64 px; raise the limits or send fewer images"
            )
            raise ProviderError(msg)
        for i in shrink:
            scales[i] *= _SHRINK
    downscaled = sum(
        1
        for (_, image), e in zip(checked, encoded, strict=True)
        if (e.height, e.width) != image.shape[:2]
    )
    return encoded, downscaled
