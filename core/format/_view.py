"""The lazy cassette view: ``Cassette``, a read-only sequence of entries over a compact
index (seq, tool, stored digest, line number, byte offset and length per entry).

A file-backed cassette (``load``) parses an entry from its bytes when it is asked for and
keeps the ones in use in a small LRU cache; its args digests (the replay keys, under the
cassette's ``KeyRules``) and response hashes are computed on first use, in one sequential
read of the file (``Cassette.keys_job``). An in-memory cassette (``Cassette.from_entries``)
holds its entries. Reads by offset are guarded against a file changed since the load
(``_guard.py``).
"""

from __future__ import annotations

import contextlib
import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast, overload

import msgspec

from . import _readahead as readahead
from . import spill as _spill
from ._answers import Answers, check_every_line
from ._guard import FileIdentity, changed_error, check_same_file, how_changed
from ._line_keys import LineKeys
from ._writer import dump_record
from .batching import batch_full
from .columns import (
    NO_RESPONSE_HASH,
    DigestColumn,
    ToolColumn,
    as_digest_column,
    as_hash_column,
)
from .digest import NO_RULES, KeyRules, digest, fast_digest
from .entry import Entry
from .errors import CassetteFormatError
from .jobs import CancelToken, JobGenerator, Progress, run_job
from .jsontext import DuplicateKey, parse_json_checked
from .jsonvalue import NONFINITE_MARK, decode_nonfinite
from .lines import entry_from_record, error_field, json_reason, validate_record
from .outcome import entry_fingerprint

#: entries a file-backed cassette keeps parsed (least recently used dropped first)
_CACHE_SIZE = 512
#: entries the key pass holds before it moves them to its temporary files (spilling)
_KEY_SPOOL_BATCH = 1 << 16
#: a field absent from a line (``msgspec.Raw`` of no bytes)
_NO_RAW = msgspec.Raw()


@dataclass(frozen=True)
class LoadReport:
    """What a load found beyond the entries.

    Attributes:
        dropped_lines: non-blank lines a lenient load left out (0 for a clean file).
        first_dropped_line: 1-based line number of the first dropped line, or ``None``.
        reason: the error that made the lenient load stop, or ``None``.
        truncated: ``True`` when the dropped line was the last one, cut mid-write.
    """

    dropped_lines: int = 0
    first_dropped_line: int | None = None
    reason: str | None = None
    truncated: bool = False


