"""Packaged cities by name: what each is made from, where it is cached, and how it is built.

A packaged city is a small OSM crop shipped inside the package (``city360/data/<name>/``, with
its ODbL attribution) plus the options it is filmed with. :func:`ensure_city` turns a name into
a built city directory on first use — ``synth`` (the procedural 360° twin), ``ingest`` of its
videos with their GPS tracks, ``build --osm``, its maps, and a verified task suite — and caches
it under the user cache dir (``$CITY360_CACHE_DIR`` overrides), keyed by the city360 version,
the source of the modules that make a city (:data:`CITY_MAKING_PACKAGES`), the extract's bytes
and the filming options, so a second call costs nothing and a change of any input, or of the
code in a development checkout where the version stays the same, never reuses an old city.
Each step is a ``city360`` command a user could run alone; the commands are printed as they
run.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from city360.errors import ConfigError, PackagedCityBuildError, did_you_mean

__all__ = [
    "SUITE_NAME",
    "PackagedCity",
    "all_cities",
    "city_cache_dir",
    "city_making_code_digest",
    "ensure_city",
    "get_city",
    "register_city",
    "resolve_city",
    "resolve_suite",
    "run_command",
    "run_command_process",
]

SUITE_NAME = "main"
"""The folder under ``tasks/`` that holds a packaged city's standard suite."""

CITY_MAKING_PACKAGES = ("synth", "video_store", "pose_graph", "streets", "maps", "tasks")
"""The subpackages of ``city360`` whose code makes a packaged city (film, ingest, build, maps,
task suite); their source is part of :meth:`PackagedCity.cache_key`, with ``city.py`` and
``geo.py``. The version alone does not change between the commits of a development checkout,
where a city built by older code would otherwise be reused."""


@dataclass(frozen=True, slots=True)
class PackagedCity:
    """One packaged city.

    ``extract`` is the OSM file name inside ``city360/data/<data_dir>/``; ``width_px`` the
    equirect width it is filmed at, ``fps`` frames per second of filming and ``speed_mps`` the
    walking speed (m/s); ``per_family`` tasks per family in its suite, generated with ``seed``.
    """

    name: str
    description: str
    data_dir: str
    extract: str
    width_px: int
    fps: float
    speed_mps: float
    per_family: int = 25
    seed: int = 0
    synth_args: tuple[str, ...] = ()
    """Extra ``city360 synth`` arguments (e.g. ``--bbox``); empty for the demo."""
    difficulty: str = "default"
    """The difficulty profile its suite is generated with (:mod:`city360.tasks.difficulty`)."""

    def source(self) -> Path:
        """The packaged OSM extract (© OpenStreetMap contributors, ODbL)."""
        path = Path(str(resources.files("city360") / "data" / self.data_dir / self.extract))
        if not path.is_file():
            msg = f"packaged OSM extract {path} is missing; reinstall city360"
            raise ConfigError(msg)
        return path

    def cache_key(self) -> str:
        from city360 import __version__

        digest = hashlib.sha256(self.source().read_bytes())
        digest.update(__version__.encode())
        digest.update(_installed_code_digest())
        digest.update(
            f"{self.width_px}/{self.fps}/{self.speed_mps}/{' '.join(self.synth_args)}".encode()
        )
        return digest.hexdigest()[:12]


def city_making_code_digest(package: Path) -> bytes:
    """SHA-256 over the path (relative to ``package``) and bytes of every ``.py`` file that
    makes a packaged city: those under :data:`CITY_MAKING_PACKAGES`, ``city.py`` and
    ``geo.py``, in sorted order. A missing file or folder is skipped."""
    files = [package / "city.py", package / "geo.py"]
    for name in CITY_MAKING_PACKAGES:
        files.extend(sorted((package / name).rglob("*.py")))
    digest = hashlib.sha256()
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.digest()


@functools.cache
def _installed_code_digest() -> bytes:
    """:func:`city_making_code_digest` of this installed package (~300 files, read once)."""
    return city_making_code_digest(Path(__file__).parent)


