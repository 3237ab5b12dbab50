"""A recording that wrote no entry leaves no file, so the same command can run again
(it used to fail with "exists"); a recording that wrote something keeps it and says so;
a user's existing file is never removed. Real agents and MCP servers as subprocesses."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import load
from support.loop import LOOP_AGENT, agent_cmd
from support.mcp_session import record_cmd
from support.paths import REAL, SCRIPT

CASE_22 = REAL / "bugcases" / "22_json_roundtrip_types" / "agent.py"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env["NO_COLOR"] = "1"
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=120, check=False)  # fmt: skip


def python(code: str) -> str:
    return shlex.join([sys.executable, "-c", code])


#: an agent that creates its recording, then dies before its first call and before any
#: exit hook (``os._exit``): the 0-byte file stays unless the job removes it
DIES_AT_ONCE = python(
    "import os\nfrom cassette_tui.core import wrap_dispatcher\n"
    "wrap_dispatcher(lambda t, a: 1)\nos._exit(3)"
)
#: an agent whose first call fails to record (its response is not JSON): it crashes
FIRST_CALL_FAILS = python(
    "from cassette_tui.core import wrap_dispatcher\n"
    "wrap_dispatcher(lambda t, a: {1: (2, 3)})('t', {})"
)


@pytest.mark.parametrize("agent", [DIES_AT_ONCE, FIRST_CALL_FAILS], ids=["killed", "crashed"])
def test_a_recording_of_nothing_leaves_no_file_and_the_retry_runs(
    tmp_path: Path, agent: str
) -> None:
    for _ in range(2):  # the second run is not refused with "exists"
        done = cli("record", "--agent", agent, "-o", "r.jsonl", cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert "exists" not in done.stderr + done.stdout
        assert "r.jsonl: the agent recorded nothing" in done.stdout
        assert list(tmp_path.iterdir()) == []
    done = cli("record", "--agent", DIES_AT_ONCE, "-o", "r.jsonl", "--json", cwd=tmp_path)
    doc = json.loads(done.stdout)
    assert doc["entries"] == 0
    assert doc["run"]["error"].endswith("the agent recorded nothing (no file written)")


def test_case_22_agent_then_the_retry(real: Path, tmp_path: Path) -> None:
    agent = shlex.join([sys.executable, str(CASE_22)])
    for _ in range(2):
        done = cli("record", "--agent", agent, "-o", "r.jsonl", cwd=tmp_path)
        assert done.returncode == 1 and "NotSerializable" in done.stdout
        assert "exists" not in done.stdout + done.stderr
        assert not (tmp_path / "r.jsonl").exists()


def test_a_recording_with_entries_is_kept_and_said(tmp_path: Path) -> None:
    piddir = tmp_path / "pids"
    piddir.mkdir()
    agent = agent_cmd("record-hang", str(piddir), script=LOOP_AGENT)
    done = cli("record", "--agent", agent, "-o", "r.jsonl", "--timeout", "3", cwd=tmp_path)
    assert done.returncode == 1
    assert "kept: the 1 entry recorded before it failed stay in r.jsonl" in done.stdout
    assert [e.tool for e in load(tmp_path / "r.jsonl")] == ["lookup"]


def test_a_users_existing_file_is_never_removed(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_bytes(b"")  # the user's (empty) file
    done = cli("record", "--agent", DIES_AT_ONCE, "-o", "r.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and "exists" in done.stderr
    assert (tmp_path / "r.jsonl").exists()


def test_mcp_record_of_a_server_that_cannot_start_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    for _ in range(2):  # the retry fails the same way, not on "a server-facts file exists"
        done = subprocess.run(record_cmd(out, ["/nonexistent/server"]), input=b"",
                              capture_output=True, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 2
        err = done.stderr.decode()
        assert "cannot start the MCP server" in err and "exists" not in err
        assert "nothing was recorded" in err
        assert list(tmp_path.iterdir()) == []


def test_mcp_record_of_a_session_with_no_request_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    done = subprocess.run(record_cmd(out, [sys.executable, "-c", "pass"]), input=b"",
                          capture_output=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_mcp_record_never_removes_a_users_sidecar(tmp_path: Path) -> None:
    (tmp_path / "x.mcp.json").write_text("precious\n")
    done = subprocess.run(record_cmd(tmp_path / "x.jsonl", ["/nonexistent/server"]),
                          input=b"", capture_output=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2 and b"exists already" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.mcp.json"]
    assert (tmp_path / "x.mcp.json").read_text() == "precious\n"
