"""Bisect and swap in the app (issue 28): ``b`` on the loop panel bisects A against B with
the real agent (progress, escape keeps what was learned, flaky candidates and runs that
left the recording said as such, a hybrid opened beside B or A), and ``s`` on a row of the
pair view gates A with B's answer there (the mark beside the row, several rows at once,
rows it cannot swap say why)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens import bisect as bisect_screen
from cassette_tui.tui.screens.bisect import BisectScreen
from cassette_tui.tui.screens.loop import LoopScreen
from cassette_tui.tui.screens.loop_pair import LoopPairScreen
from cassette_tui.tui.screens.pair import PairScreen
from support.factory import write_cassette
from support.loop import agent_cmd
from support.paths import ROOT
from support.pilot import loop_text, notes, press, screen_text, settle, sync, wait_until
from textual.pilot import Pilot

AGENT = ROOT / "tests" / "support" / "agents" / "bisect_agent.py"
SIZE = (100, 30)


def pair(folder: Path, steps: int, *, same_first: bool = False, extra: bool = False) -> tuple:
    """A (failing: every ``check`` answered ``bad``) and B (``good``), as cassettes opened
    from files. ``same_first``: step 1 answered ``good`` in both; ``extra``: A ends with a
    call B never made."""

    def run(state: str) -> list[dict]:
        out = [{"seq": i, "tool": "check", "args": {"step": i},
                "response": {"state": "good" if same_first and i == 1 else state}}
               for i in range(1, steps + 1)]  # fmt: skip
        if extra and state == "bad":
            out.append({"seq": steps + 1, "tool": "note", "args": {}, "response": "x"})
        return out

    a = write_cassette(folder / "fail.jsonl", *run("bad"))
    b = write_cassette(folder / "pass.jsonl", *run("good"))
    return open_cassette(str(a)), open_cassette(str(b))


def app_for(folder: Path, steps: int, *args: str, **kw: bool) -> CassetteApp:
    a, b = pair(folder, steps, **kw)
    template = agent_cmd("--steps", str(steps), *args, script=AGENT)
    return CassetteApp(a, b, align="seq", agent=AgentCommand.parse(template))


async def open_bisect(pilot: Pilot) -> BisectScreen:
    await settle(pilot)
    await pilot.press("l")
    await settle(pilot)
    assert isinstance(pilot.app.screen, LoopScreen)
    assert "Bisect – b here: which of A's differing responses make it fail" in loop_text(pilot.app)
    await pilot.press("b")
    screen = pilot.app.screen
    assert isinstance(screen, BisectScreen)
    return screen


async def bisect_done(pilot: Pilot, screen: BisectScreen) -> None:
    await wait_until(pilot, lambda: screen.result is not None and not screen.running, "bisect")
    await settle(pilot)


@pytest.fixture
def one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """One offline replay per candidate (the screen's default is 5, as the command's)."""
    monkeypatch.setattr(bisect_screen, "RUNS", 1)


@sync
async def test_b_on_the_loop_panel_bisects_and_opens_a_hybrid_beside_b_or_a(
    tmp_path: Path, one_run: None
) -> None:
    app = app_for(tmp_path, 6, "--needs", "2,5")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_bisect(pilot)
        await bisect_done(pilot, screen)
        text = screen_text(app)
        assert "2 of 6 differing responses suffice: A seq 2 check $.state, A seq 5 check" in text
        assert "not proven minimal" not in text
        result = screen.result
        assert result is not None and app.session.loop.bisect is result
        # the hybrids are where `cassette-tui bisect` puts them: bisect-<UTC time>/ beside A
        assert result.out_dir is not None and result.out_dir.parent == tmp_path
        assert result.out_dir.name.startswith("bisect-")
        assert (result.out_dir / "minimal.jsonl").exists()
        assert "minimal" in text and "none of A's answers (B as recorded)" in text
        assert f"{len(result.candidates)} candidates · {result.replays} replays" in text
        # enter: the minimal hybrid (first row) against B in the main view
        await press(pilot, "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, LoopPairScreen), "hybrid vs B")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, LoopPairScreen) and view.result is not None
        assert view.session.a is not None and view.session.a.path is not None
        assert Path(view.session.a.path).name == "minimal.jsonl"
        # B's answers everywhere but the two steps taken from A
        assert [r.status.value for r in view.result.rows] == [
            "same", "response_drift", "same", "same", "response_drift", "same"
        ]  # fmt: skip
        await press(pilot, "q")
        assert app.screen is screen
        # a: A against the hybrid under the cursor (the last candidate)
        await press(pilot, "G", "a")
        await wait_until(pilot, lambda: isinstance(app.screen, LoopPairScreen), "A vs hybrid")
        view = app.screen
        assert isinstance(view, LoopPairScreen)
        assert view.session.b is not None and view.session.b.path is not None
        assert Path(view.session.b.path) == result.candidates[-1].cassette
        await press(pilot, "q", "q")
        assert isinstance(app.screen, PairScreen)
        # the loop panel says what the bisect found
        await press(pilot, "l")
        assert "Bisect 2 of 6 suffice" in loop_text(app)
        # b again: the last bisect of this pair in view, nothing rerun until b there
        await press(pilot, "b")
        again = app.screen
        assert isinstance(again, BisectScreen) and again is not screen
        assert again.result is result and not again.running
        assert "2 of 6 differing responses suffice" in screen_text(app)


@sync
async def test_escape_keeps_the_smallest_failing_set_so_far(tmp_path: Path, one_run: None) -> None:
    # with A's answer at step 1 alone the agent hangs: the bisect is stopped there
    app = app_for(tmp_path, 4, "--needs", "1,2", "--when", "1", "--then", "hang")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_bisect(pilot)

        def hanging() -> bool:
            current = screen.current
            return current is not None and [s.a_seq for s in current] == [1]

        await wait_until(pilot, hanging, "the candidate that hangs")
        text = screen_text(app)
        assert "candidate 4 · 3 tried · 3 replays" in text
        assert "trying A's answers at seq 1" in text
        await press(pilot, "escape")
        await bisect_done(pilot, screen)
        result = screen.result
        assert result is not None and result.cancelled
        text = screen_text(app)
        assert "stopped: the smallest failing set so far, not proven minimal" in text
        assert "2 of 4 differing responses suffice: A seq 1 check $.state, A seq 2" in text
        assert "so far" in text  # the row of minimal.jsonl
        assert screen.is_current  # escape stopped it; a second escape leaves
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen)


@sync
async def test_flaky_candidates_and_runs_that_left_the_recording_are_said_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bisect_screen, "RUNS", 2)
    flaky = tmp_path / "flaky"
    flaky.mkdir()
    app = app_for(flaky, 4, "--needs", "1,2", "--when", "1", "--then", "flaky", "--run", "{run}")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_bisect(pilot)
        await bisect_done(pilot, screen)
        text = screen_text(app)
        assert "? unresolved A's answers at seq 1 · flaky: 1/2 passed" in text
        assert "1 candidate(s) unresolved" in text
        assert "2 of 4 differing responses suffice" in text
    lost = tmp_path / "lost"
    lost.mkdir()
    app = app_for(lost, 4, "--needs", "1,2", "--when", "1", "--then", "lost")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_bisect(pilot)
        await bisect_done(pilot, screen)
        lines = [row.line.plain for row in screen.rows.rows]
        # where the agent left: its call number and the last recorded step it was served
        why = "left the recording: a miss of lost at call 5 (after seq 4) in run 1"
        assert f"? unresolved A's answers at seq 1 · {why}" in "\n".join(lines)


@sync
async def test_bisect_needs_two_files_and_an_agent(tmp_path: Path) -> None:
    a, b = pair(tmp_path, 2)
    app = CassetteApp(a, b, align="seq")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        assert "Bisect ⊘ no agent configured" in loop_text(app)
        await press(pilot, "b")
        assert "Bisect needs an agent" in screen_text(app)
    app = CassetteApp(a, agent=AgentCommand.parse(agent_cmd(script=AGENT)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        assert "Bisect needs two files" in loop_text(app)
        await press(pilot, "b")
        assert "bisect needs two runs" in notes(app)
        assert not isinstance(app.screen, BisectScreen)


def row_line(app: CassetteApp, seq: int) -> str:
    """The step list's line of the row whose A seq is ``seq``."""
    lines = [line for line in screen_text(app).splitlines() if line[1:].split()[:1] == [str(seq)]]
    assert lines, screen_text(app)
    return lines[0].rstrip()


