"""Breakage found by driving the installed app like a newcomer would (hostile cassettes,
signals, huge values, odd keymaps); each test pins one fix.

Pilot tests run the app headless; the few problems that only show in a real terminal use
the tmux helpers of ``test_e2e_tmux``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path

import cassette_tui.tui.commands.open_app as open_app_module
import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.commands.open_app import open_app
from cassette_tui.tui.keymap import keymap_problem
from cassette_tui.tui.text.detail import CUT_HINT, EXPANDED_CHARS
from cassette_tui.tui.widgets.detail import DetailPane
from click.testing import CliRunner
from support.paths import SAMPLES
from support.pilot import screen_text, settle, sync
from support.tmux import Tmux, open_pair

# -- signals: SIGTERM left the terminal in the alternate screen with mouse reporting on --


def test_sigterm_quits_and_gives_the_terminal_back(tmux: Tmux) -> None:
    open_pair(tmux)
    assert tmux.pane("#{alternate_on}") == "1"
    assert tmux.pane("#{mouse_any_flag}") == "1"
    os.kill(int(tmux.pane("#{pane_pid}")), signal.SIGTERM)
    status = tmux.wait_exit()
    assert tmux.pane("#{alternate_on}") == "0"
    assert tmux.pane("#{mouse_any_flag}") == "0"
    assert status in ("143", "")


# -- an entry the engine cannot parse (a 5000-digit number) crashed the app on its row ----

BIG_NUMBER_LINE = '{"seq":2,"tool":"t","args":{},"response":{"v":' + "9" * 5000 + "}}\n"
GOOD_LINE = '{"seq":1,"tool":"search_docs","args":{"q":"x"},"response":{"hits":1}}\n'


def _unreadable_cassette(tmp_path: Path) -> Path:
    path = tmp_path / "bignum.jsonl"
    path.write_text(GOOD_LINE + BIG_NUMBER_LINE)
    return path


async def _ends_on_bad_input(app: CassetteApp, keys: tuple[str, ...] = ()) -> str:
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        for key in keys:
            if app.return_code is None:
                await pilot.press(key)
        for _ in range(200):  # the worker's full parse finds the line, then the app exits
            if app.return_code is not None:
                break
            await asyncio.sleep(0.05)
    assert app.return_code == 2
    assert app.bad_input is not None
    assert "CassetteFormatError(" not in app.bad_input  # a message, not a repr
    return app.bad_input


# An entry the engine cannot parse ends the app as it ends `diff` (status 2, the line and
# field); tests/tui/test_app_bad_input.py holds the other kinds of bad lines.
@sync
async def test_unreadable_entry_in_single_mode_ends_the_app_like_check(tmp_path: Path) -> None:
    app = CassetteApp(open_cassette(_unreadable_cassette(tmp_path)))
    said = await _ends_on_bad_input(app)
    assert said.startswith(f"{tmp_path / 'bignum.jsonl'}:2: field 'response': ")


@sync
async def test_unreadable_entry_in_a_pair_ends_the_app_like_diff(tmp_path: Path) -> None:
    path = _unreadable_cassette(tmp_path)
    app = CassetteApp(open_cassette(path), open_cassette(path))
    # the same bytes on both sides: nothing reads the entry until its row is selected
    said = await _ends_on_bad_input(app, ("j",))
    assert said.startswith(f"{path}:2: field 'response': ")


# -- e on a 1 MB response froze the UI for 5 s (the whole value was drawn) ---------------


def _write(path: Path, *entries: dict) -> Path:
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    return path


@sync
async def test_expanding_a_1mb_response_stays_bounded_and_responsive(tmp_path: Path) -> None:
    a = _write(
        tmp_path / "a.jsonl",
        {"seq": 1, "tool": "t", "args": {}, "response": {"r": "y" * 1_000_000}},
    )
    b = _write(
        tmp_path / "b.jsonl",
        {"seq": 1, "tool": "t", "args": {}, "response": {"r": "z" * 1_000_000}},
    )
    app = CassetteApp(open_cassette(a), open_cassette(b))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        started = time.monotonic()
        await pilot.press("e")
        detail = app.screen.query_one("#detail", DetailPane)
        while "cut even when expanded" not in detail.body_text():
            # a deadline for the worker, not a speed assertion (that is bench_app's job)
            assert time.monotonic() - started < 30, detail.body_text()[:500]
            await asyncio.sleep(0.01)
        await pilot.pause()
        body = detail.body_text()
        assert body.count("y") <= 2 * EXPANDED_CHARS + 1000  # drift + block, not a million
        assert "(+980000 chars)" in body
        await pilot.press("j", "k", "e")  # keys still answer; e cuts again
        await pilot.pause(0.3)
        assert CUT_HINT in detail.body_text()


# -- a response 500 levels deep: RecursionError instead of the detail ---------------------


@sync
async def test_deeply_nested_response_is_shown(tmp_path: Path) -> None:
    deep: object = "leaf"
    for _ in range(250):  # 500 levels: parses, but json.dumps(indent=2) recursed out
        deep = {"k": [deep]}
    path = _write(
        tmp_path / "deep.jsonl", {"seq": 1, "tool": "deep", "args": {"x": deep}, "response": deep}
    )
    app = CassetteApp(open_cassette(path), open_cassette(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)  # the diff, then the detail (workers), however loaded the machine
        detail = app.screen.query_one("#detail", DetailPane)
        body = detail.body_text()
        assert "RecursionError" not in body and "cannot show" not in body, body[:500]
        assert '"k": [' in body and "press e to expand" in body
        assert 'x={"k":[{"k":[' in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert '"k": [' in app.screen.query_one("#step-detail", DetailPane).body_text()


# -- a keymap that names no binding, or gives one key two actions, was taken silently -----


@pytest.mark.parametrize(
    ("keys", "says"),
    [
        ('"main.nxt" = "x"', 'unknown binding id "main.nxt" (did you mean "main.next"?)'),
        ('"main.next" = "x"\n"main.previous" = "x"', '"x" would be both "main.next" and'),
        ('"main.next" = "j"', '"j" would be both "main.next" and "main.cursor_down"'),
        ('"app.quit" = "q"', '"q" would be both "app.quit" and "main.back"'),
        ('"main.next" = ""', "empty key"),
        ('"main.next" = "x,"', "empty key"),
    ],
)
def test_unusable_keymap_is_an_error_before_the_ui(tmp_path: Path, keys: str, says: str) -> None:
    keymap = tmp_path / "keys.toml"
    keymap.write_text(f"[keys]\n{keys}\n")
    result = CliRunner().invoke(open_app, [str(SAMPLES / "fail.jsonl"), "--keys", str(keymap)])
    assert result.exit_code == 2
    assert says in result.output and "keys.toml" in result.output


def test_keymaps_that_move_keys_around_are_fine() -> None:
    assert keymap_problem({"main.next": "x", "main.previous": "X", "step.next": "x"}) is None
    assert keymap_problem({"main.next": "N", "main.previous": "n"}) is None  # a swap
    assert keymap_problem({"main.next": "j", "main.cursor_down": "down"}) is None
    assert keymap_problem({"help.back": "q,question_mark"}) is None  # ? gives way on help


# -- a 6-digit seq (a 100k-step run) shifted its row's columns by one ---------------------


@sync
async def test_six_digit_seqs_keep_the_columns_aligned(tmp_path: Path) -> None:
    entries = [
        {"seq": seq, "tool": "read_file", "args": {"path": "p"}, "response": {"n": seq}}
        for seq in (99_999, 100_000)
    ]
    a = _write(tmp_path / "a.jsonl", *entries)
    b = _write(tmp_path / "b.jsonl", *entries[:1], {**entries[1], "response": {"n": 0}})
    for app in (CassetteApp(open_cassette(a), open_cassette(b)), CassetteApp(open_cassette(a))):
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.5)
            lines = screen_text(app).splitlines()
            rows = [line for line in lines if "read_file path" in line]
            assert len(rows) == 2, lines
            assert len({row.index("read_file") for row in rows}) == 1, rows
            if app.session.b is not None:
                assert rows[0].index(" = ") == rows[1].index(" ~ "), rows
                assert len({row.rindex("read_file") for row in rows}) == 1, rows
            title = next(line for line in lines if line.lstrip().startswith("seq"))
            assert title.index("seq") + 3 == rows[0].index("99999") + 5, (title, rows)


# -- the app reads the same normalization config as `diff` and `check` ---------------------


def test_open_applies_the_normalization_config_like_diff(tmp_path: Path, monkeypatch) -> None:
    from cassette_tui.core.diff.model import Status
    from cassette_tui.core.diff.result import diff_cassettes
    from cassette_tui.tui.commands.open_app import open_app
    from click.testing import CliRunner

    samples = SAMPLES / "signatures"
    a, b = samples / "volatile_args" / "a.jsonl", samples / "volatile_args" / "b.jsonl"
    config = tmp_path / "cassette.toml"
    config.write_text('[normalize]\npresets = ["uuid", "timestamp"]\n', encoding="utf-8")
    opened: list[CassetteApp] = []
    monkeypatch.setattr(CassetteApp, "run", lambda self, **kw: opened.append(self))
    monkeypatch.setattr(open_app_module, "terminal_problem", lambda: None)

    result = CliRunner().invoke(open_app, ["--config", str(config), str(a), str(b)])
    assert result.exit_code == 0, result.output
    app = opened[0]
    assert app.session.a is not None and app.session.b is not None
    statuses = {row.status for row in diff_cassettes(app.session.a, app.session.b).rows}
    assert Status.ARGS_DRIFT not in statuses  # the presets turn the args misses into hits
    assert [app.session.a.key(i) for i in range(len(app.session.a))] == [
        app.session.b.key(i) for i in range(len(app.session.b))
    ]

    config.write_text("[normalize]\npresets = ['no-such-preset']\n", encoding="utf-8")
    result = CliRunner().invoke(open_app, ["--config", str(config), str(a), str(b)])
    assert result.exit_code == 2
    assert "no-such-preset" in result.output


def test_options_before_the_files_belong_to_open(monkeypatch) -> None:
    """`cassette-tui --align key A B` is `cassette-tui open --align key A B`."""
    from cassette_tui.tui.cli import cli
    from click.testing import CliRunner

    samples = SAMPLES
    opened: list[CassetteApp] = []
    monkeypatch.setattr(CassetteApp, "run", lambda self, **kw: opened.append(self))
    monkeypatch.setattr(open_app_module, "terminal_problem", lambda: None)
    args = ["--align", "key", str(samples / "fail.jsonl"), str(samples / "fix.jsonl")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert opened[0].session.align == "key"
    assert CliRunner().invoke(cli, ["--version"]).exit_code == 0


@sync
async def test_n_held_past_the_last_difference_shows_one_toast() -> None:
    samples = SAMPLES
    app = CassetteApp(open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("G", *["n"] * 6)
        await pilot.pause(0.2)
        # (Textual's notification list: private, fine while Textual stays pinned)
        toasts = [note.message for note in app._notifications]
        assert toasts == ["no more differences below"], toasts
