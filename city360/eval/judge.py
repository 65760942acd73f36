"""The LLM judge of free-text answers (RelationalSpatial), as the reference benchmark scores them.

The reference (``python/src/cityarena/tasks/validators.py``, ``validate_with_llm``) asks a
model whether a user answer and an expected answer name the same place ("different names of
the same landmark count as correct"), with a 64-token reply budget, and reads the verdict
``is_correct: True/False`` from the reply. :class:`LLMJudge` asks the same question, in our own
words, through any provider the agents use (:mod:`city360.agents.providers`), with the same
budget and verdict form. A reply without a verdict counts as "not the same" (the reference
raises, which its runner records as an incorrect answer).

What the judge is told is the protocol's (:data:`JUDGE_PROMPTS`, ``Protocol.judge_prompt``):
``"reference"`` tells it only what the reference's instruction does (user and expected answer,
different names of one place count); ``"city360"`` (the default protocol) also gives it the
question and says that an answer denying the expected name or naming several candidates is
wrong, because a judge told only "the same place?" passes "Not Agebaka" and "Agebaka or Kin no
Kura" often enough to pay hedging.

A judge is built once per worker (:func:`make_judge`) and named in every row it scored
(results' ``judge`` column, ``evaluation_method = llm-judge:<provider>:<model>``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from city360.agents.providers.base import ChatRequest
from city360.agents.retry import RetryPolicy, call_with_retries
from city360.agents.usage import EpisodeUsage
from city360.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from city360.agents.providers.base import Provider
    from city360.eval.specs import JudgeSpec

__all__ = [
    "JUDGE_MAX_OUTPUT_TOKENS",
    "JUDGE_PROMPTS",
    "JUDGE_SYSTEM_PROMPT",
    "REFERENCE_JUDGE_SYSTEM_PROMPT",
    "JudgePrompt",
    "LLMJudge",
    "get_judge_prompt",
    "make_judge",
]

JUDGE_MAX_OUTPUT_TOKENS = 64
"""The reply budget of one verdict (tokens), the reference's."""

JUDGE_SYSTEM_PROMPT = (
    "You check answers. You get a user's answer and the expected answer and decide whether the "
    "user's answer is correct. The wording need not match: if both name the same place (for "
    "example two names of the same landmark or shop), it is correct. An answer that denies the "
    "expected name, or names several candidates, is not correct."
)
"""What the judge is told (the reference's instruction, in our words, plus the rule that a
negation or a hedge is wrong)."""

REFERENCE_JUDGE_SYSTEM_PROMPT = (
    "You check answers. You get a user's answer and the expected answer and decide whether the "
    "user's answer is correct. The wording need not match word for word: if different names "
    "refer to the same landmark, it is correct."
)
"""The reference's instruction (``LLM_VALIDATION_PROMPT`` of its validators), in our words,
with nothing added: the judge of ``--protocol reference``."""


@dataclass(frozen=True, slots=True)
class JudgePrompt:
    """What the judge is told: its instruction, and whether the task's question goes with the
    two answers (the reference sends only the answers)."""

    name: str
    system: str
    with_question: bool


JUDGE_PROMPTS: Mapping[str, JudgePrompt] = {
    "city360": JudgePrompt("city360", JUDGE_SYSTEM_PROMPT, with_question=True),
    "reference": JudgePrompt("reference", REFERENCE_JUDGE_SYSTEM_PROMPT, with_question=False),
}
"""Judge prompts by name (``Protocol.judge_prompt``)."""


def get_judge_prompt(name: str) -> JudgePrompt:
    """The judge prompt registered as ``name``; unknown names raise :class:`ConfigError`."""
    try:
        return JUDGE_PROMPTS[str(name)]
    except KeyError:
        known = list(JUDGE_PROMPTS)
        msg = (
            f"unknown judge prompt {name!r}; expected one of {', '.join(known)}."
            f"{did_you_mean(str(name), known)}"
        )
        raise ConfigError(msg) from None


_VERDICT = re.compile(r"\bis_correct\s*:\s*(true|false)\b", re.IGNORECASE)


class LLMJudge:
    """Judges ``(question, answer, expected)`` with one model call; see the module docstring."""

    def __init__(
        self,
        provider: Provider,
        *,
        label: str,
        retry: RetryPolicy | None = None,
        prompt: str = "city360",
    ) -> None:
        self.provider = provider
        self.prompt = get_judge_prompt(prompt)
        self.name = f"llm-judge:{label}"
        self.label = label
        self.provider_name = str(getattr(provider, "name", ""))
        self.model = str(getattr(provider, "model", ""))
        self.retry = retry or RetryPolicy(max_retries=3)
        self.usage = EpisodeUsage()
        self.last_reply = ""
        self._rng = random.Random(0)

    def __repr__(self) -> str:
        return f"LLMJudge({self.label!r})"

    def __call__(self, question: str, answer: str, expected: str) -> bool:
        asked = question if self.prompt.with_question else ""
        text = (
            (f"Question: {asked}\n" if asked else "")
            + f"User answer: {answer}\nExpected answer: {expected}\n"
            + "Reply in exactly this form: is_correct: True/False"
        )
        request = ChatRequest(
            system=self.prompt.system,
            text=text,
            max_output_tokens=JUDGE_MAX_OUTPUT_TOKENS,
            temperature=None,
            json_mode=False,
        )
        reply = call_with_retries(
            lambda: self.provider.complete(request),
            policy=self.retry,
            usage=self.usage,
            rng=self._rng,
            what=f"judge {self.label}",
        )
        self.last_reply = reply.text or ""
        match = _VERDICT.search(self.last_reply)
        return match is not None and match.group(1).lower() == "true"

    def close(self) -> None:
        self.provider.close()


def make_judge(spec: JudgeSpec, *, preflight: bool = False, prompt: str = "city360") -> LLMJudge:
    """The judge of ``spec`` (provider, model, endpoint; keys from the environment), told
    what the judge prompt named ``prompt`` says (the run's protocol's)."""
    from city360.agents.providers.registry import make_provider

    provider = make_provider(
        spec.provider, spec.model, base_url=spec.base_url, json_mode=False, preflight=preflight
    )
    return LLMJudge(provider, label=spec.label, prompt=prompt)
