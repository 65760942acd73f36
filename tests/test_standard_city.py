"""The standard city is registered at the reference's scale and built with its commands
(issue 19); the build itself is a documented command, not a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from city360.cities import ensure_city, get_city


def test_the_standard_city_ships_its_extract_small() -> None:
    city = get_city("helsinki")
    source = city.source()
    assert source.stat().st_size < 2_000_000
    assert (source.parent / "ATTRIBUTION.md").read_text(encoding="utf-8").count("ODbL") >= 1
    assert city.width_px == 1024
    assert city.difficulty == "reference"


def test_ensure_city_runs_the_standard_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from city360.synth.film_workers import default_workers

    monkeypatch.setenv("CITY360_CACHE_DIR", str(tmp_path))
    calls: list[tuple[str, ...]] = []
    ensure_city("helsinki", run=lambda *args: calls.append(args))
    synth = next(c for c in calls if c[0] == "synth")
    assert synth[synth.index("--network") + 1] == "street+service"
    assert synth[synth.index("--workers") + 1] == str(default_workers())
    err = capsys.readouterr().err
    for step in ("synth", "build", "tasks generate", "tasks check"):  # no videos: no ingest
        assert f"done: `city360 {step}` took 0 s" in err
    generate = next(c for c in calls if c[:2] == ("tasks", "generate"))
    assert generate[generate.index("--difficulty") + 1] == "reference"
