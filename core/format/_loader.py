"""The index loader: ``load`` opens a cassette in one pass that validates every line and
keeps a compact index (byte offset, length, line number, seq, tool, stored digest) without
holding the responses (the entries are read later, by the lazy view: ``_view.Cassette``).

The file is read in chunks of ``readahead.CHUNK`` bytes (a thread reads the next chunk of
a large file while this one is indexed: ``readahead.py``), and each line is indexed from
offsets into the chunk by a msgspec struct (``_Header``) that checks the args and the
response are JSON without building them; unusual lines, and every line after a bad one,
take the general path (``lines.parse_header``). A 100k-entry, 170 MB file opens in about
0.3-0.45 s with under 100 MB (see ``benchmarks/bench_load.py``), where the article's
``json.loads``-everything reference needs 3-3.7 s (long strings) to 6-10 s (many small
values) and 0.6-0.9 GB.

The steps: ``_open`` the file; ``_index_chunks`` hands its bytes over chunk by chunk (a
line across two chunks on its own) to ``_Index.index_lines``, which indexes the lines of
one buffer (the hot loop; ``_Index.general_line`` reads an unusual one); ``_Index.finish``
checks the end and ``_Index.cassette`` builds the view.
"""

from __future__ import annotations

import itertools
import operator
import os
from array import array
from collections.abc import Generator, Iterator, Sequence
from contextlib import closing
from pathlib import Path
from typing import Annotated, BinaryIO

import msgspec

from . import _readahead as readahead
from ._guard import FileIdentity, how_changed
from ._line_keys import LineKeys
from ._view import Cassette, LoadReport
from .columns import DigestColumn, ToolColumn, ToolColumnBuilder
from .digest import NO_RULES, KeyRules
from .errors import CassetteFormatError
from .foreign_text import conflict_reason, encoding_problem, foreign_line, is_conflict_marker
from .gcpause import no_cyclic_gc
from .jobs import CancelToken, JobGenerator, Progress, run_job
from .jsontext import UTF8_BOM, DuplicateKey, check_top_level_keys
from .jsonvalue import NONFINITE_MARK
from .lines import (
    MAX_SEQ,
    cut_mid_write,
    error_field,
    json_reason,
    parse_header,
    validate_record,
)
from .readable import open_regular
from .spill import Spool, drop_pages, is_spilling

#: a field absent from a line (``msgspec.Raw`` of no bytes)
_NO_RAW = msgspec.Raw()


class _Header(msgspec.Struct, gc=False):
    """A cassette line as the index reads it: the args and the response are only checked
    to be JSON (``msgspec.Raw``: not built), unknown fields are skipped. A seq below 1, an
    empty tool or a missing response (an error entry, or a bad line) fails here, and the
    general path reads the line and words any error."""

    seq: Annotated[int, msgspec.Meta(ge=1, le=MAX_SEQ)]
    tool: Annotated[str, msgspec.Meta(min_length=1)]
    args: msgspec.Raw
    response: msgspec.Raw
    error: msgspec.Raw = _NO_RAW
    args_digest: str | msgspec.UnsetType = msgspec.UNSET
    # what the recorder adds to every line: kept (not built) so a recorded line's length
    # still rules out a repeated key (see _FRAME4)
    recorded_at: msgspec.Raw = _NO_RAW
    duration_ms: msgspec.Raw = _NO_RAW


_HEADER = msgspec.json.Decoder(_Header)
_HEADER_ERRORS = (msgspec.DecodeError, RecursionError)

