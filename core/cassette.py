"""Reading and writing cassette files (docs/architecture.md, "The cassette format, version 1").

A cassette opens in one pass that validates every line and keeps a compact index (byte
offset, length, line number, seq, tool, stored digest, recomputed args digest) without
holding the responses: an entry is parsed again from its bytes when it is asked for, and a
small LRU cache keeps the ones in use. The file is read in 4 MB chunks and each line is
indexed from offsets into the chunk: only the line's text around its response is parsed
(the response is cut out, see ``_parse_header``), so the cost is a few bytes scans, one
small parse and one digest per line. A 100k-entry, 170 MB file opens in about 0.6 s with
under 100 MB (see ``benchmarks/bench_load.py``), where the article's
``json.loads``-everything reference needs 2.4 s (long strings) to 6 s (many small values)
and 0.6-0.9 GB.
"""

from __future__ import annotations

import gc
import hashlib
import json
import mmap
import re
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import orjson

from .atomic import write_atomic
from .digest import DIGEST_PREFIX, digest
from .entry import KNOWN_FIELDS, Entry
from .errors import CassetteFormatError
from .jsontext import (
    UTF8_BOM,
    DuplicateKey,
    JSONTooDeep,
    loads_std,
    parse_json,
    parse_json_checked,
)
from .normalize import NormalizationRules
from .outcome import Outcome, outcome_fingerprint
from .readable import open_regular

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
_NO_RULES = NormalizationRules()


def _parse_json(raw: bytes) -> Any:
    """One cassette line, by the engine's one parser (``jsontext.parse_json``)."""
    return parse_json(raw)


_RESPONSE_KEY = b'"response":'
_RESPONSE_LEN = len(_RESPONSE_KEY)
_SEQ_KEY = b'"seq":'
#: keys that a cut response may hide (the line is then parsed in full)
_ERROR_KEY = b'"error":'
_DIGEST_KEY = b'"args_digest":'
#: bytes read at a time: large enough that the per-read cost vanishes, small enough that
#: the buffer stays a few MB whatever the file size
_CHUNK = 1 << 22


def _parse_header(raw: bytes) -> tuple[Any, bool]:
    """Parse one line for the index without parsing its response, when that is safe.

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


def _fast_digest(value: Any) -> str:
    """``digest(value)`` for values parsed by orjson (no NaN, infinity or big integers):
    from orjson's sorted output where it is byte-identical to the canonical JSON (see
    ``_orjson_digest``), else the standard library."""
    return _orjson_digest(value) or digest(value)


#: orjson's sorted output is the canonical JSON unless it holds non-ASCII text or DEL,
#: an exponent (also how orjson returns an integer past 64 bits: as a float) or a tiny float
_NOT_CANONICAL = re.compile(rb"[\x7f-\xff]|\d[eE]|0\.0000")


def _orjson_digest(value: Any) -> str | None:
    """``digest(value)`` from orjson's sorted output, or ``None`` when that output may not
    be the canonical JSON (see ``_NOT_CANONICAL``) or orjson cannot write the value."""
    try:
        out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None
    if _NOT_CANONICAL.search(out) is not None:
        return None
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
    file, the line and the field. Rules: an object; ``seq`` a positive integer; ``tool`` a
    non-empty string; ``args`` present; exactly one of ``response``/``error``; ``error`` an
    object with string ``type`` and ``message``; ``args_digest`` a string when present."""

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
        seqs: list[int],
        tools: list[str],
        digests: list[str],
        stored: list[str | None],
        lines: list[int],
        offsets: list[int] | None = None,
        lengths: list[int] | None = None,
        entries: list[Entry] | None = None,
        rules: NormalizationRules = _NO_RULES,
        report: LoadReport | None = None,
        metadata: dict[str, Any] | None = None,
        spans: tuple[list[int], list[int]] | None = None,
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
        #: where each line's response text is, relative to the line's start (-1: not
        #: known, the line was parsed in full); see ``response_hashes``
        self._spans = spans
        self._response_hashes: list[int | None] | None = None

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
        return self._digests[i]

    def key(self, i: int) -> tuple[str, str]:
        """The replay key of entry ``i``: ``(tool, args digest)``."""
        return self._tools[i], self._digests[i]

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
                try:
                    parsed, exotic = parse_json_checked(self.raw_line(i))
                except ValueError:
                    # a response the load did not parse is bad: reading the entry raises
                    # the error that names the file, the line and the field
                    fp = Outcome.of_entry(self._entry(i)).fingerprint()
                else:
                    fp = Outcome.of_record(parsed).fingerprint(finite=not exotic)
            self._fingerprints[i] = fp
        return fp

    def response_hashes(self) -> list[int | None]:
        """Per entry, an in-process hash of the response's bytes as stored, or ``None``
        (an error entry, an in-memory cassette, a line the load parsed in full). Equal
        hashes mean byte-identical responses, hence equal values; different hashes say
        nothing (``{"a":1}`` and ``{"a": 1}``): compare ``fingerprint`` then. One
        sequential read of the file on first call, cached."""
        hashes = self._response_hashes
        if hashes is not None:
            return hashes
        n = len(self)
        hashes = [None] * n
        if self._spans is not None and self.path is not None and n:
            assert self._offsets is not None
            starts, ends = self._spans
            offsets = self._offsets
            try:
                with (
                    open(self.path, "rb") as fh,
                    mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm,
                ):
                    for i in range(n):
                        s = starts[i]
                        if s >= 0:
                            off = offsets[i]
                            hashes[i] = hash(mm[off + s : off + ends[i]])
            except (OSError, ValueError):  # the file changed or went away: no shortcut
                hashes = [None] * n
        self._response_hashes = hashes
        return hashes

    def raw_line(self, i: int) -> bytes:
        """The bytes of entry ``i`` as stored (file-backed) or as it would be written."""
        if self._entries is not None or self.path is None:
            return _dump_line(self._entry(i).to_record(self._digests[i]))
        assert self._offsets is not None and self._lengths is not None
        with open(self.path, "rb") as fh:
            fh.seek(self._offsets[i])
            return fh.read(self._lengths[i])

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

    def _parse_entry(self, i: int) -> Entry:
        """Parse entry ``i`` from its bytes. The load skipped its response; a bad one is
        reported here as a ``CassetteFormatError`` naming the file, line and field."""
        raw = self.raw_line(i)
        try:
            record = _parse_json(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CassetteFormatError(
                self.path, self._lines[i], _error_field(exc) or "response", _json_reason(exc, raw)
            ) from None
        validate_record(record, self.path, self._lines[i])
        return entry_from_record(record, self._lines[i])

    def with_rules(self, rules: NormalizationRules) -> Cassette:
        """The same cassette with digests recomputed under other normalization rules."""
        entries = self._entries
        digests = [digest(rules.apply(e.tool, e.args)) for e in self]
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
            spans=self._spans,
        )


