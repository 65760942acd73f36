"""Images are downscaled to fit a provider's limits."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from city360.agents.images import ImageLimits, encode_images
from city360.errors import ConfigError, ProviderError


def _noise(h: int, w: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def test_long_edge_is_capped_and_jpeg_decodes() -> None:
    limits = ImageLimits(
        max_side_px=256, max_image_bytes=10**7, max_request_bytes=10**8, max_images=4
    )
    encoded, downscaled = encode_images([("view", _noise(300, 600))], limits)
    assert downscaled == 1
    (image,) = encoded
    assert (image.width, image.height) == (256, 128)
    decoded = cv2.imdecode(np.frombuffer(image.data, np.uint8), cv2.IMREAD_COLOR)
    assert decoded.shape == (128, 256, 3)
    assert image.data_url().startswith("data:image/jpeg;base64,")


def test_small_images_are_left_alone() -> None:
    limits = ImageLimits(
        max_side_px=1024, max_image_bytes=10**7, max_request_bytes=10**8, max_images=4
    )
    encoded, downscaled = encode_images([("a", _noise(64, 80))], limits)
    assert downscaled == 0
    assert (encoded[0].width, encoded[0].height) == (80, 64)


def test_request_budget_shrinks_all_images() -> None:
    images = [("a", _noise(512, 512, 1)), ("b", _noise(512, 512, 2))]
    unconstrained, _ = encode_images(
        images,
        ImageLimits(max_side_px=4096, max_image_bytes=10**8, max_request_bytes=10**9, max_images=4),
    )
    total = sum(e.b64_size for e in unconstrained)
    budget = total // 3
    limits = ImageLimits(
        max_side_px=4096, max_image_bytes=10**8, max_request_bytes=budget, max_images=4
    )
    encoded, downscaled = encode_images(images, limits)
    assert downscaled == 2
    assert sum(e.b64_size for e in encoded) <= budget
    assert all(e.width < 512 for e in encoded)


def test_per_image_limit_shrinks_only_the_big_one() -> None:
    limits = ImageLimits(
        max_side_px=4096, max_image_bytes=60_000, max_request_bytes=10**9, max_images=4
    )
    encoded, downscaled = encode_images(
        [("big", _noise(600, 600)), ("small", _noise(40, 40))], limits
    )
    assert downscaled == 1
    assert len(encoded[0].data) <= 60_000
    assert encoded[1].width == 40


def test_too_many_images_and_impossible_budget_raise() -> None:
    limits = ImageLimits(max_side_px=64, max_image_bytes=100, max_request_bytes=100, max_images=1)
    with pytest.raises(
        ProviderError, match="2 images in one request, but this provider takes at most 1"
    ):
        encode_images([("a", _noise(8, 8)), ("b", _noise(8, 8))], limits)
    with pytest.raises(ProviderError, match="do not fit the provider's limits"):
        encode_images([("a", _noise(256, 256))], limits)


def test_bad_arrays_are_rejected() -> None:
    limits = ImageLimits(
        max_side_px=64, max_image_bytes=10**6, max_request_bytes=10**6, max_images=2
    )
    with pytest.raises(ConfigError, match="image 'f' must be uint8 RGB"):
        encode_images([("f", np.zeros((4, 4, 3), np.float32))], limits)  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="limits must be > 0"):
        ImageLimits(max_side_px=0, max_image_bytes=1, max_request_bytes=1, max_images=1)
