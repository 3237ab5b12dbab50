"""JSON-RPC lines and MCP tool calls, through the official SDK's message types.

One line of the stdio transport is one JSON-RPC message (the MCP spec's stdio framing:
newline-delimited, no embedded newlines). ``parse_line`` reads it with the SDK's
``jsonrpc_message_adapter``; the cassette mapping of a ``tools/call`` is:

- ``tool`` = ``params.name``, ``args`` = ``params.arguments`` (``{}`` when absent);
- ``response`` = the ``CallToolResult`` exactly as the server sent it (``content``,
  ``structuredContent``, ``isError``, ``_meta``);
- ``error`` = ``{"type": "MCPError", "message", "code", "data"?}`` for a JSON-RPC error
  (``MCPError`` is the SDK's exception for one; replay answers the same error);
- ``mcp_progress`` (optional) = the params of the server's ``notifications/progress`` for
  the call, without the token, in order.
"""

from __future__ import annotations

from typing import Any

from mcp_types import (
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)

TOOLS_CALL = "tools/call"
PROGRESS = "notifications/progress"
#: the optional entry field with a call's progress notifications (``[{"progress",
#: "total"?, "message"?}]``, in order); replay sends them again with the caller's token
PROGRESS_FIELD = "mcp_progress"
#: the ``error.type`` of an entry recorded from a JSON-RPC error
ERROR_TYPE = "MCPError"

__all__ = [
    "ERROR_TYPE",
    "PROGRESS",
    "PROGRESS_FIELD",
    "TOOLS_CALL",
    "ErrorData",
    "JSONRPCError",
    "JSONRPCMessage",
    "JSONRPCNotification",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "call_of",
    "error_data_of",
    "error_record",
    "parse_line",
]


def parse_line(line: bytes | str) -> JSONRPCMessage | None:
    """The JSON-RPC message on one stdio line, or ``None`` when it is not one (blank, not
    JSON, not a JSON-RPC 2.0 envelope)."""
    if not line.strip():
        return None
    try:
        return jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return None


def call_of(params: dict[str, Any] | None) -> tuple[str, Any]:
    """``(tool, args)`` of a ``tools/call`` request's params."""
    params = params or {}
    args = params.get("arguments")
    return str(params.get("name", "")), {} if args is None else args


def error_record(error: ErrorData) -> dict[str, Any]:
    """A JSON-RPC error as a cassette entry's ``error`` field."""
    out: dict[str, Any] = {"type": ERROR_TYPE, "message": error.message, "code": error.code}
    if error.data is not None:
        out["data"] = error.data
    return out


def error_data_of(record: dict[str, Any]) -> ErrorData:
    """The JSON-RPC error to answer for a recorded ``error`` (an entry's, or a facts
    exchange's): its ``code`` when it has one, else ``-32603`` (internal error: a tool
    exception recorded by the library, not by the proxy), with the type in the message."""
    code = record.get("code")
    message = str(record.get("message", ""))
    if not isinstance(code, int):
        code = -32603
        if record.get("type"):
            message = f"{record['type']}: {message}"
    return ErrorData(code=code, message=message, data=record.get("data"))
