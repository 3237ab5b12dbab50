"""The pin key on the main screen: a preview of the fixture (path and content), enter
writes it, an existing file needs a second enter, escape writes nothing. No agent needed."""

from __future__ import annotations

import functools
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.pin import fixture_name, plan_pin
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens import loop_keys
from cassette_tui.tui.screens.help import help_plain_text
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.screens.pin import PinScreen
from support.pilot import press, screen_text, settle, sync

SIZE = (80, 24)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def pair(samples: Path):
    return open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")


def selected(app: CassetteApp) -> tuple[str, int, Path]:
    """The tool, seq and fixture path of the entry the pin key takes (A's, else B's)."""
    screen = app.screen
    assert isinstance(screen, PairScreen) and screen.result is not None
    row = screen.result.rows[screen.steps.cursor]
    a, b = app.session.pair()
    cassette, index = (a, row.a) if row.a is not None else (b, row.b)
    assert index is not None
    tool, digest = cassette.key(index)
    return tool, cassette.seq(index), Path("fixtures") / fixture_name(tool, digest)


@sync
async def test_pin_previews_then_writes_a_one_entry_fixture(pair, workdir: Path) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tool, seq, target = selected(app)
        await press(pilot, "p")
        assert isinstance(app.screen, PinScreen)
        text = screen_text(app)
        assert f"seq {seq} of" in text and tool in text
        assert target.name in text
        assert '"pinned": {' in text and '"args": {' in text
        assert "enter: write the fixture" in text
        assert not (workdir / target).exists()  # nothing written by the preview
        await press(pilot, "enter")
        assert isinstance(app.screen, PairScreen)
        assert app.session.loop.pins == [target]
    fixture = open_cassette(workdir / target)
    assert len(fixture) == 1 and fixture[0].tool == tool and fixture[0].seq == 1
    assert fixture[0].extra["pinned"]["seq"] == seq


@sync
async def test_escape_leaves_without_writing(pair, workdir: Path) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "p", "escape")
        assert isinstance(app.screen, PairScreen)
        assert app.session.loop.pins == []
    assert not (workdir / "fixtures").exists()


@sync
async def test_an_existing_fixture_needs_a_second_confirmation(pair, workdir: Path) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _, _, target = selected(app)
        (workdir / "fixtures").mkdir()
        (workdir / target).write_text("keep me\n", encoding="utf-8")
        await press(pilot, "p")
        assert "exists already" in screen_text(app)
        await press(pilot, "enter")
        assert isinstance(app.screen, PinScreen)  # asked again, nothing written
        assert "REPLACES it" in screen_text(app)
        assert (workdir / target).read_text(encoding="utf-8") == "keep me\n"
        await press(pilot, "escape")
        assert (workdir / target).read_text(encoding="utf-8") == "keep me\n"
        await press(pilot, "p", "enter", "enter")
        assert isinstance(app.screen, PairScreen)
    record = json.loads((workdir / target).read_text(encoding="utf-8"))
    assert record["seq"] == 1 and "pinned" in record


@sync
async def test_pin_follows_the_cursor_and_a_remapped_key(pair, workdir: Path) -> None:
    app = CassetteApp(*pair, keymap={"main.pin": "P", "pin.confirm": "w"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "g")
        _, seq, target = selected(app)
        await press(pilot, "P")
        assert isinstance(app.screen, PinScreen)
        assert f"seq {seq} of" in screen_text(app)
        await press(pilot, "w")
        assert isinstance(app.screen, PairScreen)
    assert (workdir / target).is_file()


@sync
async def test_help_lists_the_pin_keys(pair) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        text = help_plain_text(app)  # the whole help, as the help screen lays it out
        assert "main.pin" in text and "pin.confirm" in text


@pytest.fixture
def copied(samples: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """fail.jsonl and fix.jsonl in the working folder (short relative names in the
    provenance whatever the checkout's path), and a fixed pin date."""
    for name in ("fail.jsonl", "fix.jsonl"):
        shutil.copy(samples / name, workdir / name)
    fixed = functools.partial(plan_pin, now=datetime(2026, 11, 30, 21, 0, tzinfo=UTC))
    monkeypatch.setattr(loop_keys, "plan_pin", fixed)
    return workdir


def test_snapshot_pin_preview(copied: Path, snap_compare) -> None:
    app = CassetteApp(open_cassette("fail.jsonl"), open_cassette("fix.jsonl"), theme="ansi-dark")

    async def run_before(pilot) -> None:
        await settle(pilot)
        await press(pilot, "p")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