#: The bytes of a line beyond its values when written compactly, ``{"seq":,"tool":"",
#: "args":,"response":}`` in any order (``_FRAME5``: with ``,"args_digest":""``), and with
#: the spaces of ``json.dumps``' default separators (one after each colon and comma).
#:
#: Why the length rules out a repeated key: the load knows the length of each value it
#: kept (msgspec keeps a repeated key's last value), and every other byte of the line is
#: whitespace, a key, a colon, a comma, a brace, or a value the index did not keep (an
#: unknown field, or the earlier value of a repeated key), and escapes only lengthen text.
#: So ``free`` (the line's length less the kept values, the tool and digest counted in
#: characters) is at least the compact frame, and a repeated known key adds at least 8
#: bytes (``,"seq":0``). ``free`` equal to the compact frame leaves no room for one; the
#: spaced frame leaves 7 bytes (4 keys: no room either) or 9 (5 keys), where two
#: whitespace bytes found outside the values leave 7 (``_spaced_seq_first``). Two
#: occurrences of an unknown key take at least 12 bytes. Anything else goes to
#: ``jsontext.check_top_level_keys``, which is exact.
_FRAME4 = 38
_FRAME5 = 55
#: what each of ``recorded_at`` and ``duration_ms`` adds to the compact frame:
#: ``,"recorded_at":`` (the value is kept, its length known). With either field only the
#: compact layout (our writer's) is proven free of a repeated key by the length; a spaced
#: one takes the exact check.
_FRAME_EXTRA = 15
_FRAME4_SPACED = _FRAME4 + 7
_FRAME5_SPACED = _FRAME5 + 9


def load(
    path: str | Path,
    *,
    lenient: bool = False,
    rules: KeyRules | None = None,
    keys: bool = False,
) -> Cassette:
    """Open the cassette at ``path`` (UTF-8 JSON Lines, format v1) and index it.

    Blank lines are skipped. Every line is read as JSON and its fields checked (see
    ``validate_record``), but only seq, tool, the stored digest and where the line is are
    kept: a response is parsed when its entry is asked for, and the args digests (the
    replay keys, under ``rules``) are computed on first use (``Cassette.digests``). A key
    repeated at the top level of a line is an error here (the index reads those keys); a
    response or args that is JSON but breaks a rule of the engine's parser (a key repeated
    in a nested object) is reported by whatever reads that value: the entry (``check``
    reads every entry), and the key pass for the args, so no replay key is made from args
    the entry refuses.

    Args:
        path: the cassette file.
        lenient: keep every entry before the first bad line instead of raising; the bad
            line and all after it are dropped and counted in ``cassette.report``.
        rules: normalization rules for the replay keys (default: none, strict matching).
        keys: also compute every args digest and response hash as the lines are read
            (``Cassette.digests``, ``Cassette.response_hashes``), from the bytes the index
            already holds: what a diff needs, in the load's one read of the file instead
            of a second one (about 2x the load; the app's load). Args that repeat a key
            are then refused here (file, line, field ``args``), as the key pass would.

    Raises:
        CassetteFormatError: the file is missing or unreadable (``line`` is ``None``), or a
            line is bad (``line`` and ``field`` name it; ``truncated`` is set when it is the
            last line and was cut mid-write).
    """
    return run_job(load_job(path, lenient=lenient, rules=rules, keys=keys))


def load_job(
    path: str | Path,
    *,
    lenient: bool = False,
    rules: KeyRules | None = None,
    cancel: CancelToken | None = None,
    keys: bool = False,
    unit: str = "bytes",
) -> JobGenerator[Cassette]:
    """``load`` as a job: yields ``Progress(stage="load", unit="bytes")`` about every
    ``readahead.CHUNK`` bytes (total: the file size) and returns the ``Cassette``; raises
    ``Cancelled`` when ``cancel`` is set (checked between chunks). ``unit="lines"``: the
    progress counts the lines indexed, against a total estimated from the bytes read so
    far (the file's size times the lines per byte; exact at the end). ``keys``: see
    ``load``."""
    p = Path(path)
    fh, st = _open(p)
    index = _Index(p, lenient, LineKeys(p, rules or NO_RULES) if keys else None)
    # nothing cyclic is built here; the collector would double the time (gcpause.py)
    # the iterator is closed (its reader thread joined) before the file is
    with (
        no_cyclic_gc(),
        fh,
        closing(readahead.read_chunks(fh, readahead.CHUNK, size=st.st_size)) as chunks,
    ):
        try:
            yield from _index_chunks(index, chunks, st.st_size, cancel, unit)
        except CassetteFormatError:
            _refuse_if_changed(p, fh, st)  # a line cut by the file cut under the read
            raise
        _refuse_if_changed(p, fh, st)
        index.finish()
    if unit == "lines":
        yield Progress("load", index.count(), index.count(), "lines", p.name)
    else:
        yield Progress("load", st.st_size, st.st_size, "bytes", p.name)
    return index.cassette(rules or NO_RULES, FileIdentity.of(st))


