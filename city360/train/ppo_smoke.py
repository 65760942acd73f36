"""PPO smoke test: a small policy learns Easy Map navigation of a city and beats random.

Run (needs ``pip install 'city360[train]'``: torch, stable-baselines3, sb3-contrib)::

    python -m city360.train.ppo_smoke --city demo --steps 150000 --out runs/ppo-smoke

What it does, seeded by ``--seed`` from start to end:

1. Tasks. Held-out evaluation tasks are the city suite's Easy MapNavigation tasks
   (``<city>/tasks/main``, or ``--eval-suite``) plus ``--holdout`` of the generated ones.
   Training tasks are the Easy MapNavigation tasks of ``--train-suite`` (default: generated
   once into ``OUT/train-suite`` with the task generators, as ``city360 tasks generate CITY
   --out OUT/train-suite --family MapNavigation --per-family 300 --seed 1`` would), less the
   held-out ones and any that start and end where a held-out task does
   (:mod:`city360.train.task_split`).
2. Training. ``city360.make_vec`` in sync mode, ``--envs`` agents, 84x84 grayscale CHW views,
   no text, the ``goal`` observation (the told goal relative to the agent), ``reward="shaped"``
   (walking progress) with a step cost, one training task drawn per reset. sb3-contrib's
   ``MaskablePPO`` (stable-baselines3's PPO with the env's action mask applied to the logits)
   trains an MLP policy (``--policy mlp``: goal, offered branches, legal actions) or a CNN+MLP
   one (``--policy cnn``: the view as well) over :data:`~city360.train.nav_actions.NAV_ACTIONS`.
3. Evaluation every ``--eval-every`` steps on the held-out tasks (PPO: most likely action;
   random: a uniformly random legal action, ``--random-repeats`` plays of each task, measured
   once before training), by :func:`city360.train.evaluate.evaluate`.
4. Output in ``OUT``: ``ppo_smoke.csv`` (:mod:`city360.train.curve`), ``ppo_smoke.png``,
   ``summary.json`` (configuration, steps/s, final figures) and ``model.zip``; the final
   comparison is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from city360.errors import ConfigError, DependencyMissingError

__all__ = ["SmokeConfig", "main", "parse_args", "run"]

POLICIES = ("mlp", "cnn")
VIEW_PX = 84


@dataclass(frozen=True, slots=True)
class SmokeConfig:
    """One smoke run's settings (the command's options; defaults stated once, here)."""

    city: str = "demo"
    """A city directory or a packaged city's name."""
    out: Path = Path("runs/ppo-smoke")
    steps: int = 150_000
    """Env steps to train (all sub-envs together)."""
    envs: int = 8
    """Sub-envs of the vector env."""
    eval_every: int = 10_000
    """Env steps between evaluations."""
    seed: int = 0
    policy: str = "mlp"
    train_suite: Path | None = None
    """Suite folder with MapNavigation tasks; None: generate into ``out/train-suite``."""
    eval_suite: Path | None = None
    """Suite folder of the held-out tasks; None: ``<city>/tasks/main``."""
    holdout: int = 16
    """Generated Easy tasks moved from training to evaluation."""
    random_repeats: int = 10
    """Plays of each held-out task by the random policy."""
    step_cost: float = 0.01
    progress_per_m: float = 0.05
    answer_scale: float = 5.0
    torch_threads: int = 1
    """Threads torch may use (the machine is shared; 1 keeps the env and learner apart)."""

    def __post_init__(self) -> None:
        for name in ("steps", "envs", "eval_every", "random_repeats", "torch_threads"):
            if getattr(self, name) < 1:
                msg = f"`--{name.replace('_', '-')}` must be >= 1, got {getattr(self, name)}"
                raise ConfigError(msg)
        if self.holdout < 0:
            msg = f"`--holdout` must be >= 0, got {self.holdout}"
            raise ConfigError(msg)
        if self.policy not in POLICIES:
            msg = f"`--policy` must be one of {', '.join(POLICIES)}, got {self.policy!r}"
            raise ConfigError(msg)


