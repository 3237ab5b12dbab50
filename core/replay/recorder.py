"""Record: run an agent's tool calls live and append each one to a cassette as it happens.

One line per call, written and flushed when the call returns or raises, so a crash loses
at most the calls in flight. A tool exception is recorded as an ``error`` entry
(``{"type": class name, "message": str(exc), ...}``, ``errors.error_record``) and raised
again unchanged; so is a cancellation (``asyncio.CancelledError``, a ``BaseException``),
so a call cancelled by ``wait_for`` or a task group replays as cancelled. Each line also
carries ``recorded_at`` (ISO-8601 UTC, when the call started) and ``duration_ms``.

``seq`` is the order calls were **issued** (docs/format.md): it is given under
a lock when a call starts, so calls one model turn issues at once (``asyncio.gather``, a
thread pool) keep their issue order whatever order they finish in, and a key recorded twice
in parallel is served in issue order on replay. Lines are still written as calls finish,
never held back: a long call does not hold the lines of later calls, and a crash loses
only the calls in flight. The lines of parallel calls may therefore stand out of seq order
in the file; the load orders the entries by seq (docs/format.md).

A call that overlapped another in time carries ``batch``: the seq of the first call of its
batch, the calls in flight together (from the moment one starts with none in flight to
the moment none is left). A call that ran alone has no ``batch`` field, so a sequential
agent's cassette is unchanged. The diff pairs the calls of one batch that two runs issued
in another order; the app marks them.

An existing file is never overwritten unless ``overwrite=True``. Then the new recording is
written to a temporary file next to it (``.NAME.recording-PID``) and renamed over the old
one by ``close()``: a crash leaves the old cassette intact and every completed call of the
new one in the temporary file.
"""

from __future__ import annotations

import contextlib
import fcntl
import inspect
import os
import threading
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Self

from ..format.atomic import check_replaceable
from ..format.cassette import dump_line
from ..format.constants import BATCH_FIELD
from ..format.entry import Entry
from ..format.errors import CassetteError, error_record
from ..format.jsonvalue import json_copy, roundtrip_change
from ..keys.normalize import NormalizationRules
from ..keys.replay_key import args_digest
from ..scan.redact import Redactor
from .turn import CALL_SLOT, CallSlot

if TYPE_CHECKING:
    from .codec import Codec


class NotSerializable(CassetteError, TypeError):
    """A call's args or response cannot be stored as JSON, or JSON would give back a
    different value (an int dict key, a tuple, an enum). Names the tool, the part and the
    first path at fault.

    Attributes:
        tool: the tool name of the call.
        part: ``"args"`` or ``"response"``.
        path: the JSON path of the first value at fault (``"$.rows[12]"``), or ``None``.
    """

    def __init__(self, message: str, tool: Any = None, part: str = "", path: str | None = None):
        super().__init__(message)
        self.tool = tool
        self.part = part
        self.path = path


class RecordingStopped(CassetteError, RuntimeError):
    """A call that ran live could not be recorded (a write failed, or its response cannot
    be stored): the recorder refuses every later call before running it, so a cassette
    never misses a call that ran live after it. A parallel call still in flight then is
    not recorded either: it raises this when it returns.

    Attributes:
        path: the cassette being written.
        seq: the seq of the call that could not be recorded.
        cause: the exception that stopped the recording.
    """

    def __init__(self, path: Path, seq: int, cause: BaseException) -> None:
        self.path = path
        self.seq = seq
        self.cause = cause
        super().__init__(
            f"{path}: recording stopped at seq {seq}: {cause}; the calls before it are "
            "recorded, later calls are refused before they run (start a new recording)"
        )


@dataclass
class _Batch:
    """The calls in flight together: the seq of the first one, how many started and how
    many of them are still in flight."""

    first: int
    calls: int = 1
    open: int = 0


