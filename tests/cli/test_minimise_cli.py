"""``cassette-tui minimise`` as a user runs it (issue 28): the seqs kept, the file written
(which ``check`` finds clean and which fails the same way again), ``--json``, the exit
statuses, ``--force``, and Ctrl-C keeping the smallest failing set found so far."""

from __future__ import annotations

import json
import os
import pty
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cassette_tui.core import digest
from support.factory import write_cassette
from support.loop import agent_cmd, still_alive
from support.paths import SCRIPT
from support.run import cli

AGENT = Path(__file__).resolve().parents[1] / "support" / "agents" / "minimise_agent.py"


def _steps(folder: Path, steps: int) -> Path:
    return write_cassette(
        folder / "fail.jsonl",
        *[{"seq": i, "tool": "check", "args": {"step": i}, "response": {"state": "bad"}}
          for i in range(1, steps + 1)],
    )  # fmt: skip


def test_minimise_names_the_seqs_kept_and_writes_a_clean_cassette(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 12)
    agent = agent_cmd("--steps", "12", "--needs", "3,10", "--tolerant", script=AGENT)
    done = cli("minimise", str(cassette), "--agent", agent, "-n", "2", "-j", "2")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "the whole cassette fails (exit 1, AssertionError) in 2 of 2 runs" in out
    assert "2 of 12 entries keep the failure: seq 3 check, seq 10 check" in out
    assert "  1. no entry: gone (passes 2/2)" in out
    assert "2 entries (seq 3, 10): kept (fails the same way in 2/2 runs)" in out
    written = tmp_path / "fail.min.jsonl"
    assert f"wrote {written} (2 entries)" in out
    assert "a gate says unclean_replay, and the agent fails as recorded" in out
    checked = cli("check", str(written))
    assert checked.returncode == 0 and "2 entries, no findings" in checked.stdout
    # the result fails the same way again: exit 1, AssertionError, in every run
    gate = json.loads(cli("gate", str(written), "--agent", agent, "--runs", "2", "--json").stdout)
    assert [r["exit_code"] for r in gate["results"]] == [1, 1]
    assert all("AssertionError: steps [3, 10]" in r["stderr_tail"] for r in gate["results"])
    # never over a file without --force: exit 2 before any replay, the file untouched
    before = written.read_bytes()
    again = cli("minimise", str(cassette), "--agent", "false", "-n", "1")
    assert again.returncode == 2 and "exists; use --force to replace it" in again.stderr
    assert written.read_bytes() == before


def test_minimise_json_and_an_every_entry_result(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 4)
    agent = agent_cmd("--steps", "4", "--needs", "1,4", script=AGENT)  # a miss: uncaught
    mine = tmp_path / "bug.jsonl"
    done = cli("minimise", str(cassette), "--agent", agent, "-n", "1", "-o", str(mine), "--json")
    assert done.returncode == 1, done.stderr  # nothing could be removed: not "found"
    doc = json.loads(done.stdout)
    assert doc["minimal"] == [{"seq": i, "tool": "check"} for i in range(1, 5)]
    assert doc["summary"].startswith("nothing could be removed: all 4 entries keep the failure")
    assert doc["failure"] == {"exit_code": 1, "error": "AssertionError", "miss": None,
                              "text": "exit 1, AssertionError"}  # fmt: skip
    assert doc["whole"] == {"verdict": "deterministic", "runs": 1, "passed": 0,
                            "failed_same_way": 1}  # fmt: skip
    # no copy of the cassette is written as if it were a smaller one
    assert doc["out"] is None and not mine.exists()
    assert doc["one_minimal"] is True and doc["exit_status"] == 1
    assert doc["replays"] == 1 + sum(c["runs"] for c in doc["candidates"])
    assert {c["outcome"] for c in doc["candidates"]} == {"pass"}
    assert all("CassetteMiss" in c["why"] for c in doc["candidates"])
    text = cli("minimise", str(cassette), "--agent", agent, "-n", "1", "-o", str(mine))
    assert text.returncode == 1 and not mine.exists()
    assert "no file written: the cassette cannot be made smaller" in text.stdout
    assert "wrote" not in text.stdout


