"""Reading and writing cassette files (docs/format.md, "The cassette format, version 1").

A cassette opens in one pass that validates every line and keeps a compact index (byte
offset, length, line number, seq, tool, stored digest, recomputed args digest) without
holding the responses: an entry is parsed again from its bytes when it is asked for, and a
small LRU cache keeps the ones in use. The file is read in 4 MB chunks and each line is
indexed from offsets into the chunk by a msgspec struct (``_Header``) that checks the
args and the response are JSON without building them; unusual lines take a general path
(``_parse_header``). The args digests are computed on first use. For a large file a
thread reads the next chunk while this one is indexed (``readahead.py``). A 100k-entry,
170 MB file opens in about 0.3-0.45 s with under 100 MB (see ``benchmarks/bench_load.py``),
where the article's ``json.loads``-everything reference needs 3-3.7 s (long strings) to
6-10 s (many small values) and 0.6-0.9 GB.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, overload

import msgspec
import orjson

from ..keys.normalize import NormalizationRules
from .atomic import write_atomic
from .digest import DIGEST_PREFIX, digest
from .entry import KNOWN_FIELDS, Entry
from .errors import CassetteFormatError
from .gcpause import no_cyclic_gc
from .jobs import CancelToken, JobGenerator, Progress, run_job
from .jsontext import (
    UTF8_BOM,
    DuplicateKey,
    JSONTooDeep,
    check_top_level_keys,
    json_error_text,
    loads_std,
    may_have_duplicates,
    parse_json,
    parse_json_checked,
)
from .jsonvalue import NONFINITE_MARK, decode_nonfinite, encode_nonfinite, has_nonfinite
from .outcome import Outcome, outcome_fingerprint
from .readable import open_regular
from .readahead import read_chunks

__all__ = [
    "Cassette",
    "LoadReport",
    "dump_line",
    "entry_from_record",
    "load",
    "outcome_fingerprint",
    "save",
    "validate_record",
]

_CACHE_SIZE = 512
#: the largest seq (the index keeps seqs as 64-bit integers)
MAX_SEQ = 2**63 - 1
_NO_RULES = NormalizationRules()


def _parse_json(raw: bytes) -> Any:
    """One cassette line, by the engine's one parser (``jsontext.parse_json``)."""
    return parse_json(raw)


#: bytes read at a time: large enough that the per-read cost vanishes, small enough that
#: the buffer stays a few MB whatever the file size
_CHUNK = 1 << 22
#: a field absent from a line (``msgspec.Raw`` of no bytes)
_NO_RAW = msgspec.Raw()


_RESPONSE_KEY = b'"response":'
_SEQ_KEY = b'"seq":'


def _parse_header(raw: bytes) -> tuple[Any, bool]:
    """Parse one line without parsing its response, when that is safe (format detection
    reads a first line whose response may be broken this way; the loader reads headers
    with ``_HEADER``).

    The response value is cut out and replaced by ``null`` before parsing, for the two
    layouts writers produce: sorted keys (``..."response": R, "seq": N, "tool": T}``) and
    response last (``..."response": R}``). The cut is used only when the rest parses as an
    object whose ``response`` is that ``null``, the cut text holds no ``"error":`` key and
    the line ends with a newline (a last line cut mid-write is always parsed in full).
    The response itself is parsed, and checked, when the entry is read (a bad one raises
    ``CassetteFormatError`` then, naming the line and the field ``response``). Otherwise
    the whole line is parsed. Returns ``(record, finite)``: ``finite`` when the record
    certainly holds no ``NaN``/``Infinity`` (see ``jsontext.parse_json_checked``).
    """
    start = raw.find(_RESPONSE_KEY)
    if start > 0 and raw[-1:] == b"\n":
        vs = start + len(_RESPONSE_KEY)
        close = len(raw) - 1
        while close > vs and raw[close] in b" \t\r\n":
            close -= 1
        if raw[close] == 0x7D:  # "}"
            ends = []
            j = raw.rfind(_SEQ_KEY, vs, close)
            if j > vs:
                k = raw.rfind(b",", vs, j)
                if k > vs and not raw[k + 1 : j].strip():
                    ends.append(k)
            ends.append(close)
            for end in ends:
                # a cut that would hide another key (error, args_digest, ...) after the
                # response: parse the whole line instead
                cut = raw[vs:end]
                if b'"error":' in cut or b'"args_digest":' in cut:
                    break
                head = raw[:vs] + b"null" + raw[end : close + 1]
                try:
                    record, exotic = parse_json_checked(head)
                except DuplicateKey:
                    break  # named by the full parse below
                except ValueError:
                    continue
                if (
                    isinstance(record, dict)
                    and record.get("response", 0) is None
                    and "seq" in record
                    and "tool" in record
                    and "args" in record
                ):
                    return record, not exotic
    record, exotic = parse_json_checked(raw)
    return record, not exotic


