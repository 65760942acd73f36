"""Visual conditions in the 3D render: day as before, night darker, fog hazier, rain seeded."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from city360._gl import gl_available
from city360.errors import ConfigError
from city360.synth.looks import CONDITIONS, Look, condition_names, get_look, register_look
from city360.synth.render import EquirectRenderer, look_features
from city360.synth.scene import Scene

WIDTH = 128
POSE = (40.0, 3.0, 80.0, 1.5)  # x_m, y_m, heading_deg, t_s: on a street of the 3 x 3 grid
STREET_START = (5.0, 0.0)
"""Looking east from here along the grid's bottom street puts its far end mid-frame."""


@pytest.fixture(autouse=True)
def _needs_gl() -> None:
    if not gl_available():
        pytest.skip("no OpenGL context (install Mesa EGL: apt-get install libegl1 libegl-mesa0)")


def _luma(image: np.ndarray) -> np.ndarray:
    return image.astype(np.float64) @ np.array([0.299, 0.587, 0.114])


_FRAMES: dict[tuple[int, str | Look | None], tuple[np.ndarray, np.ndarray]] = {}


def _frames(scene: Scene, look: str | Look | None) -> tuple[np.ndarray, np.ndarray]:
    """(equirect at POSE, a 96 x 64 view east from STREET_START) under ``look``, rendered once per
    module (setting up a renderer costs more than its frames)."""
    key = (id(scene), look)
    if key not in _FRAMES:
        with EquirectRenderer(scene, width=WIDTH, look=look) as renderer:
            equirect = renderer.render(*POSE)
            view = renderer.render_perspective(
                *STREET_START, yaw_deg=90.0, width=96, height=64, samples=0
            )
        _FRAMES[key] = (equirect, view)
    return _FRAMES[key]


def _render(scene: Scene, look: str | Look | None) -> np.ndarray:
    return _frames(scene, look)[0]


def test_day_is_the_default_look_and_the_former_constants(small_scene: Scene) -> None:
    # the shaders' constants before conditions existed, now the day look's uniforms
    former = Look(
        "day",
        sky_zenith=(0.30, 0.50, 0.82),
        sky_horizon=(0.80, 0.86, 0.93),
        ground_far=(0.40, 0.39, 0.36),
        fog_color=(0.80, 0.86, 0.93),
        haze_m=900.0,
        ambient=0.62,
        sun_gain=0.38,
    )
    assert get_look("day") == former
    default = _render(small_scene, None)
    np.testing.assert_array_equal(default, _render(small_scene, "day"))
    np.testing.assert_array_equal(default, _render(small_scene, former))


def test_a_look_compiles_in_only_the_shader_parts_it_uses() -> None:
    """llvmpipe shades both sides of a branch on a uniform: a day shader that skipped the lamp
    loop and the wet sky reflection at run time filmed 2.0x slower (user CPU, demo crop)."""
    assert look_features(get_look("day")) == ()
    assert look_features(get_look("fog")) == ()
    assert set(look_features(get_look("night"))) == {"LOOK_LAMPS", "LOOK_WINDOW_GLOW"}
    assert "LOOK_WET" in look_features(get_look("rain"))


def test_day_programs_carry_no_lamps_and_night_programs_do(small_scene: Scene) -> None:
    with EquirectRenderer(small_scene, width=WIDTH, look="day") as day:
        assert "u_lamps" not in day.prog_lit
        assert "u_window_glow" not in day.prog_walls
        assert "u_wet" not in day.prog_lit
    with EquirectRenderer(small_scene, width=WIDTH, look="night") as night:
        assert "u_lamps" in night.prog_lit
        assert "u_window_glow" in night.prog_walls


def test_night_frames_are_darker_but_not_black(small_scene: Scene) -> None:
    day = _luma(_render(small_scene, "day")).mean()
    night = _luma(_render(small_scene, "night"))
    assert night.mean() < 0.6 * day
    # lamps, lit windows and glowing signs keep some of the street visible
    assert (night > 120).mean() > 0.01


def test_dusk_sits_between_day_and_night(small_scene: Scene) -> None:
    means = {name: _luma(_render(small_scene, name)).mean() for name in ("day", "dusk", "night")}
    assert means["night"] < means["dusk"] < means["day"]


def test_fog_lowers_contrast_far_away(small_scene: Scene) -> None:
    def far_contrast(look: str) -> float:
        view = _frames(small_scene, look)[1]
        return float(_luma(view)[22:34, 40:56].std())  # the street's far end

    assert far_contrast("fog") < 0.5 * far_contrast("day")
    assert far_contrast("rain") < far_contrast("day")


def test_rain_streaks_are_seeded_and_fall(small_scene: Scene) -> None:
    x, y, heading, t = POSE
    with EquirectRenderer(small_scene, width=WIDTH, look="rain") as renderer:
        first = renderer.render(x, y, heading, t)
        again = renderer.render(x, y, heading, t)
        later = renderer.render(x, y, heading, t + 0.2)
    with EquirectRenderer(small_scene, width=WIDTH, look="rain") as other:
        np.testing.assert_array_equal(first, other.render(x, y, heading, t))
    np.testing.assert_array_equal(first, again)
    assert np.abs(first.astype(int) - later.astype(int)).max() > 40  # the drops moved
    # without the streaks the same look is a different (dry-air) picture
    dry = dataclasses.replace(get_look("rain"), name="rain-dry", rain_drops=0)
    assert not np.array_equal(first, _render(small_scene, dry))


def test_unknown_condition_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown condition 'nigth'; expected one of day, dusk, fog, night, rain\. Did you mean 'night'\?"):  # fmt: skip  # noqa: E501
        get_look("nigth")
    assert condition_names()[0] == "day"


def test_register_look_refuses_to_replace_by_accident() -> None:
    with pytest.raises(ConfigError, match="condition 'night' is already registered"):
        register_look(dataclasses.replace(get_look("night"), lamp_gain=0.0))
    snow = Look("snow", ground_far=(0.9, 0.9, 0.9), ambient=0.8)
    register_look(snow)
    try:
        assert get_look("snow") is snow
    finally:
        del CONDITIONS["snow"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"haze_m": 0.0}, "`haze_m` must be > 0, got 0.0"),
        ({"wet": 1.5}, r"`wet` must be in \[0, 1\], got 1.5"),
        ({"rain_drops": -1}, "`rain_drops` must be >= 0, got -1"),
    ],
)
def test_bad_look_values(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Look("x", **kwargs)  # type: ignore[arg-type]
