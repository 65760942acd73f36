"""Environment configuration: one typed, frozen value with every default stated once.

``city360.make(city_dir, **config)`` passes its keywords here; an unknown keyword or a value
that cannot work raises :class:`~city360.errors.ConfigError` naming it (with a close match for
misspelt keywords).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

from city360.errors import ConfigError, did_you_mean
from city360.simulator.limits import MAX_MAP_SIZE, MAX_VIEW_SIDE, check_seed, check_side

__all__ = ["EnvConfig", "RendererChoice"]

RendererChoice = Literal["auto", "gl", "cpu"]
"""``auto``: moderngl through EGL on a GPU; the OpenCV renderer when no GL context can be made
or the only OpenGL is a software rasterizer (Mesa llvmpipe), where OpenCV is faster. ``gl``
and ``cpu`` force one."""


@dataclass(frozen=True, slots=True)
class EnvConfig:
    """Everything that shapes an environment. All angles in degrees, distances in metres."""

    view_width: int = 640
    """Width of the perspective view in pixels (8..4096, ``limits.MAX_VIEW_SIDE``)."""
    view_height: int = 480
    """Height of the perspective view in pixels (8..4096)."""
    fov_deg: float = 90.0
    """Horizontal field of view of the perspective view."""
    move_m: tuple[float, float, float] = (2.0, 5.0, 10.0)
    """How far W walks for SMALL / MEDIUM / LARGE."""
    move_default_m: float = 5.0
    """How far W walks without a magnitude."""
    turn_deg: tuple[float, float, float] = (30.0, 60.0, 90.0)
    """How far A/D/Q/E turn for SMALL / MEDIUM / LARGE."""
    turn_default_deg: float = 24.0
    """How far A/D/Q/E turn without a magnitude (the reference benchmark's default)."""
    pitch_limit_deg: float = 80.0
    """Q/E clamp the pitch to +-this."""
    turn_view_with_branch: bool = True
    """LEFT/RIGHT turn the view with the body by the branch's turn angle (the view keeps its yaw
    relative to travel). With False every branch keeps the absolute view direction, like UP."""
    camera_height_m: float = 2.0
    """Height of the camera above the ground, used to place branch arrows on the ground."""
    arrows: bool = True
    """Draw offered branches as red arrows on the ground."""
    map: bool = True
    """Add the location map (``obs["map"]``); False is the "without location" ablation."""
    map_size: int = 256
    """Side of the square location map in pixels (16..2048)."""
    map_scale_m_per_px: float = 0.5
    """Scale of the location map."""
    multiview: bool = False
    """Add ``obs["views"]``: six square 90-degree views (front, right, back, left, up, down)
    relative to the direction of travel."""
    multiview_size: int = 256
    """Side of each multi-view face in pixels (8..2048)."""
    route_guidance: bool = False
    """Draw the route ahead on the ground (needs a route or goal in reset options or task)."""
    route_ahead_m: float = 25.0
    """How much of the route ahead the guidance overlay shows."""
    privileged_info: bool = False
    """Put the exact pose, segment and lat/lon in ``info`` (for evaluators and oracles only)."""
    max_steps: int | None = None
    """Truncate an episode after this many steps (a task's ``step_limit`` overrides it)."""
    seed: int | None = None
    """Default seed for the first ``reset`` when none is given."""
    renderer: RendererChoice = "auto"
    """Which renderer to use (see :data:`RendererChoice`); the choice is in every ``info``."""
    pyramid_density: float | None = 0.75
    """Views read the smallest stored frame-pyramid level giving at least this many source
    pixels per view pixel, averaged over the view's width (``video_store.pyramid``: at 1.0 a
    640 px view at 90° wants 2560 px over 360°, an 84 px one 336). The default 0.75 reads the
    1920 px level of a 3840 px city for a 640 px / 90° view (~0.95 source pixels per view pixel
    at its centre; 36.6 dB PSNR against the full frames, docs/design-notes.md "Training
    scale"); None always reads the full frames."""
    frame_cache_mb: float = 256.0
    """Decoded-frame cache per environment, shared over its trajectories."""
    prefetch: bool = True
    """After each step decode the frames the next move can reach in the background."""
    condition: str = "day"
    """Visual condition whose frames the views show (``day``: the city's own frames; a synth
    city may have ``dusk``, ``night``, ``rain``, ``fog`` variants, added with
    ``city360 condition add CITY NAME``). Graph, poses and tasks are the same under each."""
    decode_threads: int = 2
    """FFmpeg slice threads decoding one frame. Evaluation worker processes share the cores
    out (one each with two workers on two cores) so that they do not oversubscribe them."""

    def __post_init__(self) -> None:
        if self.view_width < 8 or self.view_height < 8:
            msg = f"view size must be at least 8x8, got {self.view_width}x{self.view_height}"
            raise ConfigError(msg)
        check_side("view_width", self.view_width, low=8, high=MAX_VIEW_SIDE)
        check_side("view_height", self.view_height, low=8, high=MAX_VIEW_SIDE)
        check_side("map_size", self.map_size, low=16, high=MAX_MAP_SIZE)
        check_side("multiview_size", self.multiview_size, low=8, high=MAX_MAP_SIZE)
        check_seed(self.seed)
        if not 1.0 <= self.fov_deg <= 170.0:
            msg = f"`fov_deg` must be in [1, 170], got {self.fov_deg}"
            raise ConfigError(msg)
        for name in ("move_m", "turn_deg"):
            values = getattr(self, name)
            if len(values) != 3 or not all(math.isfinite(v) and v > 0 for v in values):
                msg = (
                    f"`{name}` must be three positive numbers (SMALL, MEDIUM, LARGE), got {values}"
                )
                raise ConfigError(msg)
        for name in ("move_default_m", "turn_default_deg", "camera_height_m", "route_ahead_m"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                msg = f"`{name}` must be > 0, got {value}"
                raise ConfigError(msg)
        if not 0.0 <= self.pitch_limit_deg <= 89.0:
            msg = f"`pitch_limit_deg` must be in [0, 89], got {self.pitch_limit_deg}"
            raise ConfigError(msg)
        if self.map_size < 16 or self.multiview_size < 8:
            msg = f"`map_size` >= 16 and `multiview_size` >= 8 needed, got {self.map_size}, "
            msg += f"{self.multiview_size}"
            raise ConfigError(msg)
        if not self.map_scale_m_per_px > 0:
            msg = f"`map_scale_m_per_px` must be > 0, got {self.map_scale_m_per_px}"
            raise ConfigError(msg)
        if self.max_steps is not None and self.max_steps < 1:
            msg = f"`max_steps` must be >= 1 or None, got {self.max_steps}"
            raise ConfigError(msg)
        if self.renderer not in ("auto", "gl", "cpu"):
            msg = f"`renderer` must be 'auto', 'gl' or 'cpu', got {self.renderer!r}"
            raise ConfigError(msg)
        if not 1 <= self.decode_threads <= 64:
            msg = f"`decode_threads` must be in 1..64, got {self.decode_threads}"
            raise ConfigError(msg)
        if self.pyramid_density is not None and not (
            math.isfinite(self.pyramid_density) and self.pyramid_density > 0
        ):
            msg = f"`pyramid_density` must be > 0 or None, got {self.pyramid_density}"
            raise ConfigError(msg)
        if not self.condition or not self.condition.replace("_", "").replace("-", "").isalnum():
            msg = f"`condition` must be a condition name such as 'night', got {self.condition!r}"
            raise ConfigError(msg)
        if not self.frame_cache_mb > 0:
            msg = f"`frame_cache_mb` must be > 0, got {self.frame_cache_mb}"
            raise ConfigError(msg)

    @property
    def vfov_deg(self) -> float:
        """Vertical field of view implied by the horizontal one and the aspect ratio."""
        half = math.radians(self.fov_deg) / 2
        return math.degrees(2 * math.atan(math.tan(half) * self.view_height / self.view_width))

    def source_width(self, view_width: int, fov_deg: float) -> float | None:
        """The frame width a view of ``view_width`` pixels over ``fov_deg`` wants from the
        pyramid (None: the full frames)."""
        if self.pyramid_density is None:
            return None
        return self.pyramid_density * view_width * 360.0 / fov_deg

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> EnvConfig:
        """Build a config from keywords, rejecting unknown ones with a close match."""
        names = [f.name for f in dataclasses.fields(cls)]
        for key in kwargs:
            if key not in names:
                msg = f"unknown config option {key!r}.{did_you_mean(key, names)} Options: "
                msg += ", ".join(names)
                raise ConfigError(msg)
        for key in ("move_m", "turn_deg"):
            if key in kwargs and not isinstance(kwargs[key], tuple):
                kwargs[key] = tuple(kwargs[key])
        return cls(**kwargs)