def load(
    path: str | Path,
    *,
    lenient: bool = False,
    rules: NormalizationRules | None = None,
) -> Cassette:
    """Open the cassette at ``path`` (UTF-8 JSON Lines, format v1) and index it.

    Blank lines are skipped. Every line is validated (see ``validate_record``) but only
    seq, tool and the args digest are kept; responses are parsed again on access.

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
    rules = rules or _NO_RULES
    p = Path(path)
    fh = open_regular(p)  # a FIFO, a device or a directory: an error, never a hang

    seqs: list[int] = []
    tools: list[str] = []
    digests: list[str] = []
    stored: list[str | None] = []
    lines: list[int] = []
    offsets: list[int] = []
    lengths: list[int] = []
    span_starts: list[int] = []  # the response's text, relative to the line's start
    span_ends: list[int] = []
    tool_names: dict[str, str] = {}  # interning: a few tool names, 100k references
    report = LoadReport()
    apply = rules.apply
    identity = rules.is_empty
    loads = parse_json
    hidden = (_ERROR_KEY, _DIGEST_KEY)

    gc_was_enabled = gc.isenabled()
    gc.disable()  # nothing cyclic is built here; the collector would double the time
    try:
        with fh:
            lineno = 0
            pending_error: CassetteFormatError | None = None
            base = 0  # file offset of buf[0]
            buf = fh.read(_CHUNK)
            pos = len(UTF8_BOM) if buf.startswith(UTF8_BOM) else 0  # an editor's BOM
            eof = not buf
            while True:
                find = buf.find
                rfind = buf.rfind
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
                    record = None
                    if pending_error is None and buf[start] == 0x7B:  # "{"
                        # Fast path (see _parse_header): the response text cut out and
                        # replaced by null, found by bytes methods without copying the line.
                        r = find(_RESPONSE_KEY, start, nl)
                        close = nl - 1
                        if buf[close] == 0x0D:  # CRLF
                            close -= 1
                        if r > 0 and buf[close] == 0x7D and nl < len(buf):
                            vs = r + _RESPONSE_LEN
                            cut = close
                            j = rfind(_SEQ_KEY, vs, close)
                            if j > vs:
                                k = rfind(b",", vs, j)
                                if k > vs and (k + 1 == j or not buf[k + 1 : j].strip()):
                                    cut = k
                            if find(hidden[0], vs, cut) < 0 and find(hidden[1], vs, cut) < 0:
                                try:
                                    record = loads(buf[start:vs] + b"null" + buf[cut : close + 1])
                                except ValueError:
                                    record = None
                    if record is not None:
                        # the checks of validate_record, inline; anything else (and a cut
                        # that hit a nested "seq") goes to the general path, which decides
                        got_seq = record.get("seq") if type(record) is dict else None
                        got_tool = record.get("tool") if got_seq is not None else None
                        digest_stored = record.get("args_digest") if got_tool else None
                        if (
                            type(got_seq) is int
                            and got_seq > 0
                            and type(got_tool) is str
                            and got_tool
                            and "response" in record
                            and record["response"] is None
                            and "args" in record
                            and "error" not in record
                            and (type(digest_stored) is str or "args_digest" not in record)
                        ):
                            seq = got_seq
                            tool = tool_names.setdefault(got_tool, got_tool)
                            args = record["args"]
                            # None when orjson's text may differ from the canonical one,
                            # or an integer past 64 bits came back as a float
                            got_key = _orjson_digest(args if identity else apply(tool, args))
                            if got_key is None:
                                record = None
                            else:
                                key = got_key
                                span_start, span_end = vs - start, cut - start
                        else:
                            record = None
                    if record is None:
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
                            continue
                        try:
                            record, fast = _parse_header(raw)
                        except (ValueError, UnicodeDecodeError) as exc:
                            truncated = not raw.endswith(b"\n")
                            why = _json_reason(exc, raw)
                            if truncated:
                                why = (
                                    "last line is cut mid-write (a crash while recording?): " + why
                                )
                            pending_error = CassetteFormatError(
                                p, lineno, _error_field(exc), why, truncated=truncated
                            )
                            report = LoadReport(1, lineno, str(pending_error), truncated)
                            continue
                        try:
                            validate_record(record, p, lineno)
                        except CassetteFormatError as exc:
                            pending_error = exc
                            report = LoadReport(1, lineno, str(exc), False)
                            continue
                        seq = record["seq"]
                        tool = record["tool"]
                        digest_stored = record.get("args_digest")
                        tool = tool_names.setdefault(tool, tool)
                        args = record["args"]
                        value = args if identity else apply(tool, args)
                        key = _fast_digest(value) if fast else digest(value)
                        span_start = span_end = -1
                    seqs.append(seq)
                    tools.append(tool)
                    digests.append(key)
                    stored.append(digest_stored)
                    lines.append(lineno)
                    offsets.append(base + start)
                    lengths.append(pos - start if pos <= len(buf) else len(buf) - start)
                    span_starts.append(span_start)
                    span_ends.append(span_end)
                if eof:
                    break
                # the partial last line moves to the front of the next chunk
                chunk = fh.read(_CHUNK)
                eof = not chunk
                base += pos
                buf = buf[pos:] + chunk
                pos = 0
            if pending_error is not None and not lenient:
                raise pending_error
    finally:
        if gc_was_enabled:
            gc.enable()
    return Cassette(
        p,
        seqs=seqs,
        tools=tools,
        digests=digests,
        stored=stored,
        lines=lines,
        offsets=offsets,
        lengths=lengths,
        rules=rules,
        report=report,
        spans=(span_starts, span_ends),
    )


def _count_dropped(report: LoadReport) -> LoadReport:
    return LoadReport(report.dropped_lines + 1, report.first_dropped_line, report.reason, False)


def _error_field(exc: Exception) -> str | None:
    """The field a parse error is in, when the error knows it: the top-level key holding
    a repeated key (or the repeated key itself, at the top level)."""
    if isinstance(exc, DuplicateKey):
        return str(exc.parts[0]) if exc.parts else exc.key
    return None


def _json_reason(exc: Exception, raw: bytes) -> str:
    if isinstance(exc, DuplicateKey):
        return f"not valid JSON: {exc}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 at byte {exc.start}"
    if isinstance(exc, JSONTooDeep):
        return f"not valid JSON: {exc}"
    try:
        loads_std(raw)
    except JSONTooDeep as deep:
        return f"not valid JSON: {deep}"
    except json.JSONDecodeError as std:
        return f"not valid JSON: {std.msg} (column {std.colno})"
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
    text = json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
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
