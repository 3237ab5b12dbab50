"""Fixture names of different tools never collide (``a/b``, ``a_b`` and ``a b`` each get
their own file), and a fixture that exists says which tool and call it holds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import Cassette, load, save
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.loop.pin import (
    FixtureExists,
    existing_fixture,
    fixture_name,
    pin,
    plan_pin,
)
from cassette_tui.tui.cli import cli
from cassette_tui.tui.text.pin import existing_words
from click.testing import CliRunner

TOOLS = ["a/b", "a_b", "a b", "a\x00b", "A_B"]


def _cassette(tmp_path: Path) -> Path:
    entries = [Entry(n, tool, {"q": 1}, {"from": tool}) for n, tool in enumerate(TOOLS, 1)]
    return save(Cassette.from_entries(entries), tmp_path / "run.jsonl")


def test_tools_whose_safe_names_are_equal_get_distinct_fixture_files(tmp_path: Path) -> None:
    source = _cassette(tmp_path)
    paths = [pin(source, seq, tmp_path / "fixtures") for seq in range(1, len(TOOLS) + 1)]
    assert len({p.name for p in paths}) == len(TOOLS)
    assert paths[1].name.startswith("a_b-") and paths[1].name.count("-") == 1  # safe: as is
    for seq, path in enumerate(paths, 1):
        assert load(path)[0].response == {"from": TOOLS[seq - 1]}
    assert sorted(os.listdir(tmp_path / "fixtures")) == sorted(p.name for p in paths)


def test_names_are_distinct_for_long_tools_cut_to_the_same_prefix() -> None:
    a, b = "t" * 80 + "1", "t" * 80 + "2"
    assert fixture_name(a, "sha256:ab") != fixture_name(b, "sha256:ab")


def test_an_existing_fixture_names_the_tool_it_holds(tmp_path: Path) -> None:
    source = _cassette(tmp_path)
    folder = tmp_path / "fixtures"
    # a file of another tool where the a_b fixture goes (an older naming, a hand copy)
    slash = pin(source, 1, folder)
    target = folder / fixture_name("a_b", load(slash).key(0)[1])
    slash.rename(target)
    with pytest.raises(FixtureExists) as caught:
        pin(source, 2, folder)
    assert f"{target}: exists, holding tool 'a/b' seq 1 of {source}" in str(caught.value)
    assert load(target)[0].tool == "a/b"  # untouched

    result = CliRunner().invoke(cli, ["pin", str(source), "--seq", "2", "--out", str(folder)])
    assert result.exit_code == 2, result.output
    assert "holding tool 'a/b' seq 1" in result.output and "use --force" in result.output
    assert "Traceback" not in result.output

    plan = plan_pin(load(source), 2, folder)
    words = existing_words(existing_fixture(plan), "a_b")  # what the app's prompt says
    assert words.startswith(f"it holds tool 'a/b' seq 1 of {source}")
