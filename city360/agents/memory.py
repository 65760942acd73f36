"""What the LMM agent carries from step to step: its reflection memory and recent steps.

The reflection memory is free text the model rewrites every step (it is asked to keep what it
has learned, where it believes it is and its plan) and receives back in the next prompt; it is
capped in characters so a runaway model cannot grow the prompt without bound. The step window
keeps the last ``window`` steps (action, magnitude, the simulator's feedback, a short thought).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from city360.errors import ConfigError
from city360.simulator.actions import ActionCommand

__all__ = ["ReflectionMemory", "StepRecord"]

_THOUGHT_CHARS = 200


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One past step as the model sees it again."""

    step: int
    command: ActionCommand
    thought: str
    feedback: str = ""
    valid: bool = True

    def describe(self) -> str:
        parts = [f"step {self.step}: {self.command.action.value}"]
        if self.command.magnitude is not None:
            parts.append(self.command.magnitude.value)
        if self.command.answer:
            parts.append(f"answer={self.command.answer!r}")
        line = " ".join(parts)
        if not self.valid:
            line += " (fallback: your reply was unusable)"
        thought = self.thought.replace("\n", " ")
        if len(thought) > _THOUGHT_CHARS:
            thought = thought[: _THOUGHT_CHARS - 1] + "…"
        if thought:
            line += f" | thought: {thought}"
        if self.feedback:
            line += f" | result: {self.feedback}"
        return line


class ReflectionMemory:
    """The model's rewritten memory plus a window of recent steps."""

    def __init__(self, *, window: int = 8, max_chars: int = 2000) -> None:
        if window < 0:
            msg = f"`window` must be >= 0, got {window}"
            raise ConfigError(msg)
        if max_chars < 1:
            msg = f"`max_chars` must be >= 1, got {max_chars}"
            raise ConfigError(msg)
        self.window = window
        self.max_chars = max_chars
        self.text = ""
        self._steps: deque[StepRecord] = deque(maxlen=window or None)
        self._pending: StepRecord | None = None

    def __repr__(self) -> str:
        return (
            f"ReflectionMemory(window={self.window}, chars={len(self.text)}, "
            f"steps={len(self._steps)})"
        )

    def clear(self) -> None:
        self.text = ""
        self._steps.clear()
        self._pending = None

    def rewrite(self, text: str | None) -> None:
        """Replace the memory with the model's new version (None keeps the old one)."""
        if text is None:
            return
        self.text = text[: self.max_chars]

    def record(self, record: StepRecord) -> None:
        """Remember a decision; its feedback arrives with the next observation."""
        self._settle("")
        self._pending = record

    def observe_feedback(self, feedback: str) -> None:
        """Attach the simulator's feedback to the pending step and move it into the window."""
        self._settle(feedback)

    def _settle(self, feedback: str) -> None:
        if self._pending is None:
            return
        pending = self._pending
        self._pending = None
        if self.window:
            self._steps.append(
                StepRecord(
                    step=pending.step,
                    command=pending.command,
                    thought=pending.thought,
                    feedback=feedback,
                    valid=pending.valid,
                )
            )

    @property
    def recent_steps(self) -> tuple[StepRecord, ...]:
        return tuple(self._steps)
