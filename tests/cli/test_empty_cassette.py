"""A cassette with no calls is never a useful fixture (nothing to replay or compare): ``check``
reports an ``empty`` finding and exits 1; the app's header says it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import load
from cassette_tui.core.scan.lint import lint
from cassette_tui.tui.cli import cli
from click.testing import CliRunner


@pytest.fixture(params=["empty", "blank_lines"])
def empty(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / "empty.jsonl"
    path.write_text("" if request.param == "empty" else "\n\n  \n")
    return path


def test_lint_finds_the_empty_cassette(empty: Path) -> None:
    (finding,) = lint(load(empty))
    assert (finding.kind, finding.message) == ("empty", "the cassette has no calls")


def test_check_says_empty_and_exits_1(empty: Path) -> None:
    result = CliRunner().invoke(cli, ["check", str(empty)])
    assert result.exit_code == 1, result.output
    out = " ".join(result.output.split())
    assert "0 entries, 1 finding" in out and "empty" in out
    assert "the cassette has no calls" in out


def test_check_json_has_the_empty_finding(empty: Path) -> None:
    result = CliRunner().invoke(cli, ["check", str(empty), "--json"])
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["entries"] == 0
    assert [(f["kind"], f["message"]) for f in doc["findings"]] == [
        ("empty", "the cassette has no calls")
    ]
