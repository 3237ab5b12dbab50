"""Bugcase 51: a 3 MB tool result through ``mcp record`` and ``mcp replay`` (hosts whose
line reader stopped at 64 KiB crashed on a 132 KB one). Runs the case's server and host
from ``../shared/real``: the result reaches the host whole through the recorder, byte for
byte as the server sent it, is recorded as one entry equal to it, and replay answers the
same result (issue 27)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.mcp_session import CLI, RawSession, record_cmd, replay_cmd

BIG = 3_000_000
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "h", "version": "1"},
    },
}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "get_contact", "arguments": {"contact_id": "C-5"}},
}


def the_call(command: list[str], cwd: Path) -> bytes:
    """The tools/call answer line, exactly as a host reads it from ``command``."""
    env = {**os.environ, "FAKE_BIG": str(BIG)}
    session = RawSession(command, cwd=cwd, env=env)
    try:
        session.request(INIT, timeout=120)
        session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        session.request(CALL, timeout=120)
        line = session.received[-1]
        assert session.close(timeout=120) == 0, session.stderr.decode(errors="replace")
    finally:
        session.kill()
    return line


def test_bugcase_51_a_3_mb_result_is_recorded_and_replayed_whole(
    real: Path, tmp_path: Path
) -> None:
    case = real / "bugcases" / "51_mcp_large_tool_result"
    if not case.is_dir():
        pytest.skip(f"bugcase absent: {case}")
    server = [sys.executable, str(case / "fake_server.py")]
    run = tmp_path / "big.jsonl"

    live = the_call(server, case)
    recorded = the_call(record_cmd(run, server), case)
    assert recorded == live  # through the recorder: the server's bytes, all of them
    result = json.loads(live)["result"]
    assert len(result["content"][0]["text"]) == BIG

    (entry,) = [json.loads(line) for line in run.read_bytes().splitlines()]
    assert entry["tool"] == "get_contact" and entry["args"] == {"contact_id": "C-5"}
    assert entry["response"] == result

    replayed = json.loads(the_call(replay_cmd(run), case))
    assert replayed["id"] == 2 and replayed["result"] == result

    checked = subprocess.run(
        [*CLI, "check", "--no-secrets", str(run)], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0 and "1 entry, no findings" in checked.stdout

    # the case's own host, through the recorder and the replay: the whole result arrives
    script = json.dumps([["call", "get_contact", {"contact_id": "C-5"}]])
    env = {**os.environ, "FAKE_BIG": str(BIG)}
    hosted = tmp_path / "host.jsonl"
    for command in (record_cmd(hosted, server), replay_cmd(hosted)):
        host = subprocess.run(
            [sys.executable, "host.py", script, "--", *command],
            cwd=case,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert host.returncode == 0, host.stderr
        assert f"({BIG + 61} chars)" in host.stdout
        assert "host: server exit 0" in host.stdout
