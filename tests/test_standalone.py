"""The repository stands alone: nothing in it points to a file a clone does not have."""

from __future__ import annotations

import re
import subprocess

import pytest
from support.paths import ROOT

#: design notes kept outside the repository while it was written
OUTSIDE_NOTES = re.compile(r"\b(DESIGN|STYLE)\.md\b")
#: references to a section of a page of docs/ in docstrings and comments
DOC_SECTION = re.compile(r'docs/([\w-]+\.md), "([^"]+)"')
#: a page of docs/ named in code, in parentheses or backquotes, or linked from a page (the
#: demo's documents under sample_cassettes/ are the fake agent's data, not pages)
DOC_PAGE_IN_CODE = re.compile(r"[(`]docs/([\w-]+\.md)[)`]")
DOC_LINK = re.compile(r"\]\((?:docs/)?([\w-]+\.md)\)")


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [name for name in out.stdout.splitlines() if (ROOT / name).is_file()]


def test_no_reference_to_design_notes_outside_the_repository() -> None:
    offenders = []
    for name in tracked_files():
        if name.endswith((".svg", ".png")):
            continue
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_NOTES.search(line):
                offenders.append(f"{name}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def _headings(page: str) -> set[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return {line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")}


def test_the_pages_and_sections_that_code_points_to_exist() -> None:
    missing = []
    for name in tracked_files():
        if not name.endswith((".py", ".md")) or name.startswith("sample_cassettes/"):
            continue
        text = " ".join((ROOT / name).read_text(encoding="utf-8").split())
        pages = DOC_PAGE_IN_CODE.findall(text) if name.endswith(".py") else DOC_LINK.findall(text)
        if name.endswith(".md") and not name.startswith("docs/"):
            pages = [p for p in pages if f"](docs/{p})" in text]
        for page in set(pages):
            if not (ROOT / "docs" / page).is_file():
                missing.append(f"{name}: docs/{page}")
        for page, section in DOC_SECTION.findall(text):
            if (ROOT / "docs" / page).is_file() and section not in _headings(page):
                missing.append(f"{name}: docs/{page}, {section}")
    assert not missing, f"no such page or heading: {missing}"


def test_the_reference_pages_hold_their_sections() -> None:
    for page, needed in {
        "architecture.md": ("Layers", "Data flow", "Feature map"),
        "format.md": ("The cassette format, version 1", "Replay semantics", "Environment contract"),
        "json.md": ("`diff --json`", "`check --json`", "`gate --json`", "Exit status"),
    }.items():
        assert set(needed) <= _headings(page), page


def test_the_architecture_page_stays_short() -> None:
    lines = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
