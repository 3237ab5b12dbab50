"""A long answer in the detail pane and the step screen (issue 31): the pane builds only
the lines on screen, and its keys still reach every line: scroll to the end shows the last
line, ``e`` expands and cuts again, the same after the terminal is resized, in colour and
in plain mode (``NO_COLOR``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.step import StepScreen
from cassette_tui.tui.text.detail import CUT_HINT, EXPANDED_HINT, EXPANDED_LINES
from cassette_tui.tui.widgets.detail import DetailPane
from support.pilot import press, screen_text, settle, sync

LINES = 3_000
LINE = "line {i}: the quick brown fox jumps over the lazy dog, and on, and on, ok"


def _pair(folder: Path) -> tuple[Path, Path]:
    """Two runs whose step 2 answers a list of 3,000 strings, folded at 100 columns; B's
    last string differs."""
    paths = folder / "a.jsonl", folder / "b.jsonl"
    for path, tail in zip(paths, ("", " (changed)"), strict=True):
        content = [LINE.format(i=i) for i in range(LINES)]
        content[-1] += tail
        records = [
            {"seq": 1, "tool": "list_tools", "args": {}, "response": {"ok": True}},
            {"seq": 2, "tool": "read_doc", "args": {"uri": "doc://big"},
             "response": {"content": content}},
        ]  # fmt: skip
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return paths


def _last_value_line() -> str:
    """The start of the last line of the value the expanded detail shows (2,000 lines of
    its JSON: ``{``, ``"content": [``, then the strings), before it folds."""
    return f'"line {EXPANDED_LINES - 3}: the quick'


def _at_the_end(pane: DetailPane) -> None:
    assert pane.max_scroll_y > 0
    assert pane.scroll_y == pane.max_scroll_y


def _pane_lines(pane: DetailPane) -> str:
    """The lines the pane draws now, as text."""
    return "\n".join(pane.render_line(y).text for y in range(pane.scrollable_content_region.height))


@pytest.mark.parametrize("plain", [False, True], ids=["colour", "plain"])
@sync
async def test_step_screen_scrolls_to_the_last_line_of_a_long_answer(
    tmp_path: Path, plain: bool
) -> None:
    a, b = _pair(tmp_path)
    app = CassetteApp(open_cassette(a), open_cassette(b), theme="ansi-dark", plain=plain)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "g", "j", "enter")  # step 2, full screen
        await settle(pilot)
        assert isinstance(app.screen, StepScreen)
        pane = app.screen.detail
        assert CUT_HINT in pane.body_text()

        await press(pilot, "e")  # expanded: 2,000 lines of each side, folded
        await settle(pilot)
        # A and B side by side, each line folded in its half: more lines than the value
        assert pane.virtual_size.height > 2 * EXPANDED_LINES
        await press(pilot, "end")
        await settle(pilot)
        _at_the_end(pane)
        shown = screen_text(app)
        assert EXPANDED_HINT.split(":")[0] in " ".join(shown.split())
        assert _last_value_line() in shown
        assert "line 0:" not in shown

        await press(pilot, "home")
        await settle(pilot)
        assert pane.scroll_y == 0 and "read_doc" in screen_text(app)

        await press(pilot, "e")  # cut again: the pane is short, the scroll within it
        await settle(pilot)
        assert CUT_HINT in pane.body_text()
        assert pane.scroll_y <= pane.max_scroll_y


@sync
async def test_the_pane_under_the_rows_expands_and_scrolls_to_the_end(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    app = CassetteApp(open_cassette(a), open_cassette(b), theme="ansi-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "g", "j", "e")  # step 2 in the pane below the rows, expanded
        await settle(pilot)
        pane = app.screen.query_one("#detail", DetailPane)
        await press(pilot, "tab")
        assert pane.has_focus
        await press(pilot, "end")
        await settle(pilot)
        _at_the_end(pane)
        drawn = _pane_lines(pane).splitlines()
        whole = pane.body_text(pane.virtual_size.width).splitlines()
        assert [line.rstrip() for line in drawn] == [line.rstrip() for line in whole[-len(drawn) :]]
        assert EXPANDED_HINT.split(":")[0] in " ".join(whole[-len(drawn) - 10 :])
        await press(pilot, "pageup", "up")
        await settle(pilot)
        assert 0 < pane.scroll_y < pane.max_scroll_y


@sync
async def test_a_resize_lays_the_long_answer_out_again(tmp_path: Path) -> None:
    """Narrower, the lines fold more: the end is further down and still the last line."""
    a, b = _pair(tmp_path)
    app = CassetteApp(open_cassette(a), open_cassette(b), theme="ansi-dark")
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "g", "j", "enter", "e")
        await settle(pilot)
        pane = app.screen.detail
        wide = pane.virtual_size.height
        await pilot.resize_terminal(70, 30)
        await settle(pilot)
        assert pane.virtual_size.height > wide
        assert pane.virtual_size.width == pane.scrollable_content_region.width
        await press(pilot, "end")
        await settle(pilot)
        _at_the_end(pane)
        assert EXPANDED_HINT.split(":")[0].split()[-1] in screen_text(app)
