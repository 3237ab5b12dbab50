"""Pilot tests of the app at 80x24: every key, both alignments, search, help, the step
view, single-file mode, the palette, a remapped key, and cassettes full of markup and
escape sequences. They drive the real engine (``core.diff``, ``core.lint``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.bindings import APP, HELP, PAIR, SINGLE, STEP
from cassette_tui.tui.commands.open_app import open_app
from cassette_tui.tui.keymap import load_keymap
from cassette_tui.tui.screens.help import HelpScreen, help_plain_text
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.screens.single import SingleScreen
from cassette_tui.tui.screens.step import StepScreen
from cassette_tui.tui.text.rows import PairRows
from click.testing import CliRunner
from support.pilot import press, screen_segments, screen_text, settle, sync
from textual.widgets import Input

SIZE = (80, 24)


@pytest.fixture
def pair(samples: Path):
    return open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")


@pytest.fixture
def result(pair):
    return diff_cassettes(*pair)


def notable(result) -> list[int]:
    return [i for i, row in enumerate(result.rows) if row.status is not Status.SAME]


@sync
async def test_main_screen_shows_files_counts_and_first_divergence(pair, result) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PairScreen)
        text = screen_text(app)
        assert f"A fail.jsonl ({len(pair[0])})" in text
        assert f"B fix.jsonl ({len(pair[1])})" in text
        assert "first divergence" in text
        first = result.first_divergence
        assert first is not None
        assert app.screen.steps.cursor == first
        assert f"row {first + 1}" in text
        # the cursor row is marked without colour
        cursor_line = next(line for line in text.splitlines() if line.startswith("▶"))
        assert f" {cursor_line.split()[0]}" != ""
        row = result.rows[first]
        glyph = {
            Status.RESPONSE_DRIFT: "~",
            Status.ARGS_DRIFT: "≠",
            Status.OTHER_CALL: "×",
            Status.ONLY_A: "<",
            Status.ONLY_B: ">",
        }[row.status]
        assert f" {glyph} " in cursor_line
        assert "n Next diff" in text and "? Keys" in text


@sync
async def test_movement_keys(pair, result) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        steps = app.screen.steps
        last = len(result.rows) - 1
        await press(pilot, "g")
        assert steps.cursor == 0
        await press(pilot, "j")
        assert steps.cursor == 1
        await press(pilot, "down")
        assert steps.cursor == 2
        await press(pilot, "k")
        assert steps.cursor == 1
        await press(pilot, "up", "up", "up")
        assert steps.cursor == 0
        await press(pilot, "G")
        assert steps.cursor == last
        await press(pilot, "home")
        assert steps.cursor == 0
        await press(pilot, "end")
        assert steps.cursor == last
        await press(pilot, "pageup")
        assert steps.cursor == 0
        await press(pilot, "pagedown")
        assert steps.cursor == last  # the sample pair fits one page


@sync
async def test_next_and_previous_difference(pair, result) -> None:
    diffs = notable(result)
    assert len(diffs) >= 2
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        steps = app.screen.steps
        await press(pilot, "g")
        await press(pilot, "n")
        assert steps.cursor == diffs[0] if diffs[0] > 0 else diffs[1]
        await press(pilot, "G", "N")
        assert steps.cursor == diffs[-2] if diffs[-1] == len(result.rows) - 1 else diffs[-1]
        await press(pilot, "g", "right_square_bracket")
        here = steps.cursor
        assert here in diffs and here > 0
        await press(pilot, "right_square_bracket")
        assert steps.cursor == min(d for d in diffs if d > here)
        await press(pilot, "left_square_bracket")
        assert steps.cursor == here
        await press(pilot, "f")
        assert steps.cursor == result.first_divergence


@sync
async def test_toggle_alignment_by_key_and_back(pair) -> None:
    by_key = diff_cassettes(*pair, align="key")
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "by seq" in screen_text(app)
        await press(pilot, "a")
        assert app.session.align == "key"
        screen = app.screen
        assert screen.result.align == "key"
        assert [r.status for r in screen.result.rows] == [r.status for r in by_key.rows]
        assert "by key" in screen_text(app)
        # the cursor stays on the same A entry it was on
        await press(pilot, "a")
        assert app.session.align == "seq"
        assert "by seq" in screen_text(app)


@sync
async def test_start_aligned_by_key(pair) -> None:
    by_key = diff_cassettes(*pair, align="key")
    app = CassetteApp(*pair, align="key")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.steps.cursor == by_key.first_divergence
        assert "by key" in screen_text(app)


@sync
async def test_detail_shows_both_sides_and_drift_per_path(pair, result) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=(80, 60)) as pilot:
        await settle(pilot)
        index = next(i for i in notable(result) if result.drift(i))
        app.screen.steps.cursor = index
        await settle(pilot)
        text = screen_text(app)
        item = result.drift(index)[0]
        assert "drift (" in text
        assert item.path in text
        assert "A args" in text and "B args" in text


@sync
async def test_tab_switches_focus_and_keys_scroll_the_detail(pair) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        cursor = screen.steps.cursor
        assert screen.steps.has_focus
        await press(pilot, "tab")
        assert screen.detail.has_focus
        await press(pilot, "j", "j", "pagedown")
        assert screen.steps.cursor == cursor  # the list did not move
        assert screen.detail.scroll_y > 0
        await press(pilot, "g")
        assert screen.detail.scroll_y == 0
        await press(pilot, "tab")
        assert screen.steps.has_focus


@sync
async def test_enter_opens_the_step_and_q_escape_go_back(pair, result) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.screen
        await press(pilot, "enter")
        assert isinstance(app.screen, StepScreen)
        assert app.screen.index == main.steps.cursor
        assert "B response" in screen_text(app) or "B error" in screen_text(app)
        before = app.screen.index
        await press(pilot, "n")
        assert app.screen.index > before
        assert main.steps.cursor == app.screen.index
        await press(pilot, "N")
        assert app.screen.index == before
        await press(pilot, "j", "k", "e")
        assert main.expanded
        await press(pilot, "q")
        assert app.screen is main
        assert app.is_running
        await press(pilot, "enter", "escape")
        assert app.screen is main


@sync
async def test_help_lists_every_key_and_legend(pair) -> None:
    app = CassetteApp(*pair)
    # tall enough for the whole help (every screen's keys), so no line is scrolled away
    async with app.run_test(size=(80, 300)) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for binding in [*PAIR, *SINGLE, *STEP, *APP, *HELP]:
            assert binding.id in text, binding.id
        for glyph in "=~≠×<>↻!":
            assert f"  {glyph} " in text
        await press(pilot, "q")
        assert isinstance(app.screen, PairScreen)
        await press(pilot, "f1")
        assert isinstance(app.screen, HelpScreen)
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen)


@sync
async def test_search_then_n_repeats_and_escape_clears(tmp_path: Path) -> None:
    rows = [
        {
            "seq": i,
            "tool": "search_docs" if i % 3 else "read_file",
            "args": {"q": f"query {i}"},
            "response": {"text": "needle" if i in (4, 9) else "hay"},
        }
        for i in range(1, 13)
    ]
    a = tmp_path / "a.jsonl"
    a.write_text("".join(json.dumps(r) + "\n" for r in rows))
    app = CassetteApp(open_cassette(a), open_cassette(a))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await press(pilot, "g", "slash")
        bar = screen.query_one("#search", Input)
        assert bar.has_focus
        for key in "NEEDLE":
            await pilot.press(key)
        await press(pilot, "enter")
        assert screen.steps.has_focus
        assert screen.steps.cursor == 3  # seq 4
        assert "search: needle" in screen_text(app)
        await press(pilot, "n")
        assert screen.steps.cursor == 8  # seq 9
        await press(pilot, "N")
        assert screen.steps.cursor == 3
        # searching args and tool names too
        await press(pilot, "slash")
        for key in "query 11":
            await pilot.press("space" if key == " " else key)
        await press(pilot, "enter")
        assert screen.steps.cursor == 10
        await press(pilot, "escape")
        assert screen.search_term == ""
        # typing q into the search bar types, it does not quit
        await press(pilot, "slash", "q")
        assert app.is_running and bar.value == "q"
        await press(pilot, "escape")
        assert screen.steps.has_focus and not bar.has_class("-open")


@sync
async def test_expand_shows_long_values_whole(tmp_path: Path) -> None:
    long_text = "x" * 500 + "END"
    rec = {"seq": 1, "tool": "read_file", "args": {"path": "a"}, "response": {"text": long_text}}
    other = dict(rec, response={"text": "short"})
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps(rec) + "\n")
    b.write_text(json.dumps(other) + "\n")
    app = CassetteApp(open_cassette(a), open_cassette(b))
    async with app.run_test(size=(80, 60)) as pilot:
        await settle(pilot)
        assert "press e to expand" in screen_text(app)
        assert "END" not in screen_text(app)
        await press(pilot, "e")
        text = screen_text(app)
        assert "press e to expand" not in text
        assert "END" in text


@sync
async def test_q_quits_main_and_ctrl_q_quits_anywhere(pair) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "q")
        assert not app.is_running
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


@sync
async def test_palette_runs_screen_actions(pair) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+p")
        for key in "align":
            await pilot.press(key)
        await settle(pilot)
        assert "main.toggle_align" in screen_text(app)
        await press(pilot, "enter")
        await settle(pilot)
        assert app.session.align == "key"


@sync
async def test_remapped_key(pair, result) -> None:
    app = CassetteApp(*pair, keymap={"main.next": "x", "main.toggle_align": "ctrl+t"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "g", "x")
        assert app.screen.steps.cursor in notable(result)
        await press(pilot, "ctrl+t")
        assert app.session.align == "key"
        await press(pilot, "question_mark")
        # the whole help (longer than one screen), as the help screen lays it out
        shown = help_plain_text(app).lower()
        line = next(line for line in shown.splitlines() if "main.toggle_align" in line)
        assert "ctrl+t" in line or "^t" in line


def test_keymap_file(tmp_path: Path) -> None:
    good = tmp_path / "keys.toml"
    good.write_text('[keys]\n"main.next" = "x"\n')
    assert load_keymap(good) == {"main.next": "x"}
    bad = tmp_path / "bad.toml"
    bad.write_text("[keys]\nmain = 3\n")
    with pytest.raises(ValueError, match="binding.id"):
        load_keymap(bad)


@sync
async def test_single_file_mode(samples: Path) -> None:
    from cassette_tui.core.scan.lint import lint

    cassette = open_cassette(samples / "fail.jsonl")
    findings = lint(cassette)
    app = CassetteApp(cassette)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SingleScreen)
        text = screen_text(app)
        assert f"cassette fail.jsonl ({len(cassette)} entries)" in text
        assert f"{len(findings)} finding{'s' if len(findings) != 1 else ''}:" in text
        repeated = {s for f in findings if f.kind == "repeated_key" for s in f.seqs}
        assert repeated, "the sample repeats a key"
        rows = [line for line in text.splitlines() if "search_docs" in line or "read_file" in line]
        marked = {int(line[1:6]) for line in rows if line[6] == "↻"}
        assert marked == {s for s in repeated if s <= len(rows)}
        await press(pilot, "G")
        assert app.screen.steps.cursor == len(cassette) - 1
        await press(pilot, "g", "enter")
        assert isinstance(app.screen, StepScreen)
        assert "args" in screen_text(app)
        await press(pilot, "q", "a")  # no alignment in single mode: nothing happens
        assert isinstance(app.screen, SingleScreen) and app.is_running
        await press(pilot, "q")
        assert not app.is_running


@sync
async def test_only_visible_rows_are_rendered(tmp_path: Path) -> None:
    lines = "".join(
        json.dumps({"seq": i, "tool": "t", "args": {"i": i}, "response": {"v": i % 7}}) + "\n"
        for i in range(1, 5001)
    )
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(lines)
    b.write_text(lines.replace('"v": 3', '"v": 4'))
    rendered: list[int] = []
    original = PairRows.render

    def spy(self, index, width, styles):
        rendered.append(index)
        return original(self, index, width, styles)

    PairRows.render = spy  # type: ignore[method-assign]
    try:
        app = CassetteApp(open_cassette(a), open_cassette(b))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            steps = app.screen.steps
            # in a list longer than the screen the keys move the cursor, not just the view
            start = steps.cursor
            await press(pilot, "down")
            assert steps.cursor == start + 1
            await press(pilot, "pagedown")
            assert steps.cursor > start + 5
            await press(pilot, "pageup", "up")
            assert steps.cursor == start
            await press(pilot, "end")
            assert steps.cursor == 4999
            assert steps.scroll_offset.y > 4900
            await press(pilot, "home")
            assert steps.cursor == 0 and steps.scroll_offset.y == 0
            await press(pilot, "G")
            assert steps.cursor == 4999
    finally:
        PairRows.render = original  # type: ignore[method-assign]
    assert rendered
    assert len(set(rendered)) < 60  # two screens' worth, not 5000 rows


MARKUP = "[bold red]boom[/] [link=http://x]click[/link] :smile:"
ESCAPES = "\x1b[2J\x1b[31mred\x07bell\x08\x00nul\x9bcsi\u202eevil\x7f"


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    base = {
        "seq": 1,
        "tool": "[b]tool[/b]\x1b[2J",
        "args": {"q": MARKUP, "esc": ESCAPES, "long": "L" * 20000},
        "response": {"text": MARKUP + ESCAPES, "html": "<script>x</script>"},
    }
    a, b = tmp_path / "[red]a\x1b[2J.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps(base) + "\n" + json.dumps(dict(base, seq=2)) + "\n")
    b.write_text(json.dumps(dict(base, response={"text": ESCAPES + MARKUP})) + "\n")
    return a, b


def _assert_inert(app: CassetteApp) -> None:
    for text in screen_segments(app):
        assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in text), repr(text)
        assert "\u202e" not in text


@sync
async def test_markup_and_escapes_show_literally(hostile) -> None:
    a, b = hostile
    app = CassetteApp(open_cassette(a), open_cassette(b))
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "[red]a␛[2J.jsonl" in text
        assert "[b]tool[/b]␛[2J" in text
        assert "[bold red]boom[/]" in text
        _assert_inert(app)
        await press(pilot, "enter")
        text = screen_text(app)
        assert "[bold red]boom[/] [link=http://x]click[/link] :smile:" in text
        assert "press e to expand" in text
        _assert_inert(app)
        await press(pilot, "e")
        _assert_inert(app)
        await press(pilot, "q", "question_mark")
        _assert_inert(app)


@sync
async def test_markup_and_escapes_in_single_mode(hostile) -> None:
    app = CassetteApp(open_cassette(hostile[0]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "[red]a␛[2J.jsonl" in screen_text(app)
        _assert_inert(app)
        await press(pilot, "slash")
        for key in "boom":
            await pilot.press(key)
        await press(pilot, "enter")
        assert app.screen.steps.cursor == 1
        await press(pilot, "n")  # both rows match: past the last, on from the top
        assert app.screen.steps.cursor == 0
        _assert_inert(app)


def test_open_rejects_bad_input_before_the_ui(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(open_app, [str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2
    assert "nope.jsonl" in missing.output and "no such file" in missing.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"seq": 1, "tool": "t", "args": {}, "response": 1}\n'
        '{"seq": "x", "tool": "t", "args": {}, "response": 1}\n'
    )
    result = runner.invoke(open_app, [str(bad)])
    assert result.exit_code == 2
    assert "bad.jsonl:2" in result.output and "seq" in result.output
    three = runner.invoke(open_app, [str(bad), str(bad), str(bad)])
    assert three.exit_code == 2 and "one or two files" in three.output
    keys = tmp_path / "keys.toml"
    keys.write_text("not toml [")
    good = tmp_path / "good.jsonl"
    good.write_text('{"seq": 1, "tool": "t", "args": {}, "response": 1}\n')
    badkeys = runner.invoke(open_app, [str(good), "--keys", str(keys)])
    assert badkeys.exit_code == 2 and "keymap" in badkeys.output
