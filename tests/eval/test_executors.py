"""How the local executor sizes its workers, and the environment options a run defaults to."""

from __future__ import annotations

import pytest

from city360.eval import executors
from city360.eval.executors import threads_per_worker, usable_cores
from city360.eval.runner import AgentSpec, default_env_options


@pytest.mark.parametrize(
    ("cores", "workers", "expected"), [(2, 1, 2), (2, 2, 1), (2, 3, 1), (8, 3, 2), (1, 1, 1)]
)
def test_workers_share_the_usable_cores(
    monkeypatch: pytest.MonkeyPatch, cores: int, workers: int, expected: int
) -> None:
    monkeypatch.setattr(executors.os, "sched_getaffinity", lambda _: set(range(cores)))
    assert usable_cores() == cores
    assert threads_per_worker(workers) == expected


@pytest.mark.parametrize(
    ("kind", "prefetch"), [("oracle", False), ("random", False), ("map", False), ("LMM", True)]
)
def test_only_agents_that_wait_on_a_model_prefetch_by_default(kind: str, prefetch: bool) -> None:
    assert default_env_options(AgentSpec(kind=kind)) == {"map": True, "prefetch": prefetch}
    assert default_env_options(AgentSpec(kind=kind), use_map=False)["map"] is False


def test_a_worker_process_closes_its_worker_at_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    class FakeWorker:
        closed = 0

        def close(self) -> None:
            self.closed += 1

    fake = FakeWorker()
    monkeypatch.setattr(executors, "_WORKER", fake)
    try:
        executors._close_process_worker()
        executors._close_process_worker()  # atexit may run it after an explicit call
    finally:
        gc.unfreeze()
    assert fake.closed == 1
    assert executors._WORKER is None
