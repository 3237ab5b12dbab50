"""The app keeps its loop jobs' run files while it is open (runs open side by side after
the job ended) and removes them when it closes, also after a cancel or a quit while a job
runs; a re-recording's run files go when its run ends, its new cassette stays beside A.
``tempfile`` points at a folder of the test's own, so what is left there is what the app
left."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.gate import GateScreen
from cassette_tui.tui.screens.loop_pair import LoopPairScreen
from cassette_tui.tui.screens.rerecord import RerecordScreen
from support.loop import DEMO_AGENT, agent_cmd, still_alive
from support.loop_app import hanging_app
from support.pilot import press, settle, sync, wait_until

SIZE = (80, 24)


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def demo(*args: str) -> AgentCommand:
    return AgentCommand.parse(agent_cmd(*args, script=DEMO_AGENT))


@sync
async def test_gate_runs_stay_openable_until_the_app_closes(samples: Path, own_tmp: Path) -> None:
    a, b = open_cassette(samples / "fix.jsonl"), open_cassette(samples / "fail.jsonl")
    app = CassetteApp(a, b, agent=demo("--flaky", "--seed", "{run}"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "t")
        screen = app.screen
        assert isinstance(screen, GateScreen)
        await pilot.press("backspace", "backspace", "3", "enter")
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "gate")
        root = app.session.run_folders.root
        assert root is not None and root.parent == own_tmp
        assert len(list(root.glob("gate-*/run-0?.jsonl"))) == 3
        await press(pilot, "d")  # fail vs pass: the call logs are still there to open
        await wait_until(pilot, lambda: isinstance(app.screen, LoopPairScreen), "the runs")
        # a replay's call log too
        await press(pilot, "q", "escape", "r")
        await wait_until(
            pilot, lambda: app.session.loop.replay is not None and app.screen.running is False,
            "the replay",
        )  # fmt: skip
        assert len(list(root.glob("replay-*/run-01.jsonl"))) == 1
    assert list(own_tmp.iterdir()) == []  # the app closed: every run file is gone


@sync
async def test_quitting_while_a_gate_runs_leaves_no_folder(tmp_path: Path, own_tmp: Path) -> None:
    app, piddir = hanging_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "t")
        await pilot.press("backspace", "backspace", "2", "enter")
        pids: list[int] = []

        def started() -> bool:
            pids[:] = [int(p) for f in piddir.glob("*.pids") for p in f.read_text().split()]
            return len(pids) >= 2

        await wait_until(pilot, started, "the agents")
        await pilot.press("ctrl+q")
    assert still_alive(pids) == []
    assert list(own_tmp.iterdir()) == []


@sync
async def test_a_rerecording_removes_its_run_files_when_it_ends(
    samples: Path, tmp_path: Path, own_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name in ("fail.jsonl", "fix.jsonl"):
        shutil.copy(samples / name, work / name)
    monkeypatch.chdir(work)
    app = CassetteApp(open_cassette(work / "fail.jsonl"), open_cassette(work / "fix.jsonl"),
                      agent=demo())  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen)
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.state != "running", "the recording")
        assert screen.state == "done" and screen.target.is_file()  # kept, beside A
        root = app.session.run_folders.root
        assert root is not None and list(root.iterdir()) == []  # its run files are gone
    assert list(own_tmp.iterdir()) == []
    assert len(list(work.glob("fail.rerecord-*.jsonl"))) == 1
