"""A map-reading agent: heads for the RED goal using only what an agent sees.

Inputs, as for any agent: the task's reference map (BLUE start marker, RED goal marker, streets
drawn white, north up), the location map of each observation (north up, a red arrow at the
centre pointing where the agent looks) and the simulator's feedback text ("Walked 5.0 m").

How it works, like a person with a paper map:
1. Find the markers by colour; the goal's bearing and distance from the start are read in map
   pixels.
2. Look straight ahead (S; again after every branch, since the arrow shows the view, not the
   direction of travel), read its heading from the red arrow, and trace the street it
   stands on in the reference map from the BLUE marker along that heading to the first
   crossing street. Walking to the first junction and comparing the metres walked (summed from
   the feedback) with those pixels gives the reference map's scale.
3. Dead-reckon its position (heading from the arrow, distance from the feedback); turn round
   (two D LARGE) when the goal lies behind it at the start or it keeps walking away from it;
   at every junction take the offered branch whose direction (LEFT -90°, UP 0°, RIGHT +90°)
   points closest to the goal; ANSWER once within ``arrive_m`` of the estimated goal, or when
   the goal falls behind it on a street that passes close by.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from city360.agents._task import task_reference_images
from city360.agents.base import AgentDecision, Observation, offered_branches
from city360.agents.street_memory import BRANCH_TURN_DEG, walked_metres
from city360.errors import ResetNeededError
from city360.simulator.actions import Action, ActionCommand, Magnitude
from city360.types import Image

__all__ = ["MapReaderAgent", "find_markers", "read_arrow_heading"]


def angle_diff_deg(a_deg: float, b_deg: float) -> float:
    """Signed smallest difference ``a - b`` in degrees, in [-180, 180). (Kept here rather than
    imported from ``city360.geo`` so that importing the agents does not load pyproj.)"""
    return (a_deg - b_deg + 180.0) % 360.0 - 180.0


def _blob(mask: npt.NDArray[np.bool_]) -> tuple[float, float] | None:
    """Centroid (col, row) of the largest connected blob of ``mask``."""
    import cv2

    count, _labels, stats, centroids = cv2.connectedComponentsWithStats(mask.astype(np.uint8))
    if count <= 1:
        return None
    best = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    if stats[best, cv2.CC_STAT_AREA] < 4:
        return None
    col, row = centroids[best]
    return float(col), float(row)


def find_markers(image: Image) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """(BLUE start, RED goal) marker centres in pixels (col, row), or None."""
    rgb = np.asarray(image).astype(np.int16)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    blue = (b > 170) & (r < 80) & (g < 140)
    red = (r > 170) & (g < 70) & (b < 70)
    start, goal = _blob(blue), _blob(red)
    if start is None or goal is None:
        return None
    return start, goal


def _polygon_centroid(polygon: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Area centroid of a simple polygon (shoelace formula)."""
    x, y = polygon[:, 0], polygon[:, 1]
    x1, y1 = np.roll(x, -1), np.roll(y, -1)
    cross = x * y1 - x1 * y
    area = cross.sum() / 2.0
    return np.array([((x + x1) * cross).sum(), ((y + y1) * cross).sum()]) / (6.0 * area)


