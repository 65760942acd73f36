"""``city360 walk``: step through a built city from the command line, saving what the agent
sees (view, map, multi-view) as PNGs and printing the feedback of every step."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from city360.progress import console

if TYPE_CHECKING:
    from city360.simulator.env import CityEnv

__all__ = ["parse_script", "register", "walk_command"]


def parse_script(text: str) -> list[tuple[str, str | None]]:
    """``"W MEDIUM; D; LEFT; ANSWER x:2 y:3"`` -> ``[("W", "MEDIUM"), ("D", None), ...]``.

    Steps are separated by ``;`` or new lines; the second word is the magnitude, or for
    ANSWER everything after the first word is the answer text.
    """
    steps: list[tuple[str, str | None]] = []
    for raw in text.replace("\n", ";").split(";"):
        words = raw.strip().split(maxsplit=1)
        if not words:
            continue
        rest = words[1].strip() if len(words) > 1 else None
        steps.append((words[0], rest))
    return steps


def _save(out: Path, step: int, obs: dict[str, Any]) -> None:
    from PIL import Image

    Image.fromarray(obs["view"]).save(out / f"step{step:03d}_view.png")
    if "map" in obs:
        Image.fromarray(obs["map"]).save(out / f"step{step:03d}_map.png")
    if "views" in obs:
        import numpy as np

        Image.fromarray(np.concatenate(list(obs["views"]), axis=1)).save(
            out / f"step{step:03d}_views.png"
        )


def _run(
    env: CityEnv, steps: list[tuple[str, str | None]], out: Path, first: dict[str, Any]
) -> None:
    from city360.simulator.actions import Action, parse_action

    _save(out, 0, first)
    console.print(f"[bold]0[/] {first['feedback']}", highlight=False)
    for i, (action, rest) in enumerate(steps, start=1):
        if parse_action(action) is Action.ANSWER:
            obs, _, terminated, truncated, _ = env.step(Action.ANSWER, answer=rest or "")
        else:
            obs, _, terminated, truncated, _ = env.step(action, rest)
        _save(out, i, obs)
        offered = ", ".join(
            label
            for label, on in zip(("LEFT", "UP", "RIGHT"), obs["branch_mask"], strict=True)
            if on
        )
        branches = f" [dim](branches: {offered})[/]" if offered else ""
        console.print(
            f"[bold]{i}[/] {action} {rest or ''}: {obs['feedback']}{branches}", highlight=False
        )
        if terminated or truncated:
            break


def walk_command(
    city_dir: Annotated[Path, typer.Argument(help="A built city directory (with graph.json).")],
    actions: Annotated[
        str | None,
        typer.Option(
            "--actions",
            "-a",
            help='Steps such as "W MEDIUM; D; LEFT; ANSWER x:2 y:3" (default: read stdin).',
            show_default=False,
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for the PNGs.")] = Path("walk"),
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of a random start.")] = None,
    segment: Annotated[
        str | None, typer.Option("--segment", help="Start segment id.", show_default=False)
    ] = None,
    offset_m: Annotated[float, typer.Option("--offset-m", help="Start offset (m).")] = 0.0,
    renderer: Annotated[str, typer.Option("--renderer", help="auto, gl or cpu.")] = "auto",
    width: Annotated[int, typer.Option("--width", help="View width (px).")] = 640,
    height: Annotated[int, typer.Option("--height", help="View height (px).")] = 480,
    fov: Annotated[float, typer.Option("--fov", help="Horizontal FOV (deg).")] = 90.0,
    show_map: Annotated[bool, typer.Option("--map/--no-map", help="Draw the location map.")] = True,
    multiview: Annotated[bool, typer.Option("--multiview", help="Save six views too.")] = False,
) -> None:
    """Walk a city step by step, saving each view as a PNG and printing the feedback."""
    import city360
    from city360.cities import resolve_city

    city_dir = resolve_city(str(city_dir))

    script = actions if actions is not None else sys.stdin.read()
    steps = parse_script(script)
    from city360.errors import OutputError

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = f"cannot create the output folder {out}: {exc.strerror}"
        raise OutputError(msg) from None
    options = {"segment": segment, "offset_m": offset_m} if segment is not None else None
    with city360.make(
        city_dir,
        renderer=renderer,
        view_width=width,
        view_height=height,
        fov_deg=fov,
        map=show_map,
        multiview=multiview,
    ) as env:
        obs, _ = env.reset(seed=seed, options=options)
        console.print(f"renderer: {env.renderer_name}; saving to {out}/", highlight=False)
        _run(env, steps, out, obs)


def register(app: typer.Typer) -> None:
    app.command("walk")(walk_command)