_CITIES: dict[str, PackagedCity] = {}


def register_city(city: PackagedCity, *, replace: bool = False) -> PackagedCity:
    """Register ``city`` under its name; an existing name needs ``replace=True``."""
    if city.name in _CITIES and not replace and _CITIES[city.name] != city:
        msg = f"packaged city {city.name!r} is already registered; pass replace=True"
        raise ConfigError(msg)
    _CITIES[city.name] = city
    return city


def get_city(name: str) -> PackagedCity:
    """The packaged city called ``name``; unknown names raise listing the known ones."""
    try:
        return _CITIES[name]
    except KeyError:
        known = list(_CITIES)
        msg = (
            f"unknown packaged city {name!r}; expected one of {', '.join(known)}, or the path "
            f"of a city directory.{did_you_mean(name, known)}"
        )
        raise ConfigError(msg) from None


def all_cities() -> list[PackagedCity]:
    """Every packaged city, in registration order."""
    return list(_CITIES.values())


def city_cache_dir(city: PackagedCity | str) -> Path:
    """Where ``city`` is (or will be) built: ``<cache>/<name>-<key>``."""
    from city360.settings import cache_dir

    packaged = get_city(city) if isinstance(city, str) else city
    return cache_dir() / f"{packaged.name}-{packaged.cache_key()}"


def run_command(*args: str) -> None:
    """Run one ``city360`` command in this process, echoing it like a shell would."""
    from city360.cli import app
    from city360.progress import console

    console.print(f"[bold cyan]$ city360 {shlex.join(args)}[/]")
    app(list(args), standalone_mode=False)


def run_command_process(*args: str) -> None:
    """Run one ``city360`` command in a child process (``python -m city360.cli``), echoing it
    like a shell would; its output goes to this process's terminal.

    Building a packaged city runs its steps this way because ``ingest`` starts ``spawn``
    worker processes, and ``spawn`` re-imports the parent's main module: from a user's script
    without an ``if __name__ == "__main__":`` guard (the README's ``city360.make("demo")``),
    in-process workers would run the script again and the build would fail. The child's main
    module is ``city360.cli``, which is safe to re-import.
    """
    import subprocess
    import sys

    from city360.progress import console

    console.print(f"[bold cyan]$ city360 {shlex.join(args)}[/]")
    console.file.flush()
    done = subprocess.run([sys.executable, "-m", "city360.cli", *args], check=False)
    if done.returncode != 0:
        msg = (
            f"`city360 {shlex.join(args)}` exited with {done.returncode} while building a "
            "packaged city (its output is above); run it yourself to retry, or pass "
            "rebuild=True (`city360 demo --rebuild`) to start again"
        )
        raise PackagedCityBuildError(msg)


