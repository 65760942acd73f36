"""MkDocs hook: the home page is the README, with its ``docs/`` links made site-relative."""

from __future__ import annotations

from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parent.parent / "README.md"


def on_page_markdown(markdown: str, page: Any, **_kwargs: Any) -> str:
    if page.file.src_uri != "index.md":
        return markdown
    return README.read_text(encoding="utf-8").replace("](docs/", "](")
