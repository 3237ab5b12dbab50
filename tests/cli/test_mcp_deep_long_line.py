"""A host line of 64 KB or more nested past the JSON reader's depth (a long string, then
2,000 nested arrays) through ``mcp record`` over stdio: forwarded, and the host's next
call answered and recorded. Before the fix the proxy's reading of the long string
(``_spans.read_spans``) raised ``RecursionError`` in the host's thread: no later line went
on to the server, nothing was said and the session ended with status 0, its calls lost."""

from __future__ import annotations

import json
from pathlib import Path

from support.mcp_session import RawSession, record_cmd, tool_call, toy_server

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "deep", "version": "1"},
    },
}


def test_a_line_nested_too_deep_does_not_stop_the_host_s_next_lines(tmp_path: Path) -> None:
    run = tmp_path / "deep.jsonl"
    session = RawSession(record_cmd(run, toy_server()))
    try:
        session.request(INIT)
        session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        line = json.dumps(tool_call(1, "echo", {"text": "x" * (1 << 17), "d": []}))
        session.send(line.replace("[]", "[" * 2000 + "]" * 2000).encode() + b"\n")
        answer = session.request(tool_call(2, "echo", {"text": "after"}), timeout=10)
        assert answer["id"] == 2
        assert session.close() == 0
    finally:
        session.kill()
    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert [e["args"] for e in entries] == [{"text": "after"}]
