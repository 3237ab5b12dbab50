"""The replay report holds every call of every process of the run when the run ends:
calls made in forked children and in a second program, calls of an agent that ends with
``os._exit(0)`` right after them, and of one that kills itself with ``SIGKILL`` or aborts.
Hostile agents as real processes; the report read back as the loop reads it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cassette_tui.core.replay.report import ReplayReport, journal_path
from support.paths import SAMPLES, SCRIPT

FIX = SAMPLES / "fix.jsonl"

PRELUDE = """
import os, signal, subprocess, sys
from cassette_tui.core import wrap_dispatcher
d = wrap_dispatcher(lambda tool, args: None)
def search():
    return d("search_docs", {"q": "retry budget", "top_k": 5})
def read(path):
    return d("read_file", {"path": path})
"""

AGENTS = {
    # the parent serves one call, two forked children one each, the parent waits for them
    "fork": """
search()
for path in ("docs/retry-budget.md", "docs/backoff.md"):
    pid = os.fork()
    if pid == 0:
        read(path)
        os._exit(0)
    os.waitpid(pid, 0)
search()
""",
    # all four calls, then out at once: no exit hook, no timer
    "os_exit": """
search(); search(); read("docs/retry-budget.md"); read("docs/backoff.md")
os._exit(0)
""",
    "sigkill": """
search(); search(); read("docs/retry-budget.md"); read("docs/backoff.md")
os.kill(os.getpid(), signal.SIGKILL)
""",
    "abort": """
search(); search(); read("docs/retry-budget.md"); read("docs/backoff.md")
os.abort()
""",
    # a second Python program of the run wraps too (it starts its own report writer)
    "child_program": """
search(); search()
code = (
    "from cassette_tui.core import wrap_dispatcher\\n"
    "d = wrap_dispatcher(lambda t, a: None)\\n"
    "d('read_file', {'path': 'docs/retry-budget.md'})\\n"
    "d('read_file', {'path': 'docs/backoff.md'})\\n"
)
subprocess.run([sys.executable, "-c", code], check=True)
""",
}


def _run(tmp_path: Path, name: str, extra_env: dict[str, str] | None = None) -> Path:
    agent = tmp_path / "agent.py"
    agent.write_text(PRELUDE + textwrap.dedent(AGENTS[name]))
    report = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env.update(CASSETTE_MODE="replay", CASSETTE_PATH=str(FIX), CASSETTE_REPORT=str(report))
    env.update(extra_env or {})
    subprocess.run([sys.executable, str(agent)], env=env, timeout=120, check=False)
    return report


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_the_report_holds_every_call_of_every_process(tmp_path: Path, name: str) -> None:
    report = ReplayReport.read_run(_run(tmp_path, name))
    calls = report.calls or ()
    assert len(calls) == 4, report
    assert [c.n for c in calls] == [1, 2, 3, 4]
    assert {c.outcome for c in calls} == {"hit"}
    assert report.used == 4 and report.unused_seqs == () and report.misses == ()
    served = sorted(c.seq for c in calls if c.seq is not None)
    assert served == [1, 2, 3, 4]
    assert [(r.tool, r.calls, r.recorded) for r in report.repeats] == [("search_docs", 2, 2)]


def test_a_single_process_report_file_is_read_as_written(tmp_path: Path) -> None:
    """One process that exits normally: the file is the report (the journal agrees), and
    a run with no wrapper left no journal to read."""
    AGENTS["normal"] = 'search(); search(); read("docs/retry-budget.md")\n'
    try:
        report = _run(tmp_path, "normal")
    finally:
        del AGENTS["normal"]
    assert journal_path(report).is_file()
    assert ReplayReport.read_run(report) == ReplayReport.read(report)
    assert ReplayReport.read(report).unused_seqs == (4,)
    with pytest.raises(FileNotFoundError):
        ReplayReport.read_run(tmp_path / "none.json")


def test_a_miss_in_a_forked_child_is_in_the_report(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        PRELUDE
        + textwrap.dedent(
            """
            search()
            pid = os.fork()
            if pid == 0:
                try:
                    read("docs/never-recorded.md")
                except Exception:
                    pass
                os._exit(0)
            os.waitpid(pid, 0)
            """
        )
    )
    report = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env.update(CASSETTE_MODE="replay", CASSETTE_PATH=str(FIX), CASSETTE_REPORT=str(report))
    subprocess.run([sys.executable, str(agent)], env=env, timeout=120, check=True)
    read = ReplayReport.read_run(report)
    assert [c.outcome for c in read.calls or ()] == ["hit", "miss"]
    assert [m.args for m in read.misses] == [{"path": "docs/never-recorded.md"}]


@pytest.mark.parametrize("name", ["os_exit", "sigkill", "fork"])
def test_replay_of_a_hostile_agent_counts_its_calls(tmp_path: Path, name: str) -> None:
    """Through ``cassette-tui replay``: no "replayed nothing", all four calls served."""
    agent = tmp_path / "agent.py"
    agent.write_text(PRELUDE + textwrap.dedent(AGENTS[name]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env["NO_COLOR"] = "1"
    done = subprocess.run(
        [str(SCRIPT), "replay", str(FIX), "--agent", f"{sys.executable} {agent}", "--json"],
        capture_output=True, text=True, env=env, timeout=180, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert "replayed nothing" not in done.stdout + done.stderr, done.stdout
    run = json.loads(done.stdout)["run"]
    assert (run["calls"], run["hits"], run["unused_seqs"]) == (4, 4, []), run
    assert run["status"] == ("crashed" if name == "sigkill" else "passed"), run
