"""``cassette-tui mcp replay``: an MCP server over stdio that answers from a cassette.

It speaks through the SDK's stdio server transport (``mcp.server.stdio.stdio_server``) and
message types, and never starts the recorded server nor touches the network:

- ``tools/call`` is served by the engine's ``Replayer``: the call's key is
  ``(name, digest(normalized arguments))``, a key recorded several times answers in
  recorded order (past the last one: a miss, or the last answer again with
  ``repeat="last"``), a recorded JSON-RPC error is answered as that error;
- a miss (a call never recorded, or past its recordings) is the JSON-RPC error
  ``MISS_CODE`` whose message names the nearest recorded calls of the tool and the
  argument paths that differ (``data`` has the same as JSON), and it is in the report;
- ``initialize``, ``server/discover``, ``tools/list`` and every other request are
  answered from the server-facts sidecar (``_facts``); ``ping`` is answered empty; a request
  that was never recorded is ``METHOD_NOT_FOUND`` and in the report;
- a call recorded with progress (``mcp_progress``) sends those notifications again, to the
  caller's ``progressToken``, before its answer (when the caller asked for progress);
- without a sidecar (a cassette recorded by the library, not by ``mcp record``) the
  server introduces itself as ``cassette-tui replay`` and lists the cassette's tool names
  with an open input schema.

Nothing sent to the host loses a non-finite number: a NaN or an infinity in a result or in
an error's ``data`` (a NaN argument echoed back in a miss) goes on the wire as
``{"$numberDouble": "NaN"}`` (``core.jsonvalue``'s documented encoding), not as the
``null`` the SDK's encoder would write.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import anyio
from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.format.errors import CassetteMiss
from cassette_tui.core.format.jsonvalue import dumps_strict, encode_nonfinite, json_copy
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.replay.replayer import Replayer

from ._facts import HANDSHAKES, ServerFacts, sidecar_path, without_meta
from ._wire import (
    PROGRESS,
    PROGRESS_FIELD,
    TOOLS_CALL,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    call_of,
    error_data_of,
    unreadable_answer,
)

#: JSON-RPC error code of a cassette miss (the implementation-defined server-error band)
MISS_CODE = -32010
#: JSON-RPC "method not found": a request the recording never saw answered
NOT_RECORDED_CODE = -32601


class ReplayServer:
    """Answers MCP requests from a cassette and its sidecar.

    Args:
        cassette: the cassette (path or loaded).
        rules: normalization rules for the keys (default: none, strict).
        repeat: ``"error"`` or ``"last"`` (see ``Replayer``).
        facts: the sidecar path (default ``_facts.sidecar_path(cassette)``; absent: the
            fallback answers of the module docstring).

    Raises:
        CassetteFormatError: the cassette or the sidecar cannot be read.
    """

    def __init__(
        self,
        cassette: str | Path | Cassette,
        *,
        rules: NormalizationRules | None = None,
        repeat: str = "error",
        facts: str | Path | None = None,
    ) -> None:
        if not isinstance(cassette, Cassette):
            cassette = load(cassette, rules=rules)
        self.replayer = Replayer(cassette, repeat=repeat, rules=rules)
        self.cassette = self.replayer.cassette
        facts_path = (
            Path(facts)
            if facts
            else (sidecar_path(cassette.path) if cassette.path is not None else None)
        )
        self.facts_path = facts_path if facts_path and facts_path.exists() else None
        self.facts = ServerFacts.read(self.facts_path) if self.facts_path else None
        self.not_recorded: list[dict[str, Any]] = []

    # -- one message ---------------------------------------------------------------------
    def handle(self, message: JSONRPCMessage) -> JSONRPCMessage | None:
        """The answer to one message from the host (``None`` for notifications and for
        the host's answers to requests, which a replay never sends)."""
        if not isinstance(message, JSONRPCRequest):
            return None
        if message.method == TOOLS_CALL:
            return self._tools_call(message)
        if message.method == "ping":
            return JSONRPCResponse(jsonrpc="2.0", id=message.id, result={})
        if self.facts is None:
            result = self._fallback(message)
            if result is not None:
                return _response(message.id, result)
        else:
            exchange = self.facts.answer(message.method, message.params)
            if exchange is not None:
                if exchange.error is not None:
                    return _error(message.id, error_data_of(exchange.error))
                return _response(message.id, exchange.result or {})
        params = without_meta(message.params)
        self.not_recorded.append({"method": message.method, "params": params})
        recorded = self.facts.recorded_params(message.method) if self.facts else []
        hint = (
            f"; recorded params of {message.method}: {recorded}"
            if recorded
            else f"; {message.method} was never answered in the recording"
        )
        return _error(
            message.id,
            ErrorData(
                code=NOT_RECORDED_CODE,
                message=f"cassette-tui mcp replay: not recorded: {message.method} {params}{hint}",
                data={"method": message.method, "params": params, "recorded": recorded},
            ),
        )

    def _tools_call(self, message: JSONRPCRequest) -> JSONRPCMessage:
        tool, args = call_of(message.params)
        try:
            # the entry, not its outcome: a recorded error is answered as it was recorded,
            # and its class (the SDK's MCPError) is never rebuilt as a Python exception
            entry = self.replayer.serve(tool, args)
        except CassetteMiss as exc:
            return _error(
                message.id,
                ErrorData(
                    code=MISS_CODE,
                    message=str(exc),
                    data={
                        "tool": exc.tool,
                        "digest": exc.digest,
                        # the call's own args: CassetteMiss.args is Exception.args
                        "args": args,
                        "nearest": exc.nearest,
                    },
                ),
            )
        if entry.error is not None:
            return _error(message.id, error_data_of(entry.error))
        response = json_copy(entry.response)
        if not isinstance(response, dict):  # a library cassette's plain value
            response = {"content": [{"type": "text", "text": _text(response)}], "isError": False}
        return _response(message.id, response)

    def progress_before(self, message: JSONRPCMessage) -> list[JSONRPCNotification]:
        """The recorded progress notifications of the ``tools/call`` just served for
        ``message``, addressed to its ``progressToken`` (none without one)."""
        if not isinstance(message, JSONRPCRequest) or message.method != TOOLS_CALL:
            return []
        meta = (message.params or {}).get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is None:
            return []
        calls = self.replayer.replay_report().calls or ()
        seq = calls[-1].seq if calls else None  # the entry that served it
        entry = next((e for e in self.cassette if e.seq == seq), None) if seq else None
        rows = entry.extra.get(PROGRESS_FIELD) if entry is not None else None
        if not isinstance(rows, list):
            return []
        return [
            JSONRPCNotification(
                jsonrpc="2.0", method=PROGRESS, params={"progressToken": token, **row}
            )
            for row in rows
            if isinstance(row, dict)
        ]

    def _fallback(self, message: JSONRPCRequest) -> dict[str, Any] | None:
        if message.method in HANDSHAKES and message.method == "initialize":
            params = message.params or {}
            return {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "cassette-tui replay", "version": "1"},
            }
        if message.method == "tools/list":
            names = sorted({e.tool for e in self.cassette})
            return {
                "tools": [
                    {"name": n, "inputSchema": {"type": "object"}, "description": "replayed"}
                    for n in names
                ]
            }
        return None

    # -- the session ---------------------------------------------------------------------
    def report(self) -> dict[str, Any]:
        """The engine's replay report (``Replayer.report``) plus ``"mcp": {"facts":
        sidecar path or None, "not_recorded": [{"method", "params"}]}`` (its ``extra``)."""
        mcp = {
            "facts": str(self.facts_path) if self.facts_path else None,
            "not_recorded": list(self.not_recorded),
        }
        return replace(self.replayer.replay_report(), extra={"mcp": mcp}).to_json()

    @property
    def missed(self) -> bool:
        """Any tool-call miss or request that was not recorded."""
        return bool(self.replayer.replay_report().misses or self.not_recorded)

    async def serve_stdio(self, log: TextIO | None = None) -> None:
        """Serve the process's stdin/stdout (the SDK's stdio server transport) until the
        host closes stdin."""
        from mcp.server.stdio import stdio_server
        from mcp.shared.message import SessionMessage

        log = log or sys.stderr
        async with stdio_server() as (read_stream, write_stream), read_stream, write_stream:
            async for item in read_stream:
                if isinstance(item, Exception):
                    request_id, error = unreadable_answer(item)
                    print(f"cassette-tui mcp replay: {error.message}", file=log)
                    answer: JSONRPCMessage | None = _error(request_id, error)
                else:
                    answer = self.handle(item.message)
                    for note in self.progress_before(item.message):
                        await write_stream.send(SessionMessage(note))
                if answer is not None:
                    await write_stream.send(SessionMessage(answer))

    def run_stdio(self) -> None:
        anyio.run(self.serve_stdio)


def _response(request_id: Any, result: dict[str, Any]) -> JSONRPCResponse:
    """A result with its non-finite numbers encoded (see the module doc)."""
    return JSONRPCResponse(jsonrpc="2.0", id=request_id, result=encode_nonfinite(result))


def _error(request_id: Any, data: ErrorData) -> JSONRPCError:
    """An error with the non-finite numbers of its ``data`` encoded (see the module doc)."""
    if data.data is not None:
        data = data.model_copy(update={"data": encode_nonfinite(data.data)})
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=data)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else dumps_strict(value, ensure_ascii=False)
