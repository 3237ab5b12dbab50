"""The project's own promises about packaging, CI and the README."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed_in_pyproject() -> None:
    """A wheel (non-editable) install only ships the packages listed in pyproject."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = set()
    tops = (
        ("core", "cassette_tui.core"),
        ("tui", "cassette_tui.tui"),
        ("pytest_plugin", "cassette_tui.pytest_plugin"),
    )
    for top, name in tops:
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((name, *rel)))
    assert found == listed


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r"^(python3 -m venv \.venv && .*pytest.*)$", ci, re.MULTILINE)
    assert command, ".ci/run must run the README's test command"
    assert command.group(1) in readme


def test_readme_demo_command_uses_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in re.findall(r"sample_cassettes/[\w/.-]+\.jsonl", readme):
        assert (ROOT / path).is_file(), path
