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

import json
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson
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
#: in each ``mcp_progress`` row: how many server messages the recording had kept when the
#: notification came, so replay sends it between the same messages (not a progress param)
PROGRESS_AT = "after_messages"
#: the ``error.type`` of an entry recorded from a JSON-RPC error
ERROR_TYPE = "MCPError"

__all__ = [
    "ERROR_TYPE",
    "INVALID_REQUEST_CODE",
    "PARSE_ERROR_CODE",
    "PROGRESS",
    "PROGRESS_FIELD",
    "TOOLS_CALL",
    "ErrorData",
    "JSONRPCError",
    "JSONRPCMessage",
    "JSONRPCNotification",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "Frame",
    "Line",
    "call_of",
    "dump_doc",
    "id_key",
    "read_line",
    "error_data_of",
    "error_record",
    "parse_line",
    "unreadable_answer",
]

#: JSON-RPC "parse error": the line is not JSON
PARSE_ERROR_CODE = -32700
#: JSON-RPC "invalid request": JSON, but not a JSON-RPC 2.0 message
INVALID_REQUEST_CODE = -32600

#: which message kind a JSON object meant, by the member that marks it
_KIND_BY_MEMBER = (
    ("method", "JSONRPCRequest"),
    ("result", "JSONRPCResponse"),
    ("error", "JSONRPCError"),
)


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


def unreadable_answer(exc: Exception) -> tuple[str | int | None, ErrorData]:
    """The JSON-RPC error answering a line from the host that is not a JSON-RPC message,
    given the exception the SDK's stdio transport read instead of a message, and the id to
    answer (the line's ``id`` when it has a usable one, else ``None``).

    Not JSON: ``PARSE_ERROR_CODE`` (``parse error: the line is not valid JSON (expected
    value at line 1 column 1)``); JSON but not a JSON-RPC 2.0 message:
    ``INVALID_REQUEST_CODE`` (``invalid request: not a JSON-RPC 2.0 message: "method" is
    missing``). Plain words: pydantic's report (every union member, links to its site) is
    never sent."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, ErrorData(code=PARSE_ERROR_CODE, message=f"parse error: {first}")
    errors = exc.errors(include_url=False, include_context=False)
    for err in errors:
        if err["type"] == "json_invalid":
            detail = str(err["msg"]).removeprefix("Invalid JSON: ")
            message = f"parse error: the line is not valid JSON ({detail})"
            return None, ErrorData(code=PARSE_ERROR_CODE, message=message)
    # the whole line's value: the input of an error about a message kind as a whole (its
    # type, a member it lacks); an error about one member has that member's value
    whole = [e for e in errors if len(e["loc"]) <= 1 or e["type"] == "missing"]
    value = whole[0].get("input") if whole else {}
    prefix = "invalid request: not a JSON-RPC 2.0 message"
    if not isinstance(value, dict):
        message = f"{prefix}: a message is a JSON object, this is {_shape(value)}"
        return None, ErrorData(code=INVALID_REQUEST_CODE, message=message)
    request_id = value.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        request_id = None
    kind = next((k for member, k in _KIND_BY_MEMBER if member in value), None)
    if kind is None:
        message = f'{prefix}: it has no "method" (nor a "result" or "error" answering one)'
        return request_id, ErrorData(code=INVALID_REQUEST_CODE, message=message)
    if kind == "JSONRPCRequest" and "id" not in value:
        kind = "JSONRPCNotification"
    reasons = [
        _reason(err["loc"][1:], str(err["msg"])) for err in errors if err["loc"][:1] == (kind,)
    ]
    message = f"{prefix}: " + "; ".join(
        reasons[:3] or ["it is not a request, a notification or an answer"]
    )
    return request_id, ErrorData(code=INVALID_REQUEST_CODE, message=message)


def _shape(value: Any) -> str:
    """What a JSON value is, in words: ``an array``, ``a number``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "a string" if isinstance(value, str) else "an array"


