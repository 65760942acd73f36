"""``vectorization_mode="sharded"``: N agents over K worker processes, each stepping its share
of the agents as one :class:`~city360.simulator.vector_env.CityVectorEnv` (one world, one
frame cache, one renderer per process), for machines with more than one core.

Where "async" runs one process per agent (N worlds, N caches, N pipes per step), a shard
holds ``N / K`` agents (the first ``N % K`` shards one more), so K processes cost K cities'
memory and one round trip each per step. Sub-env ``i`` is the same sub-env whichever shard
holds it: ``reset(seed=s)`` seeds it with ``s + i``, so the trajectories are bit-identical to
the sync mode's (tested). Observations, rewards, flags and ``infos`` come back batched in
sub-env order with Gymnasium's conventions (``infos`` dicts of arrays with ``_key`` masks;
next-step autoreset inside each shard).

Workers are ``spawn``ed (no inherited GL context or decoder threads), pin their OpenCV and
FFmpeg threads to one (``decode_threads=1`` unless given) so that K shards do not
oversubscribe K cores, and leave when their parent dies. A worker's error comes back as a
:class:`~city360.errors.WorkerError` naming the shard and its sub-envs.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing as mp
import os
import traceback
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from city360.errors import ClosedResourceError, ConfigError, WorkerError

__all__ = ["ShardedVectorEnv", "shard_sizes"]

_PARENT_POLL_S = 1.0


def shard_sizes(num_envs: int, num_workers: int) -> list[int]:
    """How many sub-envs each of ``num_workers`` shards holds: as even as possible, the first
    ones one more; never an empty shard (``num_workers`` is capped at ``num_envs``)."""
    if num_workers < 1:
        msg = f"`num_workers` must be >= 1, got {num_workers}"
        raise ConfigError(msg)
    workers = min(num_workers, num_envs)
    base, extra = divmod(num_envs, workers)
    return [base + (1 if k < extra else 0) for k in range(workers)]


def _worker(
    conn: Connection, parent_pid: int, city_dir: str, num_envs: int, options: dict[str, Any]
) -> None:
    """One shard: a CityVectorEnv answering reset/step/close over ``conn``."""
    import cv2

    from city360.simulator.vector_env import CityVectorEnv

    cv2.setNumThreads(1)
    env = None
    try:
        env = CityVectorEnv(city_dir, num_envs, **options)
        conn.send(("ok", (env.single_observation_space, env.single_action_space)))
        while True:
            while not conn.poll(_PARENT_POLL_S):
                if os.getppid() != parent_pid:  # orphaned: the parent died without close()
                    return
            command, payload = conn.recv()
            if command == "reset":
                seeds, reset_options = payload
                conn.send(("ok", env.reset(seed=seeds, options=reset_options)))
            elif command == "step":
                conn.send(("ok", env.step(payload)))
            elif command == "close":
                conn.send(("ok", None))
                return
            else:
                conn.send(("error", f"unknown command {command!r}"))
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return
    except BaseException:
        with contextlib.suppress(BrokenPipeError, OSError):
            conn.send(("error", traceback.format_exc()))
    finally:
        if env is not None:
            env.close()
        conn.close()


def _slice(space: spaces.Space[Any], batched: Any, start: int, stop: int) -> Any:
    """Sub-envs ``start:stop`` of a batched value of ``space``."""
    if isinstance(space, spaces.Dict):
        return {key: _slice(sub, batched[key], start, stop) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(
            _slice(sub, part, start, stop) for sub, part in zip(space.spaces, batched, strict=True)
        )
    return batched[start:stop]


def _join(space: spaces.Space[Any], parts: Sequence[Any]) -> Any:
    """Batched values of ``space`` from consecutive shards, joined in sub-env order."""
    if isinstance(space, spaces.Dict):
        return {key: _join(sub, [p[key] for p in parts]) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(_join(sub, [p[k] for p in parts]) for k, sub in enumerate(space.spaces))
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts, axis=0)
    return tuple(item for part in parts for item in part)


def _join_infos(parts: Sequence[dict[str, Any]], sizes: Sequence[int]) -> dict[str, Any]:
    """Gymnasium vector ``infos`` (dicts of arrays with ``_key`` masks) from consecutive
    shards: a key a shard lacks is zero (None for objects) there with its mask False."""
    keys: list[str] = []
    for part in parts:
        keys += [k for k in part if not k.startswith("_") and k not in keys]
    joined: dict[str, Any] = {}
    for key in keys:
        present = [part[key] for part in parts if key in part]
        if isinstance(present[0], dict):
            nested = [part.get(key, {}) for part in parts]
            joined[key] = _join_infos(nested, sizes)
            joined[f"_{key}"] = np.concatenate(
                [
                    part.get(f"_{key}", np.zeros(n, np.bool_))
                    for part, n in zip(parts, sizes, strict=True)
                ]
            )
            continue
        template = np.asarray(present[0])
        values, masks = [], []
        for part, n in zip(parts, sizes, strict=True):
            if key in part:
                values.append(np.asarray(part[key]))
                masks.append(np.asarray(part[f"_{key}"], np.bool_))
            else:
                filler = np.empty(n, object) if template.dtype == object else None
                values.append(
                    filler
                    if filler is not None
                    else np.zeros((n, *template.shape[1:]), template.dtype)
                )
                masks.append(np.zeros(n, np.bool_))
        if any(v.dtype == object for v in values):
            values = [v.astype(object) for v in values]
        joined[key] = np.concatenate(values, axis=0)
        joined[f"_{key}"] = np.concatenate(masks)
    return joined


class ShardedVectorEnv(VectorEnv[dict[str, Any], dict[str, Any], Any]):
    """``num_envs`` sub-envs over ``num_workers`` processes (see the module docstring); the
    keywords are those of :class:`~city360.simulator.vector_env.CityVectorEnv`. A context
    manager; ``close()`` is safe twice."""

    metadata = {  # noqa: RUF012 - gymnasium API
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        city_dir: str | os.PathLike[str],
        num_envs: int,
        *,
        num_workers: int = 2,
        **options: Any,
    ) -> None:
        from city360.simulator.config import EnvConfig
        from city360.simulator.gym_env import reward_config
        from city360.simulator.learning_obs import obs_options
        from city360.simulator.vector_env import _check_num_envs

        self.num_envs = _check_num_envs(num_envs)
        self.sizes = shard_sizes(self.num_envs, num_workers)
        options = dict(options)
        options.setdefault("decode_threads", 1)
        checked = dict(options)  # fail here, not in K child processes
        reward_config(checked.pop("reward", "sparse"), checked)
        checked.pop("tasks", None)
        obs_options(checked)
        checked.setdefault("prefetch", False)
        EnvConfig.from_kwargs(**checked)
        self.city_dir = str(city_dir)
        self._closed = False
        self._last_obs: list[Any] | None = None
        """Each shard's last batched observation (a partial reset re-sends the others')."""
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        context = mp.get_context("spawn")
        try:
            for n in self.sizes:
                parent, child = context.Pipe()
                proc = context.Process(
                    target=_worker,
                    args=(child, os.getpid(), self.city_dir, n, options),
                    daemon=True,
                    name=f"city360-shard-{len(self._procs)}",
                )
                proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)
            spaces_of_shards = [self._receive(k) for k in range(len(self.sizes))]
        except BaseException:
            self.close()
            raise
        self.single_observation_space, self.single_action_space = spaces_of_shards[0]
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def __repr__(self) -> str:
        return f"ShardedVectorEnv({self.city_dir!r}, num_envs={self.num_envs}, shards={self.sizes})"

    def __enter__(self) -> ShardedVectorEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def autoreset_mode(self) -> AutoresetMode:
        return AutoresetMode.NEXT_STEP

    def _bounds(self) -> list[tuple[int, int]]:
        starts = np.cumsum([0, *self.sizes])
        return [(int(a), int(b)) for a, b in itertools.pairwise(starts)]

    def _receive(self, k: int) -> Any:
        start, stop = self._bounds()[k]
        try:
            status, payload = self._conns[k].recv()
        except (EOFError, ConnectionResetError) as exc:
            self._procs[k].join(timeout=2.0)
            code = self._procs[k].exitcode
            msg = f"shard {k} (sub-envs {start}..{stop - 1}) died (exit code {code})"
            raise WorkerError(msg) from exc
        if status == "error":
            msg = f"shard {k} (sub-envs {start}..{stop - 1}) failed:\n{payload}"
            raise WorkerError(msg)
        return payload

    def _check_open(self) -> None:
        if self._closed:
            msg = "ShardedVectorEnv is closed"
            raise ClosedResourceError(msg)

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Reset every sub-env; an int ``seed`` seeds sub-env i with ``seed + i``, a sequence
        gives each its own; ``options["reset_mask"]`` resets only some (as
        :meth:`CityVectorEnv.reset`: shards without a True in their part are not asked)."""
        self._check_open()
        mask = None
        if options is not None and "reset_mask" in options:
            options = dict(options)
            mask = options.pop("reset_mask")
            if (
                not isinstance(mask, np.ndarray)
                or mask.dtype != np.bool_
                or mask.shape != (self.num_envs,)
                or not mask.any()
            ):
                shown = mask if not isinstance(mask, np.ndarray) else f"{mask.dtype}{mask.shape}"
                msg = (
                    f"`options['reset_mask']` must be a numpy bool array of shape "
                    f"({self.num_envs},) with at least one True, got {shown!r}"
                )
                raise ConfigError(msg)
            if self._last_obs is None:
                msg = "`options['reset_mask']` needs a full reset() first"
                raise ConfigError(msg)
        from city360.simulator.vector_env import sub_env_seeds

        seeds = sub_env_seeds(seed, self.num_envs)
        if seed is not None:
            self._np_random, self._np_random_seed = np.random.default_rng(seeds[0]), seeds[0]
        asked = []
        for k, (conn, (start, stop)) in enumerate(zip(self._conns, self._bounds(), strict=True)):
            part = None if mask is None else mask[start:stop]
            if part is not None and not part.any():
                continue
            shard_options = options if part is None else {**(options or {}), "reset_mask": part}
            conn.send(("reset", (seeds[start:stop], shard_options)))
            asked.append(k)
        replies = {k: self._receive(k) for k in asked}
        last = list(self._last_obs) if self._last_obs is not None else [None] * len(self.sizes)
        infos_parts: list[dict[str, Any]] = []
        for k in range(len(self.sizes)):
            if k in replies:
                last[k], info = replies[k]
            else:
                info = {}
            infos_parts.append(info)
        self._last_obs = last
        obs = _join(self.single_observation_space, last)
        return obs, _join_infos(infos_parts, self.sizes)

    def step(
        self, actions: Any
    ) -> tuple[
        dict[str, Any],
        npt.NDArray[np.float64],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        dict[str, Any],
    ]:
        """Step every sub-env with its action (batched as ``action_space``)."""
        self._check_open()
        for conn, (start, stop) in zip(self._conns, self._bounds(), strict=True):
            conn.send(("step", _slice(self.single_action_space, actions, start, stop)))
        results = [self._receive(k) for k in range(len(self.sizes))]
        self._last_obs = [r[0] for r in results]
        obs = _join(self.single_observation_space, self._last_obs)
        rewards = np.concatenate([r[1] for r in results]).astype(np.float64)
        terminated = np.concatenate([r[2] for r in results]).astype(np.bool_)
        truncated = np.concatenate([r[3] for r in results]).astype(np.bool_)
        return obs, rewards, terminated, truncated, _join_infos([r[4] for r in results], self.sizes)

    def close_extras(self, **kwargs: Any) -> None:
        """Ask every shard to close, then join (and at worst terminate) its process."""
        if self._closed:
            return
        self._closed = True
        for conn in self._conns:
            with contextlib.suppress(BrokenPipeError, OSError):
                conn.send(("close", None))
        for conn in self._conns:
            try:
                if conn.poll(5.0):
                    conn.recv()
            except (EOFError, OSError):
                pass
            conn.close()
        for proc in self._procs:
            proc.join(timeout=5.0)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=2.0)
        self._conns, self._procs = [], []
