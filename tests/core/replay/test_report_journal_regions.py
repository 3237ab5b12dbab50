"""The report's journal stores each served call into a mapped region of the file
(``report_sink._Region``: no system call a line). What the crash guarantee says still
holds with it, for real processes: an agent killed by ``SIGKILL`` after thousands of
calls (several regions, the last one never cut) leaves every served call in the run's
report, in order; a parent and its forked children each store into their own regions,
and the report gives their calls back in the order they were served; a clean exit cuts
the journal to its lines (JSON Lines, no zero bytes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from cassette_tui.core.replay.report import ReplayReport, journal_events, journal_path
from cassette_tui.core.replay.report_sink import _REGION_MIN

#: calls enough to fill the first regions (16 KB, then 32 KB, ...: about 150 bytes a line)
CALLS = 3000


def _cassette(path: Path, n: int) -> Path:
    """``n`` distinct recorded calls of ``t`` with args ``{"i": i}``."""
    with path.open("w", encoding="utf-8") as fh:
        for i in range(1, n + 1):
            line = {"seq": i, "tool": "t", "args": {"i": i}, "response": {"r": i}}
            fh.write(json.dumps(line) + "\n")
    return path


def _run(
    tmp_path: Path, body: str, cassette: Path
) -> tuple[subprocess.CompletedProcess[str], Path]:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import os, signal, sys\n"
        "from cassette_tui.core import wrap_dispatcher\n"
        "d = wrap_dispatcher(lambda tool, args: None)\n" + textwrap.dedent(body)
    )
    report = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env.update(CASSETTE_MODE="replay", CASSETTE_PATH=str(cassette), CASSETTE_REPORT=str(report))
    done = subprocess.run(
        [sys.executable, str(agent)], env=env, timeout=120, check=False, capture_output=True,
        text=True,
    )  # fmt: skip
    return done, report


def test_a_sigkilled_agent_leaves_every_served_call(tmp_path: Path) -> None:
    cassette = _cassette(tmp_path / "c.jsonl", CALLS)
    done, report = _run(
        tmp_path,
        f"""
        for i in range(1, {CALLS} + 1):
            assert d("t", {{"i": i}}) == {{"r": i}}
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        cassette,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    journal = journal_path(report).read_bytes()
    assert len(journal) > 4 * _REGION_MIN  # several regions were claimed
    assert journal.endswith(b"\0")  # the last region, never cut: the kill came first
    run = ReplayReport.read_run(report)
    calls = run.calls or ()
    assert [(c.n, c.seq, c.outcome) for c in calls] == [(i, i, "hit") for i in range(1, CALLS + 1)]
    assert run.used == CALLS and run.unused_seqs == ()
    assert not any("end" in e for e in journal_events(journal_path(report)))  # killed


def test_forked_children_calls_come_back_in_served_order(tmp_path: Path) -> None:
    """The parent serves calls before, between and after two children, each child many
    calls of its own (its own regions, after the parent's in the file): the report's
    call log is the order they were served, not the file's."""
    cassette = _cassette(tmp_path / "c.jsonl", 400)
    done, report = _run(
        tmp_path,
        """
        order = iter(range(1, 401))
        def call():
            i = next(order)
            assert d("t", {"i": i}) == {"r": i}
        for _ in range(50):
            call()
        for child in range(2):
            pid = os.fork()
            if pid == 0:
                for _ in range(150):
                    call()
                os._exit(0)
            os.waitpid(pid, 0)
            for _ in range(150):
                next(order)  # the child's calls: the parent goes on after them
        for _ in range(50):
            call()
        """,
        cassette,
    )
    assert done.returncode == 0, done.stderr
    calls = ReplayReport.read_run(report).calls or ()
    # parent 1-50, first child 51-200, second child 201-350, then the parent 351-400
    seqs = [c.seq for c in calls]
    assert seqs[:50] == list(range(1, 51))
    assert seqs[50:200] == list(range(51, 201))
    assert seqs[200:350] == list(range(201, 351))
    assert seqs[350:] == list(range(351, 401))
    assert [c.n for c in calls] == list(range(1, 401))
    assert {c.outcome for c in calls} == {"hit"}


def test_a_clean_exit_leaves_json_lines(tmp_path: Path) -> None:
    cassette = _cassette(tmp_path / "c.jsonl", 500)
    done, report = _run(
        tmp_path,
        """
        for i in range(1, 501):
            d("t", {"i": i})
        """,
        cassette,
    )
    assert done.returncode == 0, done.stderr
    lines = journal_path(report).read_bytes().split(b"\n")
    assert lines[-1] == b""  # ends with a newline, no zero byte after the last line
    events = [json.loads(line) for line in lines[:-1]]  # every line JSON, in order
    assert [e["call"]["seq"] for e in events if "call" in e] == list(range(1, 501))
    assert "header" in events[0] and events[-1]["end"]["calls"] == 500
    assert ReplayReport.read_run(report) == ReplayReport.read(report)


def test_a_journal_that_is_a_fifo_gets_each_line_written(tmp_path: Path) -> None:
    """A journal that is not a regular file (a FIFO someone reads) cannot be mapped: each
    line is written to it as it is served, whole, with no zero byte."""
    from cassette_tui.core import wrap_dispatcher

    cassette = _cassette(tmp_path / "c.jsonl", 3)
    report = tmp_path / "r.json"
    fifo = journal_path(report)
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        dispatch = wrap_dispatcher(lambda t, a: None, mode="replay", path=cassette, report=report)
        for i in (1, 2, 3):
            assert dispatch("t", {"i": i}) == {"r": i}
        data = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert b"\0" not in data
    events = [json.loads(line) for line in data.splitlines()]
    assert "header" in events[0]
    assert [e["call"]["seq"] for e in events[1:]] == [1, 2, 3]