class Recorder:
    """Appends calls to a cassette file.

    Args:
        path: the cassette to write.
        overwrite: replace an existing file (at ``close()``); without it an existing file
            raises ``FileExistsError``.
        rules: normalization rules for the stored ``args_digest`` (default: none).
        fsync: also ``os.fsync`` after every line (survives a power cut, costs a disk
            round trip per call); lines are always flushed.
        redactor: redact each call before it is written (``redact.Redactor``; the config's
            ``record = true``): args (digested after redaction), response, error and extra
            fields; ``None`` writes them as they are.
        claim: ``"DEV:INO"`` of an empty file made for this recording at ``path`` (the
            ``record`` job takes its output exclusively before the agent starts, and says
            so in ``CASSETTE_CLAIM``): that one file is written into, when it is still
            there, still empty and not being recorded by another recorder (``flock``);
            any other file at ``path`` is refused as without a claim.
        codec: turns typed args and responses (a dataclass, a ``datetime``...) into plain
            JSON before they are checked and written, the response's types beside it in
            ``response_types`` (``codec.py``; ``None``: only JSON is accepted).

    Use as a context manager, or call ``close()``; ``wrap(dispatch)`` gives a dispatcher
    (sync or async, like ``dispatch``) that records every call.

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is false.
        NotReplaceable: (a ``FileExistsError``) ``path`` is a symlink, FIFO, device node or
            other special file: never replaced, even with ``overwrite``.
    """

    def __init__(
        self,
        path: str | Path,
        overwrite: bool = False,
        rules: NormalizationRules | None = None,
        *,
        fsync: bool = False,
        redactor: Redactor | None = None,
        claim: str | None = None,
        codec: Codec | None = None,
    ) -> None:
        self.path = Path(path)
        self.codec = codec
        self.redactor = redactor
        self.rules = rules or NormalizationRules()
        self.fsync = fsync
        self._lock = threading.Lock()
        #: the last seq given (a call's seq is given when it starts: issue order)
        self._seq = 0
        #: the calls written
        self._written = 0
        #: the calls started and not yet written, by seq, with the batch each belongs to
        self._in_flight: dict[int, _Batch] = {}
        self._batch: _Batch | None = None
        #: model turns known by their calls' slots (``turn.py``): the turn's batch (its
        #: first seq) and the indexes given a seq so far
        self._turns: dict[Hashable, tuple[_Batch, set[int]]] = {}
        self._errors = 0
        self._stopped: RecordingStopped | None = None
        self._claimed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if overwrite and check_replaceable(self.path):  # a symlink/FIFO/device: refused
            self._write_path = self.path.with_name(f".{self.path.name}.recording-{os.getpid()}")
            self._fh: BinaryIO | None = open(self._write_path, "wb")  # noqa: SIM115
        else:
            self._write_path = self.path
            try:
                self._fh = open(self.path, "xb")  # noqa: SIM115 - exclusive: never clobbers
            except FileExistsError:
                self._fh = _open_claimed(self.path, claim) if claim else None
                self._claimed = self._fh is not None  # the job's file: it removes it
                if self._fh is None:
                    raise FileExistsError(
                        f"{self.path}: a cassette exists already; pass overwrite=True to replace it"
                    ) from None

    # -- writing ------------------------------------------------------------------------------
    @property
    def entries(self) -> int:
        """How many calls were recorded so far."""
        return self._written

    def _issue(self) -> int:
        """The next seq, given to a call as it starts; the call joins the batch in flight,
        or starts one. A call whose adapter gave its slot in a model turn (``turn.py``)
        takes its turn's seq instead: the turn's calls have consecutive seqs reserved
        when the first of them starts, in the model's order, and one batch when there are
        several (a repeated slot, a retry, takes the next seq in that batch). Under
        ``_lock``."""
        slot = CALL_SLOT.get()
        if slot is not None and 0 <= slot.index < slot.count:
            return self._issue_in_turn(slot)
        seq = self._seq = self._seq + 1
        if self._batch is None:  # none in flight: this call may start a batch
            self._batch = _Batch(seq)
        else:
            self._batch.calls += 1
        self._batch.open += 1
        self._in_flight[seq] = self._batch
        return seq

    def _issue_in_turn(self, slot: CallSlot) -> int:
        known = self._turns.get(slot.turn)
        if known is None:
            known = self._turns[slot.turn] = (_Batch(self._seq + 1, slot.count), set())
            self._seq += slot.count
        batch, given = known
        if slot.index in given:  # the call again (a retry inside the cassette): a new seq
            seq = self._seq = self._seq + 1
        else:
            given.add(slot.index)
            seq = batch.first + slot.index
        batch.open += 1
        self._in_flight[seq] = batch
        return seq

    def _land(self, seq: int) -> _Batch | None:
        """Take call ``seq`` out of flight; its batch when it overlapped another call
        (``None`` when it ran alone). Under ``_lock``."""
        batch = self._in_flight.pop(seq, None)
        if batch is not None:
            batch.open -= 1
        if self._batch is not None and self._batch.open <= 0:  # (a turn's calls: apart)
            self._batch = None
        return batch if batch is not None and batch.calls > 1 else None

    def _release(self, seq: int) -> None:
        """A call that ends without a line (``GeneratorExit``: a coroutine closed): out
        of flight, its seq left unused."""
        with self._lock:
            self._land(seq)

    def _write(
        self,
        seq: int,
        tool: str,
        args: Any,
        started: float,
        t0: float,
        response: Any,
        error: Any,
        types: dict[str, str] | None = None,
        checked: bool = False,
    ) -> int:
        duration_ms = round((time.perf_counter() - t0) * 1000, 3)
        recorded_at = datetime.fromtimestamp(started, UTC).isoformat().replace("+00:00", "Z")
        with self._lock:
            batch = self._land(seq)
            if self._fh is None:
                raise ValueError(f"{self.path}: recorder is closed")
            if self._stopped is not None:
                raise self._stopped
            extra: dict[str, Any] = {"recorded_at": recorded_at, "duration_ms": duration_ms}
            if batch is not None:
                extra[BATCH_FIELD] = batch.first
            entry = Entry(
                seq=seq,
                tool=tool,
                args=args,
                response=None if error is not None else response,
                error=error,
                extra=extra,
            )
            if types:  # the codec's types of the response, read back at replay
                entry.extra["response_types"] = types
            if self.redactor is not None:  # record = true: no secret reaches the disk
                entry = self.redactor.redact_entry(entry)[0]
            try:
                if error is None and not checked:  # (the codec's look found plain JSON)
                    _check_json(tool, "response", response)
                try:
                    line = dump_line(entry, self.rules)
                except (TypeError, ValueError) as exc:
                    raise NotSerializable(
                        f"tool {tool!r}: the response is not JSON-serializable ({exc}); "
                        'return JSON data (bytes as {"_binary": true, "encoding": "base64", '
                        '"data": ...})',
                        tool,
                        "response",
                    ) from exc
                self._write_line(line)
            except (NotSerializable, OSError) as exc:
                # the call ran live and is not in the file: refuse every later call
                self._stopped = RecordingStopped(self.path, seq, exc)
                raise
            self._written += 1
            if error is not None:
                self._errors += 1
            return seq

    def _write_error(
        self, seq: int, tool: str, args: Any, started: float, t0: float, exc: BaseException
    ) -> None:
        """Record the exception ``exc`` that a call raised, as an ``error`` entry.

        An ``Exception`` whose entry cannot be written raises the write's error. A
        ``BaseException`` (an ``asyncio`` cancellation by ``wait_for`` or a task group, a
        ``KeyboardInterrupt`` or ``SystemExit`` inside a tool) is recorded too, so replay
        meets the same cancellation; its own write failure is not raised in its place (a
        cancellation must reach the event loop), it stops the recording, so the next
        call raises ``RecordingStopped``. ``GeneratorExit`` (a coroutine closed, not a
        tool's outcome) is not recorded."""
        if isinstance(exc, GeneratorExit):
            self._release(seq)
            return
        if isinstance(exc, Exception):
            self._write(seq, tool, args, started, t0, None, error_record(exc))
            return
        with contextlib.suppress(Exception):
            self._write(seq, tool, args, started, t0, None, error_record(exc))

    def _encoded(
        self, seq: int, tool: str, response: Any
    ) -> tuple[Any, None, dict[str, str] | None, bool]:
        """``(response as JSON, no error, its types, checked)`` for ``_write``: the
        codec's encoding of a response that is not plain JSON already (``checked``: it
        was, no second look needed). A codec that fails stops the recording (the call ran
        live and cannot be written)."""
        if self.codec is None:
            return response, None, None, False
        if roundtrip_change(response) is None:
            return response, None, None, True
        try:
            data, types = self.codec.encode(response)
        except Exception as exc:
            failure = NotSerializable(
                f"tool {tool!r}: the codec cannot encode the response ({exc}); the call ran live",
                tool,
                "response",
            )
            with self._lock:
                self._land(seq)
                self._stopped = RecordingStopped(self.path, seq, failure)
            raise failure from exc
        return data, None, types, False

    def _write_line(self, line: bytes) -> None:
        assert self._fh is not None
        start = self._fh.tell()
        try:
            self._fh.write(line)
            self._fh.flush()
            if self.fsync:
                os.fsync(self._fh.fileno())
        except OSError:
            # take back a partial line, so the calls before it still load cleanly
            with contextlib.suppress(OSError, ValueError):
                self._fh.seek(start)
                self._fh.truncate()
            raise

    def _start(self, tool: str, args: Any) -> tuple[Any, float, float, int]:
        """Check the call before it runs live: the recorder still records, the tool name
        is a non-empty string, the args are JSON that comes back unchanged and can be
        digested under the rules. Returns a private copy of the args, the start time and
        the call's seq (given now: issue order)."""
        if self._stopped is not None:
            raise self._stopped
        if self._fh is None:
            raise ValueError(f"{self.path}: recorder is closed")
        if not isinstance(tool, str) or not tool:
            raise NotSerializable(
                f"tool name {tool!r}: expected a non-empty string; the call was not run",
                tool,
                "tool",
            )
        if self.codec is not None:
            try:
                args = self.codec.encode(args)[0]
            except Exception as exc:
                raise NotSerializable(
                    f"tool {tool!r}: the codec cannot encode the args ({exc}); the call was "
                    "not run",
                    tool,
                    "args",
                ) from exc
        _check_json(tool, "args", args)
        try:
            args_digest(self.rules, tool, args)
        except (TypeError, ValueError) as exc:
            raise NotSerializable(
                f"tool {tool!r}: the args cannot be digested ({exc}); the call was not run",
                tool,
                "args",
            ) from exc
        # a copy: a dispatcher that mutates its args must not change what was recorded
        saved = json_copy(args)
        with self._lock:
            if self._stopped is not None:
                raise self._stopped
            if self._fh is None:
                raise ValueError(f"{self.path}: recorder is closed")
            seq = self._issue()
        return saved, time.time(), time.perf_counter(), seq

    def call(self, dispatch: Callable[[str, Any], Any], tool: str, args: Any) -> Any:
        """Run ``dispatch(tool, args)`` live and record it; return its response (with a
        codec, recorded as its JSON and ``response_types``), or record its exception as
        an ``error`` entry and raise it again (any ``BaseException`` but
        ``GeneratorExit``: see ``_write_error``).

        Raises:
            NotSerializable: the args or the response cannot be stored as JSON.
        """
        saved, started, t0, seq = self._start(tool, args)
        try:
            response = dispatch(tool, args)
        except BaseException as exc:
            self._write_error(seq, tool, saved, started, t0, exc)
            raise
        self._write(seq, tool, saved, started, t0, *self._encoded(seq, tool, response))
        return response

    async def acall(
        self, dispatch: Callable[[str, Any], Awaitable[Any]], tool: str, args: Any
    ) -> Any:
        """``call`` for an async dispatcher."""
        saved, started, t0, seq = self._start(tool, args)
        try:
            response = await dispatch(tool, args)
        except BaseException as exc:
            self._write_error(seq, tool, saved, started, t0, exc)
            raise
        self._write(seq, tool, saved, started, t0, *self._encoded(seq, tool, response))
        return response

    def wrap(self, dispatch: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
        """A dispatcher that records every call through this recorder; async if
        ``dispatch`` is a coroutine function."""
        if _is_async(dispatch):

            async def recorded_async(tool: str, args: Any) -> Any:
                return await self.acall(dispatch, tool, args)

            return recorded_async

        def recorded(tool: str, args: Any) -> Any:
            return self.call(dispatch, tool, args)

        return recorded

    def report(self) -> dict[str, Any]:
        """``{"mode": "record", "cassette", "entries", "errors"}``."""
        return {
            "mode": "record",
            "cassette": str(self.path),
            "entries": self._written,
            "errors": self._errors,
        }

    def close(self) -> None:
        """Flush and close the file; with ``overwrite``, rename the new recording over the
        old cassette. Idempotent.

        A recording stopped by a failure before its first entry (the first call's
        response could not be recorded) leaves no file: the empty file this recorder
        created is removed (with ``overwrite``, its temporary file; the old cassette stays
        as it was; a claimed file is left to the job that made it, which removes
        it), so the same run can be tried again. A run that made no call at all
        still leaves its empty cassette (a test that calls no tool replays it)."""
        with self._lock:
            if self._fh is None:
                return
            fh, self._fh = self._fh, None
            fh.flush()
            empty = (
                self._stopped is not None
                and self._written == 0
                and os.fstat(fh.fileno()).st_size == 0
            )
            if not empty:
                os.fsync(fh.fileno())
            fh.close()
            if empty and not self._claimed:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._write_path)
            elif self._write_path != self.path:
                os.replace(self._write_path, self.path)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_claimed(path: Path, claim: str) -> BinaryIO | None:
    """The claimed empty file at ``path`` opened for appending and locked, or ``None``
    when the file there is not the claimed one (another file, a symlink, not empty, or
    another recorder holds it)."""
    try:
        dev, ino = (int(x) for x in claim.split(":"))
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (ValueError, OSError):
        return None
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (dev, ino) or st.st_size != 0:
            raise OSError("not the claimed file")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # one recorder per claim
    except OSError:
        os.close(fd)
        return None
    return os.fdopen(fd, "ab")


#: how to record typed values instead of refusing them (docs/format.md, "Typed values")
CODEC_HINT = (
    ", or record typed values (dataclass, pydantic model, datetime, Decimal, bytes, set, "
    "tuple) with a codec: wrap_dispatcher(..., codec=BUILTIN_CODEC) from "
    "cassette_tui.core.replay.codec"
)


def _check_json(tool: str, part: str, value: Any) -> None:
    """Raise ``NotSerializable`` naming the first path where JSON would change ``value``."""
    change = roundtrip_change(value)
    if change is not None:
        where, what = change
        ran = "the call was not run" if part == "args" else "the call ran live"
        if what.endswith("is not JSON data"):
            problem = f"the {part} is not JSON-serializable"
            hint = 'JSON data (bytes as {"_binary": true, "encoding": "base64", "data": ...})'
        else:
            problem = f"the {part} would not replay as recorded"
            hint = "plain JSON data (str keys, lists, plain str/int/float)"
        hint += CODEC_HINT
        raise NotSerializable(
            f"tool {tool!r}: {problem}: at {where}, {what}; {ran}. Use {hint}",
            tool,
            part,
            where,
        )


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )
