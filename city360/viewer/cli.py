"""``city360 view``: the web viewer (walk a city, author tasks, play them as a human)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Annotated

import typer

from city360.progress import console

__all__ = ["register", "view_command"]


def view_command(
    city_dir: Annotated[Path, typer.Argument(help="A built city (city.json + graph.json).")],
    suite: Annotated[
        Path | None,
        typer.Option(
            "--suite",
            help="Suite folder to author and play (created on the first save). "
            "Default: CITY_DIR/tasks/authored.",
            show_default=False,
        ),
    ] = None,
    host: Annotated[
        str, typer.Option(help="Address to bind; anything but loopback needs --token.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).")] = 8360,
    token: Annotated[
        str | None,
        typer.Option(
            help="Access token every request must carry (header X-City360-Token or ?token=).",
            envvar="CITY360_VIEWER_TOKEN",
            show_default=False,
        ),
    ] = None,
    output_root: Annotated[
        Path, typer.Option(help="Where human runs are written (eval results format).")
    ] = Path("outputs"),
    run_id: Annotated[
        str | None,
        typer.Option(help="Run folder name for played tasks (default human-<UTC time>)."),
    ] = None,
    player: Annotated[
        str, typer.Option(help="Who plays; stored in the results' model column.")
    ] = "",
    no_map: Annotated[
        bool, typer.Option("--no-map", help="Play without the location map (ablation).")
    ] = False,
    renderer: Annotated[str, typer.Option(help="auto, gl or cpu.")] = "auto",
    max_sessions: Annotated[int, typer.Option(help="Browser sessions held at once.")] = 8,
) -> None:
    """Serve the viewer: walk CITY_DIR, author tasks for a suite, play them as a human."""
    from city360.cities import resolve_city, resolve_suite
    from city360.errors import DependencyMissingError

    try:
        import uvicorn
    except ImportError:
        msg = "fastapi and uvicorn are needed for the viewer: pip install 'city360[viewer]'"
        raise DependencyMissingError(msg) from None
    city_dir = resolve_city(str(city_dir))  # a packaged name builds it: after the checks
    from city360.viewer.app import create_app, default_run_id
    from city360.viewer.config import ViewerConfig

    city = city_dir.resolve()
    config = ViewerConfig(
        city_dir=city,
        # `--suite main` is CITY/tasks/main when that exists, as in eval (else a new folder)
        suite_dir=(
            resolve_suite(suite, city) if suite is not None else city / "tasks" / "authored"
        ).resolve(),
        output_root=output_root.resolve(),
        run_id=run_id or default_run_id(),
        host=host,
        port=port,
        token=token,
        renderer=renderer,
        player=player,
        play_map=not no_map,
        max_sessions=max_sessions,
    )
    app = create_app(config)
    sock = _listen(host, port)
    port = int(sock.getsockname()[1])  # the real one when --port 0
    shown = f"[{host}]" if ":" in host else host
    address = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    # soft_wrap: a wrapped address could not be copied in one piece
    console.print(
        f"city360 viewer for {city.name}: open {address}", highlight=False, soft_wrap=True
    )
    console.print(
        f"suite: {config.suite_dir}; human runs: {config.output_root / config.run_id}",
        highlight=False,
        soft_wrap=True,
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or a clear error (port taken, address not local)."""
    from city360.errors import ConfigError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        msg = (
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another --port or --host"
        )
        raise ConfigError(msg) from None
    return sock


def register(app: typer.Typer) -> None:
    app.command("view")(view_command)
