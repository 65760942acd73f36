"""Per-episode counters of what talking to a model cost and how often it went wrong."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["EpisodeUsage"]


@dataclass(slots=True)
class EpisodeUsage:
    """Counters for one episode; the LMM agent resets them in ``reset`` and updates them per call.

    ``requests`` counts HTTP attempts that were made (including the ones retried),
    ``retries`` the attempts repeated after a transient failure, ``failed_requests`` the
    attempts that failed. ``latency_s`` sums the wall-clock seconds of every attempt, successful
    or not, in seconds. Tokens are what the provider reported (0 when it reports nothing).
    ``parse_errors`` counts replies that held no usable JSON object, ``invalid_actions`` replies
    whose JSON named no valid action, ``unoffered_branches`` branch actions the observation did
    not offer (sent on anyway; the simulator treats them as a no-op with feedback).
    """

    requests: int = 0
    retries: int = 0
    failed_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    parse_errors: int = 0
    invalid_actions: int = 0
    unoffered_branches: int = 0
    images_downscaled: int = 0
    last_finish_reason: str = ""
    """Why the provider ended its last reply (``stop``, ``length``, ``end_turn``, ...)."""
    last_response_model: str = ""
    """The model the provider says answered last (may name a dated version of the one asked)."""

    def reset(self) -> None:
        """Zero every counter."""
        for name in self.__dataclass_fields__:
            setattr(self, name, type(getattr(self, name))())

    def to_dict(self) -> dict[str, int | float | str]:
        """Plain dict for results files (no payloads, no keys)."""
        return asdict(self)
