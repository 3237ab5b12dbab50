"""What a recording session keeps of each answered request (``_Recording``, a part of
``RecordingProxy``): a tools/call as a cassette entry (``CassetteWriter.write``), any other
as an exchange of the server-facts sidecar, one that can be neither kept aside with its two
lines; the server's own messages placed between the answers around them; progress
notifications attached to their call; the problems said on stderr and in the report. A
write the cassette or the sidecar refused stops the recording here, once
(``_write_failed``), never the relay. Kept apart from the relay loop (``record.py``),
which hands each answer over once it has gone to the host."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from cassette_tui.core.format.depth import MAX_DEPTH, depth_of

from ._ahead import AnswerAhead
from ._facts import Exchange, FactsJournal, ServerFacts, ServerMessage, without_meta
from ._prepared import _prepare_args, _PreparedArgs
from ._spans import Spans
from ._summary import RecordSummary
from ._wire import ERROR_TYPE, PROGRESS_AT, PROGRESS_FIELD, TOOLS_CALL, Frame, id_key
from ._writer import CassetteWriter

if TYPE_CHECKING:
    from .record import _Pending


class _Recording:
    """The keeping half of ``RecordingProxy`` (its base): what it keeps and where."""

    writer: CassetteWriter
    journal: FactsJournal
    facts: ServerFacts
    summary: RecordSummary
    log: TextIO
    #: host requests waiting for the server's answer, by the id the server was sent
    _pending: dict[str, _Pending]
    _last_answer: dict[str, int] | None
    _unplaced: list[ServerMessage]

    # -- recording -----------------------------------------------------------------------
    def _record(
        self,
        req: _Pending,
        answer: Frame,
        *,
        lossy: bool,
        line: bytes | bytearray,
        prepared: _PreparedArgs | None = None,
        spans: Spans | None = None,
        ahead: AnswerAhead | None = None,
    ) -> None:
        """Keep one answered request: a ``tools/call`` as an entry, any other as an
        exchange; one that can be neither is kept aside (the two lines' text). ``spans``:
        the answer is the skeleton of a line with these long strings (``_spans``)."""
        if self._write_failed():  # the recording stopped: the session goes on unrecorded
            return
        doc = answer.doc
        result = doc.get("result") if answer.kind == "response" else None
        error = doc.get("error") if answer.kind == "error" else None
        if spans is not None and error is not None:
            error = spans.real(error)
        what = f"{req.method} (id {id_key(req.host_id)})"
        if lossy:
            self._problem(f"the answer to {what} held invalid UTF-8 bytes, kept as U+FFFD")
        if error is not None and not (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and isinstance(error.get("message"), str)
        ):
            self._aside(req, line, "the error is not {code: int, message: str}")
            return
        if req.method == TOOLS_CALL:
            params = req.params if isinstance(req.params, dict) else None
            if params is None or not isinstance(params.get("name"), str):
                self._aside(req, line, "its params have no tool name")
                return
            args = params.get("arguments")
            args = {} if args is None else args
            if _too_deep(req.line, line, args, result):
                self._aside(req, line, f"nested deeper than {MAX_DEPTH} levels")
                return
            extra = {
                "recorded_at": datetime.fromtimestamp(req.started, UTC)
                .isoformat()
                .replace("+00:00", "Z"),
                "duration_ms": round((time.perf_counter() - req.t0) * 1000, 3),
            }
            if req.progress:
                extra[PROGRESS_FIELD] = req.progress
            try:
                if prepared is None and req.spans is not None and req.spans.holds(args):
                    prepared = _prepare_args(self.writer.rules, params["name"], args, req.spans)
                seq = self.writer.write(
                    params["name"],
                    args,
                    result,
                    _error_record(error),
                    extra,
                    prepared,
                    response_size=len(line),
                    args_spans=req.spans,
                    response_spans=spans,
                    ahead=ahead,
                )
            except (TypeError, ValueError, RecursionError) as exc:
                self._aside(req, line, f"not a cassette entry: {exc}")
                return
            if seq is None:  # the cassette refused it: the recording stopped
                self._write_failed()
                return
            self.summary.entries += 1
            if error is not None or (isinstance(result, dict) and result.get("isError") is True):
                self.summary.errors += 1
            self._answered({"seq": seq})
            return
        if error is None and not isinstance(result, dict):
            self._aside(req, line, "the result is not an object")
            return
        if _too_deep(req.line, line, req.params, result):
            self._aside(req, line, f"nested deeper than {MAX_DEPTH} levels")
            return
        exchange = Exchange(req.method, without_meta(req.params), result=result, error=error)
        self.facts.exchanges.append(exchange)
        self.journal.add({"exchange": exchange.to_dict()})
        self.summary.exchanges += 1
        self._answered({"exchange": len(self.facts.exchanges) - 1})

    def _write_failed(self) -> bool:
        """Whether the cassette refused a write (``CassetteWriter.failure``), or the
        sidecar's journal did (``FactsJournal.failure``): said on stderr, and kept in the
        summary, once; the recording stops there."""
        failure = self.writer.failure
        refused = self.journal.failure
        if failure is None and refused is None:
            return False
        if self.summary.write_error is None:
            if failure is not None:
                self.summary.write_error = failure.message()
            else:
                assert refused is not None
                self.summary.write_error = (
                    f"cannot write to sidecar {self.summary.sidecar}: {refused.strerror or refused}"
                    f" (errno {refused.errno}); the recording stopped (the {self.summary.entries}"
                    " entries before are kept); the session goes on unrecorded"
                )
            self._problem(self.summary.write_error)
        return True

    def _answered(self, anchor: dict[str, int]) -> None:
        """An answer went to the host: it places the server messages sent since the last."""
        for message in self._unplaced:
            message.before = anchor
        if self._unplaced:
            self.journal.add({"placed": anchor})
        self._unplaced = []
        self._last_answer = anchor

    def _settle_idle(self) -> None:
        """Server messages that came while no request was in flight, before this host
        request: the host may send it because of them (a ``tools/list`` after
        ``tools/list_changed`` on Streamable HTTP's GET stream), so they are not placed
        before its answer (replay would wait for a request that never comes) but left
        after the answer before them (``before: null``), where replay sends them."""
        self.journal.add({"placed": None})
        self._unplaced = []

    def _server_message(self, message: ServerMessage) -> None:
        if self._write_failed():  # the recording stopped
            return
        message.after = self._last_answer
        self.facts.server_messages.append(message)
        self.journal.add({"server_message": message.to_dict()})
        self._unplaced.append(message)
        self.summary.server_messages += 1

    def _aside(self, req: _Pending, answer_line: bytes | bytearray, reason: str) -> None:
        """An answered call that cannot be kept as an entry or an exchange: its two lines
        go to the sidecar's ``kept_aside``, said on stderr and in the report."""
        if self._write_failed():  # the recording stopped
            return
        aside = {
            "method": req.method,
            "id": req.host_id,
            "reason": reason,
            "request": req.line.decode("utf-8", "replace").rstrip("\n"),
            "answer": answer_line.decode("utf-8", "replace").rstrip("\n"),
            # the answer may be the other call's: replay never serves it
            **({"unpaired": True} if req.ambiguous else {}),
        }
        self.facts.kept_aside.append(aside)
        self.journal.add({"kept_aside": aside})
        self.summary.kept_aside += 1
        self._problem(
            f"the answered {req.method} (id {id_key(req.host_id)}) is kept aside in "
            f"{self.summary.sidecar.name} (replay answers the same call from its text): {reason}"
        )

    def _problem(self, message: str) -> None:
        self.summary.problems.append(message)
        self._say(message)

    def _note_progress(self, params: dict[str, Any]) -> bool:
        """Attach a progress notification to the tools/call that asked for it; ``False``
        when none did (it is then a server message)."""
        token = params.get("progressToken")
        for req in self._pending.values():
            if req.method == TOOLS_CALL and token is not None and req.progress_token == token:
                row = {k: v for k, v in params.items() if k != "progressToken"}
                # its place among the server messages (a log line, list_changed) around it
                row[PROGRESS_AT] = len(self.facts.server_messages)
                req.progress.append(row)
                return True
        return False

    def _say(self, message: str) -> None:
        print(f"cassette-tui mcp record: {message}", file=self.log, flush=True)


def _too_deep(request: bytes | bytearray, answer: bytes | bytearray, *values: Any) -> bool:
    """Whether one of ``values`` (read from the lines ``request`` and ``answer``) is nested
    deeper than ``MAX_DEPTH`` levels. That takes ``MAX_DEPTH + 1`` brackets opened and as
    many closed in the text it was read from: two lines shorter than that together hold
    none, and are not walked (issue 31: the walks were a tenth of a small answer's
    recording)."""
    if len(request) + len(answer) < 2 * (MAX_DEPTH + 1):
        return False
    return any(depth_of(value) > MAX_DEPTH for value in values)


def _error_record(error: dict[str, Any] | None) -> dict[str, Any] | None:
    """A JSON-RPC error as a cassette entry's ``error`` field (``_wire.error_record``'s
    shape, from the raw object)."""
    if error is None:
        return None
    out: dict[str, Any] = {"type": ERROR_TYPE, "message": error["message"], "code": error["code"]}
    if error.get("data") is not None:
        out["data"] = error["data"]
    return out