@sync
async def test_s_swaps_b_answer_in_and_marks_the_row(tmp_path: Path) -> None:
    app = app_for(tmp_path, 4, "--needs", "3", same_first=True, extra=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PairScreen)
        # the gate's N: gate A twice first, so every swap gates twice too
        await press(pilot, "t", "backspace", "backspace", "2", "enter")
        await wait_until(pilot, lambda: app.session.loop.gate is not None, "the gate")
        await press(pilot, "q")
        assert app.screen is screen
        # rows the key cannot swap say why and run nothing
        await press(pilot, "g", "s")
        assert "s does nothing here: A seq 1 and B seq 1 got the same response" in notes(app)
        await press(pilot, "G", "s")
        assert "A seq 5 has no B counterpart: B never made this call" in notes(app)
        assert not screen.swaps
        # row 3: with B's answer there, A passes; row 2: it still fails
        await press(pilot, "g", "j", "j", "s")
        await press(pilot, "k", "s")
        await wait_until(
            pilot, lambda: len(screen.swaps) == 2 and not any(m.running for m in screen.swaps.values()),
            "both swaps",
        )  # fmt: skip
        await settle(pilot)
        assert row_line(app, 3).endswith("with B's answer here: 2/2 pass")
        assert row_line(app, 2).endswith("with B's answer here: 0/2 pass")
        assert "A seq 3 with B's answer (B seq 3): 2/2 pass" in notes(app)
        # the detail pane says it too, for the row under the cursor
        assert "A seq 2 with B's answer (B seq 2): 0/2 pass  s runs it again" in screen_text(app)
        # the marks stay with their rows: realigned by key, then back by seq
        await press(pilot, "a")
        await wait_until(
            pilot, lambda: screen.result is not None and screen.result.align == "key", "key"
        )
        await settle(pilot)
        assert row_line(app, 3).endswith("with B's answer here: 2/2 pass")
        # s again on a row runs it again
        await press(pilot, "s")
        assert screen.swap_of(screen.steps.cursor) is not None
        await wait_until(pilot, lambda: not any(m.running for m in screen.swaps.values()), "again")
        assert row_line(app, 2).endswith("with B's answer here: 0/2 pass")