def _reason(loc: tuple[Any, ...], msg: str) -> str:
    """``"method" is missing``, ``"params" should be an object``."""
    where = ".".join(str(part) for part in loc) or "the message"
    if msg == "Field required":
        return f'"{where}" is missing'
    return f'"{where}" ' + (msg.removeprefix("Input "))


# -- every line, read without the SDK's types ------------------------------------------------
# The SDK's message types refuse what a proxy must still pair and keep: ids ``null`` or
# ``1.5``, batch arrays, params of the wrong shape, values nested past pydantic's depth,
# invalid UTF-8. The proxy and the stand-in read each line with ``read_line`` instead (msgspec,
# then the standard library for NaN/Infinity), and classify it by the members that mark a
# JSON-RPC 2.0 message.


@dataclass(slots=True)
class Frame:
    """One JSON-RPC message of a line (a batch line has several).

    ``kind``: ``"request"`` (method and id), ``"notification"`` (method, no id),
    ``"response"`` (result), ``"error"`` (error), ``"other"`` (JSON, not JSON-RPC 2.0).
    ``id`` is the raw JSON value (any: ``null``, ``1.5`` included); ``doc`` the object."""

    kind: str
    doc: Any
    id: Any = None
    method: str = ""

    @property
    def params(self) -> Any:
        return self.doc.get("params") if isinstance(self.doc, dict) else None

    @property
    def key(self) -> str:
        """The id as its exact JSON text (``1`` and ``1.0`` differ; ``null`` is one)."""
        return id_key(self.id)


@dataclass(slots=True)
class Line:
    """One line read: its ``frames`` (empty when it is not JSON), whether it was a
    ``batch`` array, and ``problem``: why it is not (all) readable (``not JSON``, ``invalid
    UTF-8 replaced by U+FFFD``), else ``None``."""

    frames: list[Frame]
    batch: bool = False
    problem: str | None = None
    lossy: bool = False
    raw: bytes = b""


def id_key(value: Any) -> str:
    """A request id as the exact JSON text that names it."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value)


def _frame(doc: Any) -> Frame:
    if not isinstance(doc, dict) or doc.get("jsonrpc") != "2.0":
        return Frame("other", doc)
    method = doc.get("method")
    if isinstance(method, str):
        return Frame("request" if "id" in doc else "notification", doc, doc.get("id"), method)
    if "result" in doc:
        return Frame("response", doc, doc.get("id"))
    if "error" in doc:
        return Frame("error", doc, doc.get("id"))
    return Frame("other", doc, doc.get("id"))


def _loads(data: bytes | bytearray | str) -> Any:
    """One JSON document, by msgspec (twice orjson's speed on a 50 MB line, and integers
    past 64 bits kept exact where orjson makes them floats); what it refuses and the
    standard library reads (NaN/Infinity, which Python's encoder writes, a lone surrogate
    escape, ``1E400``) by the standard library."""
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return json.loads(data)


def read_line(line: bytes | bytearray) -> Line:
    """The JSON-RPC messages of one stdio line; never raises. A line holding invalid UTF-8
    is read with the bad bytes replaced by U+FFFD (``lossy``, said in ``problem``)."""
    lossy = False
    try:
        doc = _loads(line)
    except (ValueError, RecursionError) as exc:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            try:
                doc = _loads(line.decode("utf-8", "replace"))
                lossy = True
            except (ValueError, RecursionError) as inner:
                return Line([], problem=f"not JSON ({_first(inner)})")
        else:
            return Line([], problem=f"not JSON ({_first(exc)})")
    problem = "invalid UTF-8 bytes, read as U+FFFD" if lossy else None
    if isinstance(doc, list) and any(_frame(item).kind != "other" for item in doc):
        return Line([_frame(item) for item in doc], batch=True, problem=problem, lossy=lossy)
    return Line([_frame(doc)], problem=problem, lossy=lossy)


def _first(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def dump_doc(doc: Any) -> bytes:
    """A JSON-RPC document as one line (orjson; the standard library for what it refuses:
    NaN, integers past 64 bits, nesting past 1024)."""
    try:
        return orjson.dumps(doc) + b"\n"
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"
