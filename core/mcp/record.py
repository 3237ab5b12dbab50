"""``cassette-tui mcp record``: a stdio proxy between an MCP host and the real server.

The host launches the proxy instead of the server; the proxy starts the server and
forwards every line both ways byte for byte (the stdio transport's newline-delimited
JSON-RPC), so what the host sees is exactly what the server sent (one exception: a
request whose id the host reused while it was in flight goes to the server under an alias,
and its answer comes back under the host's id). On the side it reads each line with
``_wire.read_line`` (ids of any JSON value, batch arrays, invalid UTF-8 as U+FFFD) and
pairs requests with their answers:

- each answered ``tools/call`` becomes one cassette entry (``_wire`` has the mapping),
  written and flushed before the answer is forwarded (a big call alone in flight has its
  line started while the server works, ``CassetteWriter.open_entry``; a big line's long
  strings are copied into the entry from the line's bytes, ``_spans``; a big call or
  answer that comes in pieces has its long string checked and its entry's start written
  as they pass, ``LongStringWatch``, ``guess_call``, ``guess_answer``: only the line's
  rest is left after its last byte, the guess checked then), with
  ``recorded_at`` (ISO-8601 UTC, when the host sent the call), ``duration_ms`` (until the
  server answered) and, when the server reported progress for it, ``mcp_progress``
  (each ``notifications/progress``'s params without the token, in order);
- every other answered host request (``initialize``, ``tools/list``, ...) goes to the
  server-facts sidecar (``_facts``): a journal appended to as the session goes (a line
  each), replaced by the whole document atomically when it ends;
- what the server sends on its own (notifications, requests to the host with the host's
  answer, stdout lines that are not JSON-RPC) goes to the sidecar's ``server_messages``,
  placed between the answers around it; an answered call that cannot be an entry to its
  ``kept_aside``. Each such event is said on stderr and in the report's ``problems``.

Neither file may exist before (nothing is overwritten; the cassette is created
exclusively). Shutdown follows the MCP stdio lifecycle: when the host closes its end, the
proxy closes the server's stdin, lets it answer what is in flight for ``grace`` seconds,
then terminates its process group (SIGTERM, then SIGKILL). When the server exits first
(a crash), the proxy answers each request still waiting with a JSON-RPC error that says
so, reports it on stderr, and keeps every entry recorded before.

This module holds the relay loop (``RecordingProxy``: the two pumps, the host's lines
noted, the server's lines paired and recorded, the shutdown); its parts, each a module:
``_recording`` (what each answer is kept as, a refused write), ``_writer`` (the cassette
writer and its write-ahead), ``_ahead`` (the guesses of a big message's entry start),
``_prepared`` (a big call's args digest and text), ``_fast_json`` (orjson's texts),
``_summary`` (the session's summary and report), ``_claim`` (the two new files). The
names others import from here (``CassetteWriter``, ``AnswerAhead``, ``STREAM_FROM``, ...)
are re-exported.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from cassette_tui.core.format.depth import MAX_DEPTH, depth_of
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.scan.redact import Redactor

from . import _loop
from ._ahead import STREAM_FROM as STREAM_FROM
from ._ahead import AnswerAhead as AnswerAhead
from ._ahead import _closers as _closers
from ._ahead import guess_answer, guess_call
from ._claim import _claim
from ._facts import ServerMessage
from ._fast_json import fast_compact as fast_compact
from ._fast_json import fast_texts as fast_texts
from ._prepared import _prepare_args as _prepare_args
from ._prepared import _PreparedArgs, _spans_digest, _spans_texts
from ._recording import _Recording
from ._same_file import names
from ._spans import LongStringWatch, Spans, read_spans
from ._stdio import BUFFER_SIZE, GIVE_FROM, LineEnd, Piece, PipeWriter, iter_lines, spawn_server
from ._stdio import signal_group as _signal_group
from ._stdio import widen_pipe as _widen_pipe
from ._summary import RecordSummary as RecordSummary
from ._wire import PROGRESS, TOOLS_CALL, Frame, Line, dump_doc, id_key, read_line
from ._writer import FAST_RESPONSE_FROM as FAST_RESPONSE_FROM
from ._writer import CassetteWriter as CassetteWriter

#: JSON-RPC "internal error": the code of the answer the proxy gives for a request the
#: server will never answer (it exited)
SERVER_GONE_CODE = -32603
#: how much of the server's stdout is read at once
READ_SIZE = 1 << 20


@dataclass
class _Pending:
    method: str
    params: Any
    started: float
    t0: float
    #: the id the host sent (any JSON value: ``null`` and ``1.5`` included)
    host_id: Any = None
    #: the id the server was sent instead, when the host reused one still in flight
    alias: str | None = None
    #: the request line as the host sent it (kept aside when it cannot be an entry)
    line: bytes | bytearray = b""
    #: its id was reused while it was in flight and the two could not be told apart
    ambiguous: bool = False
    #: a big tools/call's args digest and text, computed in a thread meanwhile
    prepared: asyncio.Future[_PreparedArgs] | None = None
    #: the long strings of the request line, when ``params`` is its skeleton (``_spans``)
    spans: Spans | None = None
    #: the ``notifications/progress`` params the server sent for this request
    progress: list[dict[str, Any]] = field(default_factory=list)

    @property
    def progress_token(self) -> Any:
        meta = (self.params or {}).get("_meta") if isinstance(self.params, dict) else None
        return meta.get("progressToken") if isinstance(meta, dict) else None


#: a host line longer than this is forwarded in pieces as it comes, not held back whole
#: (the server reads it meanwhile); it is read for the recording once it has ended
PIECES_FROM = 4 << 20
#: a tools/call line at least this big has its args' digest and JSON text computed in a
#: thread while the server works on it, instead of after its answer (issue 27: a 50 MB
#: request took 55x as long through the proxy)
PREPARE_FROM = 1 << 20
#: the same for a call whose line has gone whole to the server through the HTTP proxy's
#: own client (``_prepare(gone=True)``): prepared at once in the loop, which has nothing
#: else to do until the answer (a 0.9 MB request 1.3x a direct call against 1.6x when
#: prepared at its answer; issue 31, session 19)
PREPARE_GONE_FROM = 1 << 16
#: how long the server's thread waits for the loop to note the host's lines before it
#: guesses the entry a big answer makes (``_guess_answer``)
NOTED_WITHIN = 0.1
#: a call line at least this long has its start written by a second thread while the
#: first hashes it (below, a thread's start costs more than the overlap gains)
SPLIT_FROM = 8 << 20


@dataclass(slots=True)
class _ReadAhead:
    """A host line read by the host's thread once it went to the server (issue 31: not by
    the loop once woken, a wake-up that took 1-2 ms on a busy machine), for the loop to
    note: whichever of the two takes ``claim`` first reads it (the loop never waits for a
    write to the server). ``done``: ``(parsed, spans, prepared)``, ``prepared`` a big
    call's recording, prepared by the host's thread after the line was noted."""

    claim: threading.Lock = field(default_factory=threading.Lock)
    done: concurrent.futures.Future[
        tuple[Line, Spans | None, concurrent.futures.Future[_PreparedArgs] | None]
    ] = field(default_factory=concurrent.futures.Future)


@dataclass(frozen=True, slots=True)
class _Streamed:
    """The end of a server line whose start went to the host from the server's thread;
    ``checked``: its long string's bounds, checked as they passed (``LongStringWatch``);
    ``ahead``: its entry's start written to the cassette meanwhile (``AnswerAhead``)."""

    end: LineEnd
    checked: tuple[int, int] | None = None
    ahead: AnswerAhead | None = None


