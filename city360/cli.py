"""The ``city360`` command line.

Each stage owns its commands in ``city360/<stage>/cli.py`` with a ``register(app)`` function;
this module only assembles them, so ``city360 --help`` stays fast (stage modules import their
heavy dependencies inside the command functions).
"""

from __future__ import annotations

import importlib
import warnings
from typing import TextIO

import typer

from city360.errors import City360Error
from city360.progress import console

__all__ = ["app", "main"]

app = typer.Typer(
    name="city360",
    help="Turn GPS-tagged 360° video into a navigable city for embodied AI agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

_STAGE_CLI_MODULES = (
    "city360.synth.cli",
    "city360.synth.conditions_cli",
    "city360.video_store.cli",
    "city360.pose_graph.cli",
    "city360.maps.cli",
    "city360.simulator.cli",
    "city360.tasks.cli",
    "city360.eval.cli",
    "city360.viewer.cli",
    "city360.demo",
    "city360.cities_cli",
    "city360.bench.cli",
)


def _register_stages() -> None:
    for name in _STAGE_CLI_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # stage has no commands yet
                continue
            raise
        module.register(app)


_register_stages()


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Print a warning as ``warning: MESSAGE`` (Python's own format adds the file, line and
    source code of city360 that raised it: nothing a user acts on)."""
    from city360.scrub import scrub_text

    console.print(
        f"[yellow]warning:[/] {scrub_text(str(message))}",
        markup=True,
        highlight=False,
        soft_wrap=True,
    )


def main() -> None:
    """Entry point: click handles usage errors and exit codes; a City360Error becomes one clear
    line on stderr and exit code 1 (no traceback: the message says what to fix); warnings
    print as ``warning: MESSAGE``."""
    warnings.showwarning = _show_warning
    try:
        app()
    except City360Error as exc:
        from city360.scrub import scrub_text

        message = scrub_text(str(exc))  # a server may have echoed a key into it
        console.print(
            f"[bold red]error:[/] {message}", markup=True, highlight=False, soft_wrap=True
        )
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
