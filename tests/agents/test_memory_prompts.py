"""Reflection memory, the step window, and the prompts with their hash."""

from __future__ import annotations

import pytest

from city360.agents.memory import ReflectionMemory, StepRecord
from city360.agents.prompts import (
    ControllerUnits,
    prompt_hash,
    render_step_prompt,
    render_system_prompt,
)
from city360.errors import ConfigError
from city360.simulator.actions import Action, ActionCommand, Magnitude


def test_memory_window_and_feedback_attach_to_the_right_step() -> None:
    memory = ReflectionMemory(window=2, max_chars=10)
    for step in range(3):
        memory.record(StepRecord(step=step, command=ActionCommand(Action.W), thought=f"t{step}"))
        memory.observe_feedback(f"moved {step}")
    steps = memory.recent_steps
    assert [s.step for s in steps] == [1, 2]
    assert steps[-1].feedback == "moved 2"
    memory.rewrite("x" * 50)
    assert memory.text == "x" * 10
    memory.rewrite(None)
    assert memory.text == "x" * 10
    memory.clear()
    assert memory.text == ""
    assert memory.recent_steps == ()
    with pytest.raises(ConfigError, match="`window` must be >= 0"):
        ReflectionMemory(window=-1)


def test_step_record_describes_invalid_and_long_thoughts() -> None:
    record = StepRecord(
        step=4,
        command=ActionCommand(Action.W, Magnitude.LARGE),
        thought="a" * 500,
        feedback="blocked",
        valid=False,
    )
    line = record.describe()
    assert line.startswith("step 4: W LARGE (fallback")
    assert "result: blocked" in line
    assert len(line) < 320


def test_system_prompt_explains_controller_arrows_and_formats() -> None:
    text = render_system_prompt(ControllerUnits(walk_m=(1.0, 3.0, 7.5)), with_map=True)
    for needle in (
        "RED ARROWS",
        "SMALL = 1 m",
        "LARGE = 7.5 m",
        "x:i y:j",
        "ANSWER",
        "memory",
        "red arrow for your position",
        '"thought"',
        '"magnitude"',
    ):
        assert needle in text
    assert "small map" not in render_system_prompt(ControllerUnits(), with_map=False)


def test_prompt_hash_is_stable_and_tracks_units() -> None:
    assert prompt_hash() == prompt_hash(ControllerUnits())
    assert len(prompt_hash()) == 16
    assert prompt_hash(ControllerUnits(walk_m=(1.0, 5.0, 10.0))) != prompt_hash()


def test_step_prompt_carries_memory_history_problem_and_branches() -> None:
    text = render_step_prompt(
        task="Find the bakery.",
        memory="passed a bank on the left",
        history=[StepRecord(1, ActionCommand(Action.D), "look right", "turned")],
        step=2,
        step_limit=50,
        feedback="turned",
        branches=[Action.LEFT, Action.RIGHT],
        problem="your last reply had no `action`",
        image_captions=["current view"],
    )
    assert "Find the bakery." in text
    assert "passed a bank on the left" in text
    assert "step 1: D | thought: look right | result: turned" in text
    assert "Ways offered (red arrows): LEFT, RIGHT." in text
    assert "Problem with your last reply: your last reply had no `action`" in text
    assert "step 2 of at most 50" in text
