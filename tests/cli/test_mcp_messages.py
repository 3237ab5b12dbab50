"""What ``cassette-tui mcp replay`` says to the host and on stderr is plain: a recorded
JSON-RPC error is sent back as recorded with nothing on stderr (its class, the SDK's
``MCPError``, is never rebuilt, so no Python warning with a source path); a line from the
host that is not a JSON-RPC message is answered with a parse error (-32700) or an invalid
request (-32600) in plain words, never pydantic's report and its links."""

from __future__ import annotations

import json
from pathlib import Path

from support.mcp_lines import GARBAGE, assert_plain, error_cassette
from support.mcp_session import HANDSHAKE, RawSession, raw_script, replay_cmd, tool_call


def test_a_recorded_json_rpc_error_is_sent_back_as_is_with_nothing_on_stderr(
    tmp_path: Path,
) -> None:
    session = RawSession(replay_cmd(error_cassette(tmp_path)))
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


def test_garbage_lines_are_answered_in_plain_words(tmp_path: Path) -> None:
    session = RawSession(replay_cmd(error_cassette(tmp_path)))
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
        assert_plain(answer["error"]["message"])
    err = session.stderr.decode()
    assert_plain(err)
    # one line on stderr per bad line, the words sent to the host; then, at the end, the
    # recorded calls the session left unused (named in every replay result)
    *lines, unused = err.splitlines()
    assert unused.startswith("cassette-tui mcp replay: unused entries: seq ")
    assert len(lines) == len(GARBAGE)
    assert all(line.startswith("cassette-tui mcp replay: ") for line in lines)