def _put_all(out: asyncio.Queue[Any], items: list[Any]) -> None:
    for item in items:
        out.put_nowait(item)


@dataclass(frozen=True, slots=True)
class _Failed:
    """The recording of a server line failed in the server's thread (``_answer_here``):
    raised by the loop's reading of the server, as a failure there is."""

    exc: BaseException


#: a text written as pieces, in order (parts of a line's buffer among them: ``_spans``)


def _prepare_and_open(
    writer: CassetteWriter, tool: str, args: Any, spans: Spans | None, seq: int | None
) -> _PreparedArgs:
    """``_prepare_args``, then (with ``seq``) the entry's line started by
    ``CassetteWriter.open_entry``; run in a thread."""
    big = spans is not None and len(spans.data) >= SPLIT_FROM
    texts = _spans_texts(writer.rules, tool, args, spans) if seq is not None and big else None
    if texts is not None and spans is not None:
        # the line's start up to its args needs no digest (``args_digest`` comes after
        # them): written by a second thread while this one hashes (both let go of the GIL)
        text, canonical = texts
        prepared = _PreparedArgs("", spans.splice(text))
        opening = threading.Thread(target=_open, args=(writer, seq, tool, prepared, spans))
        opening.start()
        prepared.digest = _spans_digest(spans, canonical)
        opening.join()
        return prepared
    prepared = _prepare_args(writer.rules, tool, args, spans)
    if seq is not None:
        _open(writer, seq, tool, prepared, spans)
    return prepared


def _open(
    writer: CassetteWriter,
    seq: int,
    tool: str,
    prepared: _PreparedArgs,
    spans: Spans | None = None,
) -> None:
    with contextlib.suppress(OSError):  # then the whole line is written at the answer
        writer.open_entry(seq, tool, prepared, spans)


