"""Stops and a varying pace: the clock of a person who pauses while filming.

:func:`with_stops` gives a planned route (any filming pattern) a :class:`RouteTiming`, the
mechanism that replays a recorded walk's clock: the camera then stands still for 5-60 s at
some of the junctions it passes (waiting to cross) and now and then mid-street (looking at
something), and between stops walks at a pace that changes every 15-40 m (0.6-1.3 times the
filming speed). The GPS and the true poses are both sampled from that one clock
(:func:`city360.synth.film.sample_route`, :func:`city360.synth.gps.simulate_gps`), so the
ground truth stays right.

Distances are metres along the route's polyline, times seconds since its first frame.
"""

from __future__ import annotations

import dataclasses
from typing import Final

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError
from city360.synth.routes import PathSampler, Route, RouteTiming

__all__ = [
    "JUNCTION_STOP_P",
    "MID_STREET_STOPS_PER_M",
    "PACE_RANGE",
    "STOP_S",
    "junction_distances_m",
    "with_stops",
]

STOP_S: Final = (5.0, 60.0)
"""A pause lasts this long, seconds (uniform)."""
JUNCTION_STOP_P = 0.3
"""Chance of pausing at a junction passed (not the first or last of a video)."""
MID_STREET_STOPS_PER_M = 1 / 250
"""Pauses between junctions, per metre walked (Poisson)."""
PACE_RANGE: Final = (0.6, 1.3)
"""Walking speed as a share of the filming speed, drawn anew every :data:`_PACE_STRETCH_M`."""
_PACE_STRETCH_M: Final = (15.0, 40.0)
"""Metres walked at one pace (uniform)."""
_NODE_MATCH_M = 1.0
"""A polyline vertex this close to a junction is where the route passes it, metres."""


def junction_distances_m(
    route: Route, node_xy: dict[int, tuple[float, float]]
) -> npt.NDArray[np.float64]:
    """Metres along ``route`` at which it passes each inner node of its ``junction_sequence``
    (those in ``node_xy``, x/y metres), matched in order to the polyline's vertices."""
    sampler = PathSampler(route.polyline_xy)
    points, cumulative = sampler.points, sampler.cumulative_m
    found: list[float] = []
    vertex = 0
    for node in route.junction_sequence[1:-1]:
        if node not in node_xy:
            continue
        gaps = np.hypot(*(points[vertex:] - np.asarray(node_xy[node])).T)
        near = np.flatnonzero(gaps <= _NODE_MATCH_M)
        if len(near) == 0:
            continue
        vertex += int(near[0])
        found.append(float(cumulative[vertex]))
        vertex += 1  # the next junction lies further on
        if vertex >= len(points):
            break
    return np.asarray(found, np.float64)


def with_stops(
    route: Route,
    *,
    speed_mps: float,
    rng: np.random.Generator,
    node_xy: dict[int, tuple[float, float]],
) -> Route:
    """``route`` with a :class:`RouteTiming` that pauses and varies the pace (module
    docstring). ``speed_mps`` is the filming speed; ``node_xy`` the street graph's nodes
    (metres) so stops can be at junctions. All randomness comes from ``rng``.

    Raises :class:`ConfigError` for a route that already has a timing (a recorded walk keeps
    its own stops).
    """
    if route.timing is not None:
        msg = (
            f"route {route.name!r} replays a recorded clock; stops are for planned routes "
            "(leave out --stops with a timed --route)"
        )
        raise ConfigError(msg)
    if not speed_mps > 0:
        msg = f"`speed` must be > 0 m/s, got {speed_mps}"
        raise ConfigError(msg)
    length = PathSampler(route.polyline_xy).length_m
    at_junctions = junction_distances_m(route, node_xy)
    stops = list(at_junctions[rng.random(len(at_junctions)) < JUNCTION_STOP_P])
    mid_count = int(rng.poisson(length * MID_STREET_STOPS_PER_M))
    stops += list(rng.uniform(0.05 * length, 0.95 * length, mid_count))
    pauses = {round(float(s), 6): float(rng.uniform(*STOP_S)) for s in stops}

    marks = {0.0, length, *pauses}
    walked = 0.0
    while True:
        walked += float(rng.uniform(*_PACE_STRETCH_M))
        if walked >= length:
            break
        marks.add(round(walked, 6))
    knots_s = sorted(marks)
    paces = speed_mps * rng.uniform(*PACE_RANGE, len(knots_s))
    t_out, s_out = [0.0], [0.0]
    for k, s in enumerate(knots_s[1:], start=1):
        t_out.append(t_out[-1] + (s - knots_s[k - 1]) / paces[k - 1])
        s_out.append(s)
        pause = pauses.get(s)
        if pause is not None and 0.0 < s < length:
            t_out.append(t_out[-1] + pause)
            s_out.append(s)
    timing = RouteTiming(t_s=np.asarray(t_out), s_m=np.asarray(s_out))
    return dataclasses.replace(route, timing=timing)