@sync
async def test_the_swap_mark_keeps_to_a_narrow_row(tmp_path: Path) -> None:
    app = app_for(tmp_path, 4, "--needs", "3")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PairScreen)
        await press(pilot, "g", "j", "j", "s")
        assert app.screen is screen
        mark = screen.swap_of(screen.steps.cursor)
        assert mark is not None and mark.runs == 20  # no gate yet: the gate screen's default
        await wait_until(pilot, lambda: not mark.running, "the swap")
        await settle(pilot)
        assert row_line(app, 3).endswith("⇄ 20/20 pass")


def test_the_hybrids_folder_is_new_beside_a(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 12, 4, 0, 0, 0, tzinfo=UTC)
    first = bisect_screen.out_folder(tmp_path / "fail.jsonl", now)
    assert first == tmp_path / "bisect-20261204T000000Z"
    first.mkdir()
    # a second bisect in the same second gets a folder of its own, never the first's
    assert bisect_screen.out_folder(tmp_path / "fail.jsonl", now).name == first.name + "-2"


@sync
async def test_escape_stops_a_running_swap_and_its_row_says_so(tmp_path: Path) -> None:
    # with B's answer at step 3 (the other steps A's, bad) the agent hangs
    app = app_for(tmp_path, 4, "--needs", "3", "--when", "1,2,4", "--then", "hang")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PairScreen)
        await pilot.press("g", "j", "j", "s")
        mark = screen.swap_of(2)
        assert mark is not None and mark.running
        assert row_line(app, 3).endswith("with B's answer here: 0/20…")
        await pilot.press("s")  # a second press while it runs starts nothing
        assert "this row's swap is running: escape stops it" in notes(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not mark.running, "the swap to stop")
        await settle(pilot)
        assert mark.result is not None and mark.result.cancelled
        assert row_line(app, 3).endswith("with B's answer here: cancelled at 0/20")
        assert app.screen is screen


@sync
async def test_s_without_an_agent_says_how_to_configure_one(tmp_path: Path) -> None:
    a, b = pair(tmp_path, 2)
    app = CassetteApp(a, b, align="seq")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "s")
        assert "Swap needs an agent" in screen_text(app)


@sync
async def test_bisect_of_an_empty_failing_run_says_the_runs_part_on_calls(tmp_path: Path) -> None:
    """An empty A against a passing B: no response differs but the calls do; the bisect
    screen says so whole (the runs part on their calls, what to run), never "no step has a
    different response"; nothing is gated."""
    _, b = pair(tmp_path, 3)
    a = open_cassette(str(write_cassette(tmp_path / "empty.jsonl")))
    template = agent_cmd("--steps", "3", script=AGENT)
    app = CassetteApp(a, b, align="seq", agent=AgentCommand.parse(template))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_bisect(pilot)
        await bisect_done(pilot, screen)
        text = " ".join(screen_text(app).split())
        assert "no step has a different response" not in text
        assert "the runs part on their calls, not on their responses" in text
        assert "cassette-tui diff" in text
        assert screen.result is not None and screen.result.candidates == []
        # the folder named at the start was never made: the screen no longer names it
        assert "hybrids in" not in text and "no hybrid written" in text
        assert not list(tmp_path.glob("bisect-*"))


@sync
async def test_enter_with_no_hybrid_after_a_no_answer_does_not_say_one_is_being_gated(
    tmp_path: Path,
) -> None:
    _, b = pair(tmp_path, 3)
    a = open_cassette(str(write_cassette(tmp_path / "empty.jsonl")))
    app = CassetteApp(a, b, align="seq", agent=AgentCommand.parse(agent_cmd(script=AGENT)))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_bisect(pilot)
        await bisect_done(pilot, screen)
        await press(pilot, "enter")
        assert app.screen is screen
        assert "being gated" not in notes(app)
        assert "no hybrid cassette: the bisect gated none" in notes(app)
