"""``cassette-tui mcp record``: a stdio proxy between an MCP host and the real server.

The host launches the proxy instead of the server; the proxy starts the server and
forwards every line both ways byte for byte (the stdio transport's newline-delimited
JSON-RPC), so what the host sees is exactly what the server sent. On the side it reads
each line with the SDK's message types and pairs requests with their answers:

- each answered ``tools/call`` becomes one cassette entry (``_wire`` has the mapping),
  written and flushed before the answer is forwarded, with ``recorded_at`` (ISO-8601 UTC,
  when the host sent the call), ``duration_ms`` (until the server answered) and, when the
  server reported progress for it, ``mcp_progress`` (each ``notifications/progress``'s
  params without the token, in order);
- every other answered host request (``initialize``, ``tools/list``, ...) goes to the
  server-facts sidecar (``_facts``), rewritten atomically when it grows.

Neither file may exist before (nothing is overwritten; the cassette is created
exclusively). Shutdown follows the MCP stdio lifecycle: when the host closes its end, the
proxy closes the server's stdin, lets it answer what is in flight for ``grace`` seconds,
then terminates its process group (SIGTERM, then SIGKILL). When the server exits first
(a crash), the proxy answers each request still waiting with a JSON-RPC error that says
so, reports it on stderr, and keeps every entry recorded before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from cassette_tui.core.format.cassette import dump_line
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.scan.redact import Redactor

from ._facts import Exchange, ServerFacts, sidecar_path, without_meta
from ._wire import (
    PROGRESS,
    PROGRESS_FIELD,
    TOOLS_CALL,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    call_of,
    error_record,
    parse_line,
)

#: JSON-RPC "internal error": the code of the answer the proxy gives for a request the
#: server will never answer (it exited)
SERVER_GONE_CODE = -32603
#: the largest line the proxy reads in one piece (a bigger one is an error)
LINE_LIMIT = 1 << 30


@dataclass
class _Pending:
    method: str
    params: Any
    started: float
    t0: float
    #: the ``notifications/progress`` params the server sent for this request
    progress: list[dict[str, Any]] = field(default_factory=list)

    @property
    def progress_token(self) -> Any:
        meta = (self.params or {}).get("_meta") if isinstance(self.params, dict) else None
        return meta.get("progressToken") if isinstance(meta, dict) else None


@dataclass
class RecordSummary:
    """What a recording session did.

    Attributes:
        cassette, sidecar: the files written.
        entries: tool calls recorded; errors: of them, JSON-RPC errors or ``isError``.
        exchanges: other answered requests kept in the sidecar.
        unanswered: methods of host requests the server never answered.
        server_exit: the server's exit status (negative: killed by that signal), ``None``
            if it could not be started.
        server_crashed: the server exited before the host closed the session.
        terminated: the proxy had to signal the server to stop it.
        removed: nothing was recorded (no tool call, no other answer), so the two files
            this session created were removed: a retry starts clean.
    """

    cassette: Path
    sidecar: Path
    entries: int = 0
    errors: int = 0
    exchanges: int = 0
    unanswered: list[str] = field(default_factory=list)
    server_exit: int | None = None
    server_crashed: bool = False
    terminated: bool = False
    removed: bool = False

    def exit_status(self) -> int:
        """The proxy's own exit status: the server's when it crashed (128+N for a signal),
        else 0."""
        code = self.server_exit
        if not self.server_crashed or code is None or code == 0:
            return 0
        return 128 - code if code < 0 else code

    def report(self) -> dict[str, Any]:
        """``{"mode": "record", "cassette", "entries", "errors", "mcp": {...}}``."""
        return {
            "mode": "record",
            "cassette": str(self.cassette),
            "entries": self.entries,
            "errors": self.errors,
            "mcp": {
                "sidecar": str(self.sidecar),
                "exchanges": self.exchanges,
                "unanswered": list(self.unanswered),
                "server_exit": self.server_exit,
                "server_crashed": self.server_crashed,
                "removed": self.removed,
            },
        }


class CassetteWriter:
    """Appends entries to a new cassette: created exclusively (never clobbers a file),
    one ``write`` per line, flushed at once, so a crash loses nothing already answered.

    Raises:
        FileExistsError: the cassette exists already.
    """

    def __init__(
        self, path: Path, rules: NormalizationRules, redactor: Redactor | None = None
    ) -> None:
        self.path = path
        self.rules = rules
        #: ``record = true``: each entry is redacted before it is written (as ``Recorder``)
        self.redactor = redactor
        self.seq = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._fh: BinaryIO | None = open(path, "xb")  # noqa: SIM115 - exclusive create
        except FileExistsError:
            raise FileExistsError(
                f"{path}: a cassette exists already; record to a new file"
            ) from None

    def write(self, tool: str, args: Any, response: Any, error: Any, extra: dict[str, Any]) -> int:
        assert self._fh is not None, "writer closed"
        self.seq += 1
        entry = Entry(self.seq, tool, args, response=response, error=error, extra=extra)
        if self.redactor is not None:  # no secret reaches the disk
            entry = self.redactor.redact_entry(entry)[0]
        self._fh.write(dump_line(entry, self.rules))
        self._fh.flush()
        return self.seq

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()


class RecordingProxy:
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
        self.writer, self.facts, self.summary = _claim(
            str(cassette), self.command, rules or NormalizationRules(), redactor
        )
        self._pending: dict[Any, _Pending] = {}
        self._host_lock = threading.Lock()
        self._host_gone = False

    # -- the session ---------------------------------------------------------------------
    def run(self) -> RecordSummary:
        """Run the session to its end (see the module docstring); always closes the files."""
        try:
            asyncio.run(self._session())
        finally:
            self.writer.close()
            self._remove_if_empty()
        return self.summary

    def _remove_if_empty(self) -> None:
        """A session that recorded nothing (the server never started, or answered nothing)
        leaves no file: its cassette and sidecar, both created by this session
        (``_claim``), are removed, so the same command can run again."""
        summary = self.summary
        if summary.entries or summary.exchanges or self.writer.seq:
            return
        for path in (summary.cassette, summary.sidecar):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        summary.removed = True
        self._say(
            f"nothing was recorded: {summary.cassette} and {summary.sidecar} (created by "
            "this session) were removed"
        )

    async def _session(self) -> None:
        proc = await self._start_server()
        if proc is None:
            return
        loop = asyncio.get_running_loop()
        host_lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            with contextlib.suppress(ValueError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        threading.Thread(
            target=_read_lines, args=(self.host_in, loop, host_lines), daemon=True
        ).start()

        up = asyncio.create_task(self._host_to_server(host_lines, proc))
        down = asyncio.create_task(self._server_to_host(proc))
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait({up, down, stopped}, return_when=asyncio.FIRST_COMPLETED)

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
        for task in (up, down, stopped):
            task.cancel()
        await asyncio.gather(up, down, stopped, return_exceptions=True)
        self._ended(proc)

    async def _start_server(self) -> asyncio.subprocess.Process | None:
        """The MCP server's process (its own process group); ``None`` when it cannot
        start (said, and summed up as a crash with status 127)."""
        try:
            return await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group: terminated as a whole
                limit=LINE_LIMIT,
            )
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
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
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

    async def _host_to_server(
        self, lines: asyncio.Queue[bytes | None], proc: asyncio.subprocess.Process
    ) -> None:
        assert proc.stdin is not None
        while (line := await lines.get()) is not None:
            msg = parse_line(line)
            if isinstance(msg, JSONRPCRequest):
                self._pending[msg.id] = _Pending(
                    msg.method, msg.params, time.time(), time.perf_counter()
                )
            try:
                proc.stdin.write(line)
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                return  # the server is gone; _server_to_host sees its stdout close
        # the host closed its end: close the server's stdin (MCP stdio shutdown, step 1)
        proc.stdin.close()

    async def _server_to_host(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while True:
            try:
                line = await proc.stdout.readline()
            except ValueError:  # a line past LINE_LIMIT: forward it in pieces, unread
                line = await proc.stdout.read(LINE_LIMIT)
            if not line:
                return
            msg = parse_line(line)
            if isinstance(msg, JSONRPCResponse | JSONRPCError) and msg.id in self._pending:
                self._record(self._pending.pop(msg.id), msg)
            elif isinstance(msg, JSONRPCNotification) and msg.method == PROGRESS:
                self._note_progress(msg.params or {})
            if not self._to_host(line):
                return

    # -- recording -----------------------------------------------------------------------
    def _record(self, req: _Pending, answer: JSONRPCResponse | JSONRPCError) -> None:
        result = answer.result if isinstance(answer, JSONRPCResponse) else None
        error = answer.error if isinstance(answer, JSONRPCError) else None
        if req.method == TOOLS_CALL:
            tool, args = call_of(req.params)
            extra = {
                "recorded_at": datetime.fromtimestamp(req.started, UTC)
                .isoformat()
                .replace("+00:00", "Z"),
                "duration_ms": round((time.perf_counter() - req.t0) * 1000, 3),
            }
            if req.progress:
                extra[PROGRESS_FIELD] = req.progress
            self.writer.write(tool, args, result, error_record(error) if error else None, extra)
            self.summary.entries += 1
            if error is not None or (result or {}).get("isError") is True:
                self.summary.errors += 1
            return
        self.facts.exchanges.append(
            Exchange(
                req.method,
                without_meta(req.params),
                result=result,
                error=error.model_dump(exclude_none=True) if error else None,
            )
        )
        self.summary.exchanges += 1
        self.facts.write(self.summary.sidecar, overwrite=True, redactor=self.redactor)

    def _note_progress(self, params: dict[str, Any]) -> None:
        token = params.get("progressToken")
        for req in self._pending.values():
            if req.method == TOOLS_CALL and token is not None and req.progress_token == token:
                req.progress.append({k: v for k, v in params.items() if k != "progressToken"})
                return

    def _answer_pending(self, status: int | None) -> None:
        for request_id, req in list(self._pending.items()):
            answer = JSONRPCError(
                jsonrpc="2.0",
                id=request_id,
                error=ErrorData(
                    code=SERVER_GONE_CODE,
                    message=(
                        f"cassette-tui mcp record: the MCP server exited (status {status}) "
                        f"before answering this {req.method} request"
                    ),
                ),
            )
            line = answer.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
            if not self._to_host(line.encode("utf-8")):
                return

    # -- the host's stream ----------------------------------------------------------------
    def _to_host(self, data: bytes) -> bool:
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

    def _say(self, message: str) -> None:
        print(f"cassette-tui mcp record: {message}", file=self.log, flush=True)


#: in ``-o``, replaced by the first number whose cassette and sidecar are both free
NUMBER = "{n}"


def _claim(
    template: str, command: list[str], rules: NormalizationRules, redactor: Redactor | None
) -> tuple[CassetteWriter, ServerFacts, RecordSummary]:
    """Create the cassette (exclusively) and its sidecar for a new recording. With ``{n}``
    in ``template`` (``runs/git-{n}.jsonl``), the first n from 1 whose two files are both
    free; without, the one path, or ``FileExistsError``. A half-claimed pair (the sidecar
    appeared meanwhile) is undone."""
    numbered = NUMBER in template
    for n in range(1, 1_000_000 if numbered else 2):
        cassette = Path(template.replace(NUMBER, str(n)))
        sidecar = sidecar_path(cassette)
        try:
            if sidecar.exists():
                raise FileExistsError(
                    f"{sidecar}: a server-facts file exists already; record to a new file"
                )
            writer = CassetteWriter(cassette, rules, redactor)
            facts = ServerFacts(command=command, cassette=cassette.name)
            try:
                facts.write(sidecar, overwrite=False, redactor=redactor)
            except BaseException:
                writer.close()
                cassette.unlink()
                raise
        except FileExistsError:
            if numbered:
                continue
            raise
        return writer, facts, RecordSummary(cassette, sidecar)
    raise FileExistsError(f"{template}: no free number for {NUMBER}")


def _read_lines(fd: int, loop: asyncio.AbstractEventLoop, out: asyncio.Queue[bytes | None]) -> None:
    """Read ``fd`` to its end in a daemon thread (a blocking read cannot be cancelled, and
    a pipe, a tty or a file all work), handing complete lines to ``out``; ``None`` at EOF."""
    buffer = b""
    try:
        while chunk := os.read(fd, 1 << 16):
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                loop.call_soon_threadsafe(out.put_nowait, line + b"\n")
    except OSError:
        pass
    finally:
        if buffer:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(out.put_nowait, buffer)
        with contextlib.suppress(RuntimeError):  # the loop may be closed already
            loop.call_soon_threadsafe(out.put_nowait, None)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
