"""Re-record (R on the main screen): asks first (the command, LIVE, the new file next to
A), runs the real agent as a subprocess into that new file, then opens A against it;
escape while it runs kills the agent's process group; without an agent it says how to
configure one; a file that appeared meanwhile is never overwritten."""

from __future__ import annotations

import asyncio
import shutil
import stat
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import load
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.core.loop.record import record_job
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.keymap import keymap_problem
from cassette_tui.tui.screens import rerecord as rerecord_screen
from cassette_tui.tui.screens.help import help_plain_text
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.screens.rerecord import RerecordedPairScreen, RerecordScreen
from support.loop import DEMO_AGENT, agent_cmd, still_alive
from support.pilot import loop_text, press, screen_text, settle, sync
from textual.pilot import Pilot

SIZE = (80, 24)
#: the time in the new file's name, in the snapshots
FIXED = datetime(2026, 11, 30, 21, 0, tzinfo=UTC)
#: how long a real agent run may take on a loaded machine
RUN_DEADLINE = 60.0


@pytest.fixture
def workdir(samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """fail.jsonl and fix.jsonl copied into a fresh working folder, the current folder."""
    for name in ("fail.jsonl", "fix.jsonl"):
        shutil.copy(samples / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def demo_app(folder: Path, template: str | None = None, **kwargs) -> CassetteApp:
    agent = AgentCommand.parse(template or agent_cmd(script=DEMO_AGENT))
    return CassetteApp(
        open_cassette(folder / "fail.jsonl"),
        open_cassette(folder / "fix.jsonl"),
        agent=agent,
        **kwargs,
    )


def rerecordings(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.rerecord-*.jsonl"))


def bar(app: CassetteApp) -> str:
    return next(x for x in screen_text(app).splitlines() if x.strip().startswith("Record "))


async def until_ended(pilot: Pilot, screen: RerecordScreen) -> None:
    """Wait (bounded) until the agent's run has ended and the screen says so."""
    deadline = time.monotonic() + RUN_DEADLINE
    while screen.state == "running" and time.monotonic() < deadline:
        await pilot.pause(0.05)
    assert screen.state != "running", screen_text(pilot.app)
    await settle(pilot)


def flat(app: CassetteApp) -> str:
    """The screen's text with the box and the line breaks of wrapping taken out."""
    return " ".join(screen_text(app).replace("│", " ").split())


def shows_name(app: CassetteApp, name: str) -> bool:
    """``name`` (no spaces) is on the screen, even cut by the wrap of a long path."""
    return name in "".join(flat(app).split())


@sync
async def test_R_asks_first_with_the_command_live_and_the_new_file(workdir: Path) -> None:
    app = demo_app(workdir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen) and screen.state == "confirm"
        target = screen.target
        assert target.parent == workdir and not target.exists()
        assert target.name.startswith("fail.rerecord-") and target.suffix == ".jsonl"
        text = flat(app)
        assert "LIVE: the network is on" in text and "CASSETTE_MODE=record" in text  # in view
        named = shows_name(app, target.name)
        for _ in range(40):  # the rest, scrolled into view as a person would (long paths)
            if named and "never overwrites" in text:
                break
            await press(pilot, "j")
            text += " " + flat(app)
            named = named or shows_name(app, target.name)
        joined = "".join(text.split())  # a long path is cut by the wrap anywhere in it
        assert "agent.py" in joined and sys.executable.rsplit("/", 1)[-1] in joined
        assert named and "never overwrites" in text
        assert "enter/y: run the agent live" in text and "escape/n: cancel" in text
        assert "Run live" in screen_text(app).splitlines()[-1]  # the footer
    assert rerecordings(workdir) == []


@pytest.mark.parametrize("key", ["escape", "n"])
@sync
async def test_cancel_runs_nothing_and_writes_nothing(workdir: Path, key: str) -> None:
    app = demo_app(workdir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R", key)
        assert isinstance(app.screen, PairScreen)
        assert app.session.loop.rerecord is None
        assert "Re-record –" in bar(app)
    assert rerecordings(workdir) == []


@sync
async def test_confirm_records_with_the_demo_agent_then_opens_old_against_new(
    workdir: Path, samples: Path
) -> None:
    app = demo_app(workdir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen)
        target = screen.target
        await press(pilot, "y")
        await until_ended(pilot, screen)
        assert screen.state == "done"
        # a real file, recorded by the real agent (a subprocess, live)
        recorded = load(target)
        assert [e.tool for e in recorded] == [
            "search_docs",
            "search_docs",
            "read_file",
            "read_file",
        ]
        result = app.session.loop.rerecord
        assert result is not None and result.run.passed and not result.cancelled
        text = flat(app)
        assert shows_name(app, f"{target.name}:4entries") and "passed (exit 0)" in text
        assert "enter: open A against the new recording" in text
        await press(pilot, "enter")
        pair = app.screen
        assert isinstance(pair, RerecordedPairScreen)
        a, b = pair.session.pair()
        assert a is app.session.a and b.path == target.resolve()
        lines = screen_text(app).splitlines()
        assert "A fail.jsonl (7)" in lines[0] and f"B {target.name} (4)" in lines[0]
        assert "Re-record ✓ 4" in bar(app)
        assert pair.result is not None and pair.result.first_divergence is not None
        await press(pilot, "q")  # back to A against B, not out of the app
        assert isinstance(app.screen, PairScreen) and not isinstance(
            app.screen, RerecordedPairScreen
        )
        assert "B fix.jsonl (4)" in screen_text(app).splitlines()[0]
        assert "Re-record ✓ 4" in bar(app)
        await press(pilot, "l")
        panel = loop_text(app)  # the whole panel: how far it reaches depends on paths
        assert "✓ 4 calls" in panel and target.name in "".join(panel.split())
    assert (workdir / "fail.jsonl").read_bytes() == (samples / "fail.jsonl").read_bytes()
    assert rerecordings(workdir) == [target]


@sync
async def test_escape_while_recording_kills_the_agent_and_keeps_what_it_recorded(
    workdir: Path,
) -> None:
    piddir = workdir / "pids"
    piddir.mkdir()
    app = demo_app(workdir, agent_cmd("record-hang", str(piddir)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen)
        await pilot.press("enter")  # not press(): that waits for the worker to end
        assert screen.state == "running"
        deadline = time.monotonic() + RUN_DEADLINE
        while not list(piddir.glob("*.pids")) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        pids = [int(p) for f in piddir.glob("*.pids") for p in f.read_text().split()]
        assert len(pids) == 2, "the agent and its child started"
        assert "Re-record A: recording" in flat(app) and "escape: stop" in flat(app)
        await pilot.press("escape")
        await until_ended(pilot, screen)
        assert not still_alive(pids), "the agent's process group was killed"
        result = app.session.loop.rerecord
        assert result is not None and result.cancelled
        text = flat(app)
        assert "Re-record A: stopped" in text and "process group was killed" in text
        assert "the 1 call recorded before stay in" in text
        assert shows_name(app, f"stayin{screen.target.name}")
        assert "stopped · 1" in bar_of_owner(app)
    kept = load(screen.target, lenient=True)
    assert len(kept) == 1 and kept[0].tool == "lookup"


def bar_of_owner(app: CassetteApp) -> str:
    """The loop bar of the pair screen under the re-record screen."""
    owner = app.screen_stack[-2]
    assert isinstance(owner, PairScreen)
    return str(owner.query_one("#loopbar").render())


@sync
async def test_without_an_agent_it_says_how_to_configure_one(workdir: Path) -> None:
    problem = "no agent command: pass --agent CMD"
    app = CassetteApp(
        open_cassette(workdir / "fail.jsonl"),
        open_cassette(workdir / "fix.jsonl"),
        agent_problem=problem,
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        assert isinstance(app.screen, RerecordScreen)
        text = flat(app)
        assert "Re-record needs the agent, and none is configured" in text
        assert "--agent CMD" in text and 'agent = "..." under [tool.cassette]' in text
        assert "nothing was run" in text
        await press(pilot, "enter")  # nothing to run
        assert isinstance(app.screen, RerecordScreen)
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen)
        assert "Re-record ⊘" in bar(app)
    assert rerecordings(workdir) == []


@sync
async def test_a_target_that_appeared_meanwhile_is_never_overwritten(workdir: Path) -> None:
    app = demo_app(workdir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen)
        screen.target.write_text("precious\n", encoding="utf-8")  # someone wrote it meanwhile
        await press(pilot, "enter")
        await until_ended(pilot, screen)
        assert screen.state == "failed"
        text = flat(app)
        assert "exists; a recording never overwrites a cassette" in text
        assert "nothing was written; R again picks a fresh name" in text
        assert app.session.loop.rerecord is None
        await press(pilot, "escape", "R")
        again = app.screen
        assert isinstance(again, RerecordScreen) and again.target != screen.target
    assert screen.target.read_text(encoding="utf-8") == "precious\n"


@sync
async def test_help_and_palette_list_re_record(workdir: Path) -> None:
    app = demo_app(workdir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        text = help_plain_text(app)
        for binding_id in ("main.rerecord", "rerecord.run", "rerecord.stop", "rerecord.open"):
            assert binding_id in text
        await press(pilot, "escape", "ctrl+p")
        for key in "re-record":
            await pilot.press(key)
        await settle(pilot)
        assert "main.rerecord" in screen_text(app)
        await press(pilot, "enter")
        assert isinstance(app.screen, RerecordScreen)


@sync
async def test_a_remapped_key_opens_it(workdir: Path) -> None:
    app = demo_app(workdir, keymap={"main.rerecord": "ctrl+r", "rerecord.cancel": "c"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+r")
        assert isinstance(app.screen, RerecordScreen)
        await press(pilot, "c")
        assert isinstance(app.screen, PairScreen)


# -- snapshots ----------------------------------------------------------------------------


@pytest.fixture
def snapshot_dir(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The pair opened by relative names, the demo agent behind a fixed command name
    (``./demo-agent``), a fixed time in the new file's name and a fixed run time."""
    script = workdir / "demo-agent"
    script.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{DEMO_AGENT}' \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(rerecord_screen, "now", lambda: FIXED)

    def fixed_time_job(*args, **kwargs):
        result = yield from record_job(*args, **kwargs)
        result.run.duration_s = 0.25
        return result

    monkeypatch.setattr(rerecord_screen, "record_job", fixed_time_job)
    return workdir


def snapshot_app() -> CassetteApp:
    return CassetteApp(
        open_cassette("fail.jsonl"),
        open_cassette("fix.jsonl"),
        agent=AgentCommand.parse("./demo-agent"),
        theme="ansi-dark",
    )


def test_snapshot_rerecord_confirm(snapshot_dir: Path, snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await press(pilot, "R")

    assert snap_compare(snapshot_app(), terminal_size=SIZE, run_before=run_before)


def test_snapshot_rerecord_done(snapshot_dir: Path, snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await press(pilot, "R", "enter")
        screen = pilot.app.screen
        assert isinstance(screen, RerecordScreen)
        await until_ended(pilot, screen)
        await asyncio.sleep(0)

    assert snap_compare(snapshot_app(), terminal_size=SIZE, run_before=run_before)


@sync
async def test_quitting_while_it_records_kills_the_agent(workdir: Path) -> None:
    piddir = workdir / "pids"
    piddir.mkdir()
    app = demo_app(workdir, agent_cmd("record-hang", str(piddir)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        await pilot.press("enter")
        deadline = time.monotonic() + RUN_DEADLINE
        while not list(piddir.glob("*.pids")) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        pids = [int(p) for f in piddir.glob("*.pids") for p in f.read_text().split()]
        assert len(pids) == 2, "the agent and its child started"
        await pilot.press("ctrl+q")
    assert not still_alive(pids), "the agent must not outlive the app"


@sync
async def test_a_failing_agent_shows_its_status_and_stderr_tail(workdir: Path) -> None:
    # the test agent's live tools raise: the call is recorded as an error, then it crashes
    app = demo_app(workdir, agent_cmd("pass"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen)
        await press(pilot, "enter")
        await until_ended(pilot, screen)
        result = app.session.loop.rerecord
        assert result is not None and result.run.status == "crashed"
        # a long temporary path wraps the record line over more rows: scroll as a person
        # would until the stderr tail is in view (the text seen on the way is kept)
        text = flat(app)
        for _ in range(40):
            if "RuntimeError: live tool lookup called in a test" in text:
                break
            await press(pilot, "j")
            text += " " + flat(app)
        assert "crashed (exit 1)" in text and "stderr (last lines)" in text
        assert "RuntimeError: live tool lookup called in a test" in text
        assert "Re-record ✗ 1" in bar_of_owner(app)
    recorded = load(screen.target)
    assert len(recorded) == 1 and recorded[0].error is not None


def test_keys_shared_by_the_states_stay_remappable() -> None:
    # escape cancels, stops or goes back by state: remapping one of them keeps escape
    assert keymap_problem({"rerecord.back": "escape,b"}) is None
    assert keymap_problem({"rerecord.stop": "s"}) is None
    problem = keymap_problem({"rerecord.open": "j"})
    assert problem is not None and '"j" would be both' in problem


@sync
async def test_the_recording_gets_the_apps_config(workdir: Path) -> None:
    # the config the app was started with (--config) goes to the recording: a bad one is
    # refused before the agent runs, naming the file
    config = workdir / "bad.toml"
    config.write_text("[normalize\n", encoding="utf-8")
    app = demo_app(workdir, config=str(config))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen)
        await press(pilot, "enter")
        await until_ended(pilot, screen)
        assert screen.state == "failed"
        assert shows_name(app, "bad.toml") and "Re-record A: not started" in flat(app)
    assert rerecordings(workdir) == []
