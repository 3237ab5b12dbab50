"""The gate screen (t on the main screen): N replays of A with the demo agent as real
subprocesses (N chosen in an input prefilled with 20), progress and tallies from the job's
events, the verdict in words, where the runs part; runs open side by side over the user's
pair (space marks two, enter; d fail vs pass) and back returns; escape cancels (the agents
are killed, the runs completed so far stay), escape again leaves."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.gate import GateScreen
from cassette_tui.tui.screens.help import help_plain_text
from cassette_tui.tui.screens.loop import LoopScreen
from cassette_tui.tui.screens.loop_pair import LoopPairScreen
from cassette_tui.tui.screens.pair import PairScreen
from support.loop import (
    DEMO_AGENT,
    agent_cmd,
    loop_cassette,
    pids_in,
    still_alive,
)
from support.loop_app import hanging_app
from support.pilot import press, screen_text, settle, sync, wait_until

SIZE = (80, 24)


def flat(app: CassetteApp) -> str:
    return " ".join(screen_text(app).split())


def demo(*args: str) -> AgentCommand:
    """The demo agent; ``--flaky --seed {run}``: runs 1 and 3 fail, run 2 passes."""
    return AgentCommand.parse(agent_cmd(*args, script=DEMO_AGENT))


async def start_gate(pilot, runs: int) -> GateScreen:
    """t, then N typed over the prefilled 20, then enter."""
    app = pilot.app
    await press(pilot, "t")
    screen = app.screen
    assert isinstance(screen, GateScreen)
    assert screen.runs_input.value == "20" and screen.runs_input.has_focus
    await pilot.press("backspace", "backspace", *str(runs), "enter")
    return screen


async def gated(pilot, screen: GateScreen) -> GateScreen:
    await wait_until(pilot, lambda: screen.result is not None and not screen.running, "the gate")
    await settle(pilot)
    return screen


@sync
async def test_t_gates_A_n_times_with_progress_and_the_verdict(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=demo())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await gated(pilot, await start_gate(pilot, 3))
        # the job's progress events reached the screen: every run, with its tally
        assert screen.last_progress is not None
        assert (screen.last_progress.done, screen.last_progress.total) == (3, 3)
        assert screen.last_progress.message == "0 ✓ 3 ✗"
        text = flat(app)
        assert "✓ deterministic fail · verdict deterministic: 0/3 passed (0%)" in text
        assert "3/3 runs · 0 ✓ 3 ✗ · done" in text
        assert "runs 3 failed" in text and "network: off (" in text
        assert text.count("✗ failed") == 3
        assert app.session.loop.gate is screen.result
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen)
        assert "Gate 0/3 ✓" in flat(app)


@sync
async def test_a_flaky_gate_says_where_and_d_opens_fail_vs_pass(samples: Path) -> None:
    a, b = open_cassette(samples / "fix.jsonl"), open_cassette(samples / "fail.jsonl")
    app = CassetteApp(a, b, agent=demo("--flaky", "--seed", "{run}"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.screen
        screen = await gated(pilot, await start_gate(pilot, 3))
        text = flat(app)
        assert "✗ flaky · verdict flaky: 1/3 passed (33%)" in text
        assert "where the runs part: Every run made the same 4 calls" in text
        assert "d: run 1 (failed) vs run 2 (passed)" in text
        await press(pilot, "d")
        await wait_until(pilot, lambda: isinstance(app.screen, LoopPairScreen), "the runs")
        await settle(pilot)
        view = app.screen
        assert view.session is not app.session
        assert (view.session.a.path.name, view.session.b.path.name) == (
            "run-01.jsonl",
            "run-02.jsonl",
        )
        assert "A run 1 (failed) · B run 2 (passed) of the gate" in flat(app)
        await press(pilot, "q")
        assert app.screen is screen
        await press(pilot, "escape")
        assert app.screen is main
        assert app.session.a is a and app.session.b is b
        assert "Gate 1/3 ✗" in flat(app)


@sync
async def test_two_marked_runs_open_side_by_side(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=demo())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await gated(pilot, await start_gate(pilot, 3))
        await press(pilot, "space", "down", "down", "space")
        assert screen.marks == {"A": 1, "B": 3}
        assert " A " in screen_text(app) and " B " in screen_text(app)
        await press(pilot, "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, LoopPairScreen), "the runs")
        await settle(pilot)
        view = app.screen
        assert (view.session.a.path.name, view.session.b.path.name) == (
            "run-01.jsonl",
            "run-03.jsonl",
        )
        await press(pilot, "escape")  # escape comes back too
        assert app.screen is screen
        # enter without marks: the run under the cursor against the recorded cassette
        screen.marks.clear()
        await press(pilot, "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, LoopPairScreen), "the run")
        assert app.screen.session.a is a
        assert app.screen.session.b.path.name == "run-03.jsonl"


@sync
async def test_escape_cancels_the_gate_keeping_the_runs_done(tmp_path: Path) -> None:
    app, piddir = hanging_app(tmp_path, "pass-then-hang", "{run}")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await start_gate(pilot, 3)
        await wait_until(
            pilot,
            lambda: screen.last_progress is not None and screen.last_progress.done >= 1,
            "run 1",
        )
        await wait_until(pilot, lambda: pids_in(piddir), "a hanging run")
        assert "1/3 runs · 1 ✓ 0 ✗ · escape cancels" in flat(app)
        # the run that ended is listed while the others still run
        assert [r.run for r in screen.rows.results] == [1] and "✓ passed" in flat(app)
        pids = pids_in(piddir)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.running, "the cancelled gate")
        assert app.screen is screen  # the partial result stays on screen
        result = screen.result
        assert result is not None and result.cancelled and result.runs == 1
        text = flat(app)
        assert "deterministic pass so far (cancelled after 1 of 3 runs)" in text
        # the tally line fits at 80 columns (the isolation line follows it, as in the CLI)
        assert "1/3 runs · 1 ✓ 0 ✗ · cancelled network: off" in text
        assert screen_text(app).splitlines()[-1].rstrip().endswith("^p palette")  # the footer too
        assert "✓ passed" in text and "cancelled" in text
        assert still_alive(pids) == []
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen)
        assert "Gate 1/1 of 3 cancelled" in flat(app)


@sync
async def test_leaving_a_running_gate_cancels_it(tmp_path: Path) -> None:
    app, piddir = hanging_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await start_gate(pilot, 2)
        await wait_until(pilot, lambda: pids_in(piddir), "a run")
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, PairScreen), "the main view")
        assert still_alive(pids_in(piddir)) == []
        assert app.session.loop.gate is not None and app.session.loop.gate.cancelled


@sync
async def test_the_palette_help_and_loop_panel_list_replay_and_gate(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=demo())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+p")
        for key in "gate":
            await pilot.press(key)
        await settle(pilot)
        assert "main.gate" in screen_text(app)
        await press(pilot, "enter")
        assert isinstance(app.screen, GateScreen)
        await press(pilot, "escape", "ctrl+p")
        for key in "replay":
            await pilot.press(key)
        await settle(pilot)
        assert "main.replay" in screen_text(app)
        await press(pilot, "escape", "escape")
        assert isinstance(app.screen, PairScreen)
        await press(pilot, "l")
        assert isinstance(app.screen, LoopScreen)
        text = flat(app)
        assert "r on the main view" in text and "t on the main view" in text
        await press(pilot, "escape", "question_mark")
        help_text = help_plain_text(app)
        for binding_id in ("main.replay", "main.gate", "replay.open_miss", "replay.diff",
                           "gate.mark", "gate.open", "gate.diff", "gate.cancel"):  # fmt: skip
            assert binding_id in help_text


@sync
async def test_an_agent_that_cannot_start_is_said_and_nothing_runs(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=AgentCommand.parse("no-such-agent-program --task x"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await start_gate(pilot, 3)
        await wait_until(pilot, lambda: not screen.running, "the refusal")
        text = flat(app)
        assert "gate could not run: agent command: 'no-such-agent-program'" in text
        assert screen.result is None and app.session.loop.gate is None
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen)


@sync
async def test_the_last_gate_stays_in_view_and_enter_starts_a_new_one(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=demo())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = await gated(pilot, await start_gate(pilot, 2))
        await press(pilot, "escape")
        await press(pilot, "t")
        screen = app.screen
        assert isinstance(screen, GateScreen) and screen is not first
        assert screen.result is app.session.loop.gate  # the last gate, shown again
        assert screen.runs_input.value == "2" and screen.runs_input.has_focus
        assert "verdict deterministic: 0/2 passed" in flat(app)
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: screen.result is not first.result and not screen.running, "a new gate"
        )
        assert app.session.loop.gate is screen.result and screen.result.runs == 2


@sync
async def test_keys_other_than_digits_reach_the_screen_from_the_runs_input(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=demo())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "t")
        screen = app.screen
        assert isinstance(screen, GateScreen) and screen.runs_input.has_focus
        await press(pilot, "x", "5")  # a letter is not typed, a digit is
        assert screen.runs_input.value == "205"
        await press(pilot, "question_mark")
        assert "gate.mark" in help_plain_text(app)
        await press(pilot, "escape")
        assert app.screen is screen and screen.runs_input.has_focus
        await press(pilot, "q")
        assert isinstance(app.screen, PairScreen)
        assert app.session.loop.gate is None  # nothing ran


@sync
async def test_without_colour_the_runs_read_by_glyphs_and_the_cursor_by_reverse(
    samples: Path,
) -> None:
    a, b = open_cassette(samples / "fix.jsonl"), open_cassette(samples / "fail.jsonl")
    app = CassetteApp(a, b, agent=demo("--flaky", "--seed", "{run}"), plain=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await gated(pilot, await start_gate(pilot, 3))
        await press(pilot, "space")
        strips = app.screen._compositor.render_strips()
        rows = {}
        for strip in strips:
            text = strip.text
            if text.lstrip("▶ ").split(" ", 1)[0] in ("1", "2", "3") and " s " in text:
                rows[text.lstrip("▶ ").split(" ", 1)[0]] = strip
        assert set(rows) == {"1", "2", "3"}
        assert "✗ failed" in rows["1"].text and "✓ passed" in rows["2"].text
        assert rows["1"].text.startswith("▶") and " A " in rows["1"].text
        # no colour anywhere, the cursor row in reverse video
        for strip in rows.values():
            for segment in strip:
                style = segment.style
                assert style is None or (style.color is None or style.color.is_default)
        assert any(seg.style is not None and seg.style.reverse for seg in rows["1"])
        assert screen.result is not None


@sync
async def test_an_agent_that_replays_nothing_is_no_replay_not_a_pass(samples: Path) -> None:
    """``true`` as the agent: no run replays a call; the gate says no_replay, not a pass."""
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=AgentCommand.parse("true"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await gated(pilot, await start_gate(pilot, 2))
        assert screen.result is not None and screen.result.verdict == "no_replay"
        text = flat(app)
        assert "✗ no replay (the agent replayed nothing)" in text
        assert "verdict no_replay: 0 of 2 runs replayed cleanly" in text
        assert "replayed nothing: does it wrap its dispatcher" in text
        assert "deterministic" not in text
        await press(pilot, "escape")
        assert "Gate 0/2 ✗" in flat(app)


@sync
async def test_runs_that_catch_a_miss_get_no_tick_and_an_unclean_verdict(tmp_path: Path) -> None:
    """A hostile agent catches its miss and exits 0: the gate screen shows no ✓ anywhere
    (neither the verdict nor a run), says ``unclean replay`` and names the runs and why."""
    a = open_cassette(loop_cassette(tmp_path))
    app = CassetteApp(a, a, agent=AgentCommand.parse(agent_cmd("catch-miss")))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await gated(pilot, await start_gate(pilot, 2))
        assert screen.result is not None and screen.result.verdict == "unclean_replay"
        text = flat(app)
        assert "✗ unclean replay (not every replay was clean)" in text
        assert "verdict unclean_replay: 0 of 2 runs replayed cleanly" in text
        assert "runs 1, 2 (exit 2)" in text
        assert "run 1: passed (exit 0)" in text and "unclean: 1 miss" in text
        assert "✓" not in text.replace("0 ✓", "")  # the tally's glyph counts 0 passes
        assert text.count("✗ passed") == 2  # the runs list: the agent's word, no tick
        assert screen.last_progress is not None
        assert screen.last_progress.message == "0 ✓ 2 ✗"  # live tallies: no tick either


@sync
async def test_a_gate_where_no_run_reached_a_tool_call_is_no_verdict(tmp_path: Path) -> None:
    a = open_cassette(loop_cassette(tmp_path))
    app = CassetteApp(a, a, agent=AgentCommand.parse(agent_cmd("crash-early")))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await gated(pilot, await start_gate(pilot, 2))
        assert screen.result is not None and screen.result.verdict == "no_tool_call"
        text = flat(app)
        assert "✗ no tool call (no run reached one)" in text
        assert "retry_policy_v2" in text and "deterministic" not in text
