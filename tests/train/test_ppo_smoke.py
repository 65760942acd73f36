"""The PPO smoke command's arguments and its message when the training extra is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from city360.errors import ConfigError
from city360.train.ppo_smoke import SmokeConfig, env_options, main, parse_args


def test_defaults_and_options() -> None:
    assert parse_args([]) == SmokeConfig()
    config = parse_args(
        ["--city", "x", "--steps", "2048", "--envs", "4", "--policy", "cnn", "--out", "o"]
    )
    assert (config.city, config.steps, config.envs, config.policy) == ("x", 2048, 4, "cnn")
    assert config.out == Path("o")
    assert config.train_suite is None


def test_bad_values_say_which_option() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_args(["--eval-every", "0"])
    assert str(caught.value) == "`--eval-every` must be >= 1, got 0"
    with pytest.raises(ConfigError) as caught:
        SmokeConfig(holdout=-1)
    assert str(caught.value) == "`--holdout` must be >= 0, got -1"


def test_env_options_give_the_goal_and_no_text() -> None:
    options = env_options(SmokeConfig(step_cost=0.02))
    assert options["goal"] is True
    assert options["text"] is False
    assert (options["view_width"], options["view_height"]) == (84, 84)
    assert (options["reward"], options["step_cost"]) == ("shaped", 0.02)


def test_missing_training_extra_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    assert main(["--out", str(tmp_path / "out")]) == 2
    assert "pip install 'city360[train]'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