class RecordingProxy(_Recording):
    """One recording session. ``run()`` returns the ``RecordSummary``.

    Args:
        command: the server command and its arguments.
        cassette: the cassette to create; its sidecar is ``_facts.sidecar_path(cassette)``;
            ``{n}`` in the name is the first number whose two files are free.
        rules: normalization rules for the stored ``args_digest``.
        host_in, host_out: the host's side of the stdio transport (file descriptors;
            default the proxy's stdin and stdout).
        redactor: with ``record = true`` (``scan.redact.record_redactor``), every entry and
            the sidecar are written redacted, as the library recorder writes; ``None``:
            as they are.
        log: where problems are reported (default stderr; never the host's stream).
        grace: seconds the server gets to exit after its stdin closes, and again after
            SIGTERM, before SIGKILL.

    Raises (from the constructor):
        FileExistsError: the cassette or the sidecar exists already.
    """

    def __init__(
        self,
        command: list[str],
        cassette: str | Path,
        *,
        rules: NormalizationRules | None = None,
        host_in: int = 0,
        host_out: int = 1,
        log: TextIO | None = None,
        grace: float = 2.0,
        redactor: Redactor | None = None,
    ) -> None:
        self.command = list(command)
        self.redactor = redactor
        self.host_in, self.host_out = host_in, host_out
        self.log = log or sys.stderr
        self.grace = grace
        self.writer, self.journal, self.summary = _claim(
            str(cassette), self.command, rules or NormalizationRules(), redactor
        )
        self.facts = self.journal.facts
        #: host requests waiting for the server's answer, by the id the server was sent
        self._pending: dict[str, _Pending] = {}
        #: server-to-host requests waiting for the host's answer: index in server_messages
        self._server_requests: dict[str, int] = {}
        #: the last answer forwarded (``{"seq": n}`` / ``{"exchange": i}``), and the server
        #: messages sent since, which the next answer places
        self._last_answer: dict[str, int] | None = None
        self._unplaced: list[ServerMessage] = []
        self._aliases = 0
        #: requests of a long forwarded line that reused an id in flight, in order
        self._queued: dict[str, list[_Pending]] = {}
        self._host_lock = threading.Lock()
        self._host_gone = False
        #: stdio: the server's stdin, written by the host's thread (``_pump_host``)
        self._server_in = PipeWriter(-1)
        self._up: asyncio.Future[None] | None = None
        #: host lines queued by the host's thread, and noted by the loop (``_from_host``)
        self._host_sent = self._host_noted = 0
        self._notes: collections.deque[
            tuple[
                bytes | bytearray,
                bool,
                concurrent.futures.Future[bytes | bytearray] | None,
                _ReadAhead | None,
                tuple[int, int] | None,
            ]
        ] = collections.deque()
        #: server items handed to the loop by the server's thread, and done by the loop
        self._down_queued = self._down_done = 0
        #: held while host lines are noted or a server line recorded: by the loop, or by
        #: the host's or the server's thread doing a small line's part itself (no wake-up
        #: of the loop: ``_note_here``, ``_answer_here``)
        self._keeping = threading.RLock()
        #: the server's lines are no longer recorded (the session ends, or the host left)
        self._down_over = False
        #: the read buffer the server's thread takes after handing its own on with a big
        #: line, made by the loop once that line has gone (``iter_lines``'s ``spare``)
        self._spare: bytearray | None = None

    # -- the session ---------------------------------------------------------------------
    def run(self) -> RecordSummary:
        """Run the session to its end (see the module docstring); always closes the files."""
        try:
            _loop.run(self._session())
        finally:
            self.writer.close()
            self._write_failed()
            self._cassette_moved()
            self.journal.close()
            if not self._remove_if_empty():
                try:
                    self.journal.finish()  # the journal becomes the document, atomically
                except OSError as exc:
                    self._problem(
                        f"cannot write the sidecar {self.summary.sidecar}: "
                        f"{exc.strerror or exc}; its journal is left as it was"
                    )
        return self.summary

    def _remove_if_empty(self) -> bool:
        """A session that recorded nothing (the server never started, answered nothing and
        sent nothing but stdout lines) leaves no file: its cassette and sidecar, both
        created by this session (``_claim``), are removed, so the same command can run
        again. Whether they were."""
        summary = self.summary
        if (
            summary.entries
            or summary.exchanges
            or self.writer.seq
            or any(m.line is None for m in self.facts.server_messages)
            or self.facts.kept_aside
        ):
            return False
        kept = []
        for path, ident in (
            (summary.cassette, self.writer.identity),
            (summary.sidecar, self.journal.identity),
        ):
            if path == summary.cassette and self.writer.claimed:
                continue  # the record job's file: that job removes it
            if names(path, ident) is False:
                kept.append(path)  # the user's file now: never removed
                continue
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        summary.removed = True
        if kept:
            self._problem(
                f"nothing was recorded; {' and '.join(map(str, kept))}: another file took "
                "its place while the session ran, left as it is"
            )
            return True
        self._say(
            f"nothing was recorded: {summary.cassette} and {summary.sidecar} (created by "
            "this session) were removed"
        )
        return True

    def _cassette_moved(self) -> None:
        """The cassette's path no longer names the file the entries went to (the user
        moved, removed or replaced it while the session ran): said, as a write error, so
        that the exit status says the recording is not at ``-o``."""
        summary = self.summary
        if not summary.entries:
            return
        where = names(summary.cassette, self.writer.identity)
        if where:
            return
        there = "no file is there now" if where is None else "another file is, left as it is"
        message = (
            f"the cassette {summary.cassette} was moved, removed or replaced while the "
            f"session ran ({there}): its {summary.entries} entries went to "
            "the file it named when the session started, wherever that file is now"
        )
        if summary.write_error is None:
            summary.write_error = message
        self._problem(message)

    async def _session(self) -> None:
        # both of the server's pipes are this process's own, each read or written by a
        # blocking call in a thread: a line goes on from the thread that read it, not
        # after a wake-up of the event loop, which only records (issue 31)
        server_out, server_stdout = os.pipe()
        server_stdin, server_in = os.pipe()
        try:
            proc = await self._start_server(server_stdout, server_stdin)
        finally:
            os.close(server_stdout)
            os.close(server_stdin)
        if proc is None:
            os.close(server_out)
            os.close(server_in)
            return
        for fd in (server_out, server_in, self.host_in, self.host_out):
            _widen_pipe(fd)  # the host's pipes too, when they are pipes
        self._server_in = PipeWriter(server_in)
        loop = asyncio.get_running_loop()
        server_lines: asyncio.Queue[Any] = asyncio.Queue()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            with contextlib.suppress(ValueError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        # the thread that prepares a big call's recording (``_prepare``) started now, with
        # the server: started at the call, it took 1-2 ms of the call's time (issue 31)
        loop.run_in_executor(None, int)
        up: asyncio.Future[None] = loop.create_future()
        self._up = up
        threading.Thread(target=self._pump_host, args=(loop,), daemon=True).start()
        server_reader = threading.Thread(
            target=self._pump_server, args=(server_out, loop, server_lines), daemon=True
        )
        server_reader.start()

        down = asyncio.create_task(self._server_to_host(server_lines))
        stopped = asyncio.create_task(stop.wait())
        waiting: set[asyncio.Future[Any]] = {up, down, stopped}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        self._drain_notes()

        if down.done() and not self._host_gone:
            # the server closed its stdout first: it exited (or crashed) mid-session
            self.summary.server_crashed = not up.done()
            up.cancel()
            await self._wait_exit(proc, self.grace)
            self._answer_pending(proc.returncode)
        else:
            # the host closed its end (or went away, or we were signalled)
            up.cancel()
            await self._stop_server(proc, down, stopped)
        with self._keeping:  # a line the server's thread is recording is done first
            self._down_over = True
        for task in (up, down, stopped):
            task.cancel()
        await asyncio.gather(up, down, stopped, return_exceptions=True)
        self._server_in.close()
        if not server_reader.is_alive():  # else left open: the number must not be reused
            os.close(server_out)  # under a read still waiting (something holds its end)
        self._ended(proc)

    async def _start_server(self, stdout: int, stdin: int) -> asyncio.subprocess.Process | None:
        """The MCP server's process (its own process group), ``stdout`` and ``stdin`` its
        standard output and input; ``None`` when it cannot start (said, and summed up as
        a crash with status 127)."""
        try:
            return await spawn_server(self.command, stdout=stdout, stdin=stdin)
        except OSError as exc:
            self._say(f"cannot start the MCP server {self.command[0]!r}: {exc.strerror or exc}")
            self.summary.server_crashed = True
            self.summary.server_exit = 127
            return None

    async def _stop_server(
        self,
        proc: asyncio.subprocess.Process,
        down: asyncio.Task[None],
        stopped: asyncio.Task[Any],
    ) -> None:
        """The host is gone (or we were signalled): close the server's stdin, let it
        answer what is in flight, then wait for it to exit, terminating its process group
        when it does not (killing it when that does not do)."""
        self._server_in.close()
        if not self._host_gone and not stopped.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(down), self.grace)
        if not await self._wait_exit(proc, self.grace if not stopped.done() else 0.0):
            self.summary.terminated = True
            _signal_group(proc.pid, signal.SIGTERM)
            if not await self._wait_exit(proc, self.grace):
                _signal_group(proc.pid, signal.SIGKILL)
                await self._wait_exit(proc, self.grace)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(down), self.grace)

    def _ended(self, proc: asyncio.subprocess.Process) -> None:
        """Sum up how the session ended: the server's status, what it left unanswered, a
        crash said with what was kept."""
        self.summary.server_exit = proc.returncode
        self.summary.unanswered.extend(p.method for p in self._pending.values())
        for key, index in self._server_requests.items():
            method = self.facts.server_messages[index].describe()
            self._problem(f"the host never answered the server's {method} (id {key})")
        if self.summary.server_crashed:
            self._say(
                f"the MCP server exited (status {proc.returncode}) during the session; "
                f"{self.summary.entries} tool call(s) recorded before are kept in "
                f"{self.summary.cassette}"
            )

    async def _wait_exit(self, proc: asyncio.subprocess.Process, timeout: float) -> bool:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def _pump_host(self, loop: asyncio.AbstractEventLoop) -> None:
        """The host's stdin, read and passed on to the server in this thread (see
        ``_session``). Each line is noted by the event loop (``_from_host``) before the
        server's answer to it is read there: a line that cannot need its id rewritten (no
        request in flight, none waiting to be noted, not a batch) is queued to be noted
        (``_notes``, which the loop reads before each server line), goes on, and is then
        noted by this thread (a small one, ``_note_here``: the loop sleeps on) or wakes the
        loop, which reads it while the server does (woken first, the loop took the GIL
        from this thread before its write; a big one is read, and its call's recording
        prepared, by this thread after its write, ``_read_ahead``); any other waits for
        the loop's reading, which gives the line to pass on. A line past
        ``PIECES_FROM`` goes on in pieces as it comes, noted once whole. At the host's end
        the server's stdin is closed (MCP stdio shutdown, step 1)."""
        server = self._server_in
        try:
            watch: LongStringWatch | None = None  # a long line's long string, checked
            call: AnswerAhead | None = None  # and its entry's start, written meanwhile
            for item in iter_lines(self.host_in, PIECES_FROM):
                if isinstance(item, Piece):  # forwarded as it comes: the server reads on
                    passed = server.write(item.data)
                    # recorded as it passes (not after its end: the loop's 30 ms at 50 MB)
                    if watch is None:
                        watch = LongStringWatch()
                        call = self._call_ahead(item.data, watch)
                    else:
                        self._watched(watch, call, item.data)
                elif isinstance(item, LineEnd):  # noted (as whole) first, then its end goes
                    checked = None
                    if watch is not None:
                        self._watched(watch, call, item.data)
                        checked, watch, call = watch.checked, None, None
                    self._note_host(item.whole, forwarded=True, checked=checked)
                    passed = server.write(item.data)
                else:
                    passed = True
                    for line in item:
                        out, ahead = self._host_line(loop, line)
                        passed = server.write(out)
                        if not passed:
                            break
                        if ahead is not None:
                            self._read_ahead(loop, line, ahead)
                    if passed and self._note_here(loop, wait=False):
                        continue  # noted here: the loop sleeps on
                loop.call_soon_threadsafe(self._drain_notes)
                if not passed:
                    break  # the server is gone: _server_to_host sees its stdout close
        except (RuntimeError, concurrent.futures.CancelledError):
            return  # the session is over (its loop closed)
        except BaseException as exc:  # noqa: BLE001 - handed to the session, which ends
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._host_done, exc)
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._host_done, None)

    def _host_line(
        self, loop: asyncio.AbstractEventLoop, line: bytes | bytearray
    ) -> tuple[bytes | bytearray, _ReadAhead | None]:
        """The host line ``line`` as it must go to the server, queued to be noted first
        (in the host's thread); with a big line, its ``_ReadAhead`` (``_read_ahead``)."""
        head = line[:64].lstrip()
        if self._host_noted == self._host_sent and not self._pending and head[:1] == b"{":
            # no id to rewrite: noted by the loop while it goes on
            ahead = _ReadAhead() if len(line) >= PREPARE_FROM else None
            self._note_host(line, ahead=ahead)
            return line, ahead
        answer: concurrent.futures.Future[bytes | bytearray] = concurrent.futures.Future()
        self._note_host(line, answer=answer)
        loop.call_soon_threadsafe(self._drain_notes)
        return answer.result(), None

    def _read_ahead(
        self, loop: asyncio.AbstractEventLoop, line: bytes | bytearray, ahead: _ReadAhead
    ) -> None:
        """Once ``line`` went to the server (in the host's thread): read it here while the
        server does, unless the loop has already; then, for a big tools/call (the only
        request in flight: nothing was when it was queued), its args digest and entry
        line's start (``_prepare_and_open``), here too: no thread to wake for them."""
        if not ahead.claim.acquire(blocking=False):
            return  # the loop read it
        try:
            parsed, spans = self._read(line)
        except BaseException as exc:  # noqa: BLE001 - raised where the loop notes it
            ahead.done.set_exception(exc)
            return
        call = self._preparable(parsed, len(line))
        prepared = concurrent.futures.Future[_PreparedArgs]() if call is not None else None
        ahead.done.set_result((parsed, spans, prepared))
        loop.call_soon_threadsafe(self._drain_notes)
        if call is None or prepared is None:
            return
        self.writer.reserve(len(line))
        try:
            prepared.set_result(_prepare_and_open(self.writer, *call, spans, self.writer.seq + 1))
        except BaseException as exc:  # noqa: BLE001 - raised where the answer awaits it
            prepared.set_exception(exc)

    def _note_host(
        self,
        line: bytes | bytearray,
        *,
        forwarded: bool = False,
        answer: concurrent.futures.Future[bytes | bytearray] | None = None,
        ahead: _ReadAhead | None = None,
        checked: tuple[int, int] | None = None,
    ) -> None:
        """Queue a host line to be noted by the event loop (``_from_host``); ``answer``
        gets the line to pass on; ``ahead``: the line is read by the host's thread
        (``_read_ahead``); ``checked``: its long string checked as it passed
        (``LongStringWatch``). From the host's thread."""
        self._host_sent += 1
        self._notes.append((line, forwarded, answer, ahead, checked))

    def _drain_notes(self) -> None:
        """Note every host line queued (in the loop): before a server line is read, so
        that an answer is always read after its request."""
        with self._keeping:
            self._drain_held()

    def _drain_held(self) -> None:
        while self._notes:
            line, forwarded, answer, ahead, checked = self._notes.popleft()
            try:
                read = None
                if ahead is not None and not ahead.claim.acquire(blocking=False):
                    read = ahead.done.result()  # the host's thread is reading it
                out = self._from_host(line, forwarded=forwarded, read=read, checked=checked)
            except BaseException as exc:
                self._host_noted += 1
                if answer is not None:
                    answer.set_exception(exc)
                self._host_done(exc)
                return
            self._host_noted += 1
            if answer is not None:
                answer.set_result(out)

    def _note_here(self, loop: asyncio.AbstractEventLoop, *, wait: bool) -> bool:
        """Note the queued host lines in this thread (the host's or the server's), as the
        loop would: whether every one was. Not a line the loop must note (an answer waited
        for, one read ahead, from ``PREPARE_FROM`` bytes: their recording is prepared in
        the loop), nor when ``_keeping`` is held elsewhere and ``wait`` is false: the loop
        notes those, woken for it (issue 31: a wake-up of the loop per small line cost
        more CPU than noting it)."""
        if not self._keeping.acquire(blocking=wait):
            return False
        try:
            while self._notes:
                line, forwarded, answer, ahead, checked = self._notes[0]
                if answer is not None or ahead is not None or len(line) >= PREPARE_FROM:
                    return False
                self._notes.popleft()
                try:
                    self._from_host(line, forwarded=forwarded, checked=checked)
                except BaseException as exc:  # noqa: BLE001 - the session ends, as in the loop
                    self._host_noted += 1
                    loop.call_soon_threadsafe(self._host_done, exc)
                    return False
                self._host_noted += 1
            return True
        finally:
            self._keeping.release()

    def _host_done(self, exc: BaseException | None) -> None:
        """The host's stdin ended (``None``) or its reading failed: the server's stdin is
        closed, and the session told."""
        self._drain_notes()
        self._server_in.close()
        up = self._up
        if up is not None and not up.done():
            if exc is None:
                up.set_result(None)
            else:
                up.set_exception(exc)

    def _from_host(
        self,
        line: bytes | bytearray,
        *,
        forwarded: bool = False,
        read: tuple[Line, Spans | None, concurrent.futures.Future[_PreparedArgs] | None]
        | None = None,
        checked: tuple[int, int] | None = None,
        gone: bool = False,
    ) -> bytes | bytearray:
        """Note the host's requests (every one that has an id, whatever its shape) and its
        answers to the server's requests; the line to forward: ``line`` itself, or, when
        the host reused an id still in flight, the line with that request's id replaced
        by an alias (the server's answer is given back under the host's id). A line
        ``forwarded`` already (in pieces) cannot be changed: a reused id in it is paired
        in order, first answer to first request, and said. ``read``: the line read by the
        host's thread (``_read_ahead``), with its call's recording prepared there;
        ``checked``: a long string of it checked as it passed (``read_spans``); ``gone``:
        the line has gone whole to the server, a big call's recording may be prepared
        here (``_prepare``)."""
        ahead = None
        if read is None:
            parsed, spans = self._read(line, checked)
        else:
            parsed, spans, ahead = read
        rewritten = False
        now, t0 = time.time(), time.perf_counter()
        for frame in parsed.frames:
            if frame.kind == "request":
                key, alias = frame.key, None
                if key in self._pending and forwarded:
                    self._problem(
                        f"the host reused id {frame.key} while a {self._pending[key].method} "
                        "with it was in flight, in a line too long to hold back: which answer "
                        "is whose cannot be told, both calls are kept aside"
                    )
                    self._pending[key].ambiguous = True
                    self._queued.setdefault(key, []).append(
                        _Pending(
                            frame.method,
                            frame.params,
                            now,
                            t0,
                            host_id=frame.id,
                            line=line,
                            ambiguous=True,
                            spans=spans,
                        )
                    )
                    continue
                if key in self._pending:
                    self._aliases += 1
                    alias = f"cassette-tui-reused-id-{self._aliases}"
                    frame.doc["id"] = alias
                    key, rewritten = id_key(alias), True
                    self._problem(
                        f"the host reused id {frame.key} while a {self._pending[frame.key].method}"
                        f" with it was in flight; the server got {alias!r} for this "
                        f"{frame.method}, answered back under {frame.key}"
                    )
                pending = _Pending(
                    frame.method, frame.params, now, t0, host_id=frame.id, alias=alias, line=line
                )
                if spans is not None:
                    if frame.method == TOOLS_CALL:  # its args' texts come from the spans
                        pending.spans = spans
                    else:
                        pending.params = spans.real(frame.params)
                if ahead is not None:  # prepared by the host's thread
                    pending.prepared = asyncio.wrap_future(ahead)
                else:
                    self._prepare(pending, gone=gone)
                if not self._pending and self._unplaced and self._last_answer is not None:
                    self._settle_idle()  # (before any answer, replay sends them first anyway)
                self._pending[key] = pending
            elif frame.kind in ("response", "error"):
                if spans is not None:
                    frame.doc = spans.real(frame.doc)
                self._host_answered(frame)
        if not rewritten:
            return line
        docs = [f.doc if spans is None else spans.real(f.doc) for f in parsed.frames]
        return dump_doc(docs if parsed.batch else docs[0])

    def _read(
        self, line: bytes | bytearray, checked: tuple[int, int] | None = None
    ) -> tuple[Line, Spans | None]:
        """One line read: a long one with its long strings as spans (``_spans``: what
        is kept of it is then copied from the spans, not decoded and encoded again), else
        whole. Never with redaction, which reads every value. ``checked``: a long
        string's bounds checked as they passed (``read_spans``)."""
        found = read_spans(line, checked) if self.redactor is None else None
        if found is None:
            return read_line(line), None
        skeleton, spans = found
        return read_line(skeleton), spans

    def _preparable(self, parsed: Line, size: int) -> tuple[str, Any] | None:
        """``(tool, args)`` of a line that is one big tools/call whose recording is
        prepared ahead (``_prepare``'s rule), else ``None``."""
        frames = parsed.frames
        if parsed.batch or len(frames) != 1 or frames[0].kind != "request":
            return None
        return self._call_to_prepare(frames[0].method, frames[0].params, size)

    def _call_to_prepare(
        self, method: str, params: Any, size: int, least: int = PREPARE_FROM
    ) -> tuple[str, Any] | None:
        if (
            method != TOOLS_CALL
            or size < least
            or self.redactor is not None
            or not isinstance(params, dict)
            or not isinstance(params.get("name"), str)
        ):
            return None
        args = params.get("arguments")
        args = {} if args is None else args
        if depth_of(args) > MAX_DEPTH:
            return None
        return params["name"], args

    def _prepare(self, req: _Pending, *, gone: bool = False) -> None:
        """Start computing a big tools/call's args digest and text in a thread, while the
        server works on the call (never with redaction: the args change first). ``gone``
        (the line has gone whole to the server): a call alone in flight under
        ``SPLIT_FROM`` bytes is prepared here at once instead, as the host's thread does
        over stdio (``_read_ahead``): nothing waits for the loop but its answer, which
        needs the recording first, and a thread's wake-up cost 0.1-2 ms on a busy machine
        (issue 31, session 17: more than hashing the 1 MB call); so from
        ``PREPARE_GONE_FROM`` bytes, not ``PREPARE_FROM``."""
        least = PREPARE_GONE_FROM if gone else PREPARE_FROM
        call = self._call_to_prepare(req.method, req.params, len(req.line), least)
        if call is None:
            return
        loop = asyncio.get_running_loop()
        # the only call in flight: its line is started while the server works on it
        alone = not any(p.method == TOOLS_CALL for p in self._pending.values())
        if len(req.line) < PREPARE_FROM and not alone:
            return  # (gone, smaller than a thread's hand-off is worth: at its answer)
        self.writer.reserve(len(req.line))
        if gone and alone and len(req.line) < SPLIT_FROM:
            req.prepared = loop.create_future()
            try:
                done = _prepare_and_open(self.writer, *call, req.spans, self.writer.seq + 1)
            except Exception as exc:  # noqa: BLE001 - raised where the answer awaits it
                req.prepared.set_exception(exc)
            else:
                req.prepared.set_result(done)
            return
        req.prepared = loop.run_in_executor(
            None,
            _prepare_and_open,
            self.writer,
            *call,
            req.spans,
            self.writer.seq + 1 if alone else None,
        )

    def _host_answered(self, frame: Frame) -> None:
        index = self._server_requests.pop(frame.key, None)
        if index is None:
            return
        field_name = "result" if frame.kind == "response" else "error"
        answer = {field_name: frame.doc.get(field_name)}
        self.facts.server_messages[index].host_answer = answer
        self.journal.add({"host_answer": {"index": index, **answer}})

    def _pump_server(
        self, fd: int, loop: asyncio.AbstractEventLoop, out: asyncio.Queue[Any]
    ) -> None:
        """The server's stdout, read in this thread and handed to ``_server_to_host``
        (each line is recorded before it goes on), but for a line that grows past
        ``STREAM_FROM`` before its newline (a big answer): when every line before it has
        gone to the host and no request went to the server under an alias (whose answer's
        id is given back, rewriting the line), its pieces go to the host from here as they
        come, the host reading meanwhile, and only its end (with the newline, which makes
        it a message) is left to the loop, to go once the line is recorded."""
        direct: bool | None = None  # the current long line goes from here (None: no piece yet)
        sent = pieces = 0
        watch: LongStringWatch | None = None  # its long string, checked as it passes
        ahead: AnswerAhead | None = None  # its entry, written to the cassette as it passes

        def put(item: Any, count: int = 1) -> None:
            self._down_queued += count
            loop.call_soon_threadsafe(out.put_nowait, item)

        try:
            for item in iter_lines(fd, STREAM_FROM, self._take_spare):
                if isinstance(item, list):  # one wake-up of the loop for a read's lines
                    if self._down_done == self._down_queued:  # the loop holds none before
                        item = self._answer_here(loop, item, out)
                        if not item:
                            continue
                    self._down_queued += len(item)
                    loop.call_soon_threadsafe(_put_all, out, item)
                    continue
                if isinstance(item, LineEnd):
                    if watch is not None:
                        self._watched(watch, ahead, item.data)
                    checked = watch.checked if watch is not None else None
                    put(_Streamed(item, checked, ahead) if direct else item)
                    direct, sent, pieces, watch, ahead = None, 0, 0, None, None
                    continue
                if direct is None:
                    direct = self._down_done == self._down_queued and not self._aliased()
                    watch = LongStringWatch() if direct and self.redactor is None else None
                if not direct:  # the loop holds it back, or passes it on in order
                    put(Piece(bytes(item.data)))  # (its data changes with the next read)
                    continue
                sent += len(item.data)
                pieces += 1
                if pieces & (pieces - 1) == 0:  # 1, 2, 4, 8... pieces
                    self.writer.reserve(2 * sent)
                self._to_host(item.data)  # the host gone: the loop stops at the line's end
                if watch is not None:  # recorded as it passes, once the host has it
                    if ahead is None and pieces == 1:
                        ahead = self._answer_ahead(loop, item.data, watch)
                    else:
                        self._watched(watch, ahead, item.data)
            loop.call_soon_threadsafe(out.put_nowait, None)
        except RuntimeError:  # the session is over (its loop closed)
            return

    def _answer_here(
        self,
        loop: asyncio.AbstractEventLoop,
        lines: list[bytes | bytearray],
        out: asyncio.Queue[Any],
    ) -> list[bytes | bytearray]:
        """Small server lines recorded and passed on from the server's thread, in order, as
        ``_server_to_host`` does (each recorded before it goes to the host), while the loop
        holds no line of the server's: no wake-up of the loop, no hand-off (issue 31: they
        were most of a small call's CPU in the proxy). The lines left to the loop, from the
        first this thread cannot do: one of ``GIVE_FROM`` bytes or more (the read buffer
        itself), a host line to note first that only the loop may (``_note_here``), a call
        in flight whose recording is being prepared (its answer waits for it in the loop),
        or the session ending. A failure in the recording ends the loop's reading of the
        server, as there."""
        done: list[bytes | bytearray] = []  # recorded, to go to the host in one write
        left: list[bytes | bytearray] = []
        failed: BaseException | None = None
        for i, line in enumerate(lines):
            with self._keeping:
                if (
                    self._down_over
                    or len(line) >= GIVE_FROM
                    or not self._note_here(loop, wait=True)
                    or any(
                        p.prepared is not None and not p.prepared.done()
                        for p in self._pending.values()
                    )
                ):
                    left = lines[i:]
                    break
                recording = self._from_server(line)
                try:
                    recording.send(None)  # nothing to wait for: it ends at once
                except StopIteration as ended:
                    done.append(ended.value)
                    continue
                except BaseException as exc:  # noqa: BLE001 - raised in the loop, as there
                    failed = exc
                    break
                recording.close()  # cannot be (nothing it awaits is pending): said loudly,
                failed = RuntimeError("a server line's recording waited in its thread")
                break  # not left half done for the loop to record again
        # one write (one wake-up of the host) for the lines of a read, before any left to
        # the loop: a chatty server's notifications went one write each
        gone = bool(done) and not self._to_host(done[0] if len(done) == 1 else b"".join(done))
        if gone or failed is not None:  # the loop ends the session (the host is gone) or
            self._down_over = True  # raises the failure, as its own reading does
            end = _Failed(failed) if failed is not None and not gone else None
            loop.call_soon_threadsafe(out.put_nowait, end)
            return []
        return left

    def _answer_ahead(
        self, loop: asyncio.AbstractEventLoop, data: bytes | bytearray, watch: LongStringWatch
    ) -> AnswerAhead | None:
        """A big answer's first piece, from the server's thread: its long string found
        and checked (``watch``) and, when the entry it will make can be guessed, that
        entry's start written to the cassette, then the string's bytes so far
        (``CassetteWriter.open_answer``): only the line's rest is left to write once
        the answer has ended, and the guess is checked then."""
        got = watch.feed(data)
        if got is None:
            return None
        ahead = self._guess_answer(loop, data, watch.start)
        if ahead is None or not self.writer.open_answer(ahead):
            return None
        self._watched(watch, ahead, data, got)
        return ahead

    def _call_ahead(self, data: bytes | bytearray, watch: LongStringWatch) -> AnswerAhead | None:
        """A big host line's first piece, from the host's thread: its long string found
        and checked (``watch``) and, when nothing is in flight (its call will be alone,
        ``_prepare``) and the entry it will make can be guessed (``guess_call``), that
        entry's start and the string's bytes so far written to the cassette."""
        got = watch.feed(data)
        if got is None or self._pending or self._host_noted != self._host_sent:
            return None
        ahead = guess_call(self.writer, data, watch.start)
        if ahead is None or not self.writer.open_answer(ahead):
            return None
        self._watched(watch, ahead, data, got)
        return ahead

    def _watched(
        self,
        watch: LongStringWatch,
        ahead: AnswerAhead | None,
        data: bytes | bytearray,
        got: tuple[int, int] | None = None,
    ) -> None:
        """The next piece of a big answer watched; its long string's bytes in it written
        after its entry's start (``got``: already watched)."""
        if got is None:
            got = watch.feed(data)
        if ahead is None or got is None or got[0] == got[1]:
            return
        with memoryview(data) as view, view[got[0] : got[1]] as part:
            self.writer.append(ahead, part)

    def _guess_answer(
        self, loop: asyncio.AbstractEventLoop, data: bytes | bytearray, start: int
    ) -> AnswerAhead | None:
        """``guess_answer`` for the requests in flight (from the server's thread: a copy
        of them, taken at once under the GIL), once the loop has noted every host line
        sent (a server that answers at once is read before the loop woke for its call;
        waited for up to ``NOTED_WITHIN`` seconds, the answer's start gone to the host)."""
        if self._host_noted != self._host_sent:
            noted: concurrent.futures.Future[None] = concurrent.futures.Future()

            def drain() -> None:
                try:
                    self._drain_notes()
                finally:
                    noted.set_result(None)

            loop.call_soon_threadsafe(drain)
            with contextlib.suppress(concurrent.futures.TimeoutError):
                noted.result(timeout=NOTED_WITHIN)
            if not noted.done() or self._host_noted != self._host_sent:
                return None
        for _ in range(3):
            with contextlib.suppress(RuntimeError):  # changed by the loop while copied
                if any(list(self._queued.values())):  # more in flight under one id
                    return None
                return guess_answer(self.writer, list(self._pending.values()), data, start)
        return None

    def _aliased(self) -> bool:
        """Whether a request went to the server under an alias and waits for its answer;
        from the server's thread (a copy of the pending requests, taken at once under the
        GIL; when the loop changed them meanwhile, a guess on the safe side)."""
        for _ in range(3):
            with contextlib.suppress(RuntimeError):  # changed while copied
                return any(p.alias is not None for p in list(self._pending.values()))
        return True

    def _take_spare(self) -> bytearray | None:
        """The spare read buffer for the server's thread (``iter_lines``), if made."""
        spare, self._spare = self._spare, None
        return spare

    def _make_spare(self) -> None:
        """A read buffer made for the server's thread, which handed its own on with the
        big line that has just gone to the host: made here, after the line's end went,
        not by that thread on the line's way (zeroing 2 MB holds the GIL)."""
        if self._spare is None:
            self._spare = bytearray(BUFFER_SIZE)

    async def _server_to_host(self, lines: asyncio.Queue[Any]) -> None:
        """Forward the server's stdout line by line, each recorded before it goes on
        (``_pump_server`` hands them over). A line that grows past ``STREAM_FROM`` before
        its newline (a big answer) goes on in pieces as it comes, the host reading
        meanwhile (from the server's thread, or from here when lines before it were still
        here); its last piece (with the newline, which makes it a message for the host)
        only once it is recorded. Held back whole instead while a request went to the
        server under an alias (its answer's id is given back, which rewrites the line)."""
        held = False  # the current line's pieces are held back (an alias was in flight)
        sent = 0  # bytes of the current line gone to the host already
        pieces = 0
        try:
            while (item := await lines.get()) is not None:
                if isinstance(item, _Failed):  # the server's thread failed recording a line
                    raise item.exc
                with self._keeping:  # not while another thread notes or records a line
                    self._drain_notes()  # the requests it may answer are noted first
                    try:
                        if isinstance(item, _Streamed):  # its start went from the server's thread
                            await self._from_server(
                                item.end.whole,
                                forwarded=True,
                                checked=item.checked,
                                ahead=item.ahead,
                            )
                            if item.ahead is not None:  # not its entry after all: not kept
                                self.writer.take_back(item.ahead)
                            if not self._to_host(item.end.data):
                                return
                            self._make_spare()
                        elif isinstance(item, Piece):
                            if held or (
                                not sent
                                and any(p.alias is not None for p in self._pending.values())
                            ):
                                held = True  # the whole line is read at its end (``LineEnd``)
                                continue
                            sent += len(item.data)
                            pieces += 1
                            if pieces & (pieces - 1) == 0:  # 1, 2, 4, 8... pieces
                                self.writer.reserve(2 * sent)
                            if not self._to_host(item.data):
                                return
                        elif isinstance(item, LineEnd):
                            out: bytes | bytearray
                            if sent:
                                await self._from_server(item.whole, forwarded=True)
                                out = item.data
                            else:
                                out = await self._from_server(item.whole)
                            held, sent, pieces = False, 0, 0
                            if not self._to_host(out):
                                return
                            self._make_spare()
                        elif not self._to_host(await self._from_server(item)):
                            return
                        elif isinstance(item, bytearray) and len(item) >= GIVE_FROM:
                            self._make_spare()  # the read buffer itself, handed on
                    finally:
                        # counted once its bytes went to the host: the server's thread sends
                        # a long line's pieces itself only when every line before has gone
                        self._down_done += 1
        finally:
            self._down_over = True  # no line is recorded from the server's thread now

    async def _from_server(
        self,
        line: bytes | bytearray,
        *,
        forwarded: bool = False,
        stream: str | None = None,
        checked: tuple[int, int] | None = None,
        ahead: AnswerAhead | None = None,
    ) -> bytes | bytearray:
        """Record what one line of the server's stdout holds; the line to forward (the
        line itself, or with an aliased id given back). ``forwarded``: the line's start
        went to the host already (``_server_to_host`` streams a big line only while no
        alias is in flight, so nothing in it needs rewriting). ``stream``: the Streamable
        HTTP stream it came on, kept with a server message (``"standalone"``).
        ``checked``: a long string of it checked as it passed (``LongStringWatch``);
        ``ahead``: its entry's start written meanwhile (``AnswerAhead``)."""
        parsed, spans = self._read(line, checked)
        if not parsed.frames:  # a banner, a log line: forwarded, and kept
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            self._server_message(ServerMessage(line=text))
            self._problem(f"the server wrote a line that is not JSON-RPC: {text[:80]!r}")
            return line
        rewritten = False
        for frame in parsed.frames:
            if spans is not None and not (
                frame.kind in ("response", "error")
                and (req := self._pending.get(frame.key)) is not None
                and req.method == TOOLS_CALL
            ):  # only a tool call's answer is kept from the spans (as its entry's text)
                frame.doc = spans.real(frame.doc)
            if frame.kind in ("response", "error"):
                req = self._pending.pop(frame.key, None)
                if req is not None and self._queued.get(frame.key):
                    self._pending[frame.key] = self._queued[frame.key].pop(0)
                if req is None:
                    self._server_message(ServerMessage(message=frame.doc))
                    self._problem(f"the server answered id {frame.key}, which no request had")
                    continue
                if req.ambiguous:
                    self._aside(req, line, "its id was reused in flight: its answer is unknown")
                    continue
                if req.alias is not None and not forwarded:
                    frame.doc["id"] = req.host_id
                    rewritten = True
                prepared = None
                if req.prepared is not None:
                    with contextlib.suppress(TypeError, ValueError, RecursionError):
                        prepared = await req.prepared
                self._record(
                    req,
                    frame,
                    lossy=parsed.lossy,
                    line=line,
                    prepared=prepared,
                    spans=spans,
                    ahead=ahead,
                )
                self.writer.take_back(prepared)  # kept aside: its line is not an entry
            elif frame.kind == "notification" and frame.method == PROGRESS:
                if not self._note_progress(frame.params or {}):
                    self._server_message(ServerMessage(message=frame.doc, stream=stream))
            elif frame.kind in ("notification", "request"):
                if frame.kind == "request":
                    self._server_requests[frame.key] = len(self.facts.server_messages)
                self._server_message(ServerMessage(message=frame.doc, stream=stream))
            else:
                self._server_message(ServerMessage(message=frame.doc))
                self._problem("the server sent a JSON value that is not a JSON-RPC 2.0 message")
        if not rewritten:
            return line
        docs = [f.doc if spans is None else spans.real(f.doc) for f in parsed.frames]
        return dump_doc(docs if parsed.batch else docs[0])

    def _answer_pending(self, status: int | None) -> None:
        for req in list(self._pending.values()):
            answer = {
                "jsonrpc": "2.0",
                "id": req.host_id,
                "error": {
                    "code": SERVER_GONE_CODE,
                    "message": (
                        f"cassette-tui mcp record: the MCP server exited (status {status}) "
                        f"before answering this {req.method} request"
                    ),
                },
            }
            if not self._to_host(dump_doc(answer)):
                return

    # -- the host's stream ----------------------------------------------------------------
    def _to_host(self, data: bytes | bytearray) -> bool:
        """Write ``data`` to the host whole; ``False`` once the host is gone."""
        with self._host_lock:
            if self._host_gone:
                return False
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self.host_out, view) :]
            except OSError:  # EPIPE: the host closed its end
                self._host_gone = True
                return False
        return True
