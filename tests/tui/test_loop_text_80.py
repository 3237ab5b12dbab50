"""The loop's text at 80 columns and in the singular: one plural helper (``1 entry``,
``1 miss``, ``drift (1 path``), the gate header keeps the agent's script in view, the
cancelled gate's tally line fits, the loop panel names A's file, a stopped re-record and a
cancelled replay say why once."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.core.loop.record import RecordResult
from cassette_tui.core.loop.results import RunResult
from cassette_tui.core.replay.report import ReplayReport
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.gate import GateScreen
from cassette_tui.tui.screens.loop import LoopScreen
from cassette_tui.tui.text.plural import noun, plural
from cassette_tui.tui.text.replay import calls_line, replay_found
from cassette_tui.tui.text.rerecord import result_text
from cassette_tui.tui.text.runs import short_command
from rich.console import Console
from support.paths import ROOT
from support.pilot import press, screen_text, settle, sync

SIZE = (80, 24)


def flat(app: CassetteApp) -> str:
    return " ".join(screen_text(app).split())


def test_one_plural_helper() -> None:
    assert [plural(n, "entry") for n in (0, 1, 2)] == ["0 entries", "1 entry", "2 entries"]
    assert [plural(n, "miss") for n in (0, 1, 2)] == ["0 misses", "1 miss", "2 misses"]
    assert plural(1, "path") == "1 path" and plural(3, "run") == "3 runs"
    assert noun(2, "call") == "calls" and noun(1, "call") == "call"


def test_no_hand_made_plural_of_a_count_in_the_texts_and_commands() -> None:
    """No f-string puts a count right before ``entries``, ``misses`` or ``paths`` in
    tui/text or tui/commands: they go through ``plural``."""
    pattern = re.compile(r"\{[^{}]*\} (entries|misses|paths)\b|'es' if|'s' if|\"s\" if")
    found = []
    for folder in ("tui/text", "tui/commands"):
        for path in sorted((ROOT / folder).glob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []


def _run(**kw: object) -> RunResult:
    base: dict[str, object] = {"run": 1, "status": "failed", "exit_code": 1,
                               "duration_s": 0.1, "isolation": "guard"}  # fmt: skip
    base.update(kw)
    return RunResult(**base)  # type: ignore[arg-type]


def test_a_replay_of_one_call_speaks_in_the_singular() -> None:
    report = {"calls": [{"n": 1, "tool": "t", "outcome": "miss"}], "entries": 1, "used": 0}
    run = _run(report=ReplayReport.from_json(report))
    assert calls_line(run) == (
        "calls 1: 0 hits · 1 miss · 0 past the last recording · 0 of 1 entry used"
    )


def test_a_stopped_re_record_that_wrote_nothing_says_so_once(tmp_path: Path) -> None:
    target = tmp_path / "fail.rerecord-x.jsonl"
    run = _run(status="cancelled", exit_code=-9,
               error=f"{target}: the agent recorded nothing (no file written)")  # fmt: skip
    result = RecordResult(run, target, None, cancelled=True)
    console = Console(width=80, record=True, color_system=None)
    console.print(result_text(AgentCommand.parse("true"), result, target))
    text = " ".join(console.export_text().split())
    assert text.count("no file written") == 1, text
    assert "nothing recorded (no file written)" in text and "0 entries" not in text
    assert "stopped: the agent's process group was killed" in text


def test_short_command_keeps_the_script() -> None:
    assert short_command("/a/b/.venv/bin/python sample_cassettes/agent.py --seed 1") == (
        "python sample_cassettes/agent.py --seed 1"
    )
    assert short_command("true") == "true" and short_command("a 'b") == "a 'b"


@sync
async def test_the_gate_header_shows_the_agent_script_at_80_columns(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    interpreter = "/" + "/".join(["very-long-folder-name"] * 4) + "/.venv/bin/python"
    agent = AgentCommand.parse(f"{interpreter} sample_cassettes/agent.py")
    app = CassetteApp(a, b, agent=agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "t")
        assert isinstance(app.screen, GateScreen)
        first = screen_text(app).splitlines()[0]
        assert "agent python sample_cassettes/agent.py" in first, first


@sync
async def test_the_loop_panel_names_the_file_of_A(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=AgentCommand.parse(f"{sys.executable} x.py"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        assert isinstance(app.screen, LoopScreen)
        text = flat(app)
        assert "cassette-tui replay fail.jsonl" in text and "A.jsonl" not in text


def test_the_loop_bar_of_a_replay_with_one_miss() -> None:
    class Result:
        runs_result = type("RR", (), {"cancelled": False})()
        run = _run(report=ReplayReport.from_json({"calls": [{"outcome": "miss"}]}))

    assert replay_found(Result()) == ("✗ failed · 1 miss", "1 miss")  # type: ignore[arg-type]


@sync
async def test_the_loop_panel_commands_carry_the_apps_agent(samples: Path) -> None:
    """The command line the panel shows runs as typed: the app's ``--agent`` goes with it
    (quoted); an agent from the config is found there again, so none is added."""
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    for agent, shown in [
        (AgentCommand.parse("python agent.py"), "fail.jsonl --agent 'python agent.py'"),
        (AgentCommand.parse("python agent.py", source="pyproject.toml"), "fail.jsonl"),
    ]:
        app = CassetteApp(a, b, agent=agent)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await press(pilot, "l")
            assert isinstance(app.screen, LoopScreen)
            text = flat(app)
            assert f"cassette-tui replay {shown} Gate" in text
            assert f"cassette-tui gate {shown} Diff" in text