def _refuse_if_changed(path: Path, fh: BinaryIO, st: os.stat_result) -> None:
    """Raise when the file was cut or rewritten while it was read (lines appended are
    fine: the load reads the size it saw): its last line read would be "cut mid-write"
    at a line the file no longer has, or the load would end short without a word.

    Raises:
        CassetteFormatError: ``line`` ``None``: "changed on disk while it was read (cut
            from N to M bytes): read it again".
    """
    try:
        now = os.fstat(fh.fileno())
    except OSError:
        return
    what = how_changed(now, FileIdentity.of(st), appended_ok=True)
    if what is not None:
        raise CassetteFormatError(
            path, None, None, f"changed on disk while it was read ({what}): read it again"
        ) from None


#: how much of a file ``load_head`` reads: a screen of rows and well past it, in a few ms
HEAD_BYTES = 256 * 1024


def load_head(
    path: str | Path,
    *,
    rules: KeyRules | None = None,
    max_bytes: int = HEAD_BYTES,
) -> Cassette:
    """A cassette of the first lines of the file at ``path``: every whole line within its
    first ``max_bytes`` bytes, indexed and keyed as ``load(path, keys=True)`` indexes and
    keys them (the same entries, digests and response hashes, in seq order among
    themselves). For a first look at a large file while ``load`` reads the whole of it
    (the app's first screen); a file no larger than ``max_bytes`` is read whole, and the
    result is then what ``load(path, keys=True)`` gives.

    Raises:
        CassetteFormatError: as ``load``, for the lines read (a bad line among them, or
            a file that is not UTF-8 JSON Lines).
    """
    p = Path(path)
    fh, st = _open(p)
    with no_cyclic_gc(), fh:
        try:
            buf = fh.read(max_bytes)
        except OSError as exc:
            raise CassetteFormatError.from_os_error(p, exc) from None
    whole = len(buf) >= st.st_size
    pos = len(UTF8_BOM) if buf.startswith(UTF8_BOM) else 0
    other_encoding = encoding_problem(buf[:64])
    if other_encoding is not None:
        raise CassetteFormatError(p, 1, None, other_encoding)
    index = _Index(p, False, LineKeys(p, rules or NO_RULES))
    end = index.index_lines(buf, pos, 0, whole)
    index.end = len(buf) if whole else end
    index.finish()  # a bad line among those read is bad in the whole file too
    return index.cassette(rules or NO_RULES, FileIdentity.of(st))


def _open(p: Path) -> tuple[BinaryIO, os.stat_result]:
    """The cassette file opened for reading, and its ``fstat``: a FIFO, a device or a
    directory is an error, never a hang (``readable.open_regular``).

    Raises:
        CassetteFormatError: the file is missing or unreadable (``line`` ``None``).
    """
    fh = open_regular(p)
    try:
        return fh, os.fstat(fh.fileno())
    except OSError as exc:
        fh.close()
        raise CassetteFormatError.from_os_error(p, exc) from None


