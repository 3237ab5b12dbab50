"""The replay screen (r on the main screen): one offline replay of A with the demo agent as
a real subprocess; its misses open their nearest recorded call; d opens the call log
against A over the user's pair; escape cancels (the agent is killed), escape again leaves;
without an agent, how to configure one."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.loop_pair import LoopPairScreen
from cassette_tui.tui.screens.no_agent import NoAgentScreen
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.screens.pin import PinScreen
from cassette_tui.tui.screens.replay import MissScreen, ReplayScreen
from support.loop import (
    DEMO_AGENT,
    agent_cmd,
    miss_cassette,
    pids_in,
    still_alive,
)
from support.loop_app import hanging_app
from support.pilot import press, screen_text, settle, sync, wait_until

SIZE = (80, 24)


def demo_agent() -> AgentCommand:
    return AgentCommand.parse(agent_cmd(script=DEMO_AGENT))


def flat(app: CassetteApp) -> str:
    return " ".join(screen_text(app).split())


async def replayed(pilot) -> ReplayScreen:
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay screen")
    screen = app.screen
    await wait_until(pilot, lambda: screen.result is not None and not screen.running, "the replay")
    return screen


@sync
async def test_r_replays_A_and_shows_the_report(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=demo_agent())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        screen = await replayed(pilot)
        text = flat(app)
        assert "result failed (exit 1) in" in text
        assert "network: off (" in text
        assert (
            "calls 7: 7 hits · 0 misses · 0 past the last recording · 7 of 7 entries used" in text
        )
        assert "search_docs sha256:0bde2b47072f677b called 5x, recorded 5x" in text
        assert app.session.loop.replay is screen.result
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen) and app.screen.session is app.session
        assert "Replay ✗ failed ·" in flat(app) or "Replay ✗ ·" in flat(app)


@sync
async def test_a_miss_opens_its_nearest_recorded_call(samples: Path, tmp_path: Path) -> None:
    a = open_cassette(miss_cassette(samples, tmp_path))
    app = CassetteApp(a, open_cassette(samples / "fix.jsonl"), agent=demo_agent())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        screen = await replayed(pilot)
        assert screen.result is not None and screen.result.run.misses == 1
        text = flat(app)
        assert "misses (1, never served live)" in text
        assert "nearest seq 1: 1 path differs" in text
        await press(pilot, "enter")
        assert isinstance(app.screen, MissScreen)
        body = app.screen.detail.body_text()
        assert '▶   "top_k": 5' in body  # the live call, the differing path marked
        assert '▶   "top_k": 3' in body  # the recorded one
        assert "$.top_k  recorded 3 -> live 5" in body
        await press(pilot, "escape")
        assert app.screen is screen
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen)
        assert "Replay 1 miss" in flat(app)


@sync
async def test_d_opens_the_call_log_against_A_and_back_returns(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=demo_agent())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.screen
        await pilot.press("r")
        screen = await replayed(pilot)
        await press(pilot, "d")
        await wait_until(pilot, lambda: isinstance(app.screen, LoopPairScreen), "the diff view")
        await settle(pilot)
        view = app.screen
        assert view.session is not app.session
        assert view.session.a is a and view.session.b is not None
        assert screen.result is not None
        assert view.session.b.path == screen.result.run.call_log
        assert "B the replay's call log (failed)" in flat(app)
        assert "no divergence" in flat(app)  # the replay made the recorded calls
        assert app.session.a is a and app.session.b is b  # the user's pair is untouched
        await press(pilot, "q")
        assert app.screen is screen
        await press(pilot, "escape")
        assert app.screen is main and main.session.b is b


@sync
async def test_escape_cancels_the_replay_and_kills_the_agent(tmp_path: Path) -> None:
    app, piddir = hanging_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: len(pids_in(piddir)) == 2, "the agent and its child")
        pids = pids_in(piddir)
        screen = app.screen
        assert isinstance(screen, ReplayScreen) and screen.running
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.running, "the cancelled replay")
        assert app.screen is screen  # the first escape cancels, the result stays
        assert screen.result is not None and screen.result.runs_result.cancelled
        text = flat(app)
        assert "result cancelled" in text, text
        assert text.count("replay report") <= 1 and text.count("stopped") == 1, text  # once
        assert still_alive(pids) == []
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen)
        assert "Replay cancelled" in flat(app)


@sync
async def test_leaving_a_running_replay_cancels_it(tmp_path: Path) -> None:
    app, piddir = hanging_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: len(pids_in(piddir)) == 2, "the agent and its child")
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, PairScreen), "the main view")
        assert still_alive(pids_in(piddir)) == []
        assert app.session.loop.replay is not None
        assert app.session.loop.replay.runs_result.cancelled


@sync
async def test_quitting_during_a_replay_leaves_no_agent(tmp_path: Path) -> None:
    app, piddir = hanging_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: len(pids_in(piddir)) == 2, "the agent and its child")
        await pilot.press("ctrl+q")
    assert still_alive(pids_in(piddir)) == []


@pytest.mark.parametrize(("key", "stage"), [("r", "Replay"), ("t", "Gate")])
@sync
async def test_without_an_agent_the_screen_says_how_to_configure_one(
    samples: Path, tmp_path: Path, monkeypatch, key: str, stage: str
) -> None:
    monkeypatch.chdir(tmp_path)
    problem = "no agent command: pass --agent CMD or set agent = ..."
    app = CassetteApp(
        open_cassette(samples / "fail.jsonl"),
        open_cassette(samples / "fix.jsonl"),
        agent_problem=problem,
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, key)
        assert isinstance(app.screen, NoAgentScreen)
        text = flat(app)
        assert f"{stage} needs an agent" in text and "nothing ran" in text
        assert "--agent CMD" in text and 'agent = "..." under [tool.cassette]' in text
        assert not [w for w in app.workers if w.group == "loop"]
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen)
        assert app.session.loop.replay is None and app.session.loop.gate is None
        await press(pilot, "p")  # Pin (and the diff under it) work without an agent
        assert isinstance(app.screen, PinScreen)


@sync
async def test_an_agent_that_replays_nothing_is_no_replay_not_a_pass(samples: Path) -> None:
    """``true`` as the agent writes no replay report: the replay screen says no_replay."""
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=AgentCommand.parse("true"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        screen = await replayed(pilot)
        assert screen.result is not None and screen.result.run.status == "no_replay"
        text = flat(app)
        assert "result no_replay (exit 0)" in text
        assert "no replay: the agent exited 0 but replayed nothing" in text
        assert "passed" not in text
        await press(pilot, "escape")
        assert "Replay ✗" in flat(app)


@sync
async def test_the_miss_screen_builds_its_detail_in_a_worker(
    samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The miss screen says it is reading while a worker builds the detail (off the UI
    thread), then shows the detail once the worker's message lands."""
    import threading

    from cassette_tui.tui.screens import replay as replay_screen

    built = threading.Event()
    release = threading.Event()
    ui_thread = threading.get_ident()
    build = replay_screen.miss_detail

    def slow_build(*args: object, **kwargs: object) -> object:
        assert threading.get_ident() != ui_thread  # built in the worker's thread
        built.set()
        release.wait(30)
        return build(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(replay_screen, "miss_detail", slow_build)
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    miss = {
        "tool": "search_docs",
        "digest": "sha256:0bde2b47072f677b",
        "args": {"q": "retry budget", "top_k": 5},
        "nearest": [{"seq": 1, "args_digest": "sha256:1454eb44939cd6b8", "differences": [
            {"path": "$.top_k", "recorded": 3, "live": 5, "kind": "other"}]}],
    }  # fmt: skip
    app = CassetteApp(a, b)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.push_screen(MissScreen(miss, a))
        screen = app.screen
        assert isinstance(screen, MissScreen)
        await wait_until(pilot, built.is_set, "the worker building the detail")
        assert screen.detail.body_text().strip() == replay_screen.LOADING
        release.set()
        await settle(pilot)
        body = screen.detail.body_text()
        assert "$.top_k  recorded 3 -> live 5" in body
        assert "recorded seq 1 (▶ the paths that differ)" in body