def parse_args(argv: Sequence[str] | None = None) -> SmokeConfig:
    """The :class:`SmokeConfig` of a command line (``--name value`` per field)."""
    defaults = SmokeConfig()
    parser = argparse.ArgumentParser(
        prog="python -m city360.train.ppo_smoke",
        description="Train PPO on a city's Easy Map navigation and compare it with random.",
    )
    parser.add_argument("--city", default=defaults.city, help="city directory or name")
    parser.add_argument("--out", type=Path, default=defaults.out, help="output folder")
    parser.add_argument("--steps", type=int, default=defaults.steps, help="env steps to train")
    parser.add_argument("--envs", type=int, default=defaults.envs, help="sub-envs")
    parser.add_argument("--eval-every", type=int, default=defaults.eval_every)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--policy", choices=POLICIES, default=defaults.policy)
    parser.add_argument("--train-suite", type=Path, default=None)
    parser.add_argument("--eval-suite", type=Path, default=None)
    parser.add_argument("--holdout", type=int, default=defaults.holdout)
    parser.add_argument("--random-repeats", type=int, default=defaults.random_repeats)
    parser.add_argument("--step-cost", type=float, default=defaults.step_cost)
    parser.add_argument("--progress-per-m", type=float, default=defaults.progress_per_m)
    parser.add_argument("--answer-scale", type=float, default=defaults.answer_scale)
    parser.add_argument("--torch-threads", type=int, default=defaults.torch_threads)
    values = vars(parser.parse_args(argv))
    return SmokeConfig(**values)


def env_options(config: SmokeConfig) -> dict[str, Any]:
    """The env keywords of training and evaluation alike."""
    return {
        "view_width": VIEW_PX,
        "view_height": VIEW_PX,
        "map": False,
        "layout": "chw",
        "grayscale": True,
        "text": False,
        "goal": True,
        "reward": "shaped",
        "step_cost": config.step_cost,
        "progress_per_m": config.progress_per_m,
        "answer_scale": config.answer_scale,
    }


def load_tasks(config: SmokeConfig, city_dir: Path) -> tuple[list[Any], list[Any]]:
    """(training tasks, held-out tasks), both Easy MapNavigation (see the module docstring)."""
    import numpy as np

    from city360.tasks import load_suite
    from city360.train.task_split import select, split_tasks

    train_folder = config.train_suite or config.out / "train-suite"
    if not (train_folder / "suite.json").exists():
        if config.train_suite is not None:
            msg = f"no suite at {train_folder}; generate it with `city360 tasks generate`"
            raise ConfigError(msg)
        from city360.tasks.generate.run import generate_suite
        from city360.tasks.suite import save_suite

        suite, _ = generate_suite(city_dir, per_family=300, seed=1, families=["MapNavigation"])
        save_suite(suite, train_folder)
    generated = select(load_suite(train_folder).tasks, family="MapNavigation", difficulty="Easy")
    eval_folder = config.eval_suite or city_dir / "tasks" / "main"
    held_out = select(load_suite(eval_folder).tasks, family="MapNavigation", difficulty="Easy")
    order = np.random.default_rng(config.seed).permutation(len(generated))
    shuffled = [generated[i] for i in order]
    held_out += shuffled[: config.holdout]
    train = split_tasks(shuffled[config.holdout :], held_out)
    if not held_out:
        msg = f"no Easy MapNavigation tasks to evaluate on in {eval_folder} (or `--holdout`)"
        raise ConfigError(msg)
    return train, held_out


