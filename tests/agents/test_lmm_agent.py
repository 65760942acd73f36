"""The LMM agent through the real SDK clients against a local fake server (no internet)."""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import pytest

from city360.agents import LMMAgent, LMMConfig, RetryPolicy, make_provider
from city360.agents.providers.base import Provider
from city360.errors import ProviderError, ProviderUnavailableError, ResetNeededError
from city360.simulator.actions import Action, Magnitude
from tests.agents._wire import KEY_ENV, PROVIDERS, SECRET, base_url, read_wire
from tests.agents.standin import StandInEnv, StandInTask
from tests.fixtures.fake_llm_server import FakeLLMServer, Scripted

FAST_RETRY = RetryPolicy(max_retries=4, base_delay_s=0.01, max_delay_s=0.05)


def _reply(
    action: str, *, magnitude: str | None = None, memory: str = "", answer: str | None = None
) -> str:
    return json.dumps(
        {
            "thought": f"doing {action}",
            "action": action,
            "magnitude": magnitude,
            "memory": memory,
            "answer": answer,
        }
    )


def _provider(
    kind: str, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, *, timeout_s: float = 5.0
) -> Provider:
    monkeypatch.setenv(KEY_ENV[kind], SECRET)
    return make_provider(kind, "fake-model", base_url=base_url(kind, server), timeout_s=timeout_s)


def _task() -> StandInTask:
    reference = np.zeros((40, 50, 3), np.uint8)
    reference[:, :, 2] = 255
    return StandInTask(
        prompt_text="Walk to the end of the street, turn left, then answer 'done'.",
        reference_images=[("the goal", reference)],
        step_limit=12,
    )