def ensure_city(
    city: PackagedCity | str,
    *,
    rebuild: bool = False,
    run: Callable[..., None] = run_command_process,
) -> Path:
    """The built directory of a packaged city, building (or finishing) it first when needed.

    Steps already done are skipped, so an interrupted build resumes where it stopped; the
    standard suite is ``tasks/main``. ``rebuild=True`` starts from scratch. Each step is a
    ``city360`` command run by ``run``, by default in a child process
    (:func:`run_command_process`), followed by the time it took. ``synth`` films on every
    core this process may use (the bytes do not depend on how many) and prints the frames to
    film and an estimate measured on the first of them.
    """
    import shutil

    from city360.city import CityDir
    from city360.synth.film_workers import default_workers
    from city360.video_store.ingest import trajectory_id_for

    packaged = get_city(city) if isinstance(city, str) else city
    root = city_cache_dir(packaged)
    if rebuild and root.exists():
        shutil.rmtree(root)
    built = CityDir(root)
    run = functools.partial(_timed, run)
    if not (built.videos_dir.is_dir() and built.exists()):
        # synth prints the frames to film and, once it has timed the first ones, an estimate
        run(
            "synth",
            "--osm",
            str(packaged.source()),
            *packaged.synth_args,
            "--width",
            str(packaged.width_px),
            "--fps",
            str(packaged.fps),
            "--speed",
            str(packaged.speed_mps),
            "--workers",
            str(default_workers()),
            "--out",
            str(root),
            "--force",
        )
    ingested = set(built.trajectory_ids())
    # a video split at GPS jumps is <id>, <id>_2, ...: its first part always carries <id>
    missing = [
        v for v in sorted(built.videos_dir.glob("*.mp4")) if trajectory_id_for(v) not in ingested
    ]
    if missing:
        gps = [a for v in missing for a in ("--gps", str(v.with_suffix(".gpx")))]
        run("ingest", *(str(v) for v in missing), *gps, "--out", str(root))
        built.graph_path.unlink(missing_ok=True)
    if not built.graph_path.is_file():
        run("build", str(root), "--osm", str(built.osm_extract_path))
    suite = built.tasks_dir / SUITE_NAME
    if not (suite / "suite.json").is_file():
        run(
            "tasks",
            "generate",
            str(root),
            "--out",
            str(suite),
            "--per-family",
            str(packaged.per_family),
            "--seed",
            str(packaged.seed),
            *(("--difficulty", packaged.difficulty) if packaged.difficulty != "default" else ()),
        )
        run("tasks", "check", str(suite), "--city", str(root))
    return root


def _timed(run: Callable[..., None], *args: str) -> None:
    """``run(*args)``, then the wall time it took, so a long build shows where time went."""
    from city360.progress import console
    from city360.synth.film_clock import format_duration

    started = time.perf_counter()
    run(*args)
    step = " ".join(args[:2]) if args[:1] == ("tasks",) else args[0]
    took = format_duration(time.perf_counter() - started)
    console.print(f"[green]done:[/] `city360 {step}` took {took}", highlight=False)


def _looks_like_path(value: str) -> bool:
    return any(sep in value for sep in ("/", "\\")) or value.startswith(("~", "."))


def resolve_city(city: str | os.PathLike[str]) -> Path:
    """A city directory from a path or a packaged city's name.

    A path that exists always wins (a folder called ``demo`` beside you is yours); otherwise a
    registered name is built on first use (:func:`ensure_city`, with progress) and its cached
    directory returned. A value that is neither raises :class:`ConfigError` listing the names.
    """
    path = Path(city).expanduser()
    if path.exists() or not isinstance(city, str) or _looks_like_path(city):
        return path
    if city in _CITIES:
        return ensure_city(city)
    known = list(_CITIES)
    msg = (
        f"no city directory {city!r} and no packaged city by that name; expected a path or one "
        f"of {', '.join(known)}.{did_you_mean(city, known)}"
    )
    raise ConfigError(msg)


def resolve_suite(suite: str | os.PathLike[str], city_dir: Path) -> Path:
    """A suite folder: ``suite`` when it exists, else ``CITY_DIR/tasks/<suite>`` when that does
    (``--suite main`` is a packaged city's standard suite), else ``suite`` unchanged so the
    loader says what is missing."""
    path = Path(suite).expanduser()
    if path.exists() or _looks_like_path(str(suite)):
        return path
    inside = city_dir / "tasks" / str(suite)
    return inside if inside.exists() else path


register_city(
    PackagedCity(
        name="demo",
        description="Helsinki centre, ~1 km of streets: the quick demo city",
        data_dir="demo",
        extract="helsinki_centre.osm",
        width_px=1536,
        fps=2,
        speed_mps=2.0,
    )
)

register_city(
    PackagedCity(
        name="helsinki",
        description=(
            "Helsinki centre at the reference's scale (the reference's Akihabara: 193 nodes, "
            "602 segments); building it takes over an hour (see the README)"
        ),
        data_dir="helsinki",
        extract="helsinki_standard.osm.bz2",
        width_px=1024,
        fps=2,
        speed_mps=2.0,
        synth_args=("--network", "street+service"),
        difficulty="reference",
    )
)
