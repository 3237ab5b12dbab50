"""A run's processes end with the run, and its output is capped: hostile agents
(``agents/tree_agent.py``) that daemonise (double fork, a session of their own), fork
children and grandchildren, flood stdout, and a ``cassette-tui gate`` killed with
``SIGKILL`` while its agents hang. Real processes, checked in ``/proc``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.loop._runner import ProcessSpec, run_processes
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.core.loop.gate import gate_job
from cassette_tui.core.loop.options import OUTPUT_CAP, LoopOptions
from cassette_tui.core.loop.record import record_job
from cassette_tui.core.loop.replay import replay_job
from cassette_tui.tui.text.gate import gate_lines
from cassette_tui.tui.text.replay import replay_lines
from support.loop import agent_cmd, loop_cassette, still_alive
from support.paths import SCRIPT

TREE_AGENT = Path(__file__).resolve().parents[2] / "support" / "agents" / "tree_agent.py"


def tree_agent(*args: str) -> AgentCommand:
    return AgentCommand.parse(agent_cmd(*args, script=TREE_AGENT))


def pids(folder: Path, kind: str = "") -> list[int]:
    return [int(p.read_text()) for p in folder.glob(f"{kind}*.pid")]


@pytest.mark.parametrize("isolation", ["guard", "netns"])
def test_a_daemon_ends_with_its_run(tmp_path: Path, isolation: str) -> None:
    if isolation == "netns":
        from cassette_tui.core.loop._isolation import probe_netns

        if not probe_netns()[0]:
            pytest.skip(f"no network namespace: {probe_netns()[1]}")
    piddir = tmp_path / "pids"
    piddir.mkdir()
    options = LoopOptions(isolation=isolation, timeout=300)
    result = run_job(
        replay_job(loop_cassette(tmp_path), tree_agent("daemon", str(piddir)), options)
    )
    assert result.run.passed, result.run.stderr_tail
    daemons = pids(piddir, "daemon")
    assert len(daemons) == 1
    assert still_alive(daemons, within=30) == []
    assert result.run.left_behind >= 1
    text = [line.text for line in replay_lines(result, "loop.jsonl")]
    assert any("it left running (daemons, children) killed at its end" in t for t in text), text
    assert result.to_json()["run"]["left_behind"] == result.run.left_behind


def test_children_and_grandchildren_end_with_a_gate(tmp_path: Path) -> None:
    piddir = tmp_path / "pids"
    piddir.mkdir()
    options = LoopOptions(isolation="guard", timeout=300, jobs=2)
    result = run_job(gate_job(loop_cassette(tmp_path), tree_agent("forks", str(piddir)),
                              options, runs=2))  # fmt: skip
    found = pids(piddir)
    assert len(found) == 16  # 4 children and 4 grandchildren in each of 2 runs
    assert still_alive(found, within=30) == []
    assert all(r.left_behind >= 8 for r in result.results), [r.left_behind for r in result.results]
    assert any("killed at its end" in line.text for line in gate_lines(result, "loop.jsonl"))


def test_a_daemon_of_a_timed_out_run_is_killed(tmp_path: Path) -> None:
    piddir = tmp_path / "pids"
    piddir.mkdir()
    options = LoopOptions(isolation="guard", timeout=5)
    agent = tree_agent("daemon-hang", str(piddir))
    result = run_job(replay_job(loop_cassette(tmp_path), agent, options))
    assert result.run.status == "timeout"
    found = pids(piddir)
    assert len(found) == 2  # the daemon and the agent
    assert still_alive(found, within=30) == []


def test_a_killed_gate_leaves_no_agent_running(tmp_path: Path) -> None:
    """``kill -9`` of ``cassette-tui gate`` itself: each run's reaper gets its parent-death
    signal and kills its agent's tree; nothing runs on to the 600 s the agents sleep."""
    piddir = tmp_path / "pids"
    piddir.mkdir()
    cmd = agent_cmd("daemon-hang", str(piddir), script=TREE_AGENT)
    gate = subprocess.Popen(
        [str(SCRIPT), "gate", str(loop_cassette(tmp_path)), "--agent", cmd, "-n", "2",
         "-j", "2", "--isolation", "guard", "--timeout", "600"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while len(pids(piddir)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        found = pids(piddir)
        assert len(found) == 4, found  # two agents and their two daemons
    finally:
        gate.send_signal(signal.SIGKILL)
        gate.wait(60)
    assert still_alive(found, within=30) == []


def test_output_is_cut_at_the_cap(tmp_path: Path) -> None:
    """The runner keeps ``output_cap`` bytes of each stream and says how many it dropped;
    the agent is never blocked (it ends, exit 0)."""
    script = "import sys; sys.stdout.buffer.write(b'y' * 3_000_000); print('e', file=sys.stderr)"
    spec = ProcessSpec(1, [sys.executable, "-c", script], dict(os.environ),
                       tmp_path / "run-01.stdout", tmp_path / "run-01.stderr",
                       timeout=120, output_cap=1_000_000)  # fmt: skip
    (outcome,) = run_processes([spec], 1)
    assert outcome.status == "exited" and outcome.returncode == 0
    assert spec.stdout.stat().st_size == 1_000_000
    assert outcome.stdout_dropped == 2_000_000 and outcome.stderr_dropped == 0
    assert spec.stderr.read_text() == "e\n"


def test_a_flood_is_cut_and_said(tmp_path: Path) -> None:
    """An agent writing more than ``OUTPUT_CAP`` to stdout: the file stops at the cap, the
    run passes, its result and its text say how much was cut."""
    mib = OUTPUT_CAP // (1 << 20) + 8
    options = LoopOptions(isolation="guard", runs_dir=tmp_path / "runs", timeout=300)
    result = run_job(replay_job(loop_cassette(tmp_path), tree_agent("flood", str(mib)), options))
    run = result.run
    assert run.stdout is not None and run.stdout.stat().st_size == OUTPUT_CAP
    assert run.stdout_dropped == 8 << 20 and run.stderr_dropped == 0
    assert result.to_json()["run"]["output_dropped"] == {"stdout": 8 << 20, "stderr": 0}
    text = [line.text for line in replay_lines(result, "loop.jsonl")]
    assert "stdout cut: 8 MiB past the 64 MiB kept" in text, text


def test_a_recording_ends_its_daemons(tmp_path: Path) -> None:
    piddir = tmp_path / "pids"
    piddir.mkdir()
    result = run_job(record_job(tree_agent("daemon", str(piddir)), tmp_path / "new.jsonl",
                                LoopOptions(timeout=300)))  # fmt: skip
    assert result.run.passed and result.cassette is not None, result.run.stderr_tail
    assert still_alive(pids(piddir, "daemon"), within=30) == []
    assert result.run.left_behind >= 1


def test_a_program_that_cannot_start_is_not_started(tmp_path: Path) -> None:
    spec = ProcessSpec(1, [str(tmp_path / "no-such-program")], dict(os.environ),
                       tmp_path / "run-01.stdout", tmp_path / "run-01.stderr", timeout=60)  # fmt: skip
    (outcome,) = run_processes([spec], 1)
    assert outcome.status == "not_started" and outcome.returncode is None
    assert "no-such-program" in outcome.error and "No such file" in outcome.error
