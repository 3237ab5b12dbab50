"""Loop jobs leave no temporary folder behind (issue 10): replay, gate and record, run as
real subprocesses with the demo agent, remove the ``cassette-*`` folders they made when they
end, also when cancelled (Ctrl-C, SIGTERM); what the user asked to keep stays (``--runs-dir``,
the recorded cassette), and other processes' folders are never touched. Each test gives the
command a temporary folder of its own (``TMPDIR``), so what is left there is exactly what the
command left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.format.jobs import CancelToken, run_job
from cassette_tui.core.loop._runs_folder import RunsFolder
from cassette_tui.core.loop.agent import AgentCommand, AgentNotStarted
from cassette_tui.core.loop.gate import gate_job
from cassette_tui.core.loop.options import LoopOptions
from cassette_tui.core.loop.record import record_job
from cassette_tui.core.loop.replay import replay_job
from support.loop import DEMO_AGENT, agent_cmd, loop_cassette, still_alive
from support.paths import SAMPLES, SCRIPT

DEMO = agent_cmd(script=DEMO_AGENT)
#: how long a run of commands may take on a loaded machine
DEADLINE = 120.0


@pytest.fixture
def tmpdir_env(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A TMPDIR of the test's own, holding a folder another process made (never removed),
    and the environment that points the command at it."""
    tmp = tmp_path / "tmp"
    other = tmp / "cassette-gate-fix-another-process"
    other.mkdir(parents=True)
    (other / "run-01.stdout").write_text("not ours\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env.update(TMPDIR=str(tmp), NO_COLOR="1")
    return tmp, env


def left_in(tmp: Path) -> list[str]:
    """What is in the TMPDIR besides the other process's folder (which must stay whole)."""
    other = tmp / "cassette-gate-fix-another-process"
    assert (other / "run-01.stdout").read_text() == "not ours\n"
    return sorted(p.name for p in tmp.iterdir() if p != other)


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=DEADLINE,
        check=False,
    )  # fmt: skip


