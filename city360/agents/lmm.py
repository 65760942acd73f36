"""The LMM agent: ReAct with a reflection memory, one stateless request per step.

Each step sends the system prompt (controller, red branch arrows, reply format, memory rules) and
one user turn: the task prompt, the model's own memory from the previous step, a window of
recent steps with the simulator's feedback, what went wrong with the last reply (if anything),
the offered branches, then the images: the task's reference images, the current view and the
location map (when the observation has one and ``use_map`` is on). The reply is a JSON object
``{thought, action, magnitude, memory, answer}``.

A reply that is not JSON, or names no valid action, does not crash the episode: it is counted
(``parse_errors`` / ``invalid_actions``), the agent sends a harmless fallback action
(``S``, look ahead) and tells the model what was wrong in the next prompt. Provider failures
are retried (see :mod:`city360.agents.retry`); when retries run out
:class:`~city360.errors.ProviderUnavailableError` reaches the caller, which records an
infrastructure failure rather than an agent failure.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from city360.agents._task import task_prompt, task_reference_images, task_step_limit
from city360.agents.base import AgentDecision, Observation, offered_branches
from city360.agents.images import encode_images
from city360.agents.memory import ReflectionMemory, StepRecord
from city360.agents.parsing import REPLY_READERS, ReplyStatus
from city360.agents.prompts import (
    ControllerUnits,
    prompt_hash,
    render_step_prompt,
    render_system_prompt,
)
from city360.agents.providers.base import ChatReply, ChatRequest, Provider
from city360.agents.retry import RetryPolicy, call_with_retries
from city360.agents.usage import EpisodeUsage
from city360.errors import ConfigError, ResetNeededError
from city360.simulator.actions import BRANCH_ACTIONS, Action, ActionCommand
from city360.types import Image

__all__ = ["MAX_VIEWS", "LMMAgent", "LMMConfig", "face_caption"]

VIEW_CAPTION = "current view (red arrows on the ground mark the ways you can take)"
MAP_CAPTION = "location map (red arrow = you, pointing where you face)"
MAX_VIEWS = 6
"""``LMMConfig.views`` at most: the current view and the five other faces of the multi-view
(``len(city360.simulator.observation.MULTIVIEW_FACES)``, not imported here: it pulls OpenCV)."""


def face_caption(name: str, yaw_deg: float, pitch_deg: float) -> str:
    """How a multi-view face is labelled for the model (angles from the direction of travel)."""
    if pitch_deg:
        return f"view {name} (looking straight {name}, {abs(pitch_deg):g}°)"
    side = "right" if yaw_deg > 0 else "left"
    where = "behind you" if abs(yaw_deg) == 180 else f"{abs(yaw_deg):g}° to your {side}"
    return f"view {name} ({where}, relative to the direction of travel)"


@dataclass(frozen=True, slots=True)
class LMMConfig:
    """How the LMM agent talks to its model.

    ``history_window``: recent steps repeated in each prompt; ``memory_max_chars``: cap on the
    reflection memory; ``max_output_tokens``: reply budget per step; ``temperature``: None
    leaves the provider's default (reasoning models reject other values);
    ``use_map``: send the location map when the observation has one; ``reference_every_step``:
    send the task's reference images every step (else only on the first);
    ``fallback_action``: what to do after an unusable reply; ``units``: the controller's step
    sizes as configured in the simulator, quoted in the system prompt; ``views``: images of
    the surroundings sent each step (1: the current view; N > 1 adds the first N - 1 faces
    after ``front`` of the simulator's multi-view, right, back, left, up, down, each labelled;
    the env needs ``multiview=True``: ``city360 eval --views N``).
    """

    history_window: int = 8
    memory_max_chars: int = 2000
    max_output_tokens: int = 1024
    temperature: float | None = None
    use_map: bool = True
    reference_every_step: bool = True
    json_mode: bool = True
    fallback_action: Action = Action.S
    units: ControllerUnits = field(default_factory=ControllerUnits)
    views: int = 1
    reply_reader: str = "tolerant"
    """How a reply is read: a key of :data:`city360.agents.parsing.REPLY_READERS`
    (``"reference"`` under ``--protocol reference``: only a bare or ```` ```json ```` -fenced
    JSON object with an exact action name is usable)."""

    def __post_init__(self) -> None:
        if not 1 <= self.views <= MAX_VIEWS:
            msg = f"`views` must be in 1..{MAX_VIEWS}, got {self.views}"
            raise ConfigError(msg)
        if self.max_output_tokens < 16:
            msg = f"`max_output_tokens` must be >= 16, got {self.max_output_tokens}"
            raise ConfigError(msg)
        if self.reply_reader not in REPLY_READERS:
            msg = (
                f"unknown reply reader {self.reply_reader!r}; expected one of "
                f"{', '.join(REPLY_READERS)}"
            )
            raise ConfigError(msg)
        if self.fallback_action in (Action.ANSWER, *BRANCH_ACTIONS, Action.W):
            msg = (
                f"`fallback_action` must not move or end the episode, got "
                f"{self.fallback_action.value}; use S, A, D, Q or E"
            )
            raise ConfigError(msg)


class LMMAgent:
    """A ReAct agent backed by a :class:`~city360.agents.providers.base.Provider`."""

    privileged: ClassVar[bool] = False

    def __init__(
        self,
        provider: Provider,
        *,
        config: LMMConfig | None = None,
        retry: RetryPolicy | None = None,
        seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.provider = provider
        self.config = config or LMMConfig()
        self.retry = retry or RetryPolicy()
        self.name = f"lmm:{provider.name}:{provider.model}"
        self.usage = EpisodeUsage()
        self.memory = ReflectionMemory(
            window=self.config.history_window, max_chars=self.config.memory_max_chars
        )
        self._seed = seed
        self._rng = random.Random(seed)
        self._sleep = sleep
        self._task: Any = None
        self._task_text = ""
        self._references: list[tuple[str, Image]] = []
        self._step_limit: int | None = None
        self._problem = ""
        self._steps_taken = 0
        self._active = False
        self.last_request: ChatRequest | None = None
        self.last_reply: ChatReply | None = None

    def __repr__(self) -> str:
        return f"LMMAgent(provider={self.provider!r}, steps={self._steps_taken})"

    @property
    def prompt_hash(self) -> str:
        """Fingerprint of the prompts used (see :func:`city360.agents.prompts.prompt_hash`)."""
        return prompt_hash(self.config.units, reply_reader=self.config.reply_reader)

    def reset(self, task: Any) -> None:
        """Start an episode: read the task's prompt and reference images, clear memory and
        counters."""
        self._task = task
        self._task_text = task_prompt(task)
        self._references = task_reference_images(task)
        self._step_limit = task_step_limit(task)
        self.memory.clear()
        self.usage.reset()
        self._problem = ""
        self._steps_taken = 0
        self._rng = random.Random(self._seed)
        self._active = True

    def build_request(self, observation: Observation) -> ChatRequest:
        """The request this observation turns into (images encoded within the provider's
        limits); counts downscaled images."""
        captions_images: list[tuple[str, Image]] = []
        if self._references and (self.config.reference_every_step or self._steps_taken == 0):
            captions_images += [(f"task reference: {c}", img) for c, img in self._references]
        view = observation.get("view")
        if view is not None:
            captions_images.append((VIEW_CAPTION, view))
        faces = observation.get("views")
        if self.config.views > 1 and faces is not None:
            from city360.simulator.observation import MULTIVIEW_FACES

            for k, (name, yaw, pitch) in enumerate(MULTIVIEW_FACES[1 : self.config.views], 1):
                captions_images.append((face_caption(name, yaw, pitch), faces[k]))
        map_image = observation.get("map")
        if self.config.use_map and map_image is not None:
            captions_images.append((MAP_CAPTION, map_image))
        encoded, downscaled = encode_images(captions_images, self.provider.image_limits)
        self.usage.images_downscaled += downscaled
        step = int(observation.get("step", self._steps_taken))
        text = render_step_prompt(
            task=self._task_text,
            memory=self.memory.text,
            history=self.memory.recent_steps,
            step=step,
            step_limit=self._step_limit,
            feedback=str(observation.get("feedback", "") or ""),
            branches=offered_branches(observation),
            problem=self._problem,
            image_captions=[e.caption for e in encoded],
        )
        with_map = self.config.use_map and map_image is not None
        return ChatRequest(
            system=render_system_prompt(
                self.config.units, with_map=with_map, reply_reader=self.config.reply_reader
            ),
            text=text,
            images=tuple(encoded),
            max_output_tokens=self.config.max_output_tokens,
            temperature=self.config.temperature,
            json_mode=self.config.json_mode,
        )

    def act(self, observation: Observation) -> AgentDecision:
        """Ask the model for the next step; never raises on a malformed reply.

        Raises :class:`~city360.errors.ProviderUnavailableError` when the provider keeps
        failing after every retry, :class:`~city360.errors.ProviderError` on a permanent
        provider error, :class:`~city360.errors.ResetNeededError` before ``reset``.
        """
        if not self._active:
            msg = "LMMAgent.act() called before reset(task); call reset(task) first"
            raise ResetNeededError(msg)
        feedback = str(observation.get("feedback", "") or "")
        self.memory.observe_feedback(feedback)
        request = self.build_request(observation)
        self.last_request = request
        reply = call_with_retries(
            lambda: self.provider.complete(request),
            policy=self.retry,
            usage=self.usage,
            rng=self._rng,
            what=self.provider.label,
            sleep=self._sleep,
        )
        self.last_reply = reply
        self.usage.input_tokens += reply.input_tokens
        self.usage.output_tokens += reply.output_tokens
        self.usage.last_finish_reason = reply.finish_reason
        self.usage.last_response_model = reply.model
        parsed = REPLY_READERS[self.config.reply_reader](reply.text)
        step = int(observation.get("step", self._steps_taken))
        self._steps_taken += 1
        if parsed.status is ReplyStatus.OK and parsed.command is not None:
            command = parsed.command
            self._problem = ""
            valid = True
            if command.action in BRANCH_ACTIONS and command.action not in offered_branches(
                observation
            ):
                self.usage.unoffered_branches += 1
        else:
            if parsed.status is ReplyStatus.PARSE_ERROR:
                self.usage.parse_errors += 1
            else:
                self.usage.invalid_actions += 1
            self._problem = parsed.problem
            command = ActionCommand(self.config.fallback_action)
            valid = False
        self.memory.rewrite(parsed.memory)
        self.memory.record(
            StepRecord(step=step, command=command, thought=parsed.thought, valid=valid)
        )
        return AgentDecision(
            command=command,
            thought=parsed.thought,
            memory=self.memory.text,
            valid=valid,
            answer_type=parsed.answer_type if valid else "string",
        )

    def close(self) -> None:
        """Close the provider's client."""
        self.provider.close()
