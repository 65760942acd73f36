"""The documentation site's content: every built-in task family has its page section and its
two pictures (small enough to ship), and every page is in the site's navigation."""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import pytest

from city360.tasks import all_families

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FAMILY_IMAGES = DOCS / "images" / "families"
MAX_IMAGE_BYTES = 150 * 1024

BUILT_IN = [
    family.name
    for family in all_families()
    if family.model.__module__.startswith("city360.tasks.families.")
]


@pytest.mark.parametrize("family", BUILT_IN)
@pytest.mark.parametrize("kind", ["view", "task"])
def test_each_family_has_a_small_picture_on_its_page(family: str, kind: str) -> None:
    path = FAMILY_IMAGES / f"{family.lower()}_{kind}.jpg"
    assert path.is_file(), f"{path} is missing: run `python scripts/family_pictures.py`"
    assert path.stat().st_size < MAX_IMAGE_BYTES
    image = cv2.imread(str(path))
    assert image is not None
    assert image.shape[1] == 480
    assert f"images/families/{path.name}" in (DOCS / "families.md").read_text(encoding="utf-8")


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")]
    assert [page for page in pages if f": {page}" not in nav] == []


ACCURACY_TABLE_HEAD = "| area | pattern | capture | seeds | P / R / F1 without OSM |"


@pytest.mark.parametrize("page", ["README.md", "docs/build-a-city.md"])
def test_the_accuracy_table_is_the_one_its_saved_run_prints(page: str) -> None:
    """The per-area accuracy table a page shows is what `city360 accuracy --rows` prints from
    the saved run the page links (docs/accuracy/*.json), so the figures cannot drift from the
    rows (docs/build-a-city.md once showed round two's)."""
    from city360.pose_graph.accuracy import read_rows, summary_table

    text = (ROOT / page).read_text(encoding="utf-8")
    lines = text.splitlines()
    head = next(k for k, line in enumerate(lines) if line.startswith(ACCURACY_TABLE_HEAD))
    table = []
    for line in lines[head:]:
        if not line.startswith("|"):
            break
        table.append(line)
    before = "\n".join(lines[max(0, head - 15) : head])
    links = re.findall(r"\(((?:docs/)?accuracy/[\w.-]+\.json)\)", before)
    assert links, f"{page}: the accuracy table names no saved run (docs/accuracy/*.json) above it"
    rows_file = (ROOT / page).parent / links[-1]
    expected = [line for line in summary_table(read_rows(rows_file)).splitlines() if line]
    assert table == expected, f"{page}: run `city360 accuracy --rows {links[-1]}` and paste"