def test_runs_dir_keeps_each_gate_in_a_folder_of_its_own(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 3)
    agent = agent_cmd("--steps", "3", "--needs", "2", "--tolerant", script=AGENT)
    runs = tmp_path / "runs"
    done = cli("minimise", str(cassette), "--agent", agent, "-n", "1", "--runs-dir", str(runs))
    assert done.returncode == 0, done.stderr
    assert "1 of 3 entries keeps the failure: seq 2 check" in done.stdout
    assert f"runs kept in {runs}: whole/" in done.stdout
    candidates = sorted(p.name for p in runs.glob("candidate-*"))
    assert (runs / "whole" / "run-01.report.json").is_file() and candidates
    assert sorted(p.stem for p in (runs / "candidates").glob("*.jsonl")) == candidates


def test_minimise_exits_as_the_gate_when_there_is_nothing_to_minimise(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 3)
    passing = agent_cmd("--steps", "3", "--needs", "9", script=AGENT)
    done = cli("minimise", str(cassette), "--agent", passing, "-n", "1")
    assert done.returncode == 0
    assert "nothing to minimise: the agent passes every run of the whole cassette" in done.stdout
    flaky = agent_cmd("--steps", "3", "--needs", "2", "--tolerant", "--flaky-run", "{run}",
                      script=AGENT)  # fmt: skip
    done = cli("minimise", str(cassette), "--agent", flaky, "-n", "2", "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == 1 and doc["exit_status"] == 1 and doc["minimal"] is None
    assert doc["problem"].startswith("flaky: the whole cassette fails")
    assert not (tmp_path / "fail.min.jsonl").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 1, "tool": "x", "args": {}, "response": 1}\nnot json\n')
    done = cli("minimise", str(bad), "--agent", "true", "--json")
    assert done.returncode == 2 and "bad.jsonl:2" in done.stderr
    assert json.loads(done.stdout)["file"] == str(bad)