def _index_chunks(
    index: _Index,
    chunks: Iterator[bytes],
    size: int,
    cancel: CancelToken | None,
    unit: str = "bytes",
) -> Generator[Progress, None, None]:
    """Index every line of the file read as ``chunks`` (``size`` bytes in all), yielding
    ``Progress`` between chunks. A line across two chunks is indexed on its own (only it
    is copied: copying the whole chunk cost a tenth of the load), then the chunk after it.
    Sets ``index.end``, the file offset of the end of the bytes read."""
    p = index.path
    buf = _next_chunk(chunks, p)
    pos = len(UTF8_BOM) if buf.startswith(UTF8_BOM) else 0  # an editor's BOM
    other_encoding = encoding_problem(buf[:64])
    if other_encoding is not None:
        raise CassetteFormatError(p, 1, None, other_encoding)
    eof = not buf
    base = 0  # file offset of buf[0]
    # the chunk to go on in once the line across it and the one before is read
    after: bytes | None = None
    after_pos = after_base = 0
    while True:
        pos = index.index_lines(buf, pos, base, eof)
        if eof:
            break
        if after is not None:
            # the line across two chunks is read: go on in the chunk after it
            buf, pos, base, after = after, after_pos, after_base, None
            continue
        index.spool_lines()
        if unit == "lines":
            read, lines = base + pos, index.count()
            estimate = max(lines, round(lines * size / read)) if read else None
            yield Progress("load", lines, estimate, "lines", p.name)
        else:
            yield Progress("load", base + pos, size, "bytes", p.name)
        if cancel is not None:
            cancel.raise_if_cancelled()
        chunk = _next_chunk(chunks, p)
        eof = not chunk
        base += pos
        tail = buf[pos:]
        first = chunk.find(b"\n") if tail and not eof else -1
        if first < 0:  # the partial last line moves to the front of the chunk
            buf = tail + chunk
            pos = 0
            continue
        buf = tail + chunk[: first + 1]
        pos = 0
        after, after_pos, after_base = chunk, first + 1, base + len(tail)
    index.end = base + len(buf)


def _next_chunk(chunks: Iterator[bytes], path: Path) -> bytes:
    """The next chunk of the file at ``path`` (``b""`` at its end).

    Raises:
        CassetteFormatError: the read failed (``line`` ``None``: "cannot read: ...").
    """
    try:
        return next(chunks, b"")
    except OSError as exc:
        raise CassetteFormatError.from_os_error(path, exc) from None


#: entries the load's index holds in memory while spilling before it moves them to its
#: temporary files (``_Index.spool_lines``)
_SPOOL_BATCH = 1 << 16