def run(config: SmokeConfig) -> dict[str, Any]:
    """Train, evaluate, write the outputs; returns the summary (see the module docstring)."""
    try:
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.callbacks import BaseCallback
    except ImportError as exc:
        msg = "torch, stable-baselines3 and sb3-contrib are needed: pip install 'city360[train]'"
        raise DependencyMissingError(msg) from exc

    import city360
    from city360.cities import resolve_city
    from city360.simulator.gym_env import CityGymEnv
    from city360.train.curve import CurvePoint, plot_curve, write_curve
    from city360.train.evaluate import RandomPolicy, evaluate
    from city360.train.sb3_vec import Sb3CityVecEnv

    torch.set_num_threads(config.torch_threads)
    config.out.mkdir(parents=True, exist_ok=True)
    city_dir = resolve_city(config.city)
    train_tasks, eval_tasks = load_tasks(config, city_dir)
    options = env_options(config)
    view = config.policy == "cnn"
    eval_env = CityGymEnv(city_dir, **options)
    points: list[CurvePoint] = []
    started = time.monotonic()

    def record(policy_name: str, steps: int, result: Any) -> CurvePoint:
        point = CurvePoint(
            steps=steps,
            wall_s=time.monotonic() - started,
            policy=policy_name,
            episodes=result.episodes,
            successes=result.successes,
            success_rate=result.success_rate,
            mean_return=result.mean_return,
        )
        points.append(point)
        print(
            f"[{point.wall_s:7.1f} s] {steps:>8} steps  {policy_name:<6} success "
            f"{result.successes}/{result.episodes} ({result.success_rate:.2f})  "
            f"mean return {result.mean_return:+.2f}",
            flush=True,
        )
        return point

    random_result = evaluate(
        RandomPolicy(config.seed),
        eval_env,
        eval_tasks,
        repeats=config.random_repeats,
        seed=config.seed,
        view=view,
    )
    random_point = record("random", 0, random_result)
    vec = city360.make_vec(
        city_dir, num_envs=config.envs, vectorization_mode="sync", tasks=train_tasks, **options
    )
    env = Sb3CityVecEnv(vec, view=view)
    model = MaskablePPO(
        "MultiInputPolicy",
        env,
        n_steps=256,
        batch_size=256,
        n_epochs=4,
        learning_rate=3e-4,
        gamma=0.98,
        ent_coef=0.01,
        policy_kwargs={"net_arch": [64, 64]},
        seed=config.seed,
        device="cpu",
        verbose=0,
    )

    def ppo_policy(obs: dict[str, Any], legal: Any) -> Any:
        action, _ = model.predict(obs, action_masks=legal, deterministic=True)
        return action

    timing = {"train_s": 0.0, "eval_s": 0.0}

    class Evaluate(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next_at = 0
            self.lap = time.monotonic()

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_at:
                now = time.monotonic()
                timing["train_s"] += now - self.lap
                result = evaluate(ppo_policy, eval_env, eval_tasks, seed=config.seed, view=view)
                record("ppo", self.num_timesteps, result)
                write_curve(points, config.out / "ppo_smoke.csv")
                self.next_at += config.eval_every
                self.lap = time.monotonic()
                timing["eval_s"] += self.lap - now
            return True

        def _on_training_end(self) -> None:
            timing["train_s"] += time.monotonic() - self.lap

    model.learn(total_timesteps=config.steps, callback=Evaluate())
    trained = int(model.num_timesteps)
    final_point = points[-1]
    if final_point.policy != "ppo" or final_point.steps != trained:
        result = evaluate(ppo_policy, eval_env, eval_tasks, seed=config.seed, view=view)
        final_point = record("ppo", trained, result)
    wall_s = time.monotonic() - started
    model.save(config.out / "model.zip")
    env.close()
    eval_env.close()
    write_curve(points, config.out / "ppo_smoke.csv")
    title = (
        f"MaskablePPO ({config.policy}) vs random, {Path(config.city).name} city, "
        f"Easy MapNavigation, {len(eval_tasks)} held-out tasks"
    )
    plot_curve(points, config.out / "ppo_smoke.png", title=title)
    summary = {
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(config).items()},
        "city": str(city_dir),
        "train_tasks": len(train_tasks),
        "eval_tasks": len(eval_tasks),
        "steps": final_point.steps,
        "wall_s": round(wall_s, 1),
        "train_s": round(timing["train_s"], 1),
        "eval_s": round(timing["eval_s"], 1),
        "train_steps_per_s": round(final_point.steps / max(timing["train_s"], 1e-9), 1),
        "ppo": asdict(final_point),
        "random": asdict(random_point),
        "versions": {"torch": torch.__version__, **_versions()},
    }
    (config.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"final after {final_point.steps} steps ({wall_s / 60:.1f} min, "
        f"{summary['train_steps_per_s']} training steps/s): PPO success "
        f"{final_point.success_rate:.2f} ({final_point.successes}/{final_point.episodes}), "
        f"mean return {final_point.mean_return:+.2f}; random {random_result.success_rate:.2f} "
        f"({random_result.successes}/{random_result.episodes}), mean return "
        f"{random_result.mean_return:+.2f}"
    )
    return summary


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("stable-baselines3", "sb3-contrib", "gymnasium")}


def main(argv: Sequence[str] | None = None) -> int:
    """The command line entry point; returns the exit status."""
    try:
        run(parse_args(argv))
    except (ConfigError, DependencyMissingError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
