"""What ``cassette-tui mcp replay`` says to the host and on stderr is plain: a recorded
JSON-RPC error is sent back as recorded with nothing on stderr (its class, the SDK's
``MCPError``, is never rebuilt, so no Python warning with a source path); a line from the
host that is not a JSON-RPC message is answered with a parse error (-32700) or an invalid
request (-32600) in plain words, never pydantic's report and its links."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from cassette_tui.core.format.errors import ToolErrorClassWarning
from cassette_tui.core.mcp._wire import (
    INVALID_REQUEST_CODE,
    PARSE_ERROR_CODE,
    JSONRPCError,
    JSONRPCRequest,
    unreadable_answer,
)
from cassette_tui.core.mcp.replay import ReplayServer
from mcp_types import jsonrpc_message_adapter
from support.mcp_session import HANDSHAKE, RawSession, raw_script, replay_cmd, tool_call

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


def _cassette(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (REJECTED, ECHO)), encoding="utf-8")
    return path


def _plain(text: str) -> None:
    assert "pydantic" not in text and "http" not in text and "validation error" not in text
    assert "Warning" not in text and ".py" not in text and "Traceback" not in text


def test_a_recorded_json_rpc_error_is_sent_back_as_is_with_nothing_on_stderr(
    tmp_path: Path,
) -> None:
    session = RawSession(replay_cmd(_cassette(tmp_path)))
    try:
        raw_script(session, HANDSHAKE)
        answer = session.request(tool_call(7, "reject", {"reason": "no"}))
        echo = session.request(tool_call(8, "echo", {"text": "hi"}))
        assert session.close() == 0
    finally:
        session.kill()
    assert answer == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32001, "message": "rejected: no", "data": {"why": 1}},
    }
    assert echo["result"] == {"content": [], "isError": False}
    assert session.stderr == b""


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


def test_garbage_lines_are_answered_in_plain_words(tmp_path: Path) -> None:
    session = RawSession(replay_cmd(_cassette(tmp_path)))
    try:
        raw_script(session, HANDSHAKE)
        answers = []
        for line, *_ in GARBAGE:
            session.send(line)
            answers.append(json.loads(session.lines.get(timeout=60)))
        # the session goes on
        assert session.request({"jsonrpc": "2.0", "id": 99, "method": "ping"})["result"] == {}
        assert session.close() == 0
    finally:
        session.kill()
    for answer, (line, request_id, code, words) in zip(answers, GARBAGE, strict=True):
        assert answer["id"] == request_id, line
        assert answer["error"]["code"] == code, line
        assert words in answer["error"]["message"], (line, answer)
        _plain(answer["error"]["message"])
    err = session.stderr.decode()
    _plain(err)
    # one line on stderr per bad line, the words sent to the host
    lines = err.splitlines()
    assert len(lines) == len(GARBAGE)
    assert all(line.startswith("cassette-tui mcp replay: ") for line in lines)


@pytest.mark.parametrize("line", [g[0] for g in GARBAGE])
def test_unreadable_answer_words(line: bytes) -> None:
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        request_id, error = unreadable_answer(exc)
    else:
        pytest.fail(f"{line!r} validated")
    _plain(error.message)
    assert error.code in (PARSE_ERROR_CODE, INVALID_REQUEST_CODE)
    assert "\n" not in error.message
    assert request_id is None or isinstance(request_id, (int, str))


def test_the_server_answers_a_recorded_error_without_rebuilding_its_class(tmp_path: Path) -> None:
    server = ReplayServer(_cassette(tmp_path))
    request = JSONRPCRequest(
        jsonrpc="2.0", id=1, method="tools/call",
        params={"name": "reject", "arguments": {"reason": "no"}},
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolErrorClassWarning)
        answer = server.handle(request)
    assert isinstance(answer, JSONRPCError)
    assert (answer.error.code, answer.error.message, answer.error.data) == (
        -32001,
        "rejected: no",
        {"why": 1},
    )
    assert server.report()["calls"][0]["outcome"] == "error"
