"""Comparing OCR backends on sign views (city360.bench.ocr): the counting on a tiny set, the
views of a built city's landmark signs, and which side of the street a sign is on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.agents.ocr import SignText
from city360.bench.ocr import (
    ALONG_M,
    SignView,
    compare_backends,
    score_backend,
    side_yaw_deg,
    sign_views,
)
from city360.errors import ConfigError
from city360.types import Image


class ReadsWhatItIsTold:
    """A backend that 'reads' the text given for each view (by the view's top-left pixel)."""

    def __init__(self, name: str, texts: dict[int, list[str]]) -> None:
        self.name = name
        self.texts = texts

    def read_signs(self, image: Image) -> list[SignText]:
        return [SignText(t, (0, 0, 10, 5)) for t in self.texts.get(int(image[0, 0, 0]), [])]

    def check(self) -> None:
        return None


def _view(index: int, name: str, along: float, far: tuple[str, ...]) -> SignView:
    return SignView(f"poi-{index}", name, along, np.full((4, 4, 3), index, np.uint8), far)


VIEWS = [
    _view(0, "Kahvila Aalto", -3.0, ("Leipomo Sola",)),
    _view(1, "Kahvila Aalto", 0.0, ("Leipomo Sola",)),
    _view(2, "Leipomo Sola", 0.0, ("Kahvila Aalto",)),
]


def test_reads_false_reads_and_misses_are_counted_per_view() -> None:
    good = ReadsWhatItIsTold("good", {0: ["OPEN", "Kahvi1a Aalto"], 1: ["Kahvila Aalto"]})
    # view 2 shows Leipomo Sola but this one reads the far-away cafe's name there
    poor = ReadsWhatItIsTold("poor", {1: ["Kahvila"], 2: ["Kahvila Aalto"]})
    best, worst = compare_backends([poor, good], VIEWS)
    assert (best.backend, best.views, best.read, best.false_reads) == ("good", 3, 2, 0)
    assert best.missed == ("Leipomo Sola @ +0 m",)
    assert (worst.backend, worst.read, worst.false_reads) == ("poor", 0, 1)
    assert worst.wrong == ("Leipomo Sola @ +0 m -> Kahvila Aalto",)
    assert worst.cpu_s_per_view >= 0.0
    assert worst.as_dict()["missed"] == [
        "Kahvila Aalto @ -3 m",
        "Kahvila Aalto @ +0 m",
        "Leipomo Sola @ +0 m",
    ]


def test_no_views_is_an_error_that_says_why() -> None:
    with pytest.raises(ConfigError, match="no sign views to read"):
        score_backend(ReadsWhatItIsTold("x", {}), [])


@pytest.mark.parametrize(
    ("heading_deg", "x_m", "y_m", "yaw"),
    [
        (0.0, 5.0, 1.0, 90.0),
        (0.0, -5.0, 1.0, -90.0),
        (90.0, 1.0, -5.0, 90.0),
        (180.0, 5.0, 0.0, -90.0),
    ],
)
def test_a_sign_right_of_travel_is_looked_at_with_yaw_plus_90(
    heading_deg: float, x_m: float, y_m: float, yaw: float
) -> None:
    pose = {"x_m": 0.0, "y_m": 0.0, "heading_deg": heading_deg}
    assert side_yaw_deg(pose, x_m, y_m) == yaw


def test_sign_views_of_a_built_city_look_at_its_landmarks(
    built_city: Path, built_suite: Path
) -> None:
    from city360.tasks.suite import load_suite

    names = {
        t.truth.landmark_name
        for t in load_suite(built_suite).tasks
        if t.family.value == "LandmarkSearchText"
    }
    views = sign_views(built_city, built_suite, view_width=160, view_height=120)
    assert views
    assert {v.name for v in views} == names
    assert all(v.image.shape == (120, 160, 3) for v in views)
    assert all(v.along_m in ALONG_M for v in views)
    assert all(v.name not in v.far_names for v in views)
    assert len(views) <= len(ALONG_M) * len(names)
