"""What the MCP replay tests send and expect, in the command's test and the server's: a
cassette of one recorded JSON-RPC error and one answer, lines from a host that are not
JSON-RPC messages with the answer each gets, and the check that words are plain."""

from __future__ import annotations

import json
from pathlib import Path

from cassette_tui.core.mcp._wire import INVALID_REQUEST_CODE, PARSE_ERROR_CODE

REJECTED = {
    "seq": 1,
    "tool": "reject",
    "args": {"reason": "no"},
    "error": {"type": "MCPError", "message": "rejected: no", "code": -32001, "data": {"why": 1}},
}


ECHO = {
    "seq": 2,
    "tool": "echo",
    "args": {"text": "hi"},
    "response": {"content": [], "isError": False},
}


def error_cassette(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (REJECTED, ECHO)), encoding="utf-8")
    return path


def assert_plain(text: str) -> None:
    assert "pydantic" not in text and "http" not in text and "validation error" not in text
    assert "Warning" not in text and ".py" not in text and "Traceback" not in text


GARBAGE = [
    (b"this is not json\n", None, PARSE_ERROR_CODE, "parse error: the line is not valid JSON ("),
    (b'{"jsonrpc": "2.0", "id": 5}\n', 5, INVALID_REQUEST_CODE, 'it has no "method"'),
    (b'{"jsonrpc": "2.0", "id": "m", "method": 7}\n', "m", INVALID_REQUEST_CODE,
     '"method" should be a valid string'),
    (b'{"jsonrpc": "2.0", "id": 6, "method": "x", "params": 3}\n', 6, INVALID_REQUEST_CODE,
     '"params" should be an object'),
    (b"[1, 2]\n", None, INVALID_REQUEST_CODE, "a message is a JSON object, this is an array"),
    (b"null\n", None, INVALID_REQUEST_CODE, "this is null"),
]  # fmt: skip