class _Index:
    """What the load has read so far: per entry its seq, tool, stored digest, byte offset
    and length, the blank lines met, and the first bad line (``pending_error``, with the
    ``report`` a lenient load returns)."""

    def __init__(self, path: Path, lenient: bool, keys: LineKeys | None = None) -> None:
        self.path = path
        self.lenient = lenient
        #: computes each line's args digest and response hash as it is indexed, or None
        self.keys = keys
        # columns (``columns.py``): 8 bytes an entry, not a string or an int object
        self.digests = DigestColumn()
        self.hashes = array("q")
        self.seqs = array("q")
        # an entry's line is its index + 1 but after blank lines: the index of the entry
        # after each blank line is kept, and the line numbers are built from these at the end
        self.after_blank: list[int] = []
        self.offsets = array("q")
        self.lengths = array("q")
        self.tools: list[str] = []
        self.stored = DigestColumn()
        self.tool_names: dict[str, str] = {}  # interning: a few tool names, 100k references
        self.last_tool = ""
        self.report = LoadReport()
        self.pending_error: CassetteFormatError | None = None
        self.lineno = 0
        #: seqs in [lo, hi) have n digits (``_digit_range``)
        self.seq_digits = (1, 10, 1)
        #: the file offset of the end of the bytes read (set by ``_index_chunks``)
        self.end = 0
        #: while spilling (``spill.py``, the headless diff): seqs, offsets and lengths
        #: go to temporary files a batch at a time (``spool_lines``); the arrays above
        #: hold the entries after ``spooled``
        self.spools: tuple[Spool, Spool, Spool] | None = (
            (Spool("q"), Spool("q"), Spool("q")) if is_spilling() else None
        )
        #: while spilling, the stored digests' codes too, as long as every one is of the
        #: standard form (``DigestColumn.all_standard``; then the rest stays in memory)
        self.stored_spool: Spool | None = Spool("Q") if is_spilling() else None
        self.spooled = 0
        #: while spilling, the tool names of the spooled entries as ids (``tools`` holds
        #: the names after ``spooled``)
        self.tool_ids = ToolColumnBuilder()

    def count(self) -> int:
        """The entries indexed so far."""
        return self.spooled + len(self.seqs)

    def spool_lines(self) -> None:
        """While spilling, move the seqs, offsets and lengths indexed so far but the last
        to their temporary files once there are many (called between chunks; ``finish``
        reads the last entry's)."""
        k = len(self.seqs) - 1
        if self.spools is None or k < _SPOOL_BATCH:
            return
        for spool, column in zip(self.spools, (self.seqs, self.offsets, self.lengths), strict=True):
            spool.add(column[:k])
            del column[:k]
        self.tool_ids.add(self.tools[:k])
        del self.tools[:k]  # in place: ``index_lines`` holds its ``append``
        stored = self.stored
        if self.stored_spool is not None and stored.all_standard:
            # every line indexed so far (``stored`` holds the entries after the spool's)
            self.stored_spool.add(stored.codes)
            del stored.codes[:]
        self.spooled += k

    def index_lines(self, buf: bytes, pos: int, base: int, eof: bool) -> int:
        """Index the whole lines of ``buf`` (at file offset ``base``) from ``pos`` on, and
        at ``eof`` a last line without a newline; return where the first line not read
        starts. The hot loop of the load: a usual line is read by ``_HEADER`` with no
        Python call of its own; anything else goes to ``general_line``.

        Raises:
            CassetteFormatError: a bad line followed by more content (not lenient).
        """
        find = buf.find
        view = memoryview(buf)
        decode = _HEADER.decode
        unset = msgspec.UNSET
        seqs_append, tools_append = self.seqs.append, self.tools.append
        # a buffer's digests go to their columns at its end, a batch at C speed
        stored_batch: list[str | None] = []
        digests_batch: list[str] = []
        stored_append = stored_batch.append
        offsets_append, lengths_append = self.offsets.append, self.lengths.append
        tool_names, last_tool = self.tool_names, self.last_tool
        seq_lo, seq_hi, seq_len = self.seq_digits
        failed = self.pending_error is not None
        lineno = self.lineno
        key_of = self.keys.of_line if self.keys is not None else None
        digests_append, hashes_append = digests_batch.append, self.hashes.append
        while True:
            # -- one line: buf[pos:nl + 1] ---------------------------------------------
            nl = find(b"\n", pos)
            if nl < 0:
                if not eof or pos >= len(buf):
                    break
                nl = len(buf)  # a last line without a newline
            lineno += 1
            start = pos
            pos = nl + 1
            header: _Header | None = None
            if not failed:
                try:
                    header = decode(view[start:nl])
                    if header.error:
                        header = None  # the general path says what is wrong
                except _HEADER_ERRORS:
                    header = None
            if header is None:
                # -- general path: anything unusual, and every line after an error
                line = self.general_line(buf[start:pos], lineno)
                failed = self.pending_error is not None
                if line is None:
                    continue
                seq, tool, digest_stored = line
                if key_of is not None:
                    nonfinite = find(NONFINITE_MARK, start, pos) >= 0
                    made, hashed = key_of(tool, lineno, None, None, nonfinite, buf[start:pos])
                    digests_append(made)
                    hashes_append(hashed)
            else:
                seq = header.seq
                tool = header.tool
                if tool == last_tool:  # a str compare: cheaper than hashing it
                    tool = last_tool
                else:
                    tool = last_tool = tool_names.setdefault(tool, tool)
                got = header.args_digest
                # a repeated top-level key: msgspec kept its last value, while the entry
                # parse refuses the line. The line's length rules one out in the usual
                # layouts (see _FRAME4); else the exact check runs
                if not seq_lo <= seq < seq_hi:
                    seq_lo, seq_hi, seq_len = _digit_range(seq)
                args_len = len(header.args)
                free = nl - start - args_len - len(header.response) - len(tool) - seq_len
                recorded_len = len(header.recorded_at)
                duration_len = len(header.duration_ms)
                spaced_ok = True
                if recorded_len or duration_len:  # a present value is never empty
                    free -= recorded_len + duration_len
                    free -= _FRAME_EXTRA * ((recorded_len > 0) + (duration_len > 0))
                    spaced_ok = False
                if got is unset:
                    digest_stored = None
                    plain = free == _FRAME4 or (spaced_ok and free == _FRAME4_SPACED)
                else:
                    digest_stored = got
                    free -= len(got)
                    plain = free == _FRAME5 or (
                        spaced_ok
                        and free == _FRAME5_SPACED
                        and (
                            (
                                buf[start : start + 9] == b'{"args": '
                                and (at := start + 10 + args_len) < nl
                                and buf[at] == 0x20
                            )
                            or _spaced_seq_first(buf, start, nl, seq, seq_len)
                        )
                    )
                if not plain and self.repeated_top_key(view[start:nl], lineno):
                    failed = True
                    continue
                if key_of is not None:
                    args_bytes = bytes(header.args)
                    made, hashed = key_of(
                        tool,
                        lineno,
                        args_bytes,
                        header.response,
                        NONFINITE_MARK in args_bytes,
                        view[start:nl],
                    )
                    digests_append(made)
                    hashes_append(hashed)
            seqs_append(seq)
            tools_append(tool)
            stored_append(digest_stored)
            offsets_append(base + start)
            lengths_append(pos - start)  # one too many for a last line with no newline
        view.release()
        self.stored.extend(stored_batch)
        self.digests.extend(digests_batch)
        self.lineno, self.last_tool = lineno, last_tool
        self.seq_digits = (seq_lo, seq_hi, seq_len)
        return pos

    def repeated_top_key(self, line: memoryview, lineno: int) -> bool:
        """Whether the line ``line`` (number ``lineno``, read by ``_HEADER``) repeats a
        top-level key, or holds invalid UTF-8 that the exact check met, which makes it the
        bad line (``jsontext.check_top_level_keys``)."""
        try:
            check_top_level_keys(line)
        except (DuplicateKey, UnicodeDecodeError) as exc:  # invalid UTF-8 found by the check
            raw = bytes(line) if isinstance(exc, UnicodeDecodeError) else b""
            self._fail(
                CassetteFormatError(self.path, lineno, error_field(exc, raw), json_reason(exc, raw))
            )
            return True
        return False

    def general_line(self, raw: bytes, lineno: int) -> tuple[int, str, str | None] | None:
        """``(seq, tool, stored digest)`` of the line ``raw`` (number ``lineno``) read by
        the general path, or ``None`` for a blank line, a bad one (kept as
        ``pending_error``) and every line after a bad one (counted as dropped).

        Raises:
            CassetteFormatError: a bad line followed by more content (not lenient).
        """
        if self.pending_error is not None:
            if not raw.isspace():
                # a bad line followed by more content: not a truncation
                if not self.lenient:
                    raise self.pending_error
                self.report = _count_dropped(self.report)
            return None
        if raw.isspace():
            self.after_blank.append(self.count())
            return None
        try:
            # the response cut out when that is safe: a bad response is reported when
            # its entry is read, naming the field
            record, _finite = parse_header(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            if is_conflict_marker(raw):
                # a merged file needs a person's choice: refused even by a lenient load
                raise CassetteFormatError(
                    self.path, lineno, None, conflict_reason(self.path, lineno)
                ) from None
            truncated = cut_mid_write(raw)
            why = json_reason(exc, raw)
            foreign = foreign_line(raw)
            if foreign is not None:
                why = f"{foreign}: {why}"
            if truncated:
                why = (
                    "last line is cut mid-write (a crash while recording?; a lenient load,"
                    " --lenient, keeps the entries before it): " + why
                )
            self._fail(
                CassetteFormatError(
                    self.path, lineno, error_field(exc, raw), why, truncated=truncated
                ),
                truncated,
            )
            return None
        try:
            # the cut response may hide a repeated top-level key
            check_top_level_keys(raw)
        except (DuplicateKey, UnicodeDecodeError) as exc:  # invalid UTF-8 found by the check
            self._fail(
                CassetteFormatError(self.path, lineno, error_field(exc, raw), json_reason(exc, raw))
            )
            return None
        try:
            validate_record(record, self.path, lineno)
        except CassetteFormatError as exc:
            self._fail(exc)
            return None
        tool = self.tool_names.setdefault(record["tool"], record["tool"])
        return record["seq"], tool, record.get("args_digest")

    def _fail(self, error: CassetteFormatError, truncated: bool = False) -> None:
        """Keep ``error`` as the first bad line: raised once more content follows it (or
        at the end, unless lenient), and reported by a lenient load."""
        self.pending_error = error
        self.report = LoadReport(1, error.line, str(error), truncated)

    def finish(self) -> None:
        """At the end of the file: raise the bad line (not lenient), and trim the length
        of a last line with no newline.

        Raises:
            CassetteFormatError: the first bad line (not lenient).
        """
        if self.pending_error is not None and not self.lenient:
            raise self.pending_error
        offsets, lengths = self.offsets, self.lengths
        if offsets and offsets[-1] + lengths[-1] > self.end:
            lengths[-1] = self.end - offsets[-1]  # a last line with no newline

    def cassette(self, rules: KeyRules, identity: FileIdentity) -> Cassette:
        """The file-backed ``Cassette`` over this index (its digests computed on first use),
        its entries in ``seq`` order (``_in_seq_order``)."""
        seqs, stored = self.seqs, self.stored
        # the names as 1-2 byte ids from here on (the list's references are let go)
        tools, self.tools = self.tool_ids.column(self.tools), []
        offsets, lengths = self.offsets, self.lengths
        if self.spools is not None:
            seqs, offsets, lengths = (
                spool.view(column)
                for spool, column in zip(self.spools, (seqs, offsets, lengths), strict=True)
            )
        if self.stored_spool is not None:
            if stored.all_standard:
                stored.codes = self.stored_spool.view(stored.codes)
            elif self.stored_spool.count:  # a digest of another form came later
                stored = stored.after(self.stored_spool.view(array("Q")))
            self.stored_spool.close()
            self.stored_spool = None
        lines = _line_numbers(len(seqs), self.after_blank)
        keyed = self.keys is not None
        digests, hashes = self.digests, self.hashes
        if not _ascending(seqs) and len(set(seqs)) == len(seqs):
            order = _in_seq_order(seqs)
            if keyed:
                digests = digests.taken(order)
                hashes = array("q", [hashes[k] for k in order])
            seqs = array("q", [seqs[k] for k in order])
            tools = ToolColumn.of([tools[k] for k in order])
            stored = stored.taken(order)
            lines = array("q", [lines[k] for k in order])
            offsets = array("q", [offsets[k] for k in order])
            lengths = array("q", [lengths[k] for k in order])
        return Cassette(
            self.path,
            seqs=_compact_seqs(seqs),
            tools=tools,
            digests=digests if keyed else None,
            response_hashes=hashes if keyed else None,
            stored=stored,
            lines=lines,
            offsets=offsets,
            lengths=_compact_lengths(lengths),
            rules=rules,
            report=self.report,
            identity=identity,
        )


def _compact_seqs(seqs: array[int]) -> Sequence[int]:
    """``seqs`` as a ``range`` when they count up by one (a recording's: 8 bytes an entry
    less, issue 31), else as they are; checked at C speed, ``_CHECK_STEP`` items at a
    time (the pages of a column in a temporary file let go after each)."""
    if not seqs:
        return seqs
    first, n = seqs[0], len(seqs)
    for start in range(0, n, _CHECK_STEP):
        part = seqs[start : start + _CHECK_STEP]
        if not all(map(operator.eq, part, range(first + start, first + start + len(part)))):
            return seqs
        drop_pages(seqs)
    return range(first, first + n)


def _compact_lengths(lengths: array[int]) -> array[int]:
    """Line lengths in 4 bytes each when every line is under 4 GiB (always, but for a
    file made to break it), else as they are (and when in a temporary file already)."""
    if not isinstance(lengths, array):
        return lengths
    if lengths and max(lengths) < 1 << 32 and array("I").itemsize == 4:
        return array("I", lengths)
    return lengths


#: items a check of a whole column reads between two drops of its pages (``spill.py``)
_CHECK_STEP = 1 << 16


def _ascending(seqs: Sequence[int]) -> bool:
    """Whether every seq is below the next (the lines are in seq order: the common case,
    checked at C speed, ~35 ms per million entries, ``_CHECK_STEP`` items at a time)."""
    for start in range(0, len(seqs), _CHECK_STEP):
        part = seqs[start : start + _CHECK_STEP + 1]  # and the next part's first
        if not all(map(operator.lt, part, itertools.islice(part, 1, None))):
            return False
        drop_pages(seqs)
    return True


def _in_seq_order(seqs: Sequence[int]) -> list[int]:
    """The line positions sorted by seq.

    The recorder numbers a call when it is issued and writes its line when it finishes
    (docs/format.md): the lines of parallel calls stand in completion order, and a reader
    sees the entries in issue order. A file with a repeated seq is not a recording's: it
    keeps its file order (``cassette`` does not call this), and lint reports it
    (``seq_order``)."""
    return sorted(range(len(seqs)), key=seqs.__getitem__)


def _line_numbers(count: int, after_blank: list[int]) -> Sequence[int]:
    """The line number of each of ``count`` entries, ``after_blank`` holding for each blank
    line the index of the entry after it (increasing, repeated for blank lines in a row):
    ``range(1, count + 1)`` when there is none, an ``array`` built by runs otherwise."""
    if not after_blank:
        return range(1, count + 1)
    lines = array("q")
    shift = prev = 0
    for k in after_blank:
        lines.extend(range(prev + 1 + shift, k + 1 + shift))
        prev = k
        shift += 1
    lines.extend(range(prev + 1 + shift, count + 1 + shift))
    return lines


def _digit_range(seq: int) -> tuple[int, int, int]:
    """``(lo, hi, n)``: the positive integers in ``[lo, hi)`` are written with ``n``
    characters, ``seq`` (at least 1) among them."""
    n = len(str(seq))
    return 10 ** (n - 1), 10**n, n


def _spaced_seq_first(buf: bytes, start: int, end: int, seq: int, seq_len: int) -> bool:
    """Whether the line ``buf[start:end]`` starts ``{"seq": `` followed by ``seq`` itself
    (the value the index kept), a comma and a space: two whitespace bytes outside the
    values. The first value must be the kept one: with ``seq`` repeated, msgspec keeps the
    last, and a byte counted from the wrong value's length could fall inside a string."""
    if not buf.startswith(b'{"seq": ', start):
        return False
    at = start + 8 + seq_len
    return (
        at + 1 < end
        and buf[start + 8 : at] == str(seq).encode()
        and buf[at] == 0x2C
        and buf[at + 1] == 0x20
    )


def _count_dropped(report: LoadReport) -> LoadReport:
    return LoadReport(report.dropped_lines + 1, report.first_dropped_line, report.reason, False)
