"""``cassette-tui mcp replay``: an MCP server over stdio that answers from a cassette.

It reads each line as the proxy does (``_wire.read_line``: ids ``null`` and ``1.5`` are
answered under that id, a batch with an array), answers with the SDK's message types, and
never starts the recorded server nor touches the network (``http.py`` serves the same over
Streamable HTTP on a loopback port):

- ``tools/call`` is served by the engine's ``Replayer``: the call's key is
  ``(name, digest(normalized arguments))``, a key recorded several times answers in
  recorded order (past the last one: a miss, or the last answer again with
  ``repeat="last"``), a recorded JSON-RPC error is answered as that error;
- a miss (a call never recorded, or past its recordings) is the JSON-RPC error
  ``MISS_CODE`` whose message names the nearest recorded calls of the tool and the
  argument paths that differ (``data`` has the same as JSON), and it is in the report;
- ``initialize``, ``server/discover``, ``tools/list`` and every other request are
  answered from the server-facts sidecar (``_facts``), ``resources/read`` and
  ``prompts/get`` by their params like a tool call by its arguments (in recorded order,
  the last one repeated); ``ping`` is answered empty; a request recorded only with other
  params is a miss (``MISS_CODE``, naming the recorded params), one whose method was never
  answered ``NOT_RECORDED_CODE``; both are in the report;
- a call recorded with progress (``mcp_progress``) sends those notifications again, to the
  caller's ``progressToken``, before its answer (when the caller asked for progress);
- the recorded server messages are sent again where they came (``ReplaySession``); a
  recorded server request waits for the host's answer, compared with the recorded one;
- without a sidecar (a cassette recorded by the library, not by ``mcp record``) the
  server introduces itself as ``cassette-tui replay`` and lists the cassette's tool names
  with an open input schema.

Nothing sent to the host loses a non-finite number: a NaN or an infinity in a result or in
an error's ``data`` (a NaN argument echoed back in a miss) goes on the wire as
``{"$numberDouble": "NaN"}`` (``core.jsonvalue``'s documented encoding), not as the
``null`` the SDK's encoder would write.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.format.errors import CassetteMiss, ReplayExhausted
from cassette_tui.core.format.jsonvalue import dumps_strict, encode_nonfinite, json_copy
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.replay.fixtures import PinnedFixtures
from cassette_tui.core.replay.replayer import Replayer

from . import _loop
from ._facts import (
    HANDSHAKES,
    STANDALONE,
    ServerFacts,
    ServerMessage,
    sidecar_path,
    without_meta,
)
from ._stdio import read_lines, write_all
from ._wire import (
    PROGRESS,
    PROGRESS_AT,
    PROGRESS_FIELD,
    TOOLS_CALL,
    ErrorData,
    Frame,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    Line,
    call_of,
    dump_doc,
    error_data_of,
    id_key,
    jsonrpc_message_adapter,
    read_line,
    unreadable_answer,
)

#: JSON-RPC error code of a cassette miss (the implementation-defined server-error band)
MISS_CODE = -32010
#: JSON-RPC "method not found": a request the recording never saw answered
NOT_RECORDED_CODE = -32601
#: the 2026-07-28 change-event stream: a request answered only when the stream ends, opened
#: by an acknowledgement naming it in ``_meta`` (SEP-2575)
LISTEN = "subscriptions/listen"
LISTEN_ACK = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
#: progress notifications to send before an answer, each with its place among the recorded
#: server messages (``None``: after them all)
Notes = list[tuple[dict[str, Any], int | None]]


class ReplayServer:
    """Answers MCP requests from a cassette and its sidecar.

    Args:
        cassette: the cassette (path or loaded).
        rules: normalization rules for the keys (default: none, strict).
        repeat: ``"error"`` or ``"last"`` (see ``Replayer``), or ``"auto"``: ``"error"``,
            except for the tools the recorded ``tools/list`` annotates ``readOnlyHint`` or
            ``idempotentHint`` (their last answer is served again: a read repeated
            answers the same), listed in the report as ``mcp.repeat_last_tools``.
        facts: the sidecar path (default ``_facts.sidecar_path(cassette)``; absent: the
            fallback answers of the module docstring).
        fixtures: pinned fixture cassettes (``cassette-tui pin``) whose keys they answer
            first (``core/replay/fixtures.py``), logged ``pinned`` in the report; the
            server messages recorded around a call are anchored to this cassette's
            entries, so a pinned call sends none.

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
        fixtures: Sequence[str | Path] = (),
    ) -> None:
        if not isinstance(cassette, Cassette):
            cassette = load(cassette, rules=rules)
        #: pinned fixtures answer their keys first, as in a library replay
        self.pinned = PinnedFixtures(fixtures, rules=rules) if fixtures else None
        facts_path = (
            Path(facts)
            if facts
            else (sidecar_path(cassette.path) if cassette.path is not None else None)
        )
        self.facts_path = facts_path if facts_path and facts_path.exists() else None
        self.facts = ServerFacts.read(self.facts_path) if self.facts_path else None
        self.repeat_last_tools = (
            sorted(self.facts.read_only_tools()) if repeat == "auto" and self.facts else []
        )
        self.replayer = Replayer(
            cassette,
            repeat="error" if repeat == "auto" else repeat,
            rules=rules,
            repeat_last=self.repeat_last_tools,
        )
        self.cassette = self.replayer.cassette
        self.not_recorded: list[dict[str, Any]] = []
        #: the recorded answer the last ``handle`` served (``{"seq"}``/``{"exchange"}``)
        self.last_anchor: dict[str, int] | None = None
        #: server messages sent (by index), and host answers that differ from the recording
        self.sent_messages: set[int] = set()
        self.host_answers: list[dict[str, Any]] = []
        #: recorded stdout lines not sent (a replay over HTTP has no stdout)
        self.skipped_lines = 0
        #: the kept-aside calls answered (by index), each once
        self.aside_served: set[int] = set()

    # -- one message ---------------------------------------------------------------------
    def handle(self, message: JSONRPCMessage) -> JSONRPCMessage | None:
        """The answer to one message from the host (``None`` for notifications and for
        the host's answers to requests, which a replay never sends)."""
        self.last_anchor = None
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
                self.last_anchor = {
                    "exchange": next(i for i, e in enumerate(self.facts.exchanges) if e is exchange)
                }
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
                # recorded with other params: a miss, as a tool call's (the method exists)
                code=MISS_CODE if recorded else NOT_RECORDED_CODE,
                message=f"cassette-tui mcp replay: not recorded: {message.method} {params}{hint}",
                data={"method": message.method, "params": params, "recorded": recorded},
            ),
        )

    def _tools_call(self, message: JSONRPCRequest) -> JSONRPCMessage:
        tool, args = call_of(message.params)
        found = self.pinned.answer(tool, args) if self.pinned is not None else None
        if found is not None:  # a pinned answer: none of this cassette's, so no anchor
            key, pinned = found
            self.replayer.note_pinned(tool, key[1])
            return self._answer_of(message, pinned)
        try:
            # the entry, not its outcome: a recorded error is answered as it was recorded,
            # and its class (the SDK's MCPError) is never rebuilt as a Python exception
            entry = self.replayer.serve(tool, args)
        except CassetteMiss as exc:
            words = str(exc)
            if isinstance(exc, ReplayExhausted):  # the flag as the command spells it
                words = words.split("; use the repeat-last policy")[0] + (
                    "; run cassette-tui mcp replay with --repeat last to serve the last "
                    "answer again"
                )
            return _error(
                message.id,
                ErrorData(
                    code=MISS_CODE,
                    message=words,
                    data={
                        "tool": exc.tool,
                        "digest": exc.digest,
                        # the call's own args: CassetteMiss.args is Exception.args
                        "args": args,
                        "nearest": exc.nearest,
                    },
                ),
            )
        self.last_anchor = {"seq": entry.seq}
        return self._answer_of(message, entry)

    def _answer_of(self, message: JSONRPCRequest, entry: Entry) -> JSONRPCMessage:
        """The recorded ``entry`` as the answer to ``message``: its error as that error,
        its response as a ``CallToolResult``."""
        if entry.error is not None:
            return _error(message.id, error_data_of(entry.error))
        response = json_copy(entry.response)
        if not isinstance(response, dict):  # a library cassette's plain value
            response = {"content": [{"type": "text", "text": _text(response)}], "isError": False}
        return _response(message.id, response)

    def progress_before(
        self, message: JSONRPCMessage
    ) -> list[tuple[JSONRPCNotification, int | None]]:
        """The recorded progress notifications of the ``tools/call`` just served for
        ``message``, addressed to its ``progressToken`` (none without one), each with
        how many server messages the recording had kept before it (``None`` in a
        recording older than that count)."""
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
        notes: list[tuple[JSONRPCNotification, int | None]] = []
        for row in rows:
            if not isinstance(row, dict):
                continue
            at = row.get(PROGRESS_AT)
            params = {k: v for k, v in row.items() if k != PROGRESS_AT}
            note = JSONRPCNotification(
                jsonrpc="2.0", method=PROGRESS, params={"progressToken": token, **params}
            )
            notes.append((note, at if isinstance(at, int) and not isinstance(at, bool) else None))
        return notes

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
            "not_replayed": [
                {"index": i, "message": m.describe(), "before": m.before, "after": m.after}
                for i, m in enumerate(self.server_messages)
                if i not in self.sent_messages
            ],
            "host_answers_differ": list(self.host_answers),
            "repeat_last_tools": list(self.repeat_last_tools),
            "stdout_lines_skipped": self.skipped_lines,
        }
        return replace(self.replayer.replay_report(), extra={"mcp": mcp}).to_json()

    @property
    def missed(self) -> bool:
        """Any tool-call miss (a call never recorded, or past its recordings), request
        that was not recorded, recorded server message not sent again, or host answer to
        a server request that differs from the recording."""
        report = self.replayer.replay_report()
        return bool(
            report.misses
            or any(c.outcome == "exhausted" for c in report.calls or ())
            or self.not_recorded
            or self.host_answers
            or len(self.sent_messages) < len(self.server_messages)
        )

    def kept_aside_answer(self, frame: Frame) -> dict[str, Any] | None:
        """The recorded answer of a call kept aside at record time (``_facts``:
        ``kept_aside``, e.g. arguments nested past the cassette's limit) whose method and
        params (without ``_meta``) equal ``frame``'s, under the host's id; each is served
        once. ``None`` when none is."""
        if self.facts is None or not self.facts.kept_aside:
            return None
        params = without_meta(frame.params)
        for i, aside in enumerate(self.facts.kept_aside):
            if (
                i in self.aside_served
                or aside.get("method") != frame.method
                or aside.get("unpaired")  # its answer may be another call's
            ):
                continue
            try:
                request = json.loads(aside.get("request", ""))
                answer = json.loads(aside.get("answer", ""))
                same = without_meta(request.get("params")) == params
            except (ValueError, RecursionError, AttributeError):
                continue
            if same and isinstance(answer, dict):
                self.aside_served.add(i)
                return {**answer, "id": frame.id}
        return None

    @property
    def server_messages(self) -> list[ServerMessage]:
        return self.facts.server_messages if self.facts is not None else []

    def run_stdio(self, host_in: int = 0, host_out: int = 1, log: TextIO | None = None) -> None:
        """Serve the stdio transport (``host_in``/``host_out``: the process's stdin and
        stdout) until the host closes its end."""
        _loop.run(self._serve_stdio(host_in, host_out, log or sys.stderr))

    async def _serve_stdio(self, host_in: int, host_out: int, log: TextIO) -> None:
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        threading.Thread(target=read_lines, args=(host_in, loop, lines), daemon=True).start()

        async def send(data: bytes) -> None:
            # the host gone (EPIPE): the session ends when its stdin closes
            with contextlib.suppress(OSError):
                write_all(host_out, data)

        await ReplaySession(self, send, log).run(lines)