@pytest.mark.parametrize("kind", PROVIDERS)
def test_request_shape_images_system_and_memory(
    kind: str, fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm_server.enqueue(
        Scripted.reply(
            _reply("W", magnitude="MEDIUM", memory="MEMO-1: street runs north"),
            input_tokens=120,
            output_tokens=30,
        ),
        Scripted.reply(_reply("ANSWER", answer="done"), input_tokens=130, output_tokens=25),
    )
    env = StandInEnv()
    with _provider(kind, fake_llm_server, monkeypatch) as provider:
        agent = LMMAgent(provider, retry=FAST_RETRY, seed=0)
        agent.reset(_task())
        obs = env.reset()
        first = agent.act(obs)
        obs, _ = env.step(first.command)
        second = agent.act(obs)
    assert first.action is Action.W
    assert first.magnitude is Magnitude.MEDIUM
    assert first.memory == "MEMO-1: street runs north"
    assert second.action is Action.ANSWER
    assert second.answer == "done"

    requests = fake_llm_server.generation_requests()
    assert [r.protocol for r in requests] == [kind, kind]
    assert requests[0].body is not None
    wire1, wire2 = read_wire(requests[0]), read_wire(requests[1])
    assert "RED ARROWS" in wire1.system
    assert "red arrow for your position" in wire1.system
    assert "Walk to the end of the street" in wire1.texts[0]
    # reference image, view, map, in that order, at their own sizes
    assert [img.shape for img in wire1.images] == [(40, 50, 3), (96, 128, 3), (64, 64, 3)]
    assert wire1.images[0][:, :, 0].mean() > 200  # red reference (BGR after decoding)
    assert "[task reference: the goal]" in wire1.texts
    # memory and history carried into the next step
    assert "MEMO-1: street runs north" in wire2.texts[0]
    assert "step 0: W MEDIUM | thought: doing W | result: Moved to 5 m." in wire2.texts[0]
    assert "(empty: this is your first step)" in wire1.texts[0]
    if kind == "openai":
        assert requests[0].body["response_format"] == {"type": "json_object"}
        assert requests[0].body["max_tokens"] == 1024
    elif kind == "gemini":
        assert requests[0].body["generationConfig"]["responseMimeType"] == "application/json"
    else:
        assert requests[0].body["max_tokens"] == 1024
    usage = agent.usage.to_dict()
    assert usage["requests"] == 2
    assert usage["input_tokens"] == 250
    assert usage["output_tokens"] == 55
    assert usage["retries"] == 0
    assert usage["latency_s"] > 0


def test_scripted_episode_reaches_answer(
    fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm_server.enqueue(
        _reply("W", magnitude="LARGE", memory="walking"),
        _reply("W", magnitude="LARGE", memory="walking more"),
        _reply("W", memory="junction?"),
        _reply("LEFT", memory="turned left"),
        _reply("ANSWER", answer="done"),
    )
    env = StandInEnv(with_map=False)
    task = _task()
    with _provider("openai", fake_llm_server, monkeypatch) as provider:
        agent = LMMAgent(provider, retry=FAST_RETRY)
        agent.reset(task)
        obs = env.reset()
        actions = []
        for _ in range(task.step_limit):
            decision = agent.act(obs)
            actions.append(decision.action)
            obs, done = env.step(decision.command)
            if done:
                break
    assert actions == [Action.W, Action.W, Action.W, Action.LEFT, Action.ANSWER]
    assert env.answer == "done"
    assert env.branch is Action.LEFT
    last = read_wire(fake_llm_server.generation_requests()[-1])
    assert "Feedback from your last action: Took LEFT." in last.texts[0]
    assert (
        "You are at a junction: choose LEFT or RIGHT."
        in read_wire(fake_llm_server.generation_requests()[3]).texts[0]
    )
    assert (
        "Ways offered (red arrows): LEFT, RIGHT."
        in read_wire(fake_llm_server.generation_requests()[3]).texts[0]
    )
    assert len(read_wire(fake_llm_server.generation_requests()[0]).images) == 2  # no map
    assert agent.usage.unoffered_branches == 0


@pytest.mark.parametrize("kind", PROVIDERS)
def test_429_500_and_timeout_are_retried_and_counted(
    kind: str, fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm_server.enqueue(
        Scripted.error(429, retry_after_s=0.02),
        Scripted.error(500),
        Scripted.hang(1.5),
        Scripted.error(503),
        _reply("D", magnitude="SMALL"),
    )
    with _provider(kind, fake_llm_server, monkeypatch, timeout_s=0.5) as provider:
        agent = LMMAgent(provider, retry=FAST_RETRY, seed=3)
        agent.reset(_task())
        decision = agent.act(StandInEnv().reset())
    assert decision.valid
    assert decision.action is Action.D
    usage = agent.usage
    assert (usage.requests, usage.retries, usage.failed_requests) == (5, 4, 4)
    assert len(fake_llm_server.generation_requests()) == 5
    assert usage.input_tokens == 100


@pytest.mark.parametrize("kind", PROVIDERS)
def test_exhausted_retries_raise_provider_unavailable(
    kind: str, fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the server's default answer is HTTP 500
    with _provider(kind, fake_llm_server, monkeypatch) as provider:
        agent = LMMAgent(provider, retry=RetryPolicy(max_retries=2, base_delay_s=0.0))
        agent.reset(_task())
        with pytest.raises(
            ProviderUnavailableError,
            match=r"fake-model failed 3 times in a row; last error: HTTP 500",
        ):
            agent.act(StandInEnv().reset())
    assert agent.usage.requests == 3


def test_malformed_replies_are_counted_and_answered_with_feedback(
    fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm_server.enqueue(
        "Let me think... I will go forward.",
        json.dumps({"thought": "jump!", "action": "JUMP", "memory": "kept memory"}),
        _reply("RIGHT"),
        '```json\n{"Thought": "ok", "ACTION": "answer", "Answer": "x:1 y:2"}\n```',
    )
    env = StandInEnv()
    with _provider("anthropic", fake_llm_server, monkeypatch) as provider:
        agent = LMMAgent(provider, retry=FAST_RETRY)
        agent.reset(_task())
        obs = env.reset()
        decisions = []
        for _ in range(4):
            decision = agent.act(obs)
            decisions.append(decision)
            obs, _ = env.step(decision.command)
    assert [d.valid for d in decisions] == [False, False, True, True]
    assert [d.action for d in decisions] == [Action.S, Action.S, Action.RIGHT, Action.ANSWER]
    assert decisions[-1].answer == "x:1 y:2"
    assert decisions[1].memory == "kept memory"
    usage = agent.usage
    assert (usage.parse_errors, usage.invalid_actions, usage.unoffered_branches) == (1, 1, 1)
    texts = [read_wire(r).texts[0] for r in fake_llm_server.generation_requests()]
    assert "Problem with your last reply: your last reply was not a JSON object" in texts[1]
    assert "unknown action 'JUMP'" in texts[2]
    assert "Problem with your last reply" not in texts[3]
    assert "RIGHT is not offered here." in texts[3]
    assert "(fallback: your reply was unusable)" in texts[2]


def test_act_before_reset_raises(
    fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _provider("openai", fake_llm_server, monkeypatch) as provider:
        agent = LMMAgent(provider)
        with pytest.raises(ResetNeededError, match=r"act\(\) called before reset\(task\)"):
            agent.act(StandInEnv().reset())


def test_reference_images_only_first_step_when_configured(
    fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm_server.enqueue(_reply("A"), _reply("A"))
    env = StandInEnv()
    with _provider("openai", fake_llm_server, monkeypatch) as provider:
        agent = LMMAgent(provider, config=LMMConfig(reference_every_step=False, use_map=False))
        agent.reset(_task())
        obs = env.reset()
        obs, _ = env.step(agent.act(obs).command)
        agent.act(obs)
    counts = [len(read_wire(r).images) for r in fake_llm_server.generation_requests()]
    assert counts == [2, 1]


@pytest.mark.parametrize("kind", PROVIDERS)
def test_keys_never_reach_logs_reprs_or_results(
    kind: str,
    fake_llm_server: FakeLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_llm_server.enqueue(Scripted.error(429), _reply("W", memory="m"))
    with _provider(kind, fake_llm_server, monkeypatch) as provider:
        provider.preflight()
        agent = LMMAgent(provider, retry=FAST_RETRY)
        agent.reset(_task())
        decision = agent.act(StandInEnv().reset())
        shown = [
            repr(provider),
            repr(agent),
            repr(decision),
            json.dumps(agent.usage.to_dict()),
            repr(agent.last_request),
            repr(agent.last_reply),
            caplog.text,
        ]
    assert caplog.text  # the SDKs did log at DEBUG
    for text in shown:
        assert SECRET not in text
    # ... while the key did reach the server
    headers = fake_llm_server.generation_requests()[0].headers
    assert SECRET in {
        headers.get("authorization", "").removeprefix("Bearer "),
        headers.get("x-api-key"),
        headers.get("x-goog-api-key"),
    }
    # a refused key names the variable, not the key
    fake_llm_server.required_key = "another-key"
    with (
        _provider(kind, fake_llm_server, monkeypatch) as provider,
        pytest.raises(ProviderError) as info,
    ):
        provider.preflight()
    assert "refused the API key" in str(info.value)
    assert SECRET not in str(info.value)


@pytest.mark.slow
def test_scripted_episode_on_the_real_simulator(
    fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, built_world: Any
) -> None:
    """The model's replies replay the oracle's shortest path; the LMM agent, through the real
    OpenAI SDK, walks the real simulator of a built city to the goal and answers there."""
    from city360.agents.oracle import OracleAgent
    from city360.agents.prompts import ControllerUnits

    env = built_world.env
    task = built_world.family("MapNavigation")[0]
    oracle = OracleAgent(built_world.city, move_m=env.config.move_m)
    oracle.reset(task)
    plan = list(oracle._plan)
    assert plan
    for k, (action, magnitude) in enumerate(plan):
        fake_llm_server.enqueue(
            _reply(action, magnitude=magnitude, memory=f"step {k} of the route")
        )
    fake_llm_server.enqueue(_reply("ANSWER", answer="here"))
    obs, info = env.reset(options={"task": task})
    with _provider("openai", fake_llm_server, monkeypatch) as provider:
        units = ControllerUnits.from_env_config(env.config)
        agent = LMMAgent(provider, config=LMMConfig(units=units), retry=FAST_RETRY)
        agent.reset(task.agent_view(suite_root=str(built_world.suite_dir)))
        for _ in range(task.step_limit):
            decision = agent.act(obs)
            obs, _, terminated, truncated, info = env.step(decision.command)
            if terminated or truncated:
                break
    assert terminated
    assert info["answer"] == "here"
    goal = task.truth.goal
    distance = (
        (info["pose"]["x_m"] - goal.x_m) ** 2 + (info["pose"]["y_m"] - goal.y_m) ** 2
    ) ** 0.5
    assert distance <= goal.threshold_m
    assert agent.usage.requests == len(plan) + 1
    assert agent.usage.parse_errors == agent.usage.invalid_actions == 0
    requests = fake_llm_server.generation_requests()
    texts = [read_wire(r).texts[0] for r in requests]
    assert "The attached map shows where you start (BLUE marker)" in texts[0]
    assert f"step {len(plan) - 1} of the route" in texts[-1]
    assert "Walked" in texts[1]  # the simulator's feedback reaches the model
    first = read_wire(requests[0])
    assert "[task reference: route map (BLUE start, RED goal)]" in first.texts
    assert len(first.images) == 3  # route map, view, location map


def test_large_views_are_downscaled_to_the_provider_limit(
    fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm_server.enqueue(_reply("W"))
    big = np.random.default_rng(0).integers(0, 256, (1800, 3600, 3), dtype=np.uint8)
    with _provider("anthropic", fake_llm_server, monkeypatch) as provider:
        agent = LMMAgent(provider, retry=FAST_RETRY)
        agent.reset(StandInTask(prompt_text="look", reference_images=[]))
        agent.act({"view": big, "step": 0, "feedback": ""})
    (image,) = read_wire(fake_llm_server.generation_requests()[0]).images
    assert image.shape[:2] == (784, 1568)  # Anthropic's long-edge limit, aspect kept
    assert agent.usage.images_downscaled == 1
    body = fake_llm_server.generation_requests()[0].body
    payload = body["messages"][0]["content"][2]["source"]["data"]
    assert len(payload) <= provider.image_limits.max_request_bytes


def test_views_send_the_current_view_and_labelled_faces(
    fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from city360.agents.lmm import MAX_VIEWS
    from city360.simulator.observation import MULTIVIEW_FACES

    assert len(MULTIVIEW_FACES) == MAX_VIEWS
    fake_llm_server.enqueue(_reply("A"))
    env = StandInEnv()
    with _provider("openai", fake_llm_server, monkeypatch) as provider:
        config = LMMConfig(reference_every_step=False, use_map=False, views=4)
        agent = LMMAgent(provider, config=config)
        agent.reset(StandInTask(prompt_text="Look around.", reference_images=[], step_limit=5))
        obs = env.reset()
        faces = np.zeros((6, 32, 32, 3), np.uint8)
        agent.act({**obs, "views": faces})
    wire = read_wire(fake_llm_server.generation_requests()[0])
    assert [img.shape for img in wire.images] == [(96, 128, 3)] + [(32, 32, 3)] * 3
    labels = [t for t in wire.texts if t.startswith("[view ")]
    assert labels == [
        "[view right (90° to your right, relative to the direction of travel)]",
        "[view back (behind you, relative to the direction of travel)]",
        "[view left (90° to your left, relative to the direction of travel)]",
    ]


def test_views_out_of_range_are_refused() -> None:
    from city360.errors import ConfigError

    with pytest.raises(ConfigError, match=r"`views` must be in 1\.\.6, got 7"):
        LMMConfig(views=7)
