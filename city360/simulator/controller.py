"""The controller of DESIGN.md "The controller": pure functions from (state, action) to a new
state and the textual feedback an agent reads.

Rules, made deterministic:

- ``W`` walks forward along the current segment by the magnitude's metres and stops at the
  segment's end when that is a junction; at a junction facing forward it does not move and the
  feedback lists the branches. At a dead end it does not move and says how to turn back.
- Facing backwards (``|yaw| > 90``), ``W`` walks the opposite-direction twin of the segment
  (the same street, another video or the same frames played backwards): the body turns round
  on the street and the view keeps its direction relative to the street (yaw - 180), so the
  agent walks where it looks. Without a twin it does not move.
- A segment ending at a node that is not a junction (a bend or a cut) with one way on that is
  not a U-turn is walked through without stopping; the view turns with the body round the
  bend (yaw kept), so W keeps walking forwards.
- ``LEFT``/``RIGHT``/``UP`` take the offered branch (the graph's rank-0 choice for the label):
  the agent stays at the junction, now on the chosen segment. ``UP`` straight on keeps the
  absolute view direction; ``LEFT``/``RIGHT`` and a U-turn (offered as ``UP`` at dead ends)
  turn the view with the body, keeping its yaw relative to travel
  (``EnvConfig.turn_view_with_branch``; with False they keep the absolute view too). A branch
  that is not offered is a no-op with feedback.
- How far the body turns at a crossing is the graph's ``turn_deg`` (measured on the streets
  away from the node), not the difference of the frames' headings at the segments' ends, where
  a filmed walker is often mid-turn (:func:`city360.streets.moves.branch_yaw_deg`). The
  movement rules shared with the task oracle live in :mod:`city360.streets.moves`.
- ``S`` turns the view back to the direction of travel (yaw 0, pitch 0).
- ``A``/``D`` yaw left/right, ``Q``/``E`` pitch up/down (clamped), by the magnitude's degrees.
- ``ANSWER`` ends the episode (handled by the env, which owns the episode).

Walking onto the twin (facing backwards) turns the body round on the street (yaw - 180), not
by the difference of the two videos' frame headings there, which near a junction is often a
frame of a walker mid-turn (the same reason as ``turn_deg`` above).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from city360.simulator.actions import Action, Magnitude
from city360.simulator.config import EnvConfig
from city360.simulator.state import AgentState, wrap180
from city360.simulator.world import World
from city360.streets import Segment, twin_offset_m
from city360.streets.moves import END_EPS_M, branch_yaw_deg, passthrough

__all__ = [
    "END_EPS_M",
    "StepResult",
    "apply",
    "at_end",
    "move_distance_m",
    "offered_branches",
    "position_feedback",
    "turn_amount_deg",
    "view_bearing_deg",
]

_MAGNITUDE_INDEX = {Magnitude.SMALL: 0, Magnitude.MEDIUM: 1, Magnitude.LARGE: 2}


@dataclass(frozen=True, slots=True)
class StepResult:
    """A new state, what the agent is told, and how far it moved (metres)."""

    state: AgentState
    feedback: str
    moved_m: float = 0.0
    changed_segment: bool = False


def move_distance_m(config: EnvConfig, magnitude: Magnitude | None) -> float:
    """Metres W walks for a magnitude (None = the default)."""
    if magnitude is None:
        return config.move_default_m
    return config.move_m[_MAGNITUDE_INDEX[magnitude]]


def turn_amount_deg(config: EnvConfig, magnitude: Magnitude | None) -> float:
    """Degrees A/D/Q/E turn for a magnitude (None = the default)."""
    if magnitude is None:
        return config.turn_default_deg
    return config.turn_deg[_MAGNITUDE_INDEX[magnitude]]


def at_end(segment: Segment, offset_m: float) -> bool:
    return offset_m >= segment.walk_m - END_EPS_M


def offered_branches(world: World, state: AgentState) -> tuple[str, ...]:
    """Labels (LEFT/UP/RIGHT, in that order) offered where the agent stands: the transitions
    of its segment when it is at the segment's end, else none."""
    segment = world.segment(state.segment)
    if not at_end(segment, state.offset_m):
        return ()
    return tuple(t.label for t in segment.choices)


def view_bearing_deg(world: World, state: AgentState) -> float:
    """Absolute bearing of the view direction, degrees clockwise from north in [0, 360)."""
    segment = world.segment(state.segment)
    k = segment.index_at(state.offset_m)
    return (float(segment.travel_deg[k]) + state.yaw_deg) % 360.0


def _branch_list(labels: tuple[str, ...]) -> str:
    return ", ".join(labels)