def read_arrow_heading(location_map: Image, *, prior_deg: float | None = None) -> float | None:
    """Heading (degrees clockwise from north) of the red arrow near the map's centre.

    The arrowhead's tip and back corners are almost equally far from its middle, so instead of
    looking for the tip the red pixels are matched against the maps stage's arrow shape
    (:func:`city360.maps.draw.arrow_polygon`) at every heading (3° steps, then 1°), sized to
    the same area and centred on the same point; the best overlap wins. With ``prior_deg``
    (the last heading read) only ±30° around it are tried first, and the full circle only when
    nothing there fits well.
    """
    import cv2

    from city360.maps.draw import arrow_polygon

    rgb = np.asarray(location_map).astype(np.int16)
    h, w = rgb.shape[:2]
    red = (rgb[..., 0] > 170) & (rgb[..., 1] < 80) & (rgb[..., 2] < 80)
    rows, cols = np.nonzero(red)
    near = (np.abs(rows - h / 2) < h * 0.25) & (np.abs(cols - w / 2) < w * 0.25)
    rows, cols = rows[near], cols[near]
    if len(rows) < 6:
        return None
    r0, r1 = int(rows.min()) - 4, int(rows.max()) + 5
    c0, c1 = int(cols.min()) - 4, int(cols.max()) + 5
    patch = np.zeros((r1 - r0, c1 - c0), np.uint8)
    patch[rows - r0, cols - c0] = 1
    centre_col, centre_row = float(cols.mean() - c0), float(rows.mean() - r0)
    unit = arrow_polygon(0.0, 0.0, 0.0, 1.0)
    unit_area = 0.5 * abs(
        float(
            np.dot(unit[:, 0], np.roll(unit[:, 1], 1)) - np.dot(unit[:, 1], np.roll(unit[:, 0], 1))
        )
    )
    length = math.sqrt(len(rows) / unit_area)

    def overlap(heading: float) -> float:
        polygon = arrow_polygon(0.0, 0.0, heading, length)
        shifted = polygon - _polygon_centroid(polygon) + (centre_col, centre_row)
        template = np.zeros_like(patch)
        cv2.fillPoly(template, [np.round(shifted * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
        inter = float(np.logical_and(template, patch).sum())
        return inter / max(1.0, float(np.logical_or(template, patch).sum()))

    coarse: float | None = None
    if prior_deg is not None:
        near_prior = np.arange(prior_deg - 30.0, prior_deg + 30.01, 3.0)
        candidate = float(max(near_prior, key=overlap))
        if overlap(candidate) >= 0.75:
            coarse = candidate
    if coarse is None:
        coarse = float(max(np.arange(0.0, 360.0, 3.0), key=overlap))
    fine = max(np.arange(coarse - 2.0, coarse + 2.01, 1.0), key=overlap)
    return float(fine) % 360.0


def _street_mask(image: Image, start: tuple[float, float]) -> npt.NDArray[np.bool_]:
    """Streets of a reference map: the white region the BLUE start marker stands on (streets
    are drawn white; the background, blocks and the attribution box are not part of it)."""
    import cv2

    rgb = np.asarray(image)
    white: npt.NDArray[np.bool_] = np.asarray((rgb >= 248).all(axis=2), dtype=np.bool_)
    _, labels = cv2.connectedComponents(np.asarray(white, dtype=np.uint8), connectivity=8)
    col, row = round(start[0]), round(start[1])
    r0, r1 = max(0, row - 25), min(white.shape[0], row + 26)
    c0, c1 = max(0, col - 25), min(white.shape[1], col + 26)
    around = labels[r0:r1, c0:c1][white[r0:r1, c0:c1]]
    if around.size == 0:
        return np.zeros_like(white)
    values, counts = np.unique(around, return_counts=True)
    return np.asarray(labels == values[int(np.argmax(counts))], dtype=np.bool_)


def _run_lengths(
    mask: npt.NDArray[np.bool_], col: float, row: float, heading_deg: float, limit: int
) -> tuple[int, int]:
    """White pixels to the left and to the right of (col, row), across ``heading_deg``."""
    h = math.radians(heading_deg + 90.0)
    dc, dr = math.sin(h), -math.cos(h)
    runs = []
    for sign in (-1, 1):
        count = 0
        for k in range(1, limit):
            c, r = round(col + sign * k * dc), round(row + sign * k * dr)
            if not (0 <= r < mask.shape[0] and 0 <= c < mask.shape[1]) or not mask[r, c]:
                break
            count += 1
        runs.append(count)
    return runs[0], runs[1]


def _half_crossing(
    mask: npt.NDArray[np.bool_], entry: tuple[float, float], heading_deg: float, width: float
) -> float:
    """Pixels from ``entry`` (the near edge of a crossing) to the crossing's middle, where the
    simulator stops: the middle of the stretch where the white across the ray is widest
    (the crossing street's centre line), so side streets merging into the junction do not
    drag it off."""
    h = math.radians(heading_deg)
    dc, dr = math.sin(h), -math.cos(h)
    limit = max(mask.shape) // 4
    spans: list[tuple[int, int]] = []
    for k in range(0, 6 * int(width) + 8):
        col, row = entry[0] + k * dc, entry[1] + k * dr
        r, c = round(row), round(col)
        if not (0 <= r < mask.shape[0] and 0 <= c < mask.shape[1]) or not mask[r, c]:
            break
        left, right = _run_lengths(mask, col, row, heading_deg, limit)
        if k > 0 and left + right + 1 < 1.5 * width:
            break
        spans.append((k, left + right + 1))
    if not spans:
        return 0.0
    widest = max(w for _, w in spans)
    plateau = [k for k, w in spans if w >= 0.9 * widest]
    return float(np.mean(plateau))


def street_width_px(mask: npt.NDArray[np.bool_]) -> float:
    """Typical width of the drawn streets: inside a strip of half-width h the distance to the
    nearest non-street pixel is spread evenly over 0..h, so its 95th percentile is ~h."""
    import cv2

    if not mask.any():
        return 0.0
    distance = cv2.distanceTransform(mask.astype(np.uint8), cv2.DIST_L2, 3)
    return 2.0 * float(np.percentile(distance[mask], 95)) + 1.0


def trace_to_junction(
    mask: npt.NDArray[np.bool_], start: tuple[float, float], heading_deg: float
) -> float | None:
    """Pixels from ``start`` along the street heading ``heading_deg`` to the first crossing
    street, or to where the street ends; None if no street is found.

    The tracer walks one pixel at a time, re-centring itself between the street's white edges
    (so a heading a few degrees off or a gently curving street does not make it leave the
    street), and stops where the street widens to over twice the map's usual street width
    (:func:`street_width_px`): a crossing.
    """
    h = math.radians(heading_deg)
    dc, dr = math.sin(h), -math.cos(h)
    pc, pr = math.cos(h), math.sin(h)  # unit vector to the right, across the street
    limit = max(mask.shape) // 4
    col, row = start
    usual = street_width_px(mask)
    widths: list[int] = []
    max_t = int(math.hypot(*mask.shape))
    for t in range(1, max_t):
        col, row = col + dc, row + dr
        if t < 14:  # still inside the start marker and its white ring
            continue
        r, c = round(row), round(col)
        if not (0 <= r < mask.shape[0] and 0 <= c < mask.shape[1]) or not mask[r, c]:
            return float(t) if widths else None
        left, right = _run_lengths(mask, col, row, heading_deg, limit)
        width = left + right + 1
        if width > 2.0 * usual:
            return float(t) + _half_crossing(mask, (col, row), heading_deg, usual)
        widths.append(width)
        shift = (right - left) / 2.0
        col, row = col + shift * pc, row + shift * pr
    return None


class MapReaderAgent:
    """See the module docstring; ``arrive_m`` is how close (estimated metres) it answers."""

    privileged: ClassVar[bool] = False

    def __init__(self, *, arrive_m: float = 8.0) -> None:
        self.name = "map"
        self.arrive_m = arrive_m
        self._active = False
        self.markers: tuple[tuple[float, float], tuple[float, float]] | None = None
        self.scale_m_per_px: float | None = None

    def __repr__(self) -> str:
        return f"MapReaderAgent(arrive_m={self.arrive_m})"

    def reset(self, task: Any) -> None:
        self._active = True
        self.markers = None
        self._mask: npt.NDArray[np.bool_] | None = None
        for _, image in task_reference_images(task):
            found = find_markers(image)
            if found is not None:
                self.markers = found
                self._mask = _street_mask(image, found[0])
                break
        self.scale_m_per_px = None
        self._heading: float | None = None
        self._position = (0.0, 0.0)
        self._walked_m = 0.0
        self._first_leg_px: float | None = None
        self._leg_traced = False
        self._aligned = False
        self._last_distance: float | None = None
        self._turns_left = 0
        self._start_checked = False
        self._turnarounds = 0
        self._receding = 0

    # geometry ------------------------------------------------------------------------------
    def _goal_m(self) -> tuple[float, float] | None:
        if self.markers is None or self.scale_m_per_px is None:
            return None
        (sc, sr), (gc, gr) = self.markers
        return (gc - sc) * self.scale_m_per_px, -(gr - sr) * self.scale_m_per_px

    def _goal_bearing(self) -> float | None:
        goal = self._goal_m()
        if goal is not None:
            return (
                math.degrees(math.atan2(goal[0] - self._position[0], goal[1] - self._position[1]))
                % 360.0
            )
        if self.markers is None:
            return None
        (sc, sr), (gc, gr) = self.markers
        return math.degrees(math.atan2(gc - sc, -(gr - sr))) % 360.0

    def _update(self, observation: Observation) -> None:
        """Dead reckoning. A walk is credited along the heading read after it, since a new
        segment's first metres can bend away from the direction it leaves a junction in;
        except a walk that ends at a junction, credited along the heading before it, since a
        street's last metres bend into the junction."""
        previous = self._heading
        location_map = observation.get("map")
        if location_map is not None:
            heading = read_arrow_heading(location_map, prior_deg=self._heading)
            if heading is not None:
                self._heading = heading
        feedback = str(observation.get("feedback", "") or "")
        walked = walked_metres(feedback)
        at_junction = bool(offered_branches(observation))
        along = previous if at_junction or self._heading is None else self._heading
        if walked and along is not None:
            h = math.radians(along)
            x, y = self._position
            self._position = (x + walked * math.sin(h), y + walked * math.cos(h))
            self._walked_m += walked

    # decisions -----------------------------------------------------------------------------
    def _turn_round(self, why: str) -> AgentDecision:
        """First of two D LARGE (90° each): facing backwards, the next W walks the street the
        other way, and the arrow then shows the new direction of travel."""
        self._turns_left = 1
        return AgentDecision(ActionCommand(Action.D, Magnitude.LARGE), thought=f"turn round: {why}")

    def act(self, observation: Observation) -> AgentDecision:
        if not self._active:
            msg = "MapReaderAgent.act() called before reset(task); call reset(task) first"
            raise ResetNeededError(msg)
        self._update(observation)
        if not self._aligned:  # S: the arrow then shows the direction of travel
            self._aligned = True
            return AgentDecision(ActionCommand(Action.S), thought="look along the street")
        if self.markers is None or self._heading is None:
            return AgentDecision(ActionCommand(Action.W), thought="no map to read; walk on")
        if self._turns_left:  # turning round: two D LARGE face backwards, then W walks back
            self._turns_left -= 1
            return AgentDecision(ActionCommand(Action.D, Magnitude.LARGE), thought="turn round")
        if not self._start_checked:
            self._start_checked = True
            bearing = self._goal_bearing()
            if bearing is not None and abs(angle_diff_deg(self._heading, bearing)) > 100.0:
                return self._turn_round("the RED marker is behind me")
        if not self._leg_traced and self._mask is not None:
            self._leg_traced = True
            self._first_leg_px = trace_to_junction(self._mask, self.markers[0], self._heading)
        branches = offered_branches(observation)
        feedback = str(observation.get("feedback", "") or "").lower()
        if (
            self.scale_m_per_px is None
            and self._first_leg_px
            and self._walked_m > 0
            and (branches or "dead end" in feedback)
        ):
            self.scale_m_per_px = self._walked_m / self._first_leg_px
        goal = self._goal_m()
        distance = None
        if goal is not None:
            distance = math.hypot(goal[0] - self._position[0], goal[1] - self._position[1])
            passing = (
                self._last_distance is not None
                and distance > self._last_distance
                and distance < 2.0 * self.arrive_m
            )
            if distance <= self.arrive_m or passing:
                return AgentDecision(
                    ActionCommand(Action.ANSWER, answer="arrived"),
                    thought=f"estimated {distance:.0f} m from the RED marker",
                )
            receding = self._last_distance is not None and distance > self._last_distance + 1.0
            self._receding = self._receding + 1 if receding else 0
            self._last_distance = distance
            bearing_now = self._goal_bearing()
            if (
                self._receding >= 2
                and self._turnarounds < 2
                and not branches
                and bearing_now is not None
                and abs(angle_diff_deg(self._heading, bearing_now)) > 120.0
            ):
                self._turnarounds += 1
                self._receding = 0
                self._last_distance = None
                return self._turn_round("walking away from the RED marker")
        bearing = self._goal_bearing()
        if branches and bearing is not None:
            heading = self._heading
            best = min(
                branches,
                key=lambda b: abs(angle_diff_deg(heading + BRANCH_TURN_DEG[b], bearing)),
            )
            self._last_distance = None
            # the arrow shows the view, which a branch may leave turned from the new street
            self._aligned = False
            return AgentDecision(ActionCommand(best), thought=f"goal bears {bearing:.0f}°")
        if "dead end" in feedback:
            self._aligned = False
            return AgentDecision(ActionCommand(Action.D, Magnitude.LARGE), thought="dead end")
        if distance is not None and distance < 12.0:
            return AgentDecision(ActionCommand(Action.W, Magnitude.SMALL), thought="nearly there")
        return AgentDecision(ActionCommand(Action.W, Magnitude.LARGE), thought="follow the street")
