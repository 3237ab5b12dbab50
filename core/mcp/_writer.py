"""The cassette writer of ``mcp record`` (``CassetteWriter``): a new cassette created
exclusively (or the one ``cassette-tui record`` claimed for its agent), one entry line per
answered tools/call, flushed at once so a crash loses nothing already answered. A big
call or answer has its line written ahead as it streams (``open_entry``, ``open_answer``,
``append``: the guesses of ``_ahead``) and taken back when the guess does not hold; disk
for a big entry is reserved past the end (``reserve``, Linux ``fallocate``). A write the
file refuses stops the recording, never the relay (``_write_failure``). Kept apart from
the proxy, which only hands it what to write."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO

from cassette_tui.core.format.cassette import dump_line, dump_record
from cassette_tui.core.format.digest import digest
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.replay.recorder import _open_claimed
from cassette_tui.core.scan.redact import Redactor

from ._ahead import AnswerAhead, ArgsAhead, _entry_head, _written_in, fresh_marker
from ._fast_json import fast_compact
from ._prepared import Pieces, _PreparedArgs
from ._same_file import FileId, identity
from ._spans import Spans
from ._write_failure import WriteFailure

#: a response at least this big is written by ``fast_compact`` when it can (the standard
#: library's encoder took 0.12 s for a 50 MB answer, orjson 0.02 s)
FAST_RESPONSE_FROM = 1 << 16
#: a reservation asked for below this many bytes is not made (``reserve``): its syscalls
#: cost more than they save (measured here: for 100 KB writes 2-13 us more a write,
#: for 256 KB 5% less, for 1 MB 70 us less; issue 31, session 20)
RESERVE_FROM = 256 << 10


class CassetteWriter:
    """Appends entries to a new cassette: created exclusively (never clobbers a file),
    one ``write`` per line, flushed at once, so a crash loses nothing already answered.
    A write the file refuses (``OSError``: a full disk, a file size limit) stops it: the
    line being written is cut back (the file ends at its last whole line), ``failure``
    says what happened, and every later write does nothing (``write`` says ``None``);
    no method raises it (the proxy's relay goes on, ``_write_failure``).

    Raises:
        FileExistsError: the cassette exists already.
    """

    def __init__(
        self,
        path: Path,
        rules: NormalizationRules,
        redactor: Redactor | None = None,
        claim: str | None = None,
        known: frozenset[str] = frozenset(),
    ) -> None:
        self.path = path
        self.rules = rules
        #: ``record = true``: each entry is redacted before it is written (as ``Recorder``)
        self.redactor = redactor
        #: secrets found outside the entries (the server's ``--api-key VALUE``): replaced
        #: wherever the server echoes them (a log line, a result's text), as ``redact`` does
        self.known = known
        self.seq = 0
        self._reserved = False
        #: the file was made for this recording by ``cassette-tui record`` (``claim``,
        #: ``CASSETTE_CLAIM``): written into, and left to that job when nothing was kept
        self.claimed = False
        #: every write of the file, from the event loop or a thread (``open_entry``)
        self._lock = threading.RLock()
        #: the start of a line written ahead of its answer: ``(offset, head, prepared)``,
        #: or ahead of its answer's end: ``(offset, head, ahead)``
        self._open: tuple[int, bytes, _PreparedArgs | AnswerAhead] | None = None
        #: the write the file refused: the recording stopped there (``_fail``)
        self.failure: WriteFailure | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._fh: BinaryIO | None = open(path, "xb")  # noqa: SIM115 - exclusive create
        except FileExistsError:
            # the empty file `cassette-tui record` made for its agent (Recorder's rule)
            self._fh = _open_claimed(path, claim) if claim else None
            self.claimed = self._fh is not None
            if self._fh is None:
                raise FileExistsError(
                    f"{path}: a cassette exists already; record to a new file"
                ) from None
        #: the file opened (its device and inode): the path may name another file later
        #: (moved, replaced by the user), which the session never removes
        self.identity: FileId = identity(self._fh.fileno())

    def write(
        self,
        tool: str,
        args: Any,
        response: Any,
        error: Any,
        extra: dict[str, Any],
        prepared: _PreparedArgs | None = None,
        response_size: int = 0,
        *,
        args_spans: Spans | None = None,
        response_spans: Spans | None = None,
        ahead: AnswerAhead | None = None,
    ) -> int | None:
        """Append one entry and flush it; its seq, or ``None`` when the file refused it (or
        an earlier write: ``failure``), nothing of it left in the file. ``prepared``: the
        args' digest and JSON text computed while the server worked (a big call), spliced
        into the line;
        ``response_size``: the answer's size in bytes (from ``FAST_RESPONSE_FROM`` its text
        is orjson's when that is the standard library's). ``args_spans``,
        ``response_spans``: ``args`` or ``response`` is the skeleton of a line with these
        long strings (``_spans``): the texts are spliced from it, or the real value used.
        A line started by ``open_entry`` for ``prepared`` (or by ``open_answer`` for
        ``ahead``) is ended when what it wrote is this line's start; any other is taken
        back first."""
        token = ahead if ahead is not None else prepared
        with self._lock:
            if self.failure is not None:
                return None
            assert self._fh is not None, "writer closed"
            if self._open is not None and (token is None or self._open[2] is not token):
                self._take_back()
                if self._fh is None:
                    return None
            start = self._open[0] if self._open is not None else self._fh.tell()
            self.seq += 1
            pieces, response_at = self._pieces(
                self.seq, tool, args, response, error, extra, prepared, response_size,
                args_spans, response_spans,
            )  # fmt: skip
            if self._open is not None:
                opened, self._open = self._open, None
                if isinstance(opened[2], AnswerAhead):
                    done = opened[2].written_in(pieces, response_at, response_spans)
                else:
                    done = _written_in(pieces, opened[1], opened[2])
                if done:  # its start is in the file already
                    del pieces[:done]
                else:  # not this line's start (a guess that was wrong)
                    self.seq -= 1  # (the next entry's line is cut back)
                    self._truncate(opened[0])
                    if self._fh is None:  # refused: the recording stopped
                        return None
                    self.seq += 1
            try:
                self._put(pieces)
            except OSError as exc:
                self._fail(exc, start, self.seq)
                self.seq -= 1
                return None
            return self.seq

    def _pieces(
        self,
        seq: int,
        tool: str,
        args: Any,
        response: Any,
        error: Any,
        extra: dict[str, Any],
        prepared: _PreparedArgs | None,
        response_size: int,
        args_spans: Spans | None,
        response_spans: Spans | None,
    ) -> tuple[Pieces, int]:
        """Entry ``seq``'s line as pieces, and the index of the response's first piece
        among them (``-1``: its text is not spliced in)."""
        if self.redactor is not None:  # no secret reaches the disk
            prepared = None
        # big values (a call's args, its answer) go to the file as their own texts,
        # spliced around the rest of the line: no copy of the whole line is made
        spliced: dict[str, Pieces] = {}
        if prepared is not None and prepared.text is not None:
            spliced["args"] = prepared.text
        elif args_spans is not None:
            args = args_spans.real(args)
        if self.redactor is None and error is None and response_size >= FAST_RESPONSE_FROM:
            text = fast_compact(response)
            if text is not None:
                spliced["response"] = response_spans.splice(text) if response_spans else [text]
        if response_spans is not None and "response" not in spliced:
            response = response_spans.real(response)
        entry = Entry(seq, tool, args, response=response, error=error, extra=extra)
        if self.redactor is not None:
            entry = self.redactor.redact_entry(entry, self.known)[0]
        if not spliced:
            return [dump_line(entry, self.rules)], -1
        marker = fresh_marker()
        markers = {name: f"{marker}-{name}" for name in spliced}
        record = Entry(
            seq,
            tool,
            markers.get("args", entry.args),
            response=markers.get("response", entry.response),
            error=entry.error,
            extra=entry.extra,
        ).to_record(prepared.digest if "args" in spliced and prepared else self._digest(entry))
        line = dump_record(record)
        pieces: Pieces = []
        response_at = -1
        for name, value_text in spliced.items():
            head, sep, line = line.partition(f'"{markers[name]}"'.encode())
            if not sep:  # cannot happen: each marker is in the line once
                real = Entry(
                    seq,
                    tool,
                    args_spans.real(args) if args_spans else args,
                    response=response_spans.real(response) if response_spans else response,
                    error=error,
                    extra=extra,
                )
                return [dump_line(real, self.rules)], -1
            pieces.append(head)
            if name == "response":
                response_at = len(pieces)
            pieces += value_text
        pieces.append(line)
        return pieces, response_at

    def open_entry(
        self, seq: int, tool: str, prepared: _PreparedArgs, spans: Spans | None = None
    ) -> None:
        """Write the start of entry ``seq``'s line (up to and with its args: ``prepared``'s
        text) before its answer comes, so that only the rest is left to write once it has
        (a 50 MB write takes 0.1-0.4 s on a busy machine: the server's own time). Called
        from a thread while the server works; nothing is written when another entry was
        written since ``seq`` was chosen, or another line is open. The line is ended by
        ``write`` for the same ``prepared``, or taken back (``take_back``, ``write`` of
        another entry, ``close``): a crash meanwhile leaves it cut, as a crash during any
        write does (``load`` reports a cut last line and keeps every line before).

        A line started by ``open_answer`` for an ``ArgsAhead`` (the call's start and long
        string written as its pieces passed) is ended here when it is this line's start
        (``spans``: the call line's, whose first span must be that string), else taken
        back first."""
        if prepared.text is None:
            return
        head = _entry_head(seq, tool)
        with self._lock:
            opened = self._open[2] if self._open is not None else None
            if self._open is not None and isinstance(opened, ArgsAhead):
                offset, ahead = self._open[0], opened
                self._open = None
                pieces: Pieces = [head, *prepared.text]
                if ahead.seq == seq and ahead.holds(pieces, spans) and self._fh is not None:
                    self._open = (offset, head, prepared)
                    self._put_or_fail(pieces[3:], offset, seq)
                    return
                self._truncate(offset)
            if self._fh is None or self.seq + 1 != seq or self._open is not None:
                return
            offset = self._fh.tell()
            self._open = (offset, head, prepared)
            self._put_or_fail([head, *prepared.text], offset, seq)

    def open_answer(self, ahead: AnswerAhead) -> bool:
        """Write the start of the entry an answer streaming in will make (``ahead.head``:
        the line up to its long string's first byte, as guessed), so that its string's
        bytes can follow as they pass (``append``) and only the line's rest is left once
        the answer has ended (a 50 MB write took 20-250 ms after its last byte). False
        (nothing written) when another entry was written since ``ahead.seq`` was chosen or
        another line is open. Ended or taken back as ``open_entry``'s line; a crash
        meanwhile leaves a cut last line without its newline, which ``load`` reports (it
        keeps every line before)."""
        with self._lock:
            if self._fh is None or self.seq + 1 != ahead.seq or self._open is not None:
                return False
            self._open = (self._fh.tell(), ahead.head, ahead)
            return self._put_ahead(ahead, ahead.head)

    def append(self, ahead: AnswerAhead, data: bytes | memoryview) -> bool:
        """Write the next bytes of ``ahead``'s long string after what it wrote; False (and
        nothing written) once its line was taken back or ended."""
        with self._lock:
            if self._fh is None or self._open is None or self._open[2] is not ahead:
                return False
            if ahead.written < 0 or not self._put_ahead(ahead, data):
                return False
            ahead.written += len(data)
            return True

    def _put_ahead(self, ahead: AnswerAhead, data: bytes | memoryview) -> bool:
        """Write bytes ahead of ``ahead``'s end; False when the file refused them (a full
        disk, a file size limit): the recording stops there (``_fail``, the line cut
        back). Raising here would end the thread passing the message on (the server's or
        the host's), the message left unsent."""
        assert self._open is not None
        if not self._put_or_fail([data], self._open[0], ahead.seq):
            ahead.written = -1
            return False
        return True

    def _put_or_fail(self, pieces: Pieces, start: int, seq: int) -> bool:
        """``_put``; False when the file refused it (the recording stopped, ``_fail``:
        ``start`` the offset of entry ``seq``'s line)."""
        try:
            self._put(pieces)
        except OSError as exc:
            self._fail(exc, start, seq)
            return False
        return True

    def _fail(self, exc: OSError, start: int, seq: int | None) -> None:
        """The file refused a write of entry ``seq``'s line (which starts at ``start``):
        the line's written part is removed (the file ends at its last whole line; when
        that too is refused, the cut line stays, ``WriteFailure.cut_left``), the file is
        closed and ``failure`` set: nothing more is written. The file object's buffer may
        hold bytes the file refused: it is closed (written or not) before the cut, on a
        descriptor of its own."""
        fh = self._fh
        self._fh = None
        self._open = None
        cut_left = True
        if fh is not None:
            try:
                fd = os.dup(fh.fileno())
            except OSError:
                fd = -1
            with contextlib.suppress(OSError):
                fh.close()  # closes its descriptor even when its last flush fails
            if fd >= 0:
                try:
                    os.ftruncate(fd, start)
                    cut_left = False
                except OSError:
                    pass
                with contextlib.suppress(OSError):
                    os.fsync(fd)
                os.close(fd)
        if self.failure is None:
            self.failure = WriteFailure(self.path, exc, seq, cut_left=cut_left)

    def take_back(self, prepared: _PreparedArgs | AnswerAhead | None) -> None:
        """The line ``open_entry`` started for ``prepared`` (``open_answer`` for an
        ``AnswerAhead``) is removed (its call was kept aside, or not answered)."""
        with self._lock:
            if self._open is not None and self._open[2] is prepared:
                self._take_back()

    def _take_back(self) -> None:
        assert self._open is not None
        offset = self._open[0]
        self._open = None
        self._truncate(offset)

    def _truncate(self, offset: int) -> None:
        """The file cut back to ``offset`` (the start of the next entry's line); refused,
        the recording stops (``_fail``)."""
        assert self._fh is not None
        try:
            self._fh.flush()
            self._fh.truncate(offset)
            self._fh.seek(offset)
        except OSError as exc:
            self._fail(exc, offset, self.seq + 1)

    def reserve(self, size: int) -> None:
        """Allocate ``size`` bytes of disk past the cassette's end without changing its
        size (Linux ``fallocate`` with ``FALLOC_FL_KEEP_SIZE``), for a big entry written
        next: ext4 then writes 50 MB in 0.1 s, not 0.25 s, allocating as it goes. Safe from
        any thread; released by ``close`` (a crash leaves only the allocation past the
        end, never a byte of the file changed). Elsewhere, when refused, or for less
        than ``RESERVE_FROM`` bytes, nothing."""
        fh = self._fh
        if fh is None or size < RESERVE_FROM or _FALLOCATE is None:
            return
        with contextlib.suppress(OSError, ValueError):
            fd = fh.fileno()
            _FALLOCATE(fd, _KEEP_SIZE, os.fstat(fd).st_size, size)
            self._reserved = True

    def _digest(self, entry: Entry) -> str:
        return digest(self.rules.apply(entry.tool, entry.args))

    def _put(self, pieces: Pieces) -> None:
        """Write one line's pieces in order and flush them to the file."""
        assert self._fh is not None
        with self._lock:
            for piece in pieces:
                self._fh.write(piece)
            self._fh.flush()

    def close(self) -> None:
        """Close the file (a line still open is taken back); a flush or sync the file
        refuses is kept in ``failure`` (``seq`` ``None``), never raised."""
        with self._lock:
            if self._open is not None and self._fh is not None:
                self._take_back()  # a call never answered: its line is not kept
            try:
                self._close()
            except OSError as exc:
                if self.failure is None:
                    self.failure = WriteFailure(self.path, exc, None)

    def _close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.flush()
                if self._reserved:  # the disk reserved past the end goes back
                    with contextlib.suppress(OSError):
                        os.ftruncate(fh.fileno(), fh.tell())
                os.fsync(fh.fileno())
            finally:
                with contextlib.suppress(OSError):
                    fh.close()


def _fallocate() -> Any:
    """libc's ``fallocate`` (Linux), or ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        func = libc.fallocate
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    func.restype = ctypes.c_int
    return func


_FALLOCATE = _fallocate()
#: ``FALLOC_FL_KEEP_SIZE``: allocate past the end, the file's size unchanged
_KEEP_SIZE = 1