def _cancelled(tmp_path: Path, *extra: str) -> tuple[int, str, str, int]:
    """``minimise`` of 8 steps (needs 1 and 2) whose agent hangs on the candidate that
    answers step 2 without step 1, which comes after {1, 2} was found to fail; SIGINT
    once it hangs: ``(exit status, stdout, stderr, the hanging agent's pid)``."""
    cassette = _steps(tmp_path, 8)
    mark = tmp_path / "hanging.pid"
    agent = agent_cmd("--steps", "8", "--needs", "1,2", "--tolerant", "--hang-without", "1",
                      "--hang-with", "2", "--mark", str(mark), script=AGENT)  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    proc = subprocess.Popen(
        [str(SCRIPT), "minimise", str(cassette), "--agent", agent, "-n", "1", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120  # a wait for the agent, not a measurement
        while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mark.exists(), proc.communicate(timeout=60)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err, int(mark.read_text())


def test_ctrl_c_keeps_the_smallest_failing_set_found_so_far(tmp_path: Path) -> None:
    """Ctrl-C writes {1, 2}, says it is not proven 1-minimal, kills the hanging run and
    exits 130."""
    status, out, err, pid = _cancelled(tmp_path, "--json")
    assert status == 130, err
    doc = json.loads(out)
    assert doc["cancelled"] is True and doc["one_minimal"] is False
    assert doc["minimal"] == [{"seq": 1, "tool": "check"}, {"seq": 2, "tool": "check"}]
    assert [e["seq"] for e in map(json.loads, (tmp_path / "fail.min.jsonl").open())] == [1, 2]
    assert not still_alive([pid])


def test_ctrl_c_text_says_not_proven(tmp_path: Path) -> None:
    status, out, err, _ = _cancelled(tmp_path)
    assert status == 130, err
    assert "cancelled: 2 of 8 entries keep the failure: seq 1 check, seq 2 check" in out
    assert "not proven 1-minimal" in out and "wrote " in out


def test_progress_counts_candidates_and_replays_on_a_terminal(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 4)
    agent = agent_cmd("--steps", "4", "--needs", "3", "--tolerant", script=AGENT)
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env.update(TERM="xterm", COLUMNS="120")
    proc = subprocess.Popen(
        [str(SCRIPT), "minimise", str(cassette), "--agent", agent, "-n", "1", "-j", "1"],
        stdout=subprocess.PIPE, stderr=slave, env=env,
    )  # fmt: skip
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(master)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 0
    assert "minimise" in text and "replays" in text and "of 4 entries" in text


MCP_AGENT = Path(__file__).resolve().parents[1] / "support" / "mcp_time_agent.py"


def test_an_mcp_recording_is_minimised_with_its_sidecar(tmp_path: Path) -> None:
    """A real MCP session (the SDK client, ``mcp record`` of ``mcp-server-time``) whose
    answer is edited to a time the agent refuses: minimise replays it through ``mcp
    replay``, which reads each candidate's sidecar, and writes the result's sidecar."""
    if shutil.which("mcp-server-time", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("mcp-server-time is not installed (the [test] extra)")
    run = tmp_path / "time.jsonl"
    env = {**os.environ, "CASSETTE_MODE": "record", "CASSETTE_PATH": str(run)}
    agent = [sys.executable, str(MCP_AGENT)]
    recorded = subprocess.run(agent, env=env, check=False, capture_output=True, timeout=120)
    assert recorded.returncode == 0, recorded.stderr
    text = run.read_text()
    run.write_text(text.replace("+01:00", "+05:00").replace("+02:00", "+05:00"))
    # a second call the agent never makes, so there is an entry to remove (a cassette that
    # cannot shrink is written nowhere)
    first = json.loads(run.read_text().splitlines()[0])
    tokyo = {"timezone": "Asia/Tokyo"}
    extra = {**first, "seq": 2, "args": tokyo, "args_digest": digest(tokyo)}
    with run.open("a") as f:
        f.write(json.dumps(extra) + "\n")
    done = cli("minimise", str(run), "--agent", shlex.join(agent), "-n", "1", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["minimal"] == [{"seq": 1, "tool": "get_current_time"}]
    # the SDK client raises the replay's miss (-32010) as an MCPError: another failure
    assert doc["candidates"][0]["why"] == "fails another way: exit 1, MCPError"
    side = tmp_path / "time.min.mcp.json"
    assert doc["sidecar"] == str(side)
    facts = json.loads(side.read_text())
    assert facts["cassette"] == "time.min.jsonl"
    assert facts["exchanges"] == json.loads((tmp_path / "time.mcp.json").read_text())["exchanges"]
    assert cli("check", str(tmp_path / "time.min.jsonl")).returncode == 0


def test_one_replay_is_singular(tmp_path: Path) -> None:
    """``-n 1`` on a cassette that passes: one gate of one run, said as "1 replay"."""
    cassette = _steps(tmp_path, 2)
    done = cli("minimise", str(cassette), "--agent", f"{sys.executable} -c pass", "-n", "1")
    assert done.returncode == 2, done.stderr
    assert "0 candidates, 1 replay\n" in done.stdout, done.stdout


def test_ctrl_c_before_anything_was_removed_says_so_not_that_nothing_can_be() -> None:
    """Cancelled with every entry still kept: no file, and the words say the search was
    stopped, never that the cassette cannot be made smaller; cancelled during the whole
    cassette's gate: no answer yet, not a bare "no answer"."""
    from cassette_tui.core.why.minimise import MinimiseResult
    from cassette_tui.tui.commands.minimise import minimise_lines

    early = MinimiseResult("fail.jsonl", 2, 1, minimal=[0, 1], seqs=[1, 2],
                           tools=["check", "check"], cancelled=True)  # fmt: skip
    text = "\n".join(minimise_lines(early, None))
    assert "no file written: no entry was removed before the search was cancelled" in text
    assert "cannot be made smaller" not in text
    first = MinimiseResult("fail.jsonl", 2, 1, cancelled=True)
    text = "\n".join(minimise_lines(first, None))
    assert "cancelled: stopped before the whole cassette's gate ended: no answer yet" in text
