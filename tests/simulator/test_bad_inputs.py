"""Bad inputs raise City360Error leaves with the allowed values and a close match."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import city360
from city360.errors import (
    City360Error,
    CityFormatError,
    ConfigError,
    InputFileError,
    ResetNeededError,
    UnknownActionError,
)
from city360.simulator.actions import Action, ActionCommand, Magnitude
from city360.simulator.config import EnvConfig
from city360.simulator.env import CityEnv
from tests.simulator.conftest import EnvFactory
from tests.simulator.handmade import ARM_M


def test_unknown_action_names_allowed_values_and_close_match(make_env: EnvFactory) -> None:
    env = make_env()
    env.reset(seed=0)
    with pytest.raises(
        UnknownActionError,
        match=r"unknown action 'WW'; expected one of W, S, A, D, Q, E, LEFT, RIGHT, UP, "
        r"ANSWER\. Did you mean 'W'\?",
    ):
        env.step("WW")
    with pytest.raises(
        UnknownActionError,
        match=r"unknown magnitude 'MEDUIM'; expected one of SMALL, MEDIUM, LARGE or none\. "
        r"Did you mean 'MEDIUM'\?",
    ):
        env.step("W", "MEDUIM")
    with pytest.raises(ValueError, match="action must be a string"):
        env.step(3)  # type: ignore[arg-type]
    with pytest.raises(UnknownActionError, match="`answer` is only for ANSWER, got it with W"):
        env.step("W", answer="x:1 y:1")
    # none of these counted as a step
    obs, *_ = env.step(ActionCommand(Action.D, Magnitude.SMALL))
    assert obs["step"] == 1


def test_actions_are_case_insensitive(make_env: EnvFactory) -> None:
    env = make_env()
    env.reset(options={"segment": "ns_a", "offset_m": 0.0})
    _, _, _, _, info = env.step(" w ", "large")
    assert info["offset_m"] == 10.0
    assert info["action"] == "W"
    assert info["magnitude"] == "LARGE"


def test_step_before_reset_and_after_the_end(make_env: EnvFactory) -> None:
    env = make_env()
    with pytest.raises(ResetNeededError, match=r"step\(\) called before reset\(\)"):
        env.step("W")
    env.reset(seed=0)
    env.step("ANSWER", answer="done")
    with pytest.raises(ResetNeededError, match=r"step\(\) called after the episode ended"):
        env.step("W")
    truncating = make_env(max_steps=1)
    truncating.reset(seed=0)
    truncating.step("D")
    with pytest.raises(ResetNeededError, match="after the episode ended"):
        truncating.step("D")
    truncating.reset(seed=0)  # a reset starts over
    assert truncating.step("D")[3] is True


def test_bad_config(plus_city: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"unknown config option 'fov'\. Did you mean 'fov_deg'\?"
    ):
        city360.make(plus_city, fov=90)
    with pytest.raises(ConfigError, match=r"`fov_deg` must be in \[1, 170\], got 200"):
        EnvConfig(fov_deg=200)
    with pytest.raises(ConfigError, match=r"`move_m` must be three positive numbers"):
        EnvConfig.from_kwargs(move_m=[1, 2])
    with pytest.raises(ConfigError, match="`renderer` must be 'auto', 'gl' or 'cpu'"):
        EnvConfig(renderer="vulkan")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="`pitch_limit_deg` must be in"):
        EnvConfig(pitch_limit_deg=95)
    with pytest.raises(ConfigError, match=r"`decode_threads` must be in 1\.\.64, got 0"):
        EnvConfig(decode_threads=0)


def test_decode_threads_reach_the_frame_stores(plus_city: Path) -> None:
    with city360.make(plus_city, decode_threads=1, map=False) as env:
        env.reset(seed=0)
        env.step("W", "SMALL")
        stores = [env.world.store(t) for t in env.world.trajectories]
        assert stores
        assert {store._threads for store in stores} == {1}  # type: ignore[attr-defined]


def test_bad_reset_options(make_env: EnvFactory) -> None:
    env = make_env()
    with pytest.raises(
        ConfigError, match=r"unknown reset option 'segmnt'\. Did you mean 'segment'\?"
    ):
        env.reset(options={"segmnt": "ns_a"})
    with pytest.raises(
        ConfigError, match=r"segment 'ns_x' is not in the pose graph\. Did you mean 'ns_[ab]'\?"
    ):
        env.reset(options={"segment": "ns_x"})
    with pytest.raises(
        ConfigError, match=r"start offset_m 45.0 is outside segment 'ns_a' \(0 to 30.00 m\)"
    ):
        env.reset(options={"segment": "ns_a", "offset_m": 45.0})
    with pytest.raises(ConfigError, match="needs lat and lon"):
        env.reset(options={"lat": 60.17})
    with pytest.raises(ConfigError, match="needs a `start` pose"):
        env.reset(options={"task": {"id": "t1"}})


def test_missing_or_corrupt_city(tmp_path: Path, plus_city: Path) -> None:
    with pytest.raises(InputFileError, match="is not a city directory"):
        city360.make(tmp_path)
    broken = tmp_path / "broken"
    shutil.copytree(plus_city, broken)
    (broken / "graph.json").unlink()
    with pytest.raises(InputFileError, match="build the pose graph first"):
        CityEnv(broken, EnvConfig(map=False))
    (broken / "graph.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(CityFormatError, match=r"graph\.json: not valid JSON"):
        CityEnv(broken, EnvConfig(map=False))
    data = json.loads((plus_city / "graph.json").read_text(encoding="utf-8"))
    data["edges"][0]["last_frame"] = 500
    (broken / "graph.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        CityFormatError, match=r"edge '\w+': last_frame 500 but trajectory 'ns' has 61"
    ):
        CityEnv(broken, EnvConfig(map=False))
    data = json.loads((plus_city / "graph.json").read_text(encoding="utf-8"))
    data["edges"][0]["transitions"] = [{"edge": "nowhere", "turn_deg": 0.0, "label": "UP"}]
    (broken / "graph.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CityFormatError, match=r"transitions\[0\] names unknown edge 'nowhere'"):
        CityEnv(broken, EnvConfig(map=False))


def test_closed_env_refuses_work(make_env: EnvFactory) -> None:
    env = make_env()
    env.reset(seed=0)
    env.close()
    env.close()  # twice is fine
    with pytest.raises(City360Error, match="is closed"):
        env.step("W")


def test_a_graph_with_only_the_contract_fields_loads(plus_city: Path, tmp_path: Path) -> None:
    """graph.json as docs/contracts.md defines it (no builder-only fields) is walkable."""
    city = tmp_path / "contract"
    shutil.copytree(plus_city, city)
    data = json.loads((city / "graph.json").read_text(encoding="utf-8"))
    for node in data["nodes"]:
        node.pop("degree", None)
    for edge in data["edges"]:
        for key in ("heading_profile_deg", "street", "primary"):
            edge.pop(key, None)
        for transition in edge["transitions"]:
            transition.pop("uturn", None)
    (city / "graph.json").write_text(json.dumps(data), encoding="utf-8")
    with CityEnv(city, EnvConfig(map=False, privileged_info=True, renderer="cpu")) as env:
        env.reset(options={"segment": "ns_a", "offset_m": ARM_M})
        _, _, _, _, info = env.step("RIGHT")
        assert info["segment"] == "ew_a_r"
