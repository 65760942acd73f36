"""The viewer in Debian's Chromium driven by Playwright: walk with the keys, take a branch,
jump by clicking the map, author a task of every family through the form, play a task to
ANSWER. Screenshots of each screen go to ``tmp_path`` and, when ``CITY360_SCREENSHOTS_DIR``
is set (``docs/images`` for the README), there as ``viewer_<screen>.png``.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.viewer.conftest import ViewerPaths, make_config, make_paths

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT_MAX_BYTES = 300_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is missing (Debian package `chromium`)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def served(
    browser: Any, built_city: Path, built_suite: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, ViewerPaths]]:
    """A uvicorn server on a free 127.0.0.1 port in a thread (GL renderer when available)."""
    import uvicorn

    from city360.viewer.app import create_app

    paths = make_paths(built_city, built_suite, tmp_path_factory.mktemp("viewer-browser"))
    app = create_app(make_config(paths, renderer="auto"))  # type: ignore[arg-type]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the viewer server did not start within 30 s")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/", paths
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


@pytest.fixture
def page(browser: Any, served: tuple[str, ViewerPaths]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(served[0])
    tab.wait_for_selector("body[data-ready=true]", state="attached", timeout=60_000)
    yield tab
    context.close()
    assert not errors, errors


def save_screenshot(page: Any, name: str, tmp_path: Path) -> Path:
    """A palette PNG of the page under SCREENSHOT_MAX_BYTES (for the README)."""
    from PIL import Image

    image = Image.open(io.BytesIO(page.screenshot(full_page=True))).convert("RGB")
    if image.width > 1200:
        image = image.resize((1200, round(image.height * 1200 / image.width)), Image.LANCZOS)
    data = b""
    # Full colour when it fits, else a 256-colour palette (keeps the red arrows red).
    for candidate in (image, image.quantize(colors=256, method=Image.Quantize.FASTOCTREE)):
        buffer = io.BytesIO()
        candidate.save(buffer, format="PNG", optimize=True)
        data = buffer.getvalue()
        if len(data) < SCREENSHOT_MAX_BYTES:
            break
    assert len(data) < SCREENSHOT_MAX_BYTES, f"{name} screenshot is {len(data)} bytes"
    out = tmp_path / f"viewer_{name}.png"
    out.write_bytes(data)
    target = os.environ.get("CITY360_SCREENSHOTS_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        (Path(target) / out.name).write_bytes(data)
    return out


def element_pixels(page: Any, selector: str) -> np.ndarray:
    from PIL import Image

    png = page.locator(selector).screenshot()
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def press_and_wait(page: Any, key: str, counter: str = "walkStep") -> None:
    """Press a key and wait until the page shows the next step."""
    # Locator waits, not wait_for_function: the page's CSP forbids eval, as it should.
    attribute = "data-" + counter.replace("Step", "-step")
    page.wait_for_selector("body:not(.busy)", state="attached")
    before = int(page.get_attribute("body", attribute) or "0")
    page.keyboard.press(key)
    page.wait_for_selector(f"body[{attribute}='{before + 1}']", state="attached")


def walk_on(page: Any, *, presses: int) -> None:
    """Press W ``presses`` times, taking a branch where a junction stops the walk (UP when
    offered, else the first offered)."""
    keys = {"UP": "ArrowUp", "LEFT": "ArrowLeft", "RIGHT": "ArrowRight"}
    for _ in range(presses):
        feedback = page.text_content("#walk-feedback") or ""
        offered = re.search(r"Branches offered: ([A-Z, ]+)", feedback)
        if "junction" in feedback and offered:
            branches = [b.strip() for b in offered.group(1).split(",") if b.strip()]
            press_and_wait(page, keys["UP" if "UP" in branches else branches[0]])
        else:
            press_and_wait(page, "w")


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def test_walk_with_keys_take_a_branch_and_jump(page: Any, tmp_path: Path) -> None:
    first = element_pixels(page, "#walk-view")
    start_yaw = page.text_content("#pose-yawpitch")
    press_and_wait(page, "d")
    turned = element_pixels(page, "#walk-view")
    assert np.abs(turned - first).mean() > 5, "the view did not change after D"
    assert page.text_content("#pose-yawpitch") != start_yaw
    press_and_wait(page, "s")
    offered: list[str] = []
    for _ in range(40):
        offered = [label for label in ("LEFT", "UP", "RIGHT") if page.is_enabled(f"#walk-{label}")]
        if offered:
            break
        before = element_pixels(page, "#walk-view")
        offset = page.text_content("#pose-offset")
        press_and_wait(page, "w")
        if page.text_content("#pose-offset") != offset:
            assert np.abs(element_pixels(page, "#walk-view") - before).mean() > 1
    assert offered, "no junction reached in 40 steps of W"
    assert "(at junction)" in (page.text_content("#pose-segment") or "")
    segment = page.text_content("#pose-segment")
    save_screenshot(page, "walk", tmp_path)  # at a junction: red arrows and branch buttons
    key = {"LEFT": "ArrowLeft", "UP": "ArrowUp", "RIGHT": "ArrowRight"}[offered[0]]
    press_and_wait(page, key)
    assert page.text_content("#pose-segment") != segment
    # clicking the city map jumps to the nearest pose there
    latlon = page.text_content("#pose-latlon")
    box = page.locator("#basemap").bounding_box()
    dot = page.locator("#basemap-dot").bounding_box()
    assert box is not None
    assert dot is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.locator("#pose-latlon")).not_to_have_text(latlon or "")
    moved = page.locator("#basemap-dot").bounding_box()
    assert moved is not None
    assert (moved["x"], moved["y"]) != (dot["x"], dot["y"])


FAMILY_EXAMPLES = {
    "Localization": "loc-001",
    "LandmarkSearchText": "lmt-001",
    "LandmarkSearchImage": "lmi-001",
    "MapNavigation": "map-001",
    "VLN": "vln-001",
    "ObjectCount": "cnt-001",
    "RelationalSpatial": "rel-001",
}


def test_author_a_task_of_every_family(
    page: Any, served: tuple[str, ViewerPaths], tmp_path: Path
) -> None:
    _, paths = served
    page.click("#tab-author")
    page.wait_for_selector("#task-table tbody tr[data-task='loc-001']")
    saved: dict[str, str] = {}
    for family, example in FAMILY_EXAMPLES.items():
        # Load a generated task of the family into the form (this walks to its start) ...
        page.click(f"#task-table tr[data-task='{example}'] button:text('Edit')")
        page.wait_for_selector(f"#author-form[data-loaded='{example}']", state="attached")
        new_id = f"ui-{family.lower()}"
        page.fill("#f-id", new_id)
        # ... then author it from the poses and the view here.
        page.click("#use-start")
        if family in ("LandmarkSearchText", "LandmarkSearchImage", "MapNavigation", "VLN"):
            # a goal beyond the family's threshold (10-20 m): `tasks check` refuses one that
            # an ANSWER on the spot would reach
            page.select_option("#walk-magnitude", "LARGE")
            page.locator("#walk-feedback").click()  # keys go to the page, not the select
            walk_on(page, presses=5)
            page.click("#use-goal")
        if family == "LandmarkSearchText":
            page.fill("#f-landmark", "CAFE <b>AURORA</b>")
        if family == "LandmarkSearchImage":
            page.click("#capture")
            page.wait_for_selector("#capture-preview[src^='data:image/jpeg']")
        if family == "VLN":
            page.fill("#f-instructions", "Go straight.\nStop after thirty metres.")
        if family == "RelationalSpatial":
            page.fill("#f-question", "Which shop is to the left of the bakery?")
        page.click("#verify")
        page.wait_for_selector("#problems li.ok")
        assert "Answer format:" in (page.text_content("#prompt-preview") or "")
        if family == "LandmarkSearchText":
            # user text is shown as text, never parsed as HTML
            assert "CAFE <b>AURORA</b>" in (page.text_content("#prompt-preview") or "")
            assert page.locator("#prompt-preview b").count() == 0
            save_screenshot(page, "author", tmp_path)
        page.click("#save-new")
        page.wait_for_selector("#author-form[data-status=saved]", state="attached")
        page.wait_for_selector(f"#task-table tr[data-task='{new_id}']")
        saved[new_id] = family
    suite = json.loads((paths.suite / "suite.json").read_text(encoding="utf-8"))
    families = {t["id"]: t["family"] for t in suite["tasks"]}
    for task_id, family in saved.items():
        assert families.get(task_id) == family
    assert families["loc-001"] == "Localization"  # "Save as new" kept the originals
    image = next(t for t in suite["tasks"] if t["id"] == "ui-landmarksearchimage")
    assert (paths.suite / image["told"]["reference_image"]).is_file()
    # a broken draft shows its problems and is not saved
    page.click("#new-task")
    page.select_option("#f-family", "ObjectCount")
    page.click("#use-start")
    page.fill("#f-object-kind", "tree")
    page.fill("#f-answer", "a few")
    page.click("#save")
    page.wait_for_selector("#problems li[data-field=answer]")
    assert "whole number" in (page.text_content("#problems") or "")


def test_play_a_task_to_answer(page: Any, served: tuple[str, ViewerPaths], tmp_path: Path) -> None:
    from city360.eval.results import read_results
    from city360.tasks.suite import load_suite

    _, paths = served
    task = load_suite(paths.suite).task("loc-002")
    errors: list[str] = []  # the Play tab's first look logged a 409 as an error (newuser4)
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.click("#tab-play")
    page.wait_for_selector(f"button[data-play='{task.id}']")
    assert errors == []
    page.click(f"button[data-play='{task.id}']")
    page.wait_for_selector("#play-episode:not([hidden])")
    assert "x:i y:j" in (page.text_content("#play-prompt") or "")
    assert page.locator("#pose").is_hidden()  # no pose readout while playing
    assert page.locator("#play-images img.reference").count() == 1
    first = element_pixels(page, "#play-view")
    press_and_wait(page, "a", "playStep")
    assert np.abs(element_pixels(page, "#play-view") - first).mean() > 5
    assert page.text_content("#play-step") == "1"
    page.fill("#play-answer", task.expected_answer())
    page.click("#answer")
    page.wait_for_selector("#play-outcome:not([hidden])")
    assert "Score 1.00 (correct)" in (page.text_content("#play-outcome") or "")
    save_screenshot(page, "play", tmp_path)
    rows = read_results(paths.run_dir / "results.csv")
    row = next(r for r in rows if r.task_id == task.id)
    assert (row.agent, row.status, row.is_correct, row.steps) == ("human", "answered", True, 2)