def _walk(world: World, config: EnvConfig, state: AgentState, distance_m: float) -> StepResult:
    segment = world.segment(state.segment)
    changed = False
    if abs(state.yaw_deg) > 90.0:
        if segment.twin is None:
            return StepResult(
                state,
                "You are facing backwards and this street cannot be walked the other way. "
                "Turn to face forward (S) to walk on.",
            )
        twin = world.segment(segment.twin)
        offset = twin_offset_m(segment, twin, state.offset_m)
        # the body turns round on the same street: the view keeps its direction relative to
        # the street. The twin's own frame heading there is no measure of the street where
        # its video is mid-turn near a junction (the demo city's lmi-024: 79 deg against a
        # street at 175, so the view came out 96 deg off travel and the next W walked back)
        state = replace(
            state, segment=twin.id, offset_m=offset, yaw_deg=wrap180(state.yaw_deg - 180.0)
        )
        segment = twin
        changed = True
    remaining = distance_m
    moved = 0.0
    for _ in range(len(world.segments) + 1):  # pass-through chains are finite
        if at_end(segment, state.offset_m):
            onward = _passthrough(world, segment)
            if onward is None or remaining <= END_EPS_M:
                break
            # round a bend the view turns with the body: W goes on walking forwards
            state = replace(state, segment=onward.id, offset_m=0.0)
            segment = onward
            changed = True
        new_offset = min(state.offset_m + remaining, segment.walk_m)
        step = new_offset - state.offset_m
        moved += step
        remaining -= step
        state = replace(state, offset_m=new_offset)
        if remaining <= END_EPS_M:
            break
    return StepResult(state, position_feedback(world, segment, state, moved), moved, changed)


def position_feedback(world: World, segment: Segment, state: AgentState, moved: float) -> str:
    """What the agent is told about where it stands after walking ``moved`` metres."""
    walked = f"Walked {moved:.1f} m. " if moved > 0 else ""
    if not at_end(segment, state.offset_m):
        return f"{walked}You are on a street; keep walking with W or turn with A/D."
    labels = tuple(t.label for t in segment.choices)
    if labels and all(t.uturn for t in segment.choices):
        where = "You reached a dead end" if moved > 0 else "Dead end: W does not move"
        return f"{walked}{where}. Turn back with {_branch_list(labels)} (shown as a red arrow)."
    if labels:
        stop = "You reached a junction" if moved > 0 else "You are at a junction: W does not move"
        return (
            f"{walked}{stop}. Branches offered: {_branch_list(labels)} "
            "(shown as red arrows). Take one with LEFT, RIGHT or UP, or turn around and walk back."
        )
    if moved > 0:
        return f"{walked}You reached a dead end; turn around (D LARGE twice) to walk back."
    return "Dead end: W does not move. Turn around (D LARGE twice) to walk back."


def _passthrough(world: World, segment: Segment) -> Segment | None:
    """The segment W continues onto without stopping: only at a node that is not a junction
    (a bend or a cut in the video) with exactly one way on that is not a U-turn."""
    transition = passthrough(world.nodes[segment.v].kind, segment.choices)
    return None if transition is None else world.segment(transition.edge)


def _branch(world: World, config: EnvConfig, state: AgentState, label: str) -> StepResult:
    segment = world.segment(state.segment)
    if not at_end(segment, state.offset_m):
        return StepResult(
            state,
            f"No branch here: {label} does nothing. Branches are offered only at junctions; "
            "walk on with W.",
        )
    transition = segment.branch(label)
    if transition is None:
        labels = tuple(t.label for t in segment.choices)
        offered = f"Offered: {_branch_list(labels)}." if labels else "None is offered here."
        return StepResult(state, f"No {label} branch at this junction. {offered}")
    target = world.segment(transition.edge)
    turn_view = (label != "UP" or transition.uturn) and config.turn_view_with_branch
    yaw = branch_yaw_deg(state.yaw_deg, transition, turn_view=turn_view)
    new_state = replace(state, segment=target.id, offset_m=0.0, yaw_deg=yaw)
    return StepResult(
        new_state,
        f"Took the {label} branch (turn {transition.turn_deg:+.0f} deg). Walk on with W.",
        0.0,
        True,
    )


def apply(
    world: World,
    config: EnvConfig,
    state: AgentState,
    action: Action,
    magnitude: Magnitude | None,
) -> StepResult:
    """Apply one movement or view action (everything but ANSWER) to ``state``."""
    if action is Action.W:
        return _walk(world, config, state, move_distance_m(config, magnitude))
    if action in (Action.LEFT, Action.RIGHT, Action.UP):
        return _branch(world, config, state, action.value)
    if action is Action.S:
        return StepResult(
            replace(state, yaw_deg=0.0, pitch_deg=0.0),
            "View turned back to the direction of travel.",
        )
    if action in (Action.A, Action.D):
        amount = turn_amount_deg(config, magnitude)
        sign = -1.0 if action is Action.A else 1.0
        side = "left" if action is Action.A else "right"
        yaw = wrap180(state.yaw_deg + sign * amount)
        return StepResult(replace(state, yaw_deg=yaw), f"Turned {amount:g} deg {side}.")
    if action in (Action.Q, Action.E):
        amount = turn_amount_deg(config, magnitude)
        sign = 1.0 if action is Action.Q else -1.0
        limit = config.pitch_limit_deg
        wanted = state.pitch_deg + sign * amount
        pitch = min(max(wanted, -limit), limit)
        side = "up" if action is Action.Q else "down"
        note = f" The view stops at {limit:g} deg {side}." if pitch != wanted else ""
        return StepResult(replace(state, pitch_deg=pitch), f"Looked {amount:g} deg {side}.{note}")
    msg = f"the controller does not handle {action.value}; the env ends episodes on ANSWER"
    raise ValueError(msg)
