"""The controller walked on the hand-made plus city: junction stops, branches, rotations,
reverse segments, absolute view across videos."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from city360.simulator.config import EnvConfig
from city360.simulator.env import CityEnv
from tests.simulator.conftest import EnvFactory
from tests.simulator.handmade import ARM_M, EXPECTED_TURNS, ground_level

STEP_LABELS = ("LEFT", "UP", "RIGHT")


def view_bearing_from_pixels(view: np.ndarray) -> float:
    """Absolute bearing painted in the sky at the view's centre column (degrees)."""
    h, w = view.shape[:2]
    pixel = view[h // 4, w // 2 - 1 : w // 2 + 1].reshape(-1, 1, 3)
    angles = np.radians(cv2.cvtColor(pixel, cv2.COLOR_RGB2HSV)[:, 0, 0].astype(float) * 2.0)
    return float(np.degrees(np.arctan2(np.sin(angles).mean(), np.cos(angles).mean()))) % 360.0


def frame_from_pixels(view: np.ndarray) -> int:
    """Frame index painted on the ground (bottom centre of a level view)."""
    h, w = view.shape[:2]
    grey = float(view[h - 3, w // 2].mean())
    return round((grey - ground_level(0)) / 3.0)


def bearing_close(a: float, b: float, tol: float = 4.0) -> bool:
    return abs((a - b + 180.0) % 360.0 - 180.0) <= tol


def test_w_runs_to_the_junction_and_stops(make_env: EnvFactory) -> None:
    env = make_env()
    obs, info = env.reset(options={"segment": "ns_a", "offset_m": 0.0})
    assert obs["branch_mask"].tolist() == [0, 0, 0]
    offsets = []
    for _ in range(4):
        obs, _, _, _, info = env.step("W", "LARGE")
        offsets.append(info["offset_m"])
    assert offsets == [10.0, 20.0, ARM_M, ARM_M]
    assert info["moved_m"] == 0.0
    assert info["segment"] == "ns_a"
    assert "W does not move" in obs["feedback"]
    assert "LEFT, UP, RIGHT" in obs["feedback"]
    assert obs["branch_mask"].tolist() == [1, 1, 1]
    assert info["at_junction"] is True


def test_w_stops_at_the_junction_mid_stride(make_env: EnvFactory) -> None:
    env = make_env()
    env.reset(options={"segment": "ns_a", "offset_m": 27.0})
    obs, _, _, _, info = env.step("W", "MEDIUM")
    assert info["moved_m"] == pytest.approx(3.0)
    assert info["offset_m"] == ARM_M
    assert "reached a junction" in obs["feedback"]


@pytest.mark.parametrize("arriving", sorted(EXPECTED_TURNS))
def test_offered_branches_match_geometry_and_lead_to_the_right_segment(
    make_env: EnvFactory, arriving: str
) -> None:
    env = make_env()
    expected = EXPECTED_TURNS[arriving]
    _, info = env.reset(options={"segment": arriving, "offset_m": ARM_M})
    assert info["branches"] == [label for label in STEP_LABELS if label in expected]
    for label, target in expected.items():
        env.reset(options={"segment": arriving, "offset_m": ARM_M})
        arrive_heading = info["pose"]["heading_deg"]
        _obs, _, _, _, after = env.step(label)
        assert after["segment"] == target
        assert after["offset_m"] == 0.0
        _, _, _, _, walked = env.step("W", "SMALL")
        assert walked["segment"] == target
        assert walked["moved_m"] == pytest.approx(2.0)
        turn = (walked["pose"]["heading_deg"] - arrive_heading + 180.0) % 360.0 - 180.0
        want = {"LEFT": -90.0, "UP": 0.0, "RIGHT": 90.0}[label]
        assert turn == pytest.approx(want)


def test_branch_where_none_is_offered_is_a_noop_with_feedback(make_env: EnvFactory) -> None:
    env = make_env()
    env.reset(options={"segment": "ns_a", "offset_m": 12.0})
    obs, _, terminated, _, info = env.step("left")
    assert info["segment"] == "ns_a"
    assert info["offset_m"] == 12.0
    assert not terminated
    assert "No branch here" in obs["feedback"]
    env.reset(options={"segment": "ns_b", "offset_m": ARM_M})  # dead end
    obs, _, _, _, info = env.step("LEFT")
    assert "No LEFT branch at this junction. Offered: UP." in obs["feedback"]
    obs, _, _, _, info = env.step("W")
    assert info["moved_m"] == 0.0
    assert "Dead end: W does not move. Turn back with UP" in obs["feedback"]


def test_dead_end_u_turn_turns_the_view_with_the_body(make_env: EnvFactory) -> None:
    env = make_env()
    env.reset(options={"segment": "ns_b", "offset_m": ARM_M - 1.0, "yaw_deg": 20.0})
    obs, _, _, _, info = env.step("W", "SMALL")
    assert obs["branch_mask"].tolist() == [0, 1, 0]
    assert "You reached a dead end. Turn back with UP" in obs["feedback"]
    obs, _, _, _, info = env.step("UP")
    assert info["segment"] == "ns_b_r"
    assert info["pose"]["yaw_deg"] == pytest.approx(20.0)
    assert bearing_close(view_bearing_from_pixels(obs["view"]), 20.0)
    _, _, _, _, info = env.step("W", "LARGE")
    assert info["moved_m"] == pytest.approx(10.0)
    assert info["pose"]["y_m"] == pytest.approx(-ARM_M + 10.0)


def test_rotations_compose(make_env: EnvFactory) -> None:
    env = make_env()
    obs0, _info0 = env.reset(options={"segment": "ns_a", "offset_m": 5.0})
    for _ in range(4):
        obs, _, _, _, info = env.step("D", "LARGE")
    assert info["pose"]["yaw_deg"] == 0.0
    assert np.array_equal(obs["view"], obs0["view"])
    env.step("A", "SMALL")
    obs, _, _, _, info = env.step("D", "SMALL")
    assert np.array_equal(obs["view"], obs0["view"])
    obs, _, _, _, info = env.step("D")
    assert info["pose"]["yaw_deg"] == pytest.approx(24.0)
    assert bearing_close(view_bearing_from_pixels(obs["view"]), 180.0 + 24.0)
    for magnitude, amount in (("SMALL", 30.0), ("MEDIUM", 60.0), ("LARGE", 90.0)):
        before = info["pose"]["yaw_deg"]
        _, _, _, _, info = env.step("A", magnitude)
        assert (before - info["pose"]["yaw_deg"]) % 360.0 == pytest.approx(amount)


def test_s_realigns_view_with_travel(make_env: EnvFactory) -> None:
    env = make_env()
    obs0, _ = env.reset(options={"segment": "ew_a", "offset_m": 3.0})
    env.step("D", "MEDIUM")
    env.step("Q", "SMALL")
    obs, _, _, _, info = env.step("S")
    assert info["pose"]["yaw_deg"] == 0.0
    assert info["pose"]["pitch_deg"] == 0.0
    assert np.array_equal(obs["view"], obs0["view"])
    assert "direction of travel" in obs["feedback"]


def test_pitch_is_clamped(make_env: EnvFactory) -> None:
    env = make_env()
    env.reset(options={"segment": "ew_a", "offset_m": 3.0})
    env.step("Q", "LARGE")
    obs, _, _, _, info = env.step("Q", "LARGE")
    assert info["pose"]["pitch_deg"] == 80.0
    assert "stops at 80" in obs["feedback"]
    for _ in range(3):
        _, _, _, _, info = env.step("E", "LARGE")
    assert info["pose"]["pitch_deg"] == -80.0


def test_view_shows_absolute_bearing(make_env: EnvFactory) -> None:
    env = make_env()
    for segment, travel in (("ns_a", 180.0), ("ns_a_r", 0.0), ("ew_a", 90.0), ("ew_b_r", 270.0)):
        obs, info = env.reset(options={"segment": segment, "offset_m": 10.0, "yaw_deg": 30.0})
        assert info["pose"]["view_bearing_deg"] == pytest.approx((travel + 30.0) % 360.0)
        assert bearing_close(view_bearing_from_pixels(obs["view"]), travel + 30.0)


def test_branches_turn_the_body_or_keep_the_absolute_view(make_env: EnvFactory) -> None:
    env = make_env()
    env.reset(options={"segment": "ns_a", "offset_m": ARM_M, "yaw_deg": 40.0})
    obs, _, _, _, info = env.step("LEFT")  # turns the body: yaw kept relative to travel
    assert info["segment"] == "ew_b"
    assert info["pose"]["yaw_deg"] == pytest.approx(40.0)
    assert bearing_close(view_bearing_from_pixels(obs["view"]), 90.0 + 40.0)

    absolute = make_env(turn_view_with_branch=False)
    obs0, _ = absolute.reset(options={"segment": "ns_a", "offset_m": ARM_M, "yaw_deg": 40.0})
    obs, _, _, _, info = absolute.step("LEFT")
    assert info["frame"][0] == "ew"  # another video ...
    assert info["pose"]["view_bearing_deg"] == pytest.approx(220.0)  # ... same direction
    assert info["pose"]["yaw_deg"] == pytest.approx(130.0)
    assert bearing_close(view_bearing_from_pixels(obs["view"]), 220.0)
    assert bearing_close(view_bearing_from_pixels(obs0["view"]), 220.0)


def test_facing_backwards_w_walks_the_twin_keeping_the_view(make_env: EnvFactory) -> None:
    env = make_env()
    env.reset(options={"segment": "ns_a", "offset_m": 10.0})
    env.step("D", "LARGE")
    env.step("D", "LARGE")
    obs, _, _, _, info = env.step("W", "SMALL")
    assert info["segment"] == "ns_a_r"
    assert info["offset_m"] == pytest.approx(ARM_M - 10.0 + 2.0)
    assert info["pose"]["view_bearing_deg"] == pytest.approx(0.0)
    assert info["pose"]["yaw_deg"] == pytest.approx(0.0)
    assert info["pose"]["y_m"] == pytest.approx(ARM_M - 10.0 + 2.0)
    assert bearing_close(view_bearing_from_pixels(obs["view"]), 0.0)


def test_turning_round_onto_a_twin_mid_turn_keeps_walking_it(make_env: EnvFactory) -> None:
    """The twin's frames near its start film a walker mid-turn (the demo city's lmi-024: a
    frame heading 79 deg on a street running 175 deg; here every twin frame is 100 deg off):
    turning round there turns the body on the street, so the next W walks on along the twin
    instead of back onto the first segment (the view came out 96 deg off travel, which reads
    as facing backwards)."""
    env = make_env()
    twin = env.world.segment("ns_a_r")
    travel = twin.travel_deg.copy()
    twin.travel_deg[:] = (travel + 100.0) % 360.0
    try:
        env.reset(options={"segment": "ns_a", "offset_m": 10.0})
        env.step("D", "LARGE")
        env.step("D", "LARGE")
        *_, info = env.step("W", "SMALL")
        assert info["segment"] == "ns_a_r"
        assert info["pose"]["yaw_deg"] == pytest.approx(0.0)
        *_, info = env.step("W", "MEDIUM")
        assert info["segment"] == "ns_a_r"
        assert info["offset_m"] == pytest.approx(ARM_M - 10.0 + 2.0 + 5.0)
    finally:
        twin.travel_deg[:] = travel


def test_reversed_segment_plays_time_backwards(make_env: EnvFactory) -> None:
    env = make_env(arrows=False)  # the ground must show only the frame's own paint
    forward, backward = [], []
    obs, _ = env.reset(options={"segment": "ns_b", "offset_m": 0.0})
    forward.append(frame_from_pixels(obs["view"]))
    for _ in range(6):
        obs, *_ = env.step("W", "MEDIUM")
        forward.append(frame_from_pixels(obs["view"]))
    obs, _ = env.reset(options={"segment": "ns_b_r", "offset_m": 0.0})
    backward.append(frame_from_pixels(obs["view"]))
    for _ in range(6):
        obs, *_ = env.step("W", "MEDIUM")
        backward.append(frame_from_pixels(obs["view"]))
    assert forward == [30, 35, 40, 45, 50, 55, 60]
    assert backward == forward[::-1]
    # the reversed segment looks where it walks (north), not where the camera looked (south)
    assert bearing_close(view_bearing_from_pixels(obs["view"]), 0.0)


def test_same_seed_and_actions_give_identical_observations(make_env: EnvFactory) -> None:
    actions = [
        ("W", "LARGE"), ("D", None), ("W", "SMALL"), ("Q", "SMALL"), ("A", "LARGE"),
        ("W", "MEDIUM"), ("UP", None), ("LEFT", None), ("S", None), ("W", "LARGE"),
    ]  # fmt: skip

    def run(env: CityEnv) -> list[dict[str, object]]:
        obs, _ = env.reset(seed=11)
        seen = [obs]
        for action, magnitude in actions:
            obs, *_ = env.step(action, magnitude)
            seen.append(obs)
        return seen

    first, second = run(make_env()), run(make_env())
    for a, b in zip(first, second, strict=True):
        assert np.array_equal(a["view"], b["view"])  # type: ignore[arg-type]
        assert a["feedback"] == b["feedback"]
        assert a["step"] == b["step"]
        assert np.array_equal(a["branch_mask"], b["branch_mask"])  # type: ignore[arg-type]
    other = make_env()
    starts = {other.reset(seed=s)[1]["frame"] for s in range(8)}
    assert len(starts) > 1  # the seed does choose the start


def test_answer_ends_the_episode(make_env: EnvFactory) -> None:
    env = make_env()
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("ANSWER", answer="x:2 y:3")
    assert terminated
    assert not truncated
    assert reward == 0.0
    assert info["answer"] == "x:2 y:3"
    assert "x:2 y:3" in obs["feedback"]
    env.reset(seed=0)
    _, _, terminated, _, info = env.step("answer", "x:1 y:4")
    assert terminated
    assert info["answer"] == "x:1 y:4"


def test_step_limit_truncates(make_env: EnvFactory) -> None:
    env = make_env(max_steps=2)
    env.reset(seed=0)
    assert env.step("D")[3] is False
    obs, _, terminated, truncated, _ = env.step("D")
    assert truncated
    assert not terminated
    assert "Step limit 2" in obs["feedback"]


def test_privileged_info_only_when_allowed(make_env: EnvFactory) -> None:
    env = make_env(privileged_info=False)
    obs, info = env.reset(seed=0)
    for key in ("pose", "segment", "offset_m", "frame"):
        assert key not in info
    assert set(obs) == {"view", "branch_mask", "step", "feedback"}
    assert info["renderer"] == "cpu"


def test_prefetch_decodes_the_frames_of_the_next_moves(make_env: EnvFactory) -> None:
    """With the real frame store: after a step has prefetched, the next move's frame is a
    cache hit (no decode on the caller's thread)."""
    env = make_env()
    env.reset(options={"segment": "ns_a", "offset_m": 0.0})
    ns = env.world.store("ns")
    for magnitude in ("SMALL", "MEDIUM", "LARGE"):
        assert ns.wait_prefetch(timeout=30)  # type: ignore[attr-defined]
        misses = ns.misses  # type: ignore[attr-defined]
        env.step("W", magnitude)
        assert ns.misses == misses  # type: ignore[attr-defined]
    # at a junction the branches' first frames (another video) are prefetched too
    env.reset(options={"segment": "ns_a", "offset_m": ARM_M})
    ew = env.world.store("ew")
    assert ew.wait_prefetch(timeout=30)  # type: ignore[attr-defined]
    misses = ew.misses  # type: ignore[attr-defined]
    _, _, _, _, info = env.step("LEFT")
    env.step("W", "SMALL")
    assert info["frame"] == ("ew", 30)
    assert ew.misses == misses  # type: ignore[attr-defined]


def test_rotations_do_not_repeat_the_prefetch_request(make_env: EnvFactory) -> None:
    """What a step prefetches depends only on where the agent stands: a rotate leaves the
    earlier request running, a move or a new episode asks again."""
    env = make_env()
    env.reset(options={"segment": "ns_a", "offset_m": 0.0})
    ns = env.world.store("ns")
    asked: list[list[int]] = []
    original = ns.prefetch

    def record(indices: list[int]) -> None:
        asked.append(list(indices))
        original(indices)

    ns.prefetch = record  # type: ignore[method-assign]
    for action in ("A", "D", "Q", "E", "S"):
        env.step(action)
    assert asked == []
    env.step("W", "SMALL")
    assert len(asked) == 1
    env.reset(options={"segment": "ns_a", "offset_m": 0.0})
    assert len(asked) == 2


def test_w_walks_through_a_link_node_keeping_the_view(plus_city: Path, tmp_path: Path) -> None:
    """A node that is not a junction (a cut between two segments of a street) is walked
    through: W goes on without stopping and the absolute view carries over."""
    city = tmp_path / "line"
    shutil.copytree(plus_city, city)
    data = json.loads((city / "graph.json").read_text(encoding="utf-8"))
    data["nodes"] = [n for n in data["nodes"] if n["id"] in (0, 1, 2)]
    for node in data["nodes"]:
        if node["id"] == 0:
            node.update(kind="link", degree=2)
    data["edges"] = [e for e in data["edges"] if e["id"].startswith("ns")]
    for edge in data["edges"]:
        if edge["id"] == "ns_a":
            edge["transitions"] = [{"edge": "ns_b", "turn_deg": 0.0, "label": "UP"}]
        if edge["id"] == "ns_b_r":
            edge["transitions"] = [{"edge": "ns_a_r", "turn_deg": 0.0, "label": "UP"}]
    (city / "graph.json").write_text(json.dumps(data), encoding="utf-8")
    with CityEnv(
        city, EnvConfig(map=False, privileged_info=True, renderer="cpu", view_width=32,
                        view_height=24),
    ) as env:  # fmt: skip
        env.reset(options={"segment": "ns_a", "offset_m": 25.0, "yaw_deg": 15.0})
        obs, _, _, _, info = env.step("W", "LARGE")
        assert info["segment"] == "ns_b"
        assert info["offset_m"] == pytest.approx(5.0)
        assert info["moved_m"] == pytest.approx(10.0)
        assert info["pose"]["view_bearing_deg"] == pytest.approx(195.0)
        assert obs["branch_mask"].tolist() == [0, 0, 0]
