"""The repeat policy of ``mcp replay`` (issue 27): a tool the recorded ``tools/list``
annotates ``readOnlyHint``/``idempotentHint`` serves its last answer again by default (a
host that asks mcp-server-time for the current time twice replays clean), said in the
report; other tools still miss past their recordings, and the miss names the flag as the
command spells it (``--repeat last``). Real SDK client, real mcp-server-time."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support.mcp_session import (
    TOY_SERVER,
    RawSession,
    installed,
    record_cmd,
    replay_cmd,
    sdk_session,
    tool_call,
)

NOW = ("get_current_time", {"timezone": "Europe/Paris"})
RAW_SERVER = [sys.executable, str(Path(TOY_SERVER).with_name("mcp_raw_server.py"))]


def test_a_read_only_tool_called_again_replays_its_last_answer(tmp_path: Path) -> None:
    run = tmp_path / "time.jsonl"
    server = [installed("mcp-server-time"), "--local-timezone", "UTC"]
    recorded = sdk_session(record_cmd(run, server), [NOW], cwd=tmp_path)
    report = tmp_path / "report.json"
    replayed = sdk_session(replay_cmd(run, "--report", str(report)), [NOW, NOW], cwd=tmp_path)
    assert replayed["calls"] == [recorded["calls"][0]] * 2
    doc = json.loads(report.read_text())
    assert doc["misses"] == []
    assert doc["mcp"]["repeat_last_tools"] == ["convert_time", "get_current_time"]
    assert [c["outcome"] for c in doc["calls"]] == ["hit", "hit"]
    strict = sdk_session(replay_cmd(run, "--repeat", "error"), [NOW, NOW], cwd=tmp_path)
    assert "--repeat last" in strict["calls"][1]["error"]["message"]


def test_other_tools_miss_past_their_recordings_naming_the_flag(tmp_path: Path) -> None:
    run = tmp_path / "raw.jsonl"
    session = RawSession(record_cmd(run, RAW_SERVER))
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    try:
        session.lines.get(timeout=60)  # the banner
        session.request(init)
        session.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        session.request(tool_call(2, "echo", {"n": 1}))
        session.request(tool_call(3, "clock", {}))
        assert session.close() == 0
    finally:
        session.kill()
    replay = RawSession(replay_cmd(run))
    try:
        assert replay.lines.get(timeout=60) == b"raw server ready\n"  # as recorded
        replay.request(init)
        replay.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        answers = [
            replay.request(tool_call(10 + i, name, args))
            for i, (name, args) in enumerate(
                [("echo", {"n": 1}), ("echo", {"n": 1}), ("clock", {}), ("clock", {})]
            )
        ]
        assert replay.close() == 1
    finally:
        replay.kill()
    first, again, clock, clock_again = answers
    assert "result" in first and clock_again["result"] == clock["result"]
    message = again["error"]["message"]
    assert "cassette-tui mcp replay with --repeat last" in message
    assert "repeat-last policy" not in message
