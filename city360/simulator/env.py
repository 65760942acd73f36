"""``CityEnv``: a built city as an environment with Gymnasium's call shapes.

::

    env = city360.make("cities/helsinki", fov_deg=90, map=False)
    obs, info = env.reset(seed=0, options={"segment": "e12", "offset_m": 4.0})
    obs, reward, terminated, truncated, info = env.step("W", "MEDIUM")
    obs, reward, terminated, truncated, info = env.step("ANSWER", answer="x:2 y:3")

Actions and magnitudes are strings (any case) or the enums of ``simulator.actions``, or one
``ActionCommand``. ``ANSWER`` takes its text as ``answer=``; as a convenience
``env.step("ANSWER", "x:2 y:3")`` also works (a magnitude slot holding text that is not a
magnitude is the answer). ``ANSWER`` ends the episode (``terminated``); reaching the step
limit (``EnvConfig.max_steps`` or the task's ``step_limit``) truncates it; ``step()`` after
either, or before ``reset()``, raises :class:`ResetNeededError`.

Reward is always 0.0: tasks are scored from the answer by ``city360.eval``, which owns the
metrics, not by the environment.

``reset`` options (all optional, one way of giving the start):

- ``{"segment": id, "offset_m": 0.0, "yaw_deg": 0.0, "pitch_deg": 0.0}``
- ``{"lat": .., "lon": .., "heading_deg": ..}`` (nearest frame travelling within 90° of the
  heading) or the same with ``"x_m"``/``"y_m"`` in the city CRS;
- ``{"task": task}``: any object with ``start`` (``segment``, ``offset_m``, ``yaw_deg``) and
  optionally ``step_limit`` and ``truth.route`` / ``truth.goal`` (used for route guidance);
- ``"route"`` (segment ids) and/or ``"goal"`` (``{"lat", "lon"}`` or ``{"x_m", "y_m"}``) for
  the route-guidance overlay;
- ``"map": False`` hides the location map for the episode (the evaluator does for families that
  must not see it, e.g. Localization, whose answer a location map would give away).

Without a start the episode starts at a random frame of a random segment drawn from the
episode's seeded generator.
"""

from __future__ import annotations

import functools
import logging
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError, ResetNeededError, UnknownActionError, did_you_mean
from city360.simulator import controller
from city360.simulator.actions import (
    Action,
    ActionCommand,
    Magnitude,
    parse_action,
    parse_magnitude,
)
from city360.simulator.config import EnvConfig
from city360.simulator.limits import MAX_START_GAP_M, check_seed, finite_number
from city360.simulator.observation import (
    action_mask,
    branch_mask,
    build_overlay,
    describe_branches,
    render_multiview,
    render_view,
    route_ahead,
)
from city360.simulator.renderer import Renderer, make_renderer
from city360.simulator.routing import RoutePlanner
from city360.simulator.state import AgentState, wrap180
from city360.simulator.world import FrameSourceFactory, World, default_frame_source

__all__ = ["CityEnv", "make"]

logger = logging.getLogger(__name__)

_RESET_OPTIONS = (
    "segment",
    "offset_m",
    "yaw_deg",
    "pitch_deg",
    "lat",
    "lon",
    "x_m",
    "y_m",
    "heading_deg",
    "task",
    "route",
    "goal",
    "map",
)


def make(city_dir: str | os.PathLike[str], **config: Any) -> CityEnv:
    """Open a built city as an environment; keywords are :class:`EnvConfig` fields."""
    return CityEnv(city_dir, EnvConfig.from_kwargs(**config))


