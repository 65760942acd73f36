"""A stand-in task for scoring tests: just what ``score_answer`` and the judge read."""

from __future__ import annotations

from types import SimpleNamespace


def scoring_task(
    metric: str, *, question: str = "What is left of it?", **truth: object
) -> SimpleNamespace:
    """A task scored by ``metric`` with ``truth`` (``threshold_m`` goes to the metric) and a
    RelationalSpatial-style ``question``."""
    threshold = truth.pop("threshold_m", None)
    return SimpleNamespace(
        metric=SimpleNamespace(name=metric, threshold_m=threshold),
        truth=SimpleNamespace(**truth),
        told=SimpleNamespace(question=question),
        expected_answer=lambda: "",
        render_prompt=lambda: "",
    )
