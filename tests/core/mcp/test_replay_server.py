"""The MCP replay server (core/mcp) in process: a line from the host that is not a
JSON-RPC message gets a parse error (-32700) or an invalid request (-32600) in plain words;
a recorded JSON-RPC error is answered as recorded without rebuilding its class. The command
over stdio is in tests/cli/test_mcp_messages.py."""

from __future__ import annotations

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
from support.mcp_lines import GARBAGE, assert_plain, error_cassette


@pytest.mark.parametrize("line", [g[0] for g in GARBAGE])
def test_unreadable_answer_words(line: bytes) -> None:
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        request_id, error = unreadable_answer(exc)
    else:
        pytest.fail(f"{line!r} validated")
    assert_plain(error.message)
    assert error.code in (PARSE_ERROR_CODE, INVALID_REQUEST_CODE)
    assert "\n" not in error.message
    assert request_id is None or isinstance(request_id, (int, str))


def test_the_server_answers_a_recorded_error_without_rebuilding_its_class(tmp_path: Path) -> None:
    server = ReplayServer(error_cassette(tmp_path))
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