class CityEnv:
    """A walkable city. A context manager; ``close()`` releases the renderer and frame stores.

    ``frame_source`` and ``renderer`` override the frame store factory and the renderer
    (by default ``video_store.FrameStore`` and :func:`~city360.simulator.renderer.make_renderer`
    with ``config.renderer``); the renderer in use is ``renderer_name`` and in every ``info``.
    ``world`` shares an open :class:`World` (its frame stores and their cache) between several
    envs, as the vector env does; the env then leaves closing it, and a ``renderer`` passed
    with it, to the caller.
    """

    def __init__(
        self,
        city_dir: str | os.PathLike[str],
        config: EnvConfig | None = None,
        *,
        frame_source: FrameSourceFactory | None = None,
        renderer: Renderer | None = None,
        world: World | None = None,
    ) -> None:
        self.config = config or EnvConfig()
        if world is not None and world.condition != self.config.condition:
            msg = (
                f"the shared world shows condition {world.condition!r} but the config asks for "
                f"{self.config.condition!r}; open a World with condition={self.config.condition!r}"
            )
            raise ConfigError(msg)
        self._shared = world is not None
        self.world = world or World(
            Path(city_dir),
            cache_bytes=int(self.config.frame_cache_mb * 1024 * 1024),
            frame_source=frame_source
            or functools.partial(default_frame_source, threads=self.config.decode_threads),
            condition=self.config.condition,
        )
        made: Renderer | None = None
        try:
            made = renderer or make_renderer(self.config.renderer)
            self._map = None
            self._show_map = True
            if self.config.map:
                from city360.simulator.locmap import LocationMapper

                self._map = LocationMapper(self.world, self.config)
        except BaseException:
            if made is not None and renderer is None:
                made.close()
            if not self._shared:
                self.world.close()
            raise
        self.renderer: Renderer = made
        self._planner = RoutePlanner(self.world)
        self._segment_ids = sorted(self.world.segments)
        self._rng: np.random.Generator | None = None
        self._state: AgentState | None = None
        self._steps = 0
        self._step_limit: int | None = self.config.max_steps
        self._done = True
        self._route: list[str] | None = None
        self._goal_xy: tuple[float, float] | None = None
        self._trail: list[tuple[float, float]] = []
        # what the last step already did for this position: a rotate does not move, so it
        # need not ask for the same prefetch or project the same point to lat/lon again
        self._prefetched_at: tuple[str, float] | None = None
        self._latlon_at: tuple[tuple[float, float], tuple[float, float]] | None = None
        self._closed = False

    @property
    def route(self) -> list[str] | None:
        """Segments of the route the guidance overlay follows (given or planned), if any."""
        return None if self._route is None else list(self._route)

    @property
    def state(self) -> AgentState | None:
        """The agent's position and view now (None before the first ``reset``)."""
        return self._state

    def position_xy(self) -> tuple[float, float]:
        """City metres (x east, y north) of the frame the agent stands on."""
        if self._state is None:
            msg = "position_xy() called before reset(); call env.reset() first"
            raise ResetNeededError(msg)
        return self._position()

    @property
    def renderer_name(self) -> str:
        """``gl`` or ``cpu``: which renderer draws the views."""
        return self.renderer.name

    def __repr__(self) -> str:
        return f"CityEnv({str(self.world.city.root)!r}, renderer={self.renderer_name!r})"

    def __enter__(self) -> CityEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the renderer and the frame stores; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if not self._shared:  # a shared world (and its renderer) belongs to the caller
            self.renderer.close()
            self.world.close()

    # episode ------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode; see the module docstring for ``options``."""
        self._check_open()
        seed = check_seed(seed)
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed if seed is not None else self.config.seed)
        options = dict(options or {})
        for key in options:
            if key not in _RESET_OPTIONS:
                msg = f"unknown reset option {key!r}.{did_you_mean(key, _RESET_OPTIONS)} "
                msg += f"Options: {', '.join(_RESET_OPTIONS)}"
                raise ConfigError(msg)
        self._step_limit = self.config.max_steps
        # ``map=False`` hides the location map for this episode (a family that must not see
        # it: Localization); ``map=True`` cannot add one the config did not enable.
        self._show_map = bool(options.get("map", True))
        self._route, self._goal_xy = None, None
        task = options.get("task")
        if task is not None:
            state = self._state_from_task(task)
        else:
            state = self._state_from_options(options)
        if "route" in options:
            self._route = [self.world.segment(str(s)).id for s in options["route"]]
        if "goal" in options:
            self._goal_xy = self._xy_of(options["goal"], "goal")
        self._state = state
        self._steps = 0
        self._done = False
        self._prefetched_at = None
        self._trail = [self._position()]
        feedback = "Episode started. " + controller.position_feedback(
            self.world, self.world.segment(state.segment), state, 0.0
        )
        return self._observe(feedback), self._info(moved_m=0.0)

    def step(
        self,
        action: str | Action | ActionCommand,
        magnitude: str | Magnitude | None = None,
        *,
        answer: str | None = None,
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Apply one action; returns ``(obs, reward, terminated, truncated, info)``."""
        self._check_open()
        if isinstance(action, ActionCommand):
            command = action
            parsed = command.action
            magnitude, answer = command.magnitude, command.answer
        else:
            parsed = parse_action(action)
        if parsed is Action.ANSWER and answer is None and isinstance(magnitude, str):
            try:
                parsed_magnitude = parse_magnitude(magnitude)
            except UnknownActionError:
                answer, parsed_magnitude = magnitude, None
        else:
            parsed_magnitude = parse_magnitude(magnitude)
        if self._state is None or self._done:
            when = "before reset()" if self._state is None else "after the episode ended"
            msg = f"step() called {when}; call env.reset() to start an episode"
            raise ResetNeededError(msg)
        if answer is not None and parsed is not Action.ANSWER:
            msg = f"`answer` is only for ANSWER, got it with {parsed.value}"
            raise UnknownActionError(msg)
        self._steps += 1
        terminated = False
        extra: dict[str, Any] = {}
        if parsed is Action.ANSWER:
            text = "" if answer is None else str(answer)
            terminated = True
            feedback = f"Answer recorded: {text!r}. The episode is over."
            extra["answer"] = text
            moved = 0.0
        else:
            result = controller.apply(
                self.world, self.config, self._state, parsed, parsed_magnitude
            )
            self._state = result.state
            feedback, moved = result.feedback, result.moved_m
            if moved > 0:
                self._trail.append(self._position())
        truncated = (
            not terminated and self._step_limit is not None and self._steps >= self._step_limit
        )
        if truncated:
            feedback += f" Step limit {self._step_limit} reached: the episode is over."
        self._done = terminated or truncated
        obs = self._observe(feedback)
        info = self._info(moved_m=moved)
        info.update(extra)
        info["action"] = parsed.value
        info["magnitude"] = None if parsed_magnitude is None else parsed_magnitude.value
        return obs, 0.0, terminated, truncated, info

    # start poses --------------------------------------------------------------------------
    def _state_from_task(self, task: Any) -> AgentState:
        start = _field(task, "start")
        if start is None:
            msg = f"reset option 'task' needs a `start` pose, got {type(task).__name__}"
            raise ConfigError(msg)
        segment = self.world.segment(str(_field(start, "segment")))
        limit = _field(task, "step_limit")
        if limit is not None:
            self._step_limit = int(limit)
        truth = _field(task, "truth")
        route = _field(truth, "route") if truth is not None else None
        goal = _field(truth, "goal") if truth is not None else None
        state = self._start(
            segment.id,
            float(_field(start, "offset_m") or 0.0),
            float(_field(start, "yaw_deg") or 0.0),
            0.0,
        )
        self._route = [self.world.segment(str(s)).id for s in route] if route else None
        self._goal_xy = self._xy_of(goal, "task goal") if goal is not None else None
        return state

    def _state_from_options(self, options: Mapping[str, Any]) -> AgentState:
        yaw = finite_number("yaw_deg", options.get("yaw_deg", 0.0))
        pitch = finite_number("pitch_deg", options.get("pitch_deg", 0.0))
        if "segment" in options:
            return self._start(
                str(options["segment"]), finite_number("offset_m", options.get("offset_m", 0.0)),
                yaw, pitch,
            )  # fmt: skip
        if any(k in options for k in ("lat", "lon", "x_m", "y_m")):
            x_m, y_m = self._xy_of(options, "reset options")
            heading = options.get("heading_deg")
            if heading is not None:
                heading = finite_number("heading_deg", heading)
            segment, offset = self.world.nearest(x_m, y_m, heading)
            self._check_start_gap(x_m, y_m, segment, offset)
            if heading is not None:
                k = segment.index_at(offset)
                yaw = wrap180(yaw + float(heading) - float(segment.travel_deg[k]))
            return self._start(segment.id, offset, yaw, pitch)
        if "offset_m" in options or "heading_deg" in options:
            msg = "reset option 'offset_m' needs 'segment', and 'heading_deg' needs lat/lon"
            raise ConfigError(msg)
        assert self._rng is not None
        segment_id = self._segment_ids[int(self._rng.integers(len(self._segment_ids)))]
        segment = self.world.segment(segment_id)
        offset = round(float(self._rng.uniform(0.0, segment.walk_m)), 2)
        return self._start(segment_id, offset, yaw, pitch)

    def _start(self, segment_id: str, offset_m: float, yaw: float, pitch: float) -> AgentState:
        segment = self.world.segment(segment_id)
        if not 0.0 <= offset_m <= segment.walk_m + 1e-6:
            msg = (
                f"start offset_m {offset_m} is outside segment {segment_id!r} "
                f"(0 to {segment.walk_m:.2f} m)"
            )
            raise ConfigError(msg)
        limit = self.config.pitch_limit_deg
        return AgentState(
            segment_id, min(offset_m, segment.walk_m), wrap180(yaw), min(max(pitch, -limit), limit)
        )

    def _xy_of(self, where: Any, name: str) -> tuple[float, float]:
        x_m, y_m = _field(where, "x_m"), _field(where, "y_m")
        if x_m is not None and y_m is not None:
            return finite_number("x_m", x_m), finite_number("y_m", y_m)
        lat, lon = _field(where, "lat"), _field(where, "lon")
        if lat is None or lon is None:
            msg = f"{name} needs lat and lon (or x_m and y_m)"
            raise ConfigError(msg)
        lat_f, lon_f = finite_number("lat", lat), finite_number("lon", lon)
        if not (-90.0 <= lat_f <= 90.0 and -180.0 <= lon_f <= 180.0):
            msg = f"{name}: lat {lat_f} / lon {lon_f} is not a WGS84 position"
            raise ConfigError(msg)
        x, y = self.world.projection.to_xy(lat_f, lon_f)
        return float(x), float(y)

    def _check_start_gap(self, x_m: float, y_m: float, segment: Any, offset_m: float) -> None:
        """Refuse a start further than MAX_START_GAP_M from every street (it would snap)."""
        sx, sy = segment.position(offset_m)
        gap = math.hypot(float(sx) - x_m, float(sy) - y_m)
        if gap <= MAX_START_GAP_M:
            return
        south, west, north, east = self.world.manifest.bbox
        msg = (
            f"the start lies {gap:.0f} m from the nearest street of the city (at most "
            f"{MAX_START_GAP_M:g} m allowed); the city covers lat {south:.5f}..{north:.5f}, "
            f"lon {west:.5f}..{east:.5f}: give a position inside it"
        )
        raise ConfigError(msg)

    # observation --------------------------------------------------------------------------
    def _position(self) -> tuple[float, float]:
        assert self._state is not None
        segment = self.world.segment(self._state.segment)
        k = segment.index_at(self._state.offset_m)
        return float(segment.x_m[k]), float(segment.y_m[k])

    def _guidance(self) -> npt.NDArray[np.float64] | None:
        if not self.config.route_guidance or self._state is None:
            return None
        route = self._route
        if (route is None or self._state.segment not in route) and self._goal_xy is not None:
            route = self._planner.plan(self._state.segment, *self._goal_xy)
            self._route = route
        if route is None:
            return None
        return route_ahead(self.world, self._state, route, self.config.route_ahead_m)

    def _observe(self, feedback: str) -> dict[str, Any]:
        assert self._state is not None
        state = self._state
        route_points = self._guidance()
        if self.config.route_guidance and route_points is None:
            feedback += " (No route guidance here: you are off the route.)"
        overlay = build_overlay(self.world, self.config, state, route_points)
        obs: dict[str, Any] = {
            "view": render_view(self.world, self.renderer, self.config, state, overlay),
        }
        if self._map is not None and self._show_map:
            x, y = self._position()
            obs["map"] = self._map.render(
                x, y, controller.view_bearing_deg(self.world, state), self._trail
            )
        if self.config.multiview:
            obs["views"] = render_multiview(self.world, self.renderer, self.config, state, overlay)
        obs["branch_mask"] = branch_mask(self.world, state)
        obs["step"] = self._steps
        obs["feedback"] = feedback
        if self.config.prefetch:
            self._prefetch()
        return obs

    def _info(self, *, moved_m: float) -> dict[str, Any]:
        assert self._state is not None
        state = self._state
        info: dict[str, Any] = {
            "renderer": self.renderer_name,
            "moved_m": moved_m,
            "branches": describe_branches(branch_mask(self.world, state)),
            "action_mask": action_mask(self.world, state),
            "step_limit": self._step_limit,
        }
        if self.config.privileged_info:
            segment = self.world.segment(state.segment)
            k = segment.index_at(state.offset_m)
            x, y = float(segment.x_m[k]), float(segment.y_m[k])
            lat, lon = self._latlon(x, y)
            info.update(
                segment=state.segment,
                offset_m=state.offset_m,
                frame=(segment.trajectory, int(segment.frames[k])),
                pose={
                    "x_m": x,
                    "y_m": y,
                    "lat": lat,
                    "lon": lon,
                    "heading_deg": float(segment.travel_deg[k]),
                    "view_bearing_deg": controller.view_bearing_deg(self.world, state),
                    "yaw_deg": state.yaw_deg,
                    "pitch_deg": state.pitch_deg,
                },
                at_junction=controller.at_end(segment, state.offset_m) and bool(segment.choices),
            )
        return info

    def _latlon(self, x_m: float, y_m: float) -> tuple[float, float]:
        """``world.latlon``, remembering the last point (rotations ask for it again)."""
        if self._latlon_at is None or self._latlon_at[0] != (x_m, y_m):
            self._latlon_at = ((x_m, y_m), self.world.latlon(x_m, y_m))
        return self._latlon_at[1]

    def _prefetch(self) -> None:
        """Ask the frame stores for every frame the next move can show: W by each magnitude
        here, on the twin, and on each offered branch. What it asks depends only on the
        position, so a step that did not move (a rotate) leaves the earlier request running."""
        assert self._state is not None
        state = self._state
        position = (state.segment, state.offset_m)
        if position == self._prefetched_at:
            return
        self._prefetched_at = position
        distances = sorted({0.0, *self.config.move_m, self.config.move_default_m})
        wanted: dict[str, list[int]] = {}

        def add(segment_id: str, offset: float) -> None:
            segment = self.world.segment(segment_id)
            for distance in distances:
                k = segment.index_at(min(offset + distance, segment.walk_m))
                wanted.setdefault(segment.trajectory, []).append(int(segment.frames[k]))

        segment = self.world.segment(state.segment)
        add(segment.id, state.offset_m)
        if segment.twin is not None:
            twin = self.world.segment(segment.twin)
            k = segment.index_at(state.offset_m)
            j = int(np.argmin(np.hypot(twin.x_m - segment.x_m[k], twin.y_m - segment.y_m[k])))
            add(twin.id, float(twin.cum_m[j]))
        if controller.at_end(segment, state.offset_m):
            for transition in segment.choices:
                add(transition.edge, 0.0)
        level = self.config.source_width(self.config.view_width, self.config.fov_deg)
        for trajectory, indices in wanted.items():
            self.world.store(trajectory, min_width=level).prefetch(list(dict.fromkeys(indices)))

    def _check_open(self) -> None:
        if self._closed:
            from city360.errors import ClosedResourceError

            msg = f"{self!r} is closed"
            raise ClosedResourceError(msg)

    # conveniences -------------------------------------------------------------------------
    def render(self) -> npt.NDArray[np.uint8]:
        """The current view (as Gymnasium's ``render_mode="rgb_array"`` would return it)."""
        if self._state is None:
            msg = "render() called before reset(); call env.reset() first"
            raise ResetNeededError(msg)
        overlay = build_overlay(self.world, self.config, self._state, self._guidance())
        return render_view(self.world, self.renderer, self.config, self._state, overlay)


def _field(obj: Any, name: str) -> Any:
    """``obj[name]`` for mappings, ``obj.name`` otherwise, None when absent."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)
