"""The words around the calls in the app (issue 10): the header's outcome line, the step
view's "said before this call" and "after this call, the run ended" blocks, the expand
key on long words, and warnings for bad ones. Pilot tests at 80x24 on made-up tau-bench
runs, one on tau-bench task 2 from ../shared/real (skipped where absent), and SVG
snapshots of the header and the step view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.single import SingleScreen
from cassette_tui.tui.screens.step import StepScreen
from support.pilot import press, screen_text, settle, sync
from textual.pilot import Pilot

SIZE = (80, 24)
LONG = "Please downgrade every one of my reservations to economy, " * 6


def _call(n: int, name: str, rid: str) -> dict:
    return {"id": f"c{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps({"id": rid})}}  # fmt: skip


def _runs() -> list[dict]:
    """Task 7: trial 0 passes and answers; trial 1 asks for another reservation, then runs
    out of steps on a tool result (reward_info null)."""
    ok = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "Cancel reservation R1."},
        {"role": "assistant", "content": "Looking up R1.", "tool_calls": [_call(0, "get", "R1")]},
        {"role": "tool", "tool_call_id": "c0", "content": '{"id": "R1"}'},
        {"role": "assistant", "content": None, "tool_calls": [_call(1, "cancel", "R1")]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'},
        {"role": "assistant", "content": "R1 is cancelled."},
        {"role": "user", "content": "thanks ###STOP###"},
    ]
    cut = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": LONG},
        {"role": "assistant", "content": "Looking up R2.", "tool_calls": [_call(0, "get", "R2")]},
        {"role": "tool", "tool_call_id": "c0", "content": '{"id": "R2"}'},
        {"role": "assistant", "content": None, "tool_calls": [_call(1, "get", "R3")]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"id": "R3"}'},
    ]
    return [
        {"task_id": 7, "trial": 0, "reward": 1.0, "info": {"reward_info": {"reward": 1.0}},
         "traj": ok},
        {"task_id": 7, "trial": 1, "reward": 0.0, "info": {"reward_info": None}, "traj": cut},
    ]  # fmt: skip


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_runs()))
    return path


def pair_app(runs: Path) -> CassetteApp:
    """A = the run that hit the step limit, B = the passing one."""
    return CassetteApp(
        open_cassette(f"{runs}#task=7,trial=1"),
        open_cassette(f"{runs}#task=7,trial=0"),
        theme="ansi-dark",
    )


def header(app: CassetteApp) -> list[str]:
    summary = app.screen.query_one("#summary")
    return [line.rstrip() for line in screen_text(app).splitlines()[: summary.size.height]]


@sync
async def test_header_shows_each_runs_outcome(runs: Path) -> None:
    app = pair_app(runs)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lines = header(app)
        assert len(lines) == 4  # the outcome line is the second, the rest stay
        assert lines[1].strip() == "A ✗ reward 0 · step limit reached (2 steps)   B ✓ reward 1"
        assert lines[2].strip().startswith("first divergence")


@sync
async def test_step_view_shows_the_words_before_the_call_and_e_expands(runs: Path) -> None:
    app = pair_app(runs)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "g", "enter")
        assert isinstance(app.screen, StepScreen)
        text = screen_text(app)
        assert "A said before this call" in text and "B said before this call" in text
        assert "answering user: Please downgrade" in text
        assert "answering user: Cancel reservation" in text
        assert "assistant: Looking up R2." in text and "assistant: Looking up R1." in text
        assert "press e to expand" in text  # A's long message is cut
        lines = text.splitlines()
        cut_at = next(i for i, x in enumerate(lines) if "assistant: Looking up R2." in x)
        await press(pilot, "e")
        text = screen_text(app)
        assert "press e to expand" not in text
        lines = text.splitlines()
        whole_at = next(i for i, x in enumerate(lines) if "assistant: Looking up R2." in x)
        assert whole_at > cut_at  # the whole message is shown above the assistant's words
        assert lines[whole_at - 1].strip() == "reservations to economy,"


@sync
async def test_step_view_of_the_last_call_says_how_the_run_ended(runs: Path) -> None:
    app = pair_app(runs)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "G", "enter")
        assert isinstance(app.screen, StepScreen)
        assert "answering: the result of seq 1 get" in screen_text(app)  # A's second call
        await press(pilot, "G")  # the bottom of the step
        text = screen_text(app)
        assert "A after this call, the run ended" in text
        assert "✗ reward 0 · step limit reached (2" in text
        assert "no final answer: the run ended after" in text
        assert "how we know: info.reward_info is" in text
        assert "✓ reward 1" in text and "final answer: R1 is cancelled." in text


@sync
async def test_single_file_header_and_detail(runs: Path, tmp_path: Path) -> None:
    from cassette_tui.core.format.cassette import save

    written = save(open_cassette(f"{runs}#task=7,trial=1"), tmp_path / "cut.jsonl")
    app = CassetteApp(open_cassette(written), theme="ansi-dark")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SingleScreen)
        lines = header(app)
        assert lines[1].strip() == "outcome ✗ reward 0 · step limit reached (2 steps)"
        await press(pilot, "G", "enter")
        text = screen_text(app)
        assert "said before this call" in text and "answering: the result of seq 1 get" in text
        await press(pilot, "G")
        text = screen_text(app)
        assert "after this call, the run ended" in text
        assert "step limit reached (2 steps)" in text
        assert '"context"' not in text  # the words are not repeated as "other fields"


@sync
async def test_bad_words_are_shown_as_ignored_not_an_error(tmp_path: Path) -> None:
    good = {"seq": 1, "tool": "t", "args": {"q": 1}, "response": {"r": 1}}
    bad = {**good, "context": {"assistant": 3, "answered": {"role": "user", "text": "hi"}}}
    pa, pb = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    pa.write_text(json.dumps(bad) + "\n")
    pb.write_text(json.dumps(good) + "\n")
    app = CassetteApp(open_cassette(pa), open_cassette(pb), theme="ansi-dark")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert len(header(app)) == 3  # no outcome: the header keeps its three lines
        await press(pilot, "enter")
        text = screen_text(app)
        assert "answering user: hi" in text
        assert "ignored: line 1: context.assistant:" in text


@sync
async def test_task_2_step_limit_is_in_the_header(real: Path) -> None:
    tau = real / "tau-bench" / "gpt-4o-airline.json"
    app = CassetteApp(
        open_cassette(f"{tau}#task=2,trial=1"), open_cassette(f"{tau}#task=2,trial=2")
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lines = header(app)
        assert lines[1].strip() == "A ✗ reward 0 · step limit reached (30 steps)   B ✓ reward 1"


def _keys(*pressed: str):
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        for key in pressed:
            await pilot.press(key)
            await settle(pilot)

    return run_before


class TestWordsSnapshots:
    def test_header_with_outcomes(self, snap_compare, runs: Path) -> None:
        assert snap_compare(pair_app(runs), terminal_size=SIZE, run_before=_keys())

    def test_step_view_with_words(self, snap_compare, runs: Path) -> None:
        assert snap_compare(pair_app(runs), terminal_size=SIZE, run_before=_keys("g", "enter"))