#: digits as ``0`` and ``E`` as ``e``: a digit before an exponent mark reads ``0e``
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789E", b"000000000e")


def _may_not_be_canonical(out: bytes) -> bool:
    """Whether orjson's sorted output ``out`` may not be the canonical JSON: it holds
    non-ASCII text or DEL, a digit before ``e``/``E`` (an exponent; also how orjson
    returns an integer past 64 bits: as a float) or ``0.0000`` (a tiny float). The
    regex ``[\\x7f-\\xff]|\\d[eE]|0\\.0000`` says the same; these byte tests take half its
    time on a line's args (the digest of every entry, ``check``)."""
    return (
        not out.isascii()
        or b"\x7f" in out
        or b"0.0000" in out
        or b"0e" in out.translate(_DIGITS_AS_ZERO)
    )


def _sorted_json(value: Any) -> bytes | None:
    """orjson's sorted output for ``value``, or ``None`` when orjson cannot write it."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


def _orjson_digest(value: Any, out: bytes | None = None) -> str | None:
    """``digest(value)`` from orjson's sorted output (``out``, when already made), or
    ``None`` when that output may not be the canonical JSON (``_may_not_be_canonical``) or
    orjson cannot write the value."""
    if out is None:
        out = _sorted_json(value)
        if out is None:
            return None
    if _may_not_be_canonical(out):
        return None
    if b"null" in out and has_nonfinite(value):
        return None  # orjson writes NaN/Infinity as null; the canonical JSON does not
    return DIGEST_PREFIX + hashlib.sha256(out).hexdigest()[:16]


def _type_name(value: Any) -> str:
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def validate_record(record: Any, path: str | Path | None, line: int | None) -> None:
    """Check one parsed line against format v1; raise ``CassetteFormatError`` naming the
    file, the line and the field. Rules: an object; ``seq`` a positive integer (at most
    ``MAX_SEQ``); ``tool`` a non-empty string; ``args`` present; exactly one of
    ``response``/``error``; ``error`` an object with string ``type`` and ``message``;
    ``args_digest`` a string when present."""

    def bad(field: str | None, reason: str) -> CassetteFormatError:
        return CassetteFormatError(path, line, field, reason)

    if not isinstance(record, dict):
        raise bad(None, f"not a JSON object (got {_type_name(record)})")
    for name in ("seq", "tool", "args"):
        if name not in record:
            raise bad(name, "missing")
    seq = record["seq"]
    if type(seq) is not int or seq < 1:
        raise bad("seq", f"expected a positive integer, got {_type_name(seq)} {seq!r:.40}")
    if seq > MAX_SEQ:
        raise bad("seq", f"{seq!r:.40} is too large: a seq is at most {MAX_SEQ} (2**63 - 1)")
    tool = record["tool"]
    if not isinstance(tool, str) or not tool:
        raise bad("tool", f"expected a non-empty string, got {_type_name(tool)} {tool!r:.40}")
    has_response, has_error = "response" in record, "error" in record
    if has_response and has_error:
        raise bad("response", "both 'response' and 'error' are present; keep exactly one")
    if not has_response and not has_error:
        raise bad("response", "neither 'response' nor 'error' is present; one is required")
    if has_error:
        err = record["error"]
        if not isinstance(err, dict):
            raise bad("error", f"expected an object {{type, message}}, got {_type_name(err)}")
        for key in ("type", "message"):
            if not isinstance(err.get(key), str):
                raise bad("error", f"'{key}' must be a string")
    if "args_digest" in record and not isinstance(record["args_digest"], str):
        raise bad("args_digest", f"expected a string, got {_type_name(record['args_digest'])}")


def entry_from_record(record: dict[str, Any], line: int | None = None) -> Entry:
    """Build an ``Entry`` from a validated record (see ``validate_record``)."""
    return Entry(
        seq=record["seq"],
        tool=record["tool"],
        args=record["args"],
        response=record.get("response"),
        error=record.get("error"),
        args_digest=record.get("args_digest"),
        extra={k: v for k, v in record.items() if k not in KNOWN_FIELDS},
        line=line,
    )


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
    """A loaded cassette: a read-only sequence of ``Entry`` in file (call) order.

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
        tools: list[str],
        digests: list[str] | None,
        stored: list[str | None],
        lines: Sequence[int],
        offsets: Sequence[int] | None = None,
        lengths: Sequence[int] | None = None,
        entries: list[Entry] | None = None,
        rules: NormalizationRules = _NO_RULES,
        report: LoadReport | None = None,
        metadata: dict[str, Any] | None = None,
        identity: FileIdentity | None = None,
    ) -> None:
        self.path = path
        self.rules = rules
        self.report = report or LoadReport()
        #: Free-form facts about where the cassette came from (importers fill it).
        self.metadata: dict[str, Any] = metadata or {}
        self._seqs, self._tools, self._digests = seqs, tools, digests
        self._stored, self._lines = stored, lines
        self._offsets, self._lengths, self._entries = offsets, lengths, entries
        self._cache: OrderedDict[int, Entry] = OrderedDict()
        self._seq_pos: dict[int, int] | None = None
        self._fingerprints: list[int | None] | None = None
        #: per entry, a hash of its response's bytes as stored (see ``response_hashes``);
        #: computed with the digests, on first use, for a file-backed cassette
        self._response_hashes: list[int | None] | None = None
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
        rules: NormalizationRules = _NO_RULES,
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
        gives (``_orjson_digest``, else ``digest``)."""
        digests = self._digests
        if digests is not None:
            return digests[i]
        return _orjson_digest(normalized_args) or digest(normalized_args)

    def key(self, i: int) -> tuple[str, str]:
        """The replay key of entry ``i``: ``(tool, args digest)``."""
        return self._tools[i], self.digests()[i]

    def digests(self) -> list[str]:
        """Every entry's args digest under this cassette's rules, in entry order.

        A file-backed cassette computes them on first use, in one sequential read of the
        file (``load`` does not: opening a cassette to look at it never pays for them),
        together with ``response_hashes``; thread-safe."""
        digests = self._digests
        if digests is None:
            with self._compute_lock:
                digests = run_job(self.keys_job())
        return digests

    def stored_digest(self, i: int) -> str | None:
        return self._stored[i]

    def line(self, i: int) -> int:
        return self._lines[i]

    @property
    def seqs(self) -> list[int]:
        return list(self._seqs)

    def index_of_seq(self, seq: int) -> int | None:
        """Position of the first entry with ``seq``, or ``None``."""
        if self._seq_pos is None:
            pos: dict[int, int] = {}
            for i, s in enumerate(self._seqs):
                pos.setdefault(s, i)
            self._seq_pos = pos
        return self._seq_pos.get(seq)

    def fingerprint(self, i: int) -> int:
        """An in-process hash of entry ``i``'s outcome (response, or error) for fast
        equality: equal fingerprints mean equal JSON values, key order ignored, ``1`` and
        ``1.0`` different. Computed on first use and cached; not stable across processes."""
        if self._fingerprints is None:
            self._fingerprints = [None] * len(self)
        fp = self._fingerprints[i]
        if fp is None:
            if self._entries is not None or i in self._cache:
                fp = Outcome.of_entry(self._entry(i)).fingerprint()
            else:
                raw = self.raw_line(i)
                try:
                    parsed, exotic = parse_json_checked(raw)
                except ValueError:
                    # a response the load did not parse is bad: reading the entry raises
                    # the error that names the file, the line and the field
                    fp = Outcome.of_entry(self._entry(i)).fingerprint()
                else:
                    if NONFINITE_MARK in raw:
                        parsed, exotic = decode_nonfinite(parsed), True
                    fp = Outcome.of_record(parsed).fingerprint(finite=not exotic)
            self._fingerprints[i] = fp
        return fp

    def outcome_bytes(self, i: int) -> tuple[bytes, bytes] | None:
        """``(response bytes, error bytes)`` of entry ``i`` as stored (one of them empty),
        read without building the values, or ``None`` (an in-memory cassette, a line the
        fast reader cannot split). Equal pairs mean equal outcomes; different pairs say
        nothing (``{"a":1}`` and ``{"a": 1}``). A bad line is reported by the entry."""
        if self._entries is not None or self.path is None:
            return None
        try:
            split = _OUTCOME.decode(self.raw_line(i))
        except (msgspec.DecodeError, RecursionError):
            return None
        return bytes(split.response), bytes(split.error)

    def response_hashes(self) -> list[int | None]:
        """Per entry, an in-process hash of the response's bytes as stored, or ``None``
        (an error entry, an in-memory cassette, a line read by the fallback parser). Equal
        hashes mean byte-identical responses, hence equal values; different hashes say
        nothing (``{"a":1}`` and ``{"a": 1}``): compare ``fingerprint`` then. Computed
        with ``digests`` (one sequential read of the file), cached."""
        if self._response_hashes is None:
            if self._entries is not None or self.path is None:
                self._response_hashes = [None] * len(self)
            else:
                self.digests()
        assert self._response_hashes is not None
        return self._response_hashes

    @property
    def is_file_backed(self) -> bool:
        """True when entries are read from the file on access (``load``), not held."""
        return self._entries is None and self.path is not None and self._offsets is not None

    def lines_bytes(self) -> Iterator[tuple[int, bytes]]:
        """``(i, line bytes)`` for every entry of a file-backed cassette, read in order in
        large chunks (memory stays a few MB whatever the file size).

        Raises:
            CassetteFormatError: the file is gone or unreadable now.
        """
        assert self.path is not None and self._offsets is not None
        assert self._lengths is not None
        yield from _read_spans(self.path, self._offsets, self._lengths, self._identity)

    def keys_job(self, cancel: CancelToken | None = None) -> JobGenerator[list[str]]:
        """``digests()`` as a job: yields ``Progress(stage="keys", unit="entries")`` while a
        file-backed cassette computes its digests and response hashes (nothing to do when
        they are known); returns the digests. Raises ``Cancelled`` when ``cancel`` is set
        (checked every few thousand entries; nothing is kept then)."""
        if self._digests is not None:
            return self._digests
        n = len(self)
        rules = self.rules
        identity = rules.is_empty
        apply = rules.apply
        tools = self._tools
        digests: list[str] = [""] * n
        hashes: list[int | None] = [None] * n
        decode = _KEYED.decode
        decode_value = msgspec.json.decode
        dup_check = may_have_duplicates
        stage = self.path.name if self.path is not None else ""
        for i, raw in self.lines_bytes():
            if not i & 4095:
                yield Progress("keys", i, n, "entries", stage)
                if cancel is not None:
                    cancel.raise_if_cancelled()
            try:
                keyed = decode(raw)
                args_raw = bytes(keyed.args)
                args, response, finite = decode_value(args_raw), keyed.response, True
            except (msgspec.DecodeError, RecursionError):
                # NaN or a lone surrogate in the args, or a response the entry access will
                # report: the line as the load read it
                try:
                    record, finite = _parse_header(raw)
                    args, response = record["args"], None
                except (ValueError, UnicodeDecodeError, KeyError, TypeError) as exc:
                    raise CassetteFormatError(
                        self.path, self._lines[i], _error_field(exc), _json_reason(exc, raw)
                    ) from None
                args_raw = b""  # the fallback parse checked the args for repeated keys
            if NONFINITE_MARK in raw:  # {"$numberDouble": ...} is read back as the float
                args, finite = decode_nonfinite(args), False
            if identity:
                # the sorted JSON that gives the digest also tells whether msgspec dropped
                # a repeated key (one colon less: see jsontext.may_have_duplicates)
                value, out = args, _sorted_json(args) if finite else None
                if args_raw and dup_check(args_raw, args, out):
                    self._refuse_repeated_args(i, args_raw, raw)
                digests[i] = (_orjson_digest(value, out) if out is not None else None) or digest(
                    value
                )
            else:
                if args_raw and b":" in args_raw and dup_check(args_raw, args):
                    self._refuse_repeated_args(i, args_raw, raw)
                value = apply(tools[i], args)
                digests[i] = (_orjson_digest(value) if finite else None) or digest(value)
            if response:
                hashes[i] = hash(bytes(response))
        yield Progress("keys", n, n, "entries", stage)
        with self._keys_lock:
            if self._digests is None:
                self._response_hashes = hashes
                self._digests = digests
            return self._digests

    def _refuse_repeated_args(self, i: int, args_raw: bytes, raw: bytes) -> None:
        """Raise ``CassetteFormatError`` (field ``args``) when the args of entry ``i`` hold
        a key twice in one object, as the entry parse would."""
        try:
            parse_json(args_raw)
        except DuplicateKey as exc:
            # the path from the entry, as the entry parse names it (``$.args``, not the top)
            within = DuplicateKey(exc.key, ("args", *exc.parts))
            raise CassetteFormatError(
                self.path, self._lines[i], "args", _json_reason(within, raw)
            ) from None

    def entry_view(self, i: int) -> Entry:
        """Entry ``i`` as held or cached, not a copy (``self[i]`` hands out copies): for
        engine code that only reads it (the drift of a row). Do not change it."""
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"entry index {i} out of range (0..{len(self) - 1})")
        return self._entry(i)

    def raw_line(self, i: int) -> bytes:
        """The bytes of entry ``i`` as stored (file-backed) or as it would be written."""
        if self._entries is not None or self.path is None:
            return _dump_line(self._entry(i).to_record(self.digest(i)))
        assert self._offsets is not None and self._lengths is not None
        fd = self._fd
        if fd is None:
            with self._keys_lock:
                if self._fd is None:
                    try:
                        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
                    except OSError as exc:
                        raise CassetteFormatError.from_os_error(self.path, exc) from None
                    try:
                        _check_same_file(self.path, fd, self._identity)
                    except BaseException:
                        os.close(fd)
                        raise
                    self._fd = fd
                fd = self._fd
        try:
            # one positioned read on a descriptor kept open: no seek, safe across threads
            raw = os.pread(fd, self._lengths[i], self._offsets[i])
        except OSError as exc:
            raise CassetteFormatError.from_os_error(self.path, exc) from None
        if len(raw) < self._lengths[i]:  # cut since the descriptor was opened
            raise _changed(self.path, "cut since it was opened")
        return raw

    def close(self) -> None:
        """Close the file a file-backed cassette keeps open for entry access (reopened if
        an entry is read again). Also done when the cassette is garbage-collected."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:  # pragma: no cover - already closed
                pass

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

    def _parse_entry(self, i: int, raw: bytes | None = None) -> Entry:
        """Parse entry ``i`` from its bytes (``raw``, else read). The load skipped its
        response; a bad one is reported here as a ``CassetteFormatError`` naming the file,
        line and field."""
        if raw is None:
            raw = self.raw_line(i)
        try:
            record = _parse_json(raw)
        except DuplicateKey as exc:  # in a value the load did not read: the line is bad
            raise CassetteFormatError(
                self.path, self._lines[i], _error_field(exc) or "response", _json_reason(exc, raw)
            ) from None
        except (ValueError, UnicodeDecodeError) as exc:
            self._refuse_if_changed()  # the offsets fall mid-line in a file written since
            raise CassetteFormatError(
                self.path, self._lines[i], _error_field(exc) or "response", _json_reason(exc, raw)
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
            raise _changed(self.path, "another line at the offset the load read")
        validate_record(record, self.path, self._lines[i])
        if NONFINITE_MARK in raw:
            record = decode_nonfinite(record)
        return entry_from_record(record, self._lines[i])

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
        what = _how_changed(st, self._identity, appended_ok=False)
        if what is not None:
            raise _changed(self.path, what)

    def with_rules(self, rules: NormalizationRules) -> Cassette:
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


@dataclass(frozen=True)
class FileIdentity:
    """The cassette file as ``load`` read it: its device and inode, its size in bytes and
    its modification time in nanoseconds (from ``fstat``). A file-backed cassette reads
    its entries later by offset, and those offsets hold only for this file."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileIdentity:
        """The identity ``st`` (an ``os.fstat`` result of the open file) describes."""
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _check_same_file(path: Path, fd: int, identity: FileIdentity | None) -> None:
    """Refuse to read entries from ``fd`` (``path`` opened again) when it is not the file
    the load indexed: another file put in its place (another inode, as an atomic save or
    an editor's write gives), or the file cut or rewritten in place (shorter, or the same
    size with another modification time). Lines appended after the load keep the indexed
    offsets right and are allowed; ``identity`` ``None`` (no load) checks nothing.

    Raises:
        CassetteFormatError: ``line`` ``None``: "changed on disk since it was loaded
            (...): load it again".
    """
    if identity is None:
        return
    try:
        st = os.fstat(fd)
    except OSError as exc:
        raise CassetteFormatError.from_os_error(path, exc) from None
    what = _how_changed(st, identity, appended_ok=True)
    if what is not None:
        raise _changed(path, what)


def _how_changed(st: os.stat_result, identity: FileIdentity, *, appended_ok: bool) -> str | None:
    """How the file ``st`` describes differs from ``identity`` (``None``: not at all, or
    only grown when ``appended_ok``)."""
    if (st.st_dev, st.st_ino) != (identity.device, identity.inode):
        return "another file is in its place"
    if st.st_size < identity.size:
        return f"cut from {identity.size} to {st.st_size} bytes"
    if st.st_mtime_ns == identity.mtime_ns or (appended_ok and st.st_size > identity.size):
        return None
    return "rewritten in place" if st.st_size == identity.size else "written to since"


def _changed(path: Path, what: str) -> CassetteFormatError:
    """The error for a cassette file that is not the one the load indexed (``line``
    ``None``): "changed on disk since it was loaded (``what``): load it again"."""
    return CassetteFormatError(
        path, None, None, f"changed on disk since it was loaded ({what}): load it again"
    )


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


class _Keyed(msgspec.Struct, gc=False):
    """A cassette line as the key pass reads it: the args and the response kept raw (the
    args are built next, and checked for a repeated key like ``parse_json`` does)."""

    args: msgspec.Raw
    response: msgspec.Raw = _NO_RAW


class _Outcome(msgspec.Struct, gc=False):
    """A cassette line's outcome as stored, its values left as bytes (``outcome_bytes``)."""

    response: msgspec.Raw = _NO_RAW
    error: msgspec.Raw = _NO_RAW


_HEADER = msgspec.json.Decoder(_Header)
_OUTCOME = msgspec.json.Decoder(_Outcome)
_KEYED = msgspec.json.Decoder(_Keyed)


def _next_chunk(chunks: Iterator[bytes], path: Path) -> bytes:
    """The next chunk of the file at ``path`` (``b""`` at its end).

    Raises:
        CassetteFormatError: the read failed (``line`` ``None``: "cannot read: ...").
    """
    try:
        return next(chunks, b"")
    except OSError as exc:
        raise CassetteFormatError.from_os_error(path, exc) from None


def _read_spans(
    path: Path,
    offsets: Sequence[int],
    lengths: Sequence[int],
    identity: FileIdentity | None = None,
) -> Iterator[tuple[int, bytes]]:
    """``(i, bytes)`` of each span ``offsets[i]:offsets[i] + lengths[i]`` of the file, the
    spans in increasing order, read in chunks of ``_CHUNK`` bytes.

    Raises:
        CassetteFormatError: the file cannot be read, or is not the file ``identity``
            describes (see ``_check_same_file``).
    """
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise CassetteFormatError.from_os_error(path, exc) from None
    with fh:
        _check_same_file(path, fh.fileno(), identity)
        buf = b""
        base = 0  # file offset of buf[0]
        for i in range(len(offsets)):
            off = offsets[i]
            end = off + lengths[i]
            if off < base or end > base + len(buf):
                fh.seek(off)
                buf = fh.read(max(_CHUNK, end - off))
                base = off
                if end > base + len(buf):  # the file was cut while it was read
                    raise _changed(path, "cut while it was read")
            yield i, buf[off - base : end - base]


def load(
    path: str | Path,
    *,
    lenient: bool = False,
    rules: NormalizationRules | None = None,
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

    Raises:
        CassetteFormatError: the file is missing or unreadable (``line`` is ``None``), or a
            line is bad (``line`` and ``field`` name it; ``truncated`` is set when it is the
            last line and was cut mid-write).
    """
    return run_job(load_job(path, lenient=lenient, rules=rules))


def load_job(
    path: str | Path,
    *,
    lenient: bool = False,
    rules: NormalizationRules | None = None,
    cancel: CancelToken | None = None,
) -> JobGenerator[Cassette]:
    """``load`` as a job: yields ``Progress(stage="load", unit="bytes")`` about every
    ``_CHUNK`` bytes (total: the file size) and returns the ``Cassette``; raises
    ``Cancelled`` when ``cancel`` is set (checked between chunks)."""
    rules = rules or _NO_RULES
    p = Path(path)
    fh = open_regular(p)  # a FIFO, a device or a directory: an error, never a hang
    try:
        st = os.fstat(fh.fileno())
    except OSError as exc:
        fh.close()
        raise CassetteFormatError.from_os_error(p, exc) from None
    size = st.st_size

    seqs = array("q")
    # an entry's line is its index + 1 but after blank lines: the index of the entry after
    # each blank line is kept, and the line numbers are built from these at the end
    after_blank: list[int] = []
    offsets = array("q")
    lengths = array("q")
    tools: list[str] = []
    stored: list[str | None] = []
    tool_names: dict[str, str] = {}  # interning: a few tool names, 100k references
    last_tool = ""
    report = LoadReport()
    decode = _HEADER.decode
    header: _Header | None
    unset = msgspec.UNSET
    header_errors = (msgspec.DecodeError, RecursionError)
    stage = p.name

    seq_lo, seq_hi, seq_len = 1, 10, 1  # seqs in [seq_lo, seq_hi) have seq_len digits
    # nothing cyclic is built here; the collector would double the time (gcpause.py)
    # the iterator is closed (its reader thread joined) before the file is
    with no_cyclic_gc(), fh, closing(read_chunks(fh, _CHUNK, size=size)) as chunks:
        lineno = 0
        pending_error: CassetteFormatError | None = None
        base = 0  # file offset of buf[0]
        # the chunk to go on in once the line across it and the one before is read
        after: bytes | None = None
        after_pos = after_base = 0
        buf = _next_chunk(chunks, p)
        pos = len(UTF8_BOM) if buf.startswith(UTF8_BOM) else 0  # an editor's BOM
        eof = not buf
        while True:
            find = buf.find
            view = memoryview(buf)
            while True:
                # -- one line: buf[pos:nl + 1] -------------------------------------
                nl = find(b"\n", pos)
                if nl < 0:
                    if not eof:
                        break
                    if pos >= len(buf):
                        break
                    nl = len(buf)  # a last line without a newline
                lineno += 1
                start = pos
                pos = nl + 1
                if pending_error is None:
                    try:
                        header = decode(view[start:nl])
                        if header.error:
                            header = None  # the general path says what is wrong
                    except header_errors:
                        header = None
                else:
                    header = None
                if header is not None:
                    seq = header.seq
                    tool = header.tool
                    if tool == last_tool:  # a str compare: cheaper than hashing it
                        tool = last_tool
                    else:
                        tool = last_tool = tool_names.setdefault(tool, tool)
                    got = header.args_digest
                    # a repeated top-level key: msgspec kept its last value, while the
                    # entry parse refuses the line. The line's length rules one out
                    # in the usual layouts (see _FRAME4); else the exact check runs
                    if not seq_lo <= seq < seq_hi:
                        seq_lo, seq_hi, seq_len = _digit_range(seq)
                    args_len = len(header.args)
                    free = nl - start - args_len - len(header.response) - len(tool) - seq_len
                    if got is unset:
                        digest_stored = None
                        plain = free == _FRAME4 or free == _FRAME4_SPACED
                    else:
                        digest_stored = got
                        free -= len(got)
                        plain = free == _FRAME5 or (
                            free == _FRAME5_SPACED
                            and (
                                (
                                    buf[start : start + 9] == b'{"args": '
                                    and (at := start + 10 + args_len) < nl
                                    and buf[at] == 0x20
                                )
                                or _spaced_seq_first(buf, start, nl, seq_len)
                            )
                        )
                    if not plain:
                        try:
                            check_top_level_keys(view[start:nl])
                        except DuplicateKey as exc:
                            pending_error = CassetteFormatError(
                                p, lineno, _error_field(exc), _json_reason(exc, b"")
                            )
                            report = LoadReport(1, lineno, str(pending_error), False)
                            continue
                else:
                    # -- general path: anything unusual, and every line after an error
                    raw = buf[start:pos]
                    if pending_error is not None:
                        if not raw.isspace():
                            # a bad line followed by more content: not a truncation
                            if not lenient:
                                raise pending_error
                            report = _count_dropped(report)
                        continue
                    if raw.isspace():
                        after_blank.append(len(seqs))
                        continue
                    try:
                        # the response cut out when that is safe: a bad response is
                        # reported when its entry is read, naming the field
                        record, _finite = _parse_header(raw)
                    except (ValueError, UnicodeDecodeError) as exc:
                        truncated = _cut_mid_write(raw)
                        why = _json_reason(exc, raw)
                        if truncated:
                            why = "last line is cut mid-write (a crash while recording?): " + why
                        pending_error = CassetteFormatError(
                            p, lineno, _error_field(exc), why, truncated=truncated
                        )
                        report = LoadReport(1, lineno, str(pending_error), truncated)
                        continue
                    try:
                        # the cut response may hide a repeated top-level key
                        check_top_level_keys(raw)
                    except DuplicateKey as exc:
                        pending_error = CassetteFormatError(
                            p, lineno, _error_field(exc), _json_reason(exc, raw)
                        )
                        report = LoadReport(1, lineno, str(pending_error), False)
                        continue
                    try:
                        validate_record(record, p, lineno)
                    except CassetteFormatError as exc:
                        pending_error = exc
                        report = LoadReport(1, lineno, str(exc), False)
                        continue
                    seq = record["seq"]
                    tool = tool_names.setdefault(record["tool"], record["tool"])
                    digest_stored = record.get("args_digest")
                seqs.append(seq)
                tools.append(tool)
                stored.append(digest_stored)
                offsets.append(base + start)
                lengths.append(pos - start)  # one too many for a last line with no newline
            view.release()
            if eof:
                break
            if after is not None:
                # the line across two chunks is read: go on in the chunk after it
                buf, pos, base, after = after, after_pos, after_base, None
                continue
            yield Progress("load", base + pos, size, "bytes", stage)
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
            # only the line across the two chunks is copied (the chunk is not: that
            # copy cost a tenth of the load): it is read on its own, then the chunk
            buf = tail + chunk[: first + 1]
            pos = 0
            after, after_pos, after_base = chunk, first + 1, base + len(tail)
        if pending_error is not None and not lenient:
            raise pending_error
        if offsets and offsets[-1] + lengths[-1] > base + len(buf):
            lengths[-1] = base + len(buf) - offsets[-1]  # a last line with no newline
    yield Progress("load", size, size, "bytes", stage)
    return Cassette(
        p,
        seqs=seqs,
        tools=tools,
        digests=None,
        stored=stored,
        lines=_line_numbers(len(seqs), after_blank),
        offsets=offsets,
        lengths=lengths,
        rules=rules,
        report=report,
        identity=FileIdentity.of(st),
    )


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
_FRAME4_SPACED = _FRAME4 + 7
_FRAME5_SPACED = _FRAME5 + 9


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


def _spaced_seq_first(buf: bytes, start: int, end: int, seq_len: int) -> bool:
    """Whether the line ``buf[start:end]`` starts ``{"seq": `` and has a space after the
    comma that follows the seq: two whitespace bytes outside the values. (The loader
    checks the sorted layout's ``{"args": `` the same way, inline. If a value begins after
    more than one space, the byte looked at may be inside it, but then the byte before the
    value is whitespace too, so two are there all the same.)"""
    if not buf.startswith(b'{"seq": ', start):
        return False
    at = start + 9 + seq_len
    return at < end and buf[at] == 0x20


def _count_dropped(report: LoadReport) -> LoadReport:
    return LoadReport(report.dropped_lines + 1, report.first_dropped_line, report.reason, False)


def _error_field(exc: Exception) -> str | None:
    """The field a parse error is in, when the error knows it: the top-level key holding
    a repeated key (or the repeated key itself, at the top level)."""
    if isinstance(exc, DuplicateKey):
        return str(exc.parts[0]) if exc.parts else exc.key
    return None


def _cut_mid_write(raw: bytes) -> bool:
    """Whether a bad line is a last line cut mid-write: no line end, and the JSON runs out
    before it is complete (an unterminated string, a missing close, a value expected at
    the end). A whole last line with a bad value inside is not cut (a tester saw it so
    called)."""
    if raw.endswith(b"\n"):
        return False
    text = raw.rstrip(b"\r\n")
    try:
        loads_std(text)
    except json.JSONDecodeError as exc:
        return exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())
    except (ValueError, UnicodeDecodeError):
        return False
    return False


def _json_reason(exc: Exception, raw: bytes) -> str:
    if isinstance(exc, DuplicateKey):
        return f"not valid JSON: {exc}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 at byte {exc.start}"
    if isinstance(exc, JSONTooDeep):
        return f"not valid JSON: {exc}"
    try:
        # without its line end: a line cut inside a string is an unterminated string,
        # not a control character (the newline) inside one
        loads_std(raw.rstrip(b"\r\n"))
    except JSONTooDeep as deep:
        return f"not valid JSON: {deep}"
    except json.JSONDecodeError as std:
        return f"not valid JSON: {json_error_text(std)}"
    except UnicodeDecodeError as ude:
        return f"not valid UTF-8 at byte {ude.start}"
    except ValueError as other:
        # e.g. an integer past Python's int_max_str_digits (4300 digits)
        return f"not readable JSON: {other}"
    return f"not valid JSON: {exc}"


def _dump_line(record: dict[str, Any]) -> bytes:
    # sorted keys like the article's record(); UTF-8 text kept readable. A lone surrogate
    # (which json.loads accepts from "\ud800") cannot be UTF-8: it is written back as its
    # JSON escape, which only ever occurs inside a JSON string, so it reads back the same.
    # strict JSON: a NaN or an infinity is written as {"$numberDouble": "NaN"} (see
    # jsonvalue), never as the bare NaN that strict parsers refuse
    try:
        text = json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        text = json.dumps(encode_nonfinite(record), sort_keys=True, ensure_ascii=False) + "\n"
    return text.encode("utf-8", "backslashreplace")


def save(
    cassette: Iterable[Entry] | Cassette,
    path: str | Path,
    *,
    overwrite: bool = False,
    rules: NormalizationRules | None = None,
) -> Path:
    """Write entries as a cassette file, atomically (temporary file + rename).

    Each line is one entry as sorted-keys JSON with ``args_digest`` recomputed under
    ``rules`` (default: the cassette's own rules, else none). Unknown fields are written
    back unchanged.

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is false.
    """
    if rules is None:
        rules = cassette.rules if isinstance(cassette, Cassette) else _NO_RULES

    def chunks() -> Iterator[bytes]:
        for entry in cassette:
            yield dump_line(entry, rules)

    return write_atomic(path, chunks(), overwrite=overwrite)


def dump_line(entry: Entry, rules: NormalizationRules | None = None) -> bytes:
    """One cassette line (UTF-8, newline-terminated) for ``entry``."""
    rules = rules or _NO_RULES
    return _dump_line(entry.to_record(digest(rules.apply(entry.tool, entry.args))))
