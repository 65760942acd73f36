"""What an agent sees after a step: the view (with arrows and route guidance), the optional
multi-view and location map, the offered branches, the step count and feedback.

Only things an agent may see go into the observation; privileged state goes into ``info``
(built by the env, and only when ``EnvConfig.privileged_info`` allows it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from city360.simulator.actions import BRANCH_ACTIONS, Action
from city360.simulator.arrows import Overlay, arrow_triangles, route_triangles
from city360.simulator.camera import ViewSpec
from city360.simulator.config import EnvConfig
from city360.simulator.controller import at_end, view_bearing_deg
from city360.simulator.renderer import Renderer
from city360.simulator.state import AgentState
from city360.simulator.world import World
from city360.streets import Segment
from city360.types import Image

__all__ = [
    "MULTIVIEW_FACES",
    "action_mask",
    "branch_mask",
    "build_overlay",
    "describe_branches",
    "render_multiview",
    "render_view",
    "route_ahead",
]

MULTIVIEW_FACES: tuple[tuple[str, float, float], ...] = (
    ("front", 0.0, 0.0),
    ("right", 90.0, 0.0),
    ("back", 180.0, 0.0),
    ("left", -90.0, 0.0),
    ("up", 0.0, 90.0),
    ("down", 0.0, -90.0),
)
"""The six faces of ``obs["views"]``: name, yaw relative to travel and pitch (degrees)."""


def branch_mask(world: World, state: AgentState) -> npt.NDArray[np.int8]:
    """int8[3]: 1 where LEFT, UP, RIGHT (in that order) are offered where the agent stands."""
    segment = world.segment(state.segment)
    mask = np.zeros(3, np.int8)
    if at_end(segment, state.offset_m):
        for i, action in enumerate(BRANCH_ACTIONS):
            if segment.branch(action.value) is not None:
                mask[i] = 1
    return mask


def action_mask(world: World, state: AgentState) -> npt.NDArray[np.int8]:
    """int8 over :class:`Action` in declaration order: 1 where the action can change something.

    Masked: W at a junction or dead end while facing forward, W facing backwards on a street
    with no twin, and branches not offered. Masked actions are still accepted (as no-ops).
    """
    segment = world.segment(state.segment)
    mask = np.ones(len(Action), np.int8)
    actions = list(Action)
    backwards = abs(state.yaw_deg) > 90.0
    if (backwards and segment.twin is None) or (
        not backwards and at_end(segment, state.offset_m) and _stops_at_end(world, segment)
    ):
        mask[actions.index(Action.W)] = 0
    branches = branch_mask(world, state)
    for i, action in enumerate(BRANCH_ACTIONS):
        mask[actions.index(action)] = branches[i]
    return mask


def _stops_at_end(world: World, segment: Segment) -> bool:
    node = world.nodes[segment.v]
    return node.kind == "junction" or len(segment.choices) != 1


def route_ahead(
    world: World, state: AgentState, route: Sequence[str], ahead_m: float
) -> npt.NDArray[np.float64] | None:
    """Ground points (N, 2) x_m, y_m of the route from the agent's position for ``ahead_m``
    metres, or None when the agent's segment is not on ``route``."""
    if state.segment not in route:
        return None
    start = list(route).index(state.segment)
    points: list[npt.NDArray[np.float64]] = []
    walked = 0.0
    for position, segment_id in enumerate(route[start:]):
        segment = world.segment(segment_id)
        k0 = segment.index_at(state.offset_m) if position == 0 else 0
        base = segment.cum_m[k0]
        cum = segment.cum_m[k0:] - base
        keep = cum <= ahead_m - walked
        xy = np.stack([segment.x_m[k0:][keep], segment.y_m[k0:][keep]], axis=-1)
        points.append(xy)
        walked += float(cum[-1])
        if walked >= ahead_m:
            break
    return np.concatenate(points) if points else None


def build_overlay(
    world: World,
    config: EnvConfig,
    state: AgentState,
    route_points: npt.NDArray[np.float64] | None,
) -> Overlay:
    """Red arrows at the offered branches' bearings (each branch's travel heading at its
    start) and, when given, the route ribbon; in the camera-centred world frame."""
    segment = world.segment(state.segment)
    overlay = Overlay.empty()
    if route_points is not None and len(route_points) >= 2:
        k = segment.index_at(state.offset_m)
        east = route_points[:, 0] - segment.x_m[k]
        north = route_points[:, 1] - segment.y_m[k]
        overlay = overlay + route_triangles(east, north, camera_height_m=config.camera_height_m)
    if config.arrows and at_end(segment, state.offset_m) and segment.choices:
        bearings = [float(world.segment(t.edge).travel_deg[0]) for t in segment.choices]
        overlay = overlay + arrow_triangles(bearings, camera_height_m=config.camera_height_m)
    return overlay


def _frame(world: World, state: AgentState) -> tuple[Segment, int, tuple[str, int]]:
    segment = world.segment(state.segment)
    k = segment.index_at(state.offset_m)
    return segment, k, (segment.trajectory, int(segment.frames[k]))


def render_view(
    world: World, renderer: Renderer, config: EnvConfig, state: AgentState, overlay: Overlay
) -> Image:
    """The perspective view the agent sees."""
    segment, k, key = _frame(world, state)
    wanted = config.source_width(config.view_width, config.fov_deg)
    planes = world.store(key[0], min_width=wanted).get_yuv(key[1])
    spec = ViewSpec(
        width=config.view_width,
        height=config.view_height,
        fov_deg=config.fov_deg,
        yaw_deg=view_bearing_deg(world, state),
        pitch_deg=state.pitch_deg,
        frame_bearing_deg=float(segment.camera_deg[k]),
    )
    return renderer.render(key, planes, spec, overlay)


def render_multiview(
    world: World, renderer: Renderer, config: EnvConfig, state: AgentState, overlay: Overlay
) -> npt.NDArray[np.uint8]:
    """(6, S, S, 3) square 90-degree views, :data:`MULTIVIEW_FACES` relative to travel."""
    segment, k, key = _frame(world, state)
    wanted = config.source_width(config.multiview_size, 90.0)
    planes = world.store(key[0], min_width=wanted).get_yuv(key[1])
    travel = float(segment.travel_deg[k])
    size = config.multiview_size
    views = np.empty((len(MULTIVIEW_FACES), size, size, 3), np.uint8)
    for i, (_, yaw, pitch) in enumerate(MULTIVIEW_FACES):
        spec = ViewSpec(
            size, size, 90.0, (travel + yaw) % 360.0, pitch, float(segment.camera_deg[k])
        )
        views[i] = renderer.render(key, planes, spec, overlay)
    return views


def describe_branches(mask: npt.NDArray[np.int8]) -> list[str]:
    return [a.value for a, on in zip(BRANCH_ACTIONS, mask, strict=True) if on]
