"""The repository stands alone: nothing in it points to a file a clone does not have."""

from __future__ import annotations

import re
import subprocess

import pytest
from support.paths import ROOT

#: design notes kept outside the repository while it was written
OUTSIDE_NOTES = re.compile(r"\b(DESIGN|STYLE)\.md\b")
#: references to a section of docs/architecture.md in docstrings and comments
DOC_SECTION = re.compile(r'docs/architecture\.md, "([^"]+)"')


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


def test_sections_of_the_architecture_page_that_code_points_to_exist() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    headings = {line.lstrip("#").strip() for line in page.splitlines() if line.startswith("#")}
    missing = []
    for name in tracked_files():
        if not name.endswith(".py"):
            continue
        text = " ".join((ROOT / name).read_text(encoding="utf-8").split())
        for section in DOC_SECTION.findall(text):
            if section not in headings:
                missing.append(f"{name}: {section}")
    assert not missing, f"docs/architecture.md has no such heading: {missing}"
    for needed in ("Modules", "Data flow", "The cassette format, version 1"):
        assert needed in headings