class Cassette(Sequence[Entry]):
    """A loaded cassette: a read-only sequence of ``Entry`` in ``seq`` (call issue) order:
    a loaded file's lines of parallel calls may stand in completion order, the load
    orders them by seq (``_loader._in_seq_order``); an in-memory one keeps the order given.

    File-backed cassettes parse an entry on access from its byte range; in-memory ones
    (``Cassette.from_entries``) hold their entries. Both expose the same index:
    ``seq(i)``, ``tool(i)``, ``key(i)`` = ``(tool, args digest under the rules)``,
    ``stored_digest(i)`` and ``line(i)``, which never parse a response.
    """

    def __init__(
        self,
        path: Path | None,
        *,
        seqs: Sequence[int],
        tools: Sequence[str],
        digests: Sequence[str | None] | None,
        stored: Sequence[str | None],
        lines: Sequence[int],
        offsets: Sequence[int] | None = None,
        lengths: Sequence[int] | None = None,
        entries: list[Entry] | None = None,
        rules: KeyRules = NO_RULES,
        report: LoadReport | None = None,
        metadata: dict[str, Any] | None = None,
        identity: FileIdentity | None = None,
        response_hashes: Sequence[int | None] | None = None,
    ) -> None:
        self.path = path
        self.rules = rules
        self.report = report or LoadReport()
        #: Free-form facts about where the cassette came from (importers fill it).
        self.metadata: dict[str, Any] = metadata or {}
        # the digests and response hashes as columns (``columns.py``): 8 bytes an entry
        self._seqs = seqs
        # 1-2 bytes an entry, not a list reference (issue 31)
        self._tools = tools if isinstance(tools, ToolColumn) else ToolColumn.of(tools)
        self._digests = as_digest_column(digests) if digests is not None else None
        self._stored, self._lines = as_digest_column(stored), lines
        self._offsets, self._lengths, self._entries = offsets, lengths, entries
        self._cache: OrderedDict[int, Entry] = OrderedDict()
        self._seq_pos: dict[int, int] | None = None
        #: the positions of parsed entries whose line msgspec refused (``exotic``)
        self._exotic: set[int] = set()
        #: per entry, a hash of its response's bytes as stored (see ``response_hashes``);
        #: computed with the digests, on first use, for a file-backed cassette (or by a
        #: load with ``keys=True``, with the digests)
        self._response_hashes = (
            as_hash_column(response_hashes) if response_hashes is not None else None
        )
        self._keys_lock = threading.Lock()
        #: the file descriptor entry access reads with (``raw_line``), opened on first use
        self._fd: int | None = None
        #: the file as the load read it: the offsets hold only for that file
        self._identity = identity
        #: one thread computes the keys while others wait for them
        self._compute_lock = threading.Lock()

    # -- construction ------------------------------------------------------------------
    @classmethod
    def from_entries(
        cls,
        entries: Iterable[Entry],
        *,
        path: str | Path | None = None,
        rules: KeyRules = NO_RULES,
        metadata: dict[str, Any] | None = None,
    ) -> Cassette:
        """An in-memory cassette from entries (importers, tests, recorders)."""
        items = list(entries)
        return cls(
            Path(path) if path is not None else None,
            seqs=[e.seq for e in items],
            tools=[e.tool for e in items],
            digests=[digest(rules.apply(e.tool, e.args)) for e in items],
            stored=[e.args_digest for e in items],
            lines=[e.line or 0 for e in items],
            entries=items,
            rules=rules,
            metadata=metadata,
        )

    # -- Sequence --------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._seqs)

    @overload
    def __getitem__(self, index: int) -> Entry: ...
    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...
    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        # every entry handed out is a fresh copy (``Entry.fresh``): nothing a caller does
        # to its values changes the cassette, a later read or a later replay
        if isinstance(index, slice):
            return [self._entry(i).fresh() for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"entry index {index} out of range (0..{len(self) - 1})")
        return self._entry(index).fresh()

    def __iter__(self) -> Iterator[Entry]:
        for i in range(len(self)):
            yield self._entry(i).fresh()

    def __repr__(self) -> str:
        return f"<Cassette {self.path or '<memory>'} entries={len(self)}>"

    # -- index (no response parsing) ----------------------------------------------------
    def seq(self, i: int) -> int:
        return self._seqs[i]

    def tool(self, i: int) -> str:
        return self._tools[i]

    def digest(self, i: int) -> str:
        """The args digest of entry ``i`` recomputed under this cassette's rules."""
        return self.digests()[i]

    def entry_digest(self, i: int, normalized_args: Any) -> str:
        """The args digest of entry ``i`` (``digest(i)``), from its args already parsed
        and normalized under this cassette's rules (``rules.apply(tool, args)``) while the
        digests are not computed yet: a pass that parses every entry anyway (lint) need
        not read the whole file a second time for them. The same value ``digests()``
        gives (``fast_digest``, else ``digest``)."""
        digests = self._digests
        if digests is not None:
            return cast(str, digests[i])
        return fast_digest(normalized_args) or digest(normalized_args)

    def key(self, i: int) -> tuple[str, str]:
        """The replay key of entry ``i``: ``(tool, args digest)``."""
        return self._tools[i], self.digests()[i]

    def digests(self) -> Sequence[str]:
        """Every entry's args digest under this cassette's rules, in entry order (a
        ``columns.DigestColumn``: 8 bytes an entry, each text made when it is read).

        A file-backed cassette computes them on first use, in one sequential read of the
        file (``load`` does not: opening a cassette to look at it never pays for them),
        together with ``response_hashes``; thread-safe."""
        return cast(Sequence[str], self._digest_column())

    def _digest_column(self) -> DigestColumn:
        digests = self._digests
        if digests is None:
            with self._compute_lock:
                run_job(self.keys_job())
            digests = self._digests
            assert digests is not None
        return digests

    def digest_codes(self) -> array[int]:
        """Per entry, an integer two entries share (of this cassette or another) exactly
        when their ``digests()`` are equal: the digest's 8 bytes (``DigestColumn.codes``),
        compared without making a text."""
        return self._digest_column().codes

    def stored_digest(self, i: int) -> str | None:
        return self._stored[i]

    def stored_digests(self) -> Sequence[str | None]:
        """Every entry's stored ``args_digest`` (``None`` where the line has none), in
        entry order: the ``columns.DigestColumn`` the load kept (not a copy: do not change
        it)."""
        return self._stored

    def line(self, i: int) -> int:
        return self._lines[i]

    @property
    def seqs(self) -> list[int]:
        return list(self._seqs)

    @property
    def exotic_lines(self) -> set[int]:
        """The positions of the entries parsed so far whose line may hold a bare
        ``NaN``/``Infinity`` (``jsontext.parse_json_checked``: msgspec refused it, the
        standard library read it); the others certainly hold none. The set itself, filled
        as entries are parsed (``entry_batches`` fills a batch's before yielding it):
        do not change it."""
        return self._exotic

    def index_of_seq(self, seq: int) -> int | None:
        """Position of the first entry with ``seq``, or ``None``."""
        if self._seq_pos is None:
            pos: dict[int, int] = {}
            for i, s in enumerate(self._seqs):
                pos.setdefault(s, i)
            self._seq_pos = pos
        return self._seq_pos.get(seq)

    def fingerprint(self, i: int) -> int:
        """An in-process hash of entry ``i``'s outcome (response, or error): equal
        fingerprints mean equal outcomes (``outcome.entry_fingerprint``, cached there)."""
        return entry_fingerprint(self, i)

    def held(self, i: int) -> Entry | None:
        """Entry ``i`` when it is held or cached (not a copy: do not change it), else
        ``None``; never reads the file."""
        if self._entries is not None:
            return self._entries[i]
        return self._cache.get(i)

    def response_hashes(self) -> array[int]:
        """Per entry, an in-process hash of the response's bytes as stored, or
        ``columns.NO_RESPONSE_HASH`` (-1: an error entry, an in-memory cassette, a line
        read by the fallback parser), in an ``array("q")``: 8 bytes an entry. Equal
        hashes (not the mark) mean byte-identical responses, hence equal values; different
        hashes say nothing (``{"a":1}`` and ``{"a": 1}``): ``outcome.same_outcome``
        compares fingerprints then. Computed with ``digests`` (one sequential read of the
        file), cached."""
        if self._response_hashes is None:
            if self._entries is not None or self.path is None:
                self._response_hashes = array("q", [NO_RESPONSE_HASH]) * len(self)
            elif self._digests is None:
                self.digests()
            else:  # the digests came without them (a replayer's start): one pass for them
                with self._compute_lock:
                    if self._response_hashes is None:
                        self._response_hashes = run_job(self._key_pass(None))[1]
        assert self._response_hashes is not None
        return self._response_hashes

    def spill_columns(self) -> None:
        """Move this cassette's per-entry columns that are complete (seqs, line numbers,
        offsets and lengths, stored and computed digests, response hashes) to temporary
        files when a ``spill.spilling()`` block is open (``spill.py``: the headless
        ``diff``, issue 31); the values read the same. Nothing happens outside such a
        block. Not thread-safe: call it before other threads read the cassette."""
        from .spill import give_back, is_spilling, maybe_spilled

        if not is_spilling():
            return
        self._seqs = _spilled(self._seqs, maybe_spilled)
        self._lines = _spilled(self._lines, maybe_spilled)
        if self._offsets is not None:
            self._offsets = _spilled(self._offsets, maybe_spilled)
        if self._lengths is not None:
            self._lengths = _spilled(self._lengths, maybe_spilled)
        for column in (self._stored, self._digests):
            if column is not None and isinstance(column.codes, array):
                column.codes = maybe_spilled(column.codes)  # type: ignore[assignment]
        if self._response_hashes is not None:
            self._response_hashes = _spilled(self._response_hashes, maybe_spilled)  # type: ignore[assignment]
        self._tools.ids = maybe_spilled(self._tools.ids)
        give_back()

    @property
    def is_file_backed(self) -> bool:
        """True when entries are read from the file on access (``load``), not held."""
        return self._entries is None and self.path is not None and self._offsets is not None

    def line_spans(self) -> tuple[Sequence[int], Sequence[int]] | None:
        """``(offsets, lengths)``: where each entry's line is in the file, in bytes (sorted
        by offset, file order), for a file-backed cassette; ``None`` for one held in memory.
        """
        if not self.is_file_backed:
            return None
        assert self._offsets is not None and self._lengths is not None
        return self._offsets, self._lengths

    def lines_bytes(self) -> Iterator[tuple[int, bytes]]:
        """``(i, line bytes)`` for every entry of a file-backed cassette, read in order in
        large chunks (memory stays a few MB whatever the file size).

        Raises:
            CassetteFormatError: the file is gone or unreadable now.
        """
        assert self.path is not None and self._offsets is not None
        assert self._lengths is not None
        yield from _read_spans(self.path, self._offsets, self._lengths, self._identity)

    def keys_job(self, cancel: CancelToken | None = None) -> JobGenerator[Sequence[str]]:
        """``digests()`` as a job: yields ``Progress(stage="keys", unit="entries")`` while a
        file-backed cassette computes its digests and response hashes (nothing to do when
        they are known); returns the digests. Raises ``Cancelled`` when ``cancel`` is set
        (checked every few thousand entries; nothing is kept then)."""
        if self._digests is not None:
            return cast(Sequence[str], self._digests)
        digests, hashes = yield from self._key_pass(cancel)
        with self._keys_lock:
            if self._digests is None:
                self._response_hashes = hashes
                self._digests = digests
            return cast(Sequence[str], self._digests)

    def _key_pass(
        self, cancel: CancelToken | None
    ) -> JobGenerator[tuple[DigestColumn, array[int]]]:
        """Every entry's args digest under the rules, and the hash of its response's bytes
        (``columns.NO_RESPONSE_HASH`` for an error entry or a line read by the fallback
        parser), in one sequential read of the file (``_line_keys.LineKeys``: the same
        keys a load with ``keys=True`` computes as it reads)."""
        n = len(self)
        tools, lines = self._tools, self._lines
        # columns (``columns.py``), the digests converted a batch at a time
        digests = DigestColumn()
        hashes = array("q")
        batch: list[str] = []
        decode = _KEYED.decode
        of_line = LineKeys(self.path, self.rules).of_line
        stage = self.path.name if self.path is not None else ""
        # while spilling (``spill.py``): both columns go to temporary files a batch at a
        # time, never whole in memory (the digests while every one is of the standard form)
        spools = (
            (_spill.Spool("Q"), _spill.Spool("q"))
            if _spill.is_spilling() and n >= _spill.SPILL_MIN_ITEMS
            else None
        )
        for i, raw in self.lines_bytes():
            if not i & 4095:
                digests.extend(batch)
                batch.clear()
                if spools is not None and len(hashes) >= _KEY_SPOOL_BATCH:
                    spools[1].add(hashes)
                    hashes = array("q")
                    if digests.all_standard:
                        spools[0].add(digests.codes)
                        digests.codes = array("Q")
                yield Progress("keys", i, n, "entries", stage)
                if cancel is not None:
                    cancel.raise_if_cancelled()
            try:
                keyed = decode(raw)
                args_bytes = bytes(keyed.args)
                args_raw: bytes | None = args_bytes
                response = keyed.response
                nonfinite = NONFINITE_MARK in args_bytes
            except (msgspec.DecodeError, RecursionError):
                args_raw = response = None
                nonfinite = NONFINITE_MARK in raw
            made, hashed = of_line(tools[i], lines[i], args_raw, response, nonfinite, raw)
            batch.append(made)
            hashes.append(hashed)
        digests.extend(batch)
        if spools is not None:
            hashes = spools[1].view(hashes)
            if digests.all_standard:
                digests.codes = spools[0].view(digests.codes)
            else:  # a digest of another form: the column back in memory, whole
                digests = digests.after(spools[0].view(array("Q")))
        yield Progress("keys", n, n, "entries", stage)
        return digests, hashes

    def _set_digests(self, digests: list[str]) -> None:
        """Keep the replay keys a pass over every line computed (the same values as
        ``keys_job``, held as a ``DigestColumn``), unless another thread kept its own
        first; the response hashes are then computed when asked for (``response_hashes``:
        a replay never asks)."""
        column = as_digest_column(digests)
        with self._keys_lock:
            if self._digests is None:
                self._digests = column

    def checked_answers(self) -> Answers | None:
        """Check every entry of a file-backed cassette fully, once, as its parse would
        (``_answers.check_every_line``: the replayer's start), computing the replay keys
        in the same read; return where each plain response lies, for calls to read and
        decode afresh (``Answers.read``). ``None`` for a cassette held in memory (its
        entries are parsed values already).

        Raises:
            CassetteFormatError: a line that does not parse or breaks a rule (file, line,
                field), or the file changed since the load.
        """
        if not self.is_file_backed:
            return None
        return check_every_line(self)

    def entry_view(self, i: int) -> Entry:
        """Entry ``i`` as held or cached, not a copy (``self[i]`` hands out copies): for
        engine code that only reads it (the drift of a row). Do not change it."""
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"entry index {i} out of range (0..{len(self) - 1})")
        return self._entry(i)

    def owned_entry(self, i: int) -> Entry:
        """Entry ``i`` as a new object the caller owns (may hand out and let be changed):
        a file-backed cassette parses it afresh from its line, outside the cache (no copy:
        a replay serves most entries once, and the copy of a parsed response cost more
        than its parse); an in-memory one gives ``self[i]``'s copy.

        Raises:
            CassetteFormatError: its line does not parse (file, line, field).
        """
        if self._entries is not None or self._offsets is None or self.path is None:
            return self._entry(i).fresh()  # not file-backed (``is_file_backed``, inline)
        return self._parse_entry(i)

    def raw_line(self, i: int) -> bytes:
        """The bytes of entry ``i`` as stored (file-backed) or as it would be written."""
        if self._entries is not None or self.path is None:
            return dump_record(self._entry(i).to_record(self.digest(i)))
        assert self._offsets is not None and self._lengths is not None
        fd = self._fd
        if fd is None:
            fd = self._open_fd(self.path)
        try:
            # one positioned read on a descriptor kept open: no seek, safe across threads
            raw = os.pread(fd, self._lengths[i], self._offsets[i])
        except OSError as exc:
            raise CassetteFormatError.from_os_error(self.path, exc) from None
        if len(raw) < self._lengths[i]:  # cut since the descriptor was opened
            raise changed_error(self.path, "cut since it was opened")
        return raw

    def _open_fd(self, path: Path) -> int:
        """The descriptor entry access reads with, opened once (by one thread) and checked
        to be the file the load read (``_guard.check_same_file``)."""
        with self._keys_lock:
            if self._fd is None:
                try:
                    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
                except OSError as exc:
                    raise CassetteFormatError.from_os_error(path, exc) from None
                try:
                    check_same_file(path, fd, self._identity)
                except BaseException:
                    os.close(fd)
                    raise
                self._fd = fd
            return self._fd

    def close(self) -> None:
        """Close the file a file-backed cassette keeps open for entry access (reopened if
        an entry is read again). Also done when the cassette is garbage-collected."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            with contextlib.suppress(OSError):  # already closed
                os.close(fd)

    def _entry(self, i: int) -> Entry:
        if self._entries is not None:
            return self._entries[i]
        cached = self._cache.get(i)
        if cached is not None:
            self._cache.move_to_end(i)
            return cached
        entry = self._parse_entry(i)
        self._cache[i] = entry
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return entry

    def entries_read(
        self, start: int = 0, stop: int | None = None
    ) -> Iterator[tuple[int, Entry, bytes | None]]:
        """``(i, entry, line bytes)`` for every entry ``start <= i < stop`` (all of them by
        default) in order, for one pass that reads them all (lint, the secret scan): a
        file-backed cassette reads its lines sequentially in large chunks and parses each
        once, without the cache (the bytes let a caller skip work a line cannot need); an
        in-memory one gives its entries and ``None``. The entries are not copies: do not
        change them.

        Raises:
            CassetteFormatError: an entry that does not parse (file, line, field).
        """
        stop = len(self) if stop is None else min(stop, len(self))
        if not self.is_file_backed:
            for i in range(start, stop):
                yield i, self._entry(i), None
            return
        assert self.path is not None and self._offsets is not None
        assert self._lengths is not None
        spans = _read_spans(
            self.path, self._offsets[start:stop], self._lengths[start:stop], self._identity
        )
        for k, raw in spans:
            yield start + k, self._parse_entry(start + k, raw), raw

    def entry_batches(
        self, start: int = 0, stop: int | None = None
    ) -> Iterator[tuple[int, list[Entry], list[bytes | None]]]:
        """``entries_read(start, stop)`` a batch at a time (``batching.batch_full``: a
        count of entries, or bytes of lines): ``(position of the batch's first entry, its
        entries, their lines' bytes or ``None``)``, the same entries and bytes in the same
        order. For a pass over every entry (``check``): one generator step a batch instead
        of one an entry, the parse inline.

        Raises:
            CassetteFormatError: as ``entries_read``.
        """
        stop = len(self) if stop is None else min(stop, len(self))
        if not self.is_file_backed:
            entries: list[Entry] = []
            for i in range(start, stop):
                entries.append(self._entry(i))
                if batch_full(len(entries), 0):
                    yield i + 1 - len(entries), entries, [None] * len(entries)
                    entries = []
            if entries:
                yield stop - len(entries), entries, [None] * len(entries)
            return
        assert self.path is not None and self._offsets is not None
        assert self._lengths is not None
        spans = _read_spans(
            self.path, self._offsets[start:stop], self._lengths[start:stop], self._identity
        )
        checked, lines = self._checked_record, self._lines
        i = start
        while True:
            first = i
            parsed: list[Entry] = []
            raws: list[bytes | None] = []
            size = 0
            for _, raw in spans:
                parsed.append(entry_from_record(checked(i, raw), lines[i]))
                raws.append(raw)
                i += 1
                size += len(raw)
                if batch_full(len(raws), size):
                    break
            if not raws:
                return
            yield first, parsed, raws

    def _parse_entry(self, i: int, raw: bytes | None = None) -> Entry:
        """Parse entry ``i`` from its bytes (``raw``, else read). The load skipped its
        response; a bad one is reported here as a ``CassetteFormatError`` naming the file,
        line and field."""
        if raw is None:
            raw = self.raw_line(i)
        return entry_from_record(self._checked_record(i, raw), self._lines[i])

    def _checked_record(self, i: int, raw: bytes) -> dict[str, Any]:
        """Entry ``i``'s line ``raw`` parsed and checked by the engine's rules and format
        v1, as a record (``_parse_entry`` without the ``Entry``).

        Raises:
            CassetteFormatError: as ``_parse_entry``.
        """
        try:
            record, exotic = parse_json_checked(raw)
        except DuplicateKey as exc:  # in a value the load did not read: the line is bad
            raise CassetteFormatError(
                self.path,
                self._lines[i],
                error_field(exc, raw) or "response",
                json_reason(exc, raw),
            ) from None
        except (ValueError, UnicodeDecodeError) as exc:
            self._refuse_if_changed()  # the offsets fall mid-line in a file written since
            raise CassetteFormatError(
                self.path,
                self._lines[i],
                error_field(exc, raw) or "response",
                json_reason(exc, raw),
            ) from None
        if not (
            isinstance(record, dict)
            and record.get("seq") == self._seqs[i]
            and record.get("tool") == self._tools[i]
        ):
            # the load indexed another line at this offset: the file was written since
            self._refuse_if_changed()
            validate_record(record, self.path, self._lines[i])
            assert self.path is not None  # file-backed
            raise changed_error(self.path, "another line at the offset the load read")
        # the seq and tool are the index's (valid: the load checked them), so a line with
        # args, a response, no error and no digest or a string one passes every rule of
        # ``validate_record``: only another shape of line takes it (same errors)
        if not (
            type(record["seq"]) is int  # equal to the index's: 1.0 and true are too
            and "args" in record
            and "response" in record
            and "error" not in record
            and type(record.get("args_digest", "")) is str
        ):
            validate_record(record, self.path, self._lines[i])
        if exotic:
            self._exotic.add(i)
        # "$" first: one byte is found at memory speed, a longer pattern is not
        if 0x24 in raw and raw.find(NONFINITE_MARK) >= 0:
            record = decode_nonfinite(record)
        return record

    def _refuse_if_changed(self) -> None:
        """Raise the "changed on disk" error when the file at ``path`` is not, now, the one
        the load read, grown included: called when an entry's bytes are not what the load
        indexed there, to name the cause instead of a JSON error at the wrong line."""
        if self._identity is None or self.path is None:
            return
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise CassetteFormatError.from_os_error(self.path, exc) from None
        what = how_changed(st, self._identity, appended_ok=False)
        if what is not None:
            raise changed_error(self.path, what)

    def first(self, n: int) -> Cassette:
        """A cassette of the first ``n`` entries of this one (all of them when ``n`` is
        larger): the same file and rules, the index and any keys computed so far cut to
        ``n`` (no read)."""
        if n >= len(self):
            return self
        n = max(n, 0)
        entries = self._entries
        digests, hashes = self._digests, self._response_hashes
        offsets, lengths = self._offsets, self._lengths
        return Cassette(
            self.path,
            seqs=self._seqs[:n],
            tools=self._tools[:n],
            digests=digests[:n] if digests is not None else None,
            stored=self._stored[:n],
            lines=self._lines[:n],
            offsets=offsets[:n] if offsets is not None else None,
            lengths=lengths[:n] if lengths is not None else None,
            entries=entries[:n] if entries is not None else None,
            rules=self.rules,
            report=self.report,
            metadata=dict(self.metadata),
            identity=self._identity,
            response_hashes=hashes[:n] if hashes is not None else None,
        )

    def with_rules(self, rules: KeyRules) -> Cassette:
        """The same cassette with digests recomputed under other normalization rules."""
        entries = self._entries
        digests = None if entries is None else [digest(rules.apply(e.tool, e.args)) for e in self]
        return Cassette(
            self.path,
            seqs=self._seqs,
            tools=self._tools,
            digests=digests,
            stored=self._stored,
            lines=self._lines,
            offsets=self._offsets,
            lengths=self._lengths,
            entries=entries,
            rules=rules,
            report=self.report,
            metadata=dict(self.metadata),
            identity=self._identity,
        )


class _Keyed(msgspec.Struct, gc=False):
    """A cassette line as the key pass reads it: the args and the response kept raw (the
    args are built next, and checked for a repeated key like ``parse_json`` does)."""

    args: msgspec.Raw
    response: msgspec.Raw = _NO_RAW


_KEYED = msgspec.json.Decoder(_Keyed)


def _read_spans(
    path: Path,
    offsets: Sequence[int],
    lengths: Sequence[int],
    identity: FileIdentity | None = None,
) -> Iterator[tuple[int, bytes]]:
    """``(i, bytes)`` of each span ``offsets[i]:offsets[i] + lengths[i]`` of the file,
    read in chunks of ``readahead.CHUNK`` bytes. The spans are mostly in increasing order;
    one that starts before the chunk held (a parallel call's line, ordered by seq) is read
    again from its offset.

    Raises:
        CassetteFormatError: the file cannot be read, or is not the file ``identity``
            describes (see ``_guard.check_same_file``).
    """
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise CassetteFormatError.from_os_error(path, exc) from None
    with fh:
        check_same_file(path, fh.fileno(), identity)
        chunk = readahead.CHUNK
        buf = b""
        base = 0  # file offset of buf[0]
        for i in range(len(offsets)):
            off = offsets[i]
            end = off + lengths[i]
            if off < base or end > base + len(buf):
                fh.seek(off)
                buf = fh.read(max(chunk, end - off))
                base = off
                if end > base + len(buf):  # the file was cut while it was read
                    raise changed_error(path, "cut while it was read")
            yield i, buf[off - base : end - base]


def _spilled(column: Any, spill: Any) -> Any:
    """``spill(column)`` for an ``array`` column; a ``range`` or a list is kept."""
    return spill(column) if isinstance(column, array) else column