class ReplaySession:
    """One host's session with a ``ReplayServer``, over any transport that carries
    JSON-RPC lines (``run`` reads them from a queue, ``send`` writes one).

    Each line is read as ``_wire.read_line`` reads it: ids ``null`` and ``1.5`` are
    answered under that id, a batch array with an array; a line that is not a JSON-RPC
    message gets ``-32700``/``-32600`` in plain words (``unreadable_answer``), also on
    ``log``. Requests are answered in the order they came; the recorded server messages
    (``_facts.ServerMessage``) are sent around the answers they were recorded between
    (those recorded before any answer as the session starts),
    and a recorded server request waits for the host's answer, compared with the one
    recorded (a difference is in the report and makes the session fail).
    """

    def __init__(self, server: ReplayServer, send: Any, log: TextIO, *, lines: bool = True) -> None:
        self.server = server
        #: send the recorded stdout lines that are not JSON-RPC (stdio); over HTTP they
        #: are no message: skipped, and counted in the report
        self.lines = lines
        self.send = send
        #: Streamable HTTP: sends a message recorded on the standalone GET stream
        #: (``stream: "standalone"``) on the host's GET stream; ``None``: with the others
        self.send_standalone: Any = None
        self.log = log
        self._waiting: dict[str, asyncio.Future[dict[str, Any] | None]] = {}
        before: dict[str, list[int]] = {}
        after: dict[str, list[int]] = {}
        #: sent before any answer in the recording: sent as the session starts
        self._opening = [i for i, m in enumerate(server.server_messages) if m.after is None]
        for i, message in enumerate(server.server_messages):
            if message.after is None:
                continue
            if message.before is not None:
                before.setdefault(_anchor_key(message.before), []).append(i)
            elif message.after is not None:
                after.setdefault(_anchor_key(message.after), []).append(i)
        self._before, self._after = before, after
        #: a ``subscriptions/listen`` stream's acknowledgement, by the listen's id: sent as
        #: the listen arrives (the host waits for it before its next request), the listen
        #: itself left unanswered (its answer ends the stream; the host cancels it)
        self._acks: dict[str, list[int]] = {}
        for i, message in enumerate(server.server_messages):
            doc = message.message
            if isinstance(doc, dict) and doc.get("method") == LISTEN_ACK:
                meta = (doc.get("params") or {}).get("_meta") or {}
                listen = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
                if listen is not None:
                    self._acks.setdefault(id_key(listen), []).append(i)

    async def run(self, lines: asyncio.Queue[bytes | None]) -> None:
        """Answer until ``lines`` yields ``None`` (the host closed its end)."""
        work: asyncio.Queue[Line | None] = asyncio.Queue()
        worker = asyncio.create_task(self._work(work))
        while (raw := await lines.get()) is not None:
            if not raw.strip():
                continue
            line = read_line(raw)
            line.raw = raw
            answers = [f for f in line.frames if f.kind in ("response", "error")]
            for frame in answers:  # the host answering a recorded server request
                self.host_answered(frame)
            if len(answers) < len(line.frames) or not line.frames:
                await work.put(line)
        for future in self._waiting.values():
            if not future.done():
                future.set_result(None)
        await work.put(None)
        await worker

    def host_answered(self, frame: Frame) -> None:
        """The host's answer to a recorded server request that is waiting for it."""
        future = self._waiting.pop(frame.key, None)
        if future is not None and not future.done():
            future.set_result(frame.doc)

    async def opening(self) -> None:
        """Send the server messages recorded before any answer (a banner, a log line)."""
        await self._send_messages(self._opening)

    async def _work(self, work: asyncio.Queue[Line | None]) -> None:
        await self.opening()
        while (line := await work.get()) is not None:
            try:
                await self.answer_line(line)
            except Exception as exc:  # noqa: BLE001 - the host must get an answer, always
                message = f"cassette-tui mcp replay: internal error: {type(exc).__name__}: {exc}"
                print(message, file=self.log, flush=True)
                self.server.not_recorded.append({"method": "(internal error)", "params": None})
                for frame in line.frames:
                    if frame.kind == "request":
                        error = _error(0, ErrorData(code=-32603, message=message))
                        await self.send(dump_doc(_doc(error, frame.id)))

    async def answer_line(self, line: Line) -> None:
        """Answer one line's requests (see the class docstring), in order."""
        messages = [f for f in line.frames if f.kind != "other"]
        if not messages:  # not JSON, or no JSON-RPC message in it at all
            await self._unreadable(line.raw, None)
            return
        answers: list[Any] = []
        anchors: list[dict[str, int]] = []
        for frame in line.frames:
            if frame.kind == "other":
                answers.append(await self._unreadable(dump_doc(frame.doc), frame, quiet=True))
                continue
            if frame.kind != "request":
                continue
            if frame.method == LISTEN and self._acks.get(frame.key):
                await self._send_messages(self._acks[frame.key])
                continue
            answer, notes, anchor = self._request(frame)
            group = self._before.get(_anchor_key(anchor), []) if anchor is not None else []
            if anchor is not None:
                anchors.append(anchor)
            for note, at in notes:
                # the server messages recorded before this progress go first, as live
                await self._send_messages([i for i in group if at is None or i < at])
                await self.send(dump_doc(note))
            await self._send_messages(group)
            if answer is not None:
                answers.append(answer)
        if answers:
            await self.send(dump_doc(answers if line.batch else answers[0]))
        for anchor in anchors:
            await self._send_messages(self._after.get(_anchor_key(anchor), []))

    def _request(self, frame: Frame) -> tuple[dict[str, Any] | None, Notes, dict[str, int] | None]:
        """The answer to one request (as JSON, under the host's own id), the progress
        notifications to send before it (each with its place among the server messages:
        ``None`` when the recording did not keep it, then after them all), and the
        recorded answer it served. A request
        that cannot be answered (nested past what the SDK's types read) gets ``-32603``
        naming why, on stderr too, and fails the session: the host never waits for ever."""
        aside = self.server.kept_aside_answer(frame)
        if aside is not None:
            return aside, [], None
        try:
            return self._answer_request(frame)
        except (RecursionError, ValueError, TypeError) as exc:
            why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            message = f"cassette-tui mcp replay: cannot answer this {frame.method}: {why}"
            print(message, file=self.log, flush=True)
            self.server.not_recorded.append({"method": frame.method, "params": None})
            return _doc(_error(0, ErrorData(code=-32603, message=message)), frame.id), [], None

    def _answer_request(
        self, frame: Frame
    ) -> tuple[dict[str, Any] | None, Notes, dict[str, int] | None]:
        from pydantic import ValidationError

        plain_id = isinstance(frame.id, str | int) and not isinstance(frame.id, bool)
        doc = frame.doc if plain_id else {**frame.doc, "id": 0}
        try:
            message = jsonrpc_message_adapter.validate_python(doc, by_name=False)
        except ValidationError:
            try:  # again from JSON text: the words of the JSON mode (an "object", not a dict)
                jsonrpc_message_adapter.validate_json(dump_doc(doc), by_name=False)
                exc: Exception = ValueError("not a JSON-RPC 2.0 message")
            except (ValidationError, ValueError) as caught:
                exc = caught
            _, error = unreadable_answer(exc)
            print(f"cassette-tui mcp replay: {error.message}", file=self.log, flush=True)
            return _doc(_error(0, error), frame.id), [], None
        answer = self.server.handle(message)
        anchor = self.server.last_anchor
        notes = [(_doc(n, None), at) for n, at in self.server.progress_before(message)]
        return (_doc(answer, frame.id) if answer is not None else None), notes, anchor

    async def _unreadable(self, raw: bytes, frame: Frame | None, *, quiet: bool = False) -> Any:
        """The plain-words error for a line (or a batch's element) that is not a JSON-RPC
        message; sent at once for a whole line, returned for a batch's element."""
        from pydantic import ValidationError

        try:
            jsonrpc_message_adapter.validate_json(raw, by_name=False)
            exc: Exception = ValueError("not a JSON-RPC 2.0 message")
        except (ValidationError, ValueError) as caught:
            exc = caught
        request_id, error = unreadable_answer(exc)
        print(f"cassette-tui mcp replay: {error.message}", file=self.log, flush=True)
        answer = _doc(_error(request_id, error), request_id)
        if not quiet:
            await self.send(dump_doc(answer))
        return answer

    async def _send_messages(self, indices: list[int]) -> None:
        """Send the recorded server messages not sent yet; a request waits for the host's
        answer (until the host closes its end), compared with the recorded one."""
        server = self.server
        for i in indices:
            if i in server.sent_messages:
                continue
            server.sent_messages.add(i)
            message = server.server_messages[i]
            if message.line is not None:
                if self.lines:
                    await self.send(message.line.encode("utf-8") + b"\n")
                else:
                    server.skipped_lines += 1
                continue
            send = self.send
            if message.stream == STANDALONE and self.send_standalone is not None:
                send = self.send_standalone
            if not message.is_request:
                await send(dump_doc(message.message))
                continue
            future: asyncio.Future[dict[str, Any] | None] = (
                asyncio.get_running_loop().create_future()
            )
            self._waiting[id_key(message.message.get("id"))] = future
            await send(dump_doc(message.message))
            got = await future
            live = None if got is None else {k: got[k] for k in ("result", "error") if k in got}
            if live != message.host_answer:
                server.host_answers.append(
                    {
                        "method": message.message.get("method"),
                        "recorded": message.host_answer,
                        "replayed": live,
                    }
                )


def _anchor_key(anchor: dict[str, int]) -> str:
    ((kind, value),) = anchor.items()
    return f"{kind}:{value}"


def _doc(message: JSONRPCMessage, request_id: Any) -> dict[str, Any]:
    """An SDK message as JSON, under ``request_id`` (the host's own id, any JSON value)
    when it answers a request."""
    doc = message.model_dump(by_alias=True, exclude_unset=True, mode="json")
    if "id" in doc or isinstance(message, JSONRPCResponse | JSONRPCError):
        doc["id"] = request_id
    return dict(doc)


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