def test_replay_removes_its_folder(tmpdir_env: tuple[Path, dict[str, str]]) -> None:
    tmp, env = tmpdir_env
    done = cli(env, "replay", str(SAMPLES / "fail.jsonl"), "--agent", DEMO)
    assert done.returncode == 1, done.stderr
    assert "files: removed when the job ended (--runs-dir DIR keeps" in done.stdout
    assert left_in(tmp) == []
    done = cli(env, "replay", str(SAMPLES / "fix.jsonl"), "--agent", DEMO, "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["run"]
    # the result names no file that is gone
    assert [run[k] for k in ("call_log", "report", "stdout", "stderr")] == [None] * 4
    assert left_in(tmp) == []


def test_gate_removes_its_folder_and_runs_dir_keeps_the_files(
    tmpdir_env: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    tmp, env = tmpdir_env
    flaky = agent_cmd("--flaky", "--seed", "{run}", script=DEMO_AGENT)  # runs 1, 3 fail
    done = cli(env, "gate", str(SAMPLES / "fix.jsonl"), "--agent", flaky, "-n", "3")
    assert done.returncode == 1, done.stderr
    assert "files   removed when the job ended" in done.stdout
    assert "gate again with --runs-dir DIR to keep their call logs" in done.stdout
    assert left_in(tmp) == []
    done = cli(env, "gate", str(SAMPLES / "fix.jsonl"), "--agent", DEMO, "-n", "2", "--json")
    doc = json.loads(done.stdout)
    assert doc["verdict"] == "deterministic" and doc["runs_dir"] is None
    assert all(r["call_log"] is None for r in doc["results"])
    assert left_in(tmp) == []
    # what the user asked to keep stays, files and all
    runs = tmp_path / "kept"
    done = cli(env, "gate", str(SAMPLES / "fix.jsonl"), "--agent", flaky, "-n", "3",
               "--runs-dir", str(runs))  # fmt: skip
    assert done.returncode == 1 and f"files   {runs}" in done.stdout
    assert len(list(runs.glob("run-*.jsonl"))) == 3 and "cassette-tui " in done.stdout
    assert left_in(tmp) == []


def test_record_removes_its_folder_and_keeps_the_cassette(
    tmpdir_env: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    tmp, env = tmpdir_env
    new = tmp_path / "new.jsonl"
    done = cli(env, "record", "-o", str(new), "--agent", DEMO, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["entries"] == 4 and len(load(new)) == 4  # the recording, where asked
    assert doc["run"]["stdout"] is None and doc["run"]["stderr"] is None
    assert left_in(tmp) == []


def _wait_for(pattern: str, tmp: Path) -> None:
    deadline = time.monotonic() + DEADLINE
    while not list(tmp.glob(pattern)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp.glob(pattern)), f"nothing matched {pattern}"


def test_ctrl_c_on_a_gate_of_the_demo_agent_removes_its_folder(
    tmpdir_env: tuple[Path, dict[str, str]],
) -> None:
    tmp, env = tmpdir_env
    proc = subprocess.Popen(
        [str(SCRIPT), "gate", str(SAMPLES / "fix.jsonl"), "--agent", DEMO, "-n", "200", "-j", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        _wait_for("cassette-gate-fix-*/run-02.stdout", tmp)  # a run ended, the next began
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "cancelled after" in out and "files   removed when the job ended" in out
    assert left_in(tmp) == []


def test_sigterm_on_a_replay_and_a_record_removes_their_folders(
    tmpdir_env: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    tmp, env = tmpdir_env
    piddir = tmp_path / "pids"
    piddir.mkdir()
    cassette = loop_cassette(tmp_path)
    commands = [
        ["replay", str(cassette), "--agent", agent_cmd("hang", str(piddir))],
        [
            "record",
            "-o",
            str(tmp_path / "rec.jsonl"),
            "--agent",
            agent_cmd("record-hang", str(piddir)),
        ],
    ]
    for args, stage in zip(commands, ("replay", "record"), strict=True):
        proc = subprocess.Popen(
            [str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env,
        )  # fmt: skip
        try:
            _wait_for(f"cassette-{stage}-*/run-01.stdout", tmp)
            deadline = time.monotonic() + DEADLINE
            while not list(piddir.glob("*.pids")) and time.monotonic() < deadline:
                time.sleep(0.05)  # the agent is up: the job is mid-run
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=DEADLINE)
        finally:
            proc.kill()
        assert proc.returncode == 130, err
        pids = [int(p) for f in piddir.glob("*.pids") for p in f.read_text().split()]
        assert pids and not still_alive(pids)
        assert left_in(tmp) == [], stage
        for f in piddir.glob("*.pids"):
            f.unlink()
    assert len(load(tmp_path / "rec.jsonl", lenient=True)) == 1  # what it recorded stays


# -- the jobs themselves --------------------------------------------------------------------
@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tempfile`` pointed at a folder of the test's own."""
    import tempfile

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def test_a_job_closed_midway_or_failing_removes_its_folder(own_tmp: Path, tmp_path: Path) -> None:
    demo = AgentCommand.parse(DEMO)
    # closed after its first event (a UI that went away): the generator's finally runs
    job = gate_job(SAMPLES / "fix.jsonl", demo, LoopOptions(jobs=1), runs=50)
    next(job)
    assert [p.name[:18] for p in own_tmp.iterdir()] == ["cassette-gate-fix-"]
    job.close()
    assert list(own_tmp.iterdir()) == []
    # cancelled by its token after a run: the partial result names no file
    token = CancelToken()
    result = run_job(
        gate_job(SAMPLES / "fix.jsonl", demo, LoopOptions(jobs=1), runs=50, token=token),
        lambda p: token.cancel() if p.done else None,
    )
    assert result.cancelled and result.runs_result.runs_dir is None
    assert all(r.call_log is None and r.stdout is None for r in result.results)
    assert list(own_tmp.iterdir()) == []
    # an agent that cannot start: the job raises, and its folder is gone too
    with pytest.raises(AgentNotStarted, match="not an executable"):
        run_job(replay_job(SAMPLES / "fix.jsonl", AgentCommand.parse("no-such-agent-xyz")))
    assert list(own_tmp.iterdir()) == []
    # keep=True keeps a temporary folder; keep=False empties a named one of its run files
    kept = run_job(replay_job(SAMPLES / "fix.jsonl", demo, LoopOptions(keep=True)))
    assert kept.runs_result.runs_dir is not None and kept.run.call_log is not None
    assert kept.run.call_log.is_file()
    named = tmp_path / "named"
    rec = run_job(record_job(demo, tmp_path / "r.jsonl", LoopOptions(runs_dir=named, keep=False)))
    assert rec.cassette is not None and not named.exists() and rec.run.stderr is None


def test_keep_false_never_removes_what_the_job_did_not_write(tmp_path: Path) -> None:
    named = tmp_path / "named"
    named.mkdir()
    (named / "notes.txt").write_text("mine")
    folder = RunsFolder(named, keep=False)
    path = folder.open("unused-")
    (path / "run-01.stdout").write_text("x")
    folder.remove()
    assert sorted(p.name for p in named.iterdir()) == ["notes.txt"]
