"""The outcome of a recorded call: what it returned, or the error it raised, and the one
place that decides whether two outcomes are equal.

- ``Outcome.of_entry(entry)`` / ``Outcome.of_record(record)``: the tag (``"response"`` or
  ``"error"``), the value, and whether it is an error (an ``error`` entry, an MCP tool
  result with ``"isError": true``, or a response carrying an HTTP 4xx/5xx status; see
  ``is_error_outcome``);
- ``outcome_fingerprint(tag, value)``: an in-process hash; equal fingerprints mean equal
  JSON values (key order ignored; ``1`` and ``1.0`` differ; ``NaN`` differs from ``null``;
  integers compared exactly at any size). Not stable across processes. Two outcomes are
  equal exactly when their fingerprints are: that is the one definition;
- ``entry_fingerprint(cassette, i)``: entry ``i``'s fingerprint, and ``outcome_index(cassette)``
  every entry's fingerprint and error flag in one sequential pass over a file-backed
  cassette (each line read by ``jsontext.parse_json``); both fill one cache per cassette;
- ``same_outcome(a, i, b, j)``: whether two entries' outcomes are equal: byte-identical
  stored responses (``Cassette.response_hashes``) are, without parsing either; otherwise
  their fingerprints are compared;
- ``same_stored_outcomes(cassette, positions)``: whether entries store the same outcome
  bytes (then their outcomes are equal), read without building the values.
"""

from __future__ import annotations

import operator
import re
import threading
import weakref
from array import array
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import msgspec

from .columns import NO_RESPONSE_HASH
from .errors import CassetteError
from .jobs import CancelToken, JobGenerator, Progress, run_job
from .jsontext import parse_json_checked, sorted_json_bytes
from .jsonvalue import NONFINITE_MARK, decode_nonfinite

if TYPE_CHECKING:
    from .cassette import Cassette
    from .entry import Entry

_STATUS_KEYS = ("status", "status_code", "statusCode", "http_status", "code")
#: an MCP ``CallToolResult`` reports a tool failure with ``"isError": true`` (MCP spec,
#: "Tools" > "Error handling": tool execution errors are results, not JSON-RPC errors)
_MCP_IS_ERROR = "isError"
_ERROR_KEY_SET = frozenset((*_STATUS_KEYS, _MCP_IS_ERROR))
#: a tool answer that is an error in words: tau-bench's "Error: ...", "ERROR - ..."
_TEXT_ERROR = re.compile(r"\s*(?:Error|ERROR|error)\s*[:\-]\s")


def is_error_outcome(is_error: bool, response: Any) -> bool:
    """True when an outcome is an error: the entry recorded ``error``; the response is an
    MCP tool result with ``"isError": true``; or the response is an object whose ``status``
    (or ``status_code``, ``statusCode``, ``http_status``, ``code``; an integer, a digit
    string, or an object with an integer ``code``) is 400-599 — the HTTP error statuses,
    as a rate limit turns a 200 into a 429; or the response is text (a string, or the
    importers' ``{"text": ...}``) that says it is an error: ``Error: ...`` as tau-bench's
    tools answer a failed action (``"Error: user not found"``). Inspect's tool errors are
    imported as ``error`` entries."""
    if is_error:
        return True
    if type(response) is str:
        return _TEXT_ERROR.match(response) is not None
    if not isinstance(response, dict):
        return False
    if len(response) == 1 and type(response.get("text")) is str:
        # a text result as the importers keep it ({"text": ...}): an error in words
        return _TEXT_ERROR.match(response["text"]) is not None
    if _ERROR_KEY_SET.isdisjoint(response):
        return False  # the common case, decided without a Python loop
    if response.get(_MCP_IS_ERROR) is True:
        return True
    for name in _STATUS_KEYS:
        status = response.get(name)
        if isinstance(status, dict):
            status = status.get("code")
        if isinstance(status, str) and status.isdigit():
            status = int(status)
        if type(status) is int and 400 <= status <= 599:
            return True
    return False


def outcome_fingerprint(tag: str, value: Any, *, finite: bool = False) -> int:
    """An in-process hash of an outcome: ``tag`` (``"response"`` or ``"error"``) and the
    value's sorted JSON bytes (``jsontext.sorted_json_bytes``: exact integers, ``NaN`` and
    ``Infinity`` kept apart from ``null``). ``finite=True`` promises the value holds no
    non-finite float (it was read by msgspec), which skips that check."""
    return hash((tag, sorted_json_bytes(value, exact_floats=not finite)))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one call returned or raised.

    Attributes:
        tag: ``"response"`` or ``"error"``.
        value: the response, or the ``{"type", "message"}`` error object.
        is_error: an ``error`` entry, an MCP ``isError`` result, or a response with an HTTP
            4xx/5xx status.
    """

    tag: str
    value: Any
    is_error: bool

    @classmethod
    def of_entry(cls, entry: Entry) -> Outcome:
        if entry.is_error:
            return cls("error", entry.error, True)
        return cls("response", entry.response, is_error_outcome(False, entry.response))

    @classmethod
    def of_record(cls, record: dict[str, Any]) -> Outcome:
        """From a parsed cassette line (``error`` wins when present, as in validation)."""
        if "error" in record:
            return cls("error", record["error"], True)
        response = record.get("response")
        return cls("response", response, is_error_outcome(False, response))

    def fingerprint(self, *, finite: bool = False) -> int:
        return outcome_fingerprint(self.tag, self.value, finite=finite)


class Fingerprints(array):  # type: ignore[type-arg]
    """A column of fingerprints: 8 bytes an entry (``array("q")``; a fingerprint is a
    ``hash``, which fits), not an ``int`` object and a pointer (44 bytes: a diff of two
    1M-entry runs holds one per entry). Compares equal to a list or tuple of the same
    ints, as the list it replaces did."""

    def __new__(cls, values: Iterable[int] = ()) -> Fingerprints:
        return super().__new__(cls, "q", values)  # type: ignore[return-value]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list | tuple):
            return len(self) == len(other) and all(map(operator.eq, self, other))
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Outcomes:
    """Per-entry outcome facts of one cassette, computed in one pass.

    Attributes:
        fingerprints: ``outcome_fingerprint`` of each entry's outcome (``Fingerprints``:
            an ``array`` of 64-bit ints).
        errors: each entry's ``Outcome.is_error``.
    """

    fingerprints: Fingerprints
    errors: list[bool]


def _scan_file(
    cassette: Cassette, cancel: CancelToken | None
) -> Generator[Progress, None, Outcomes | None]:
    """Read a file-backed cassette's lines in one sequential pass; ``None`` when a line no
    longer holds the entry the index says (the file changed) or does not parse, so that
    the caller falls back to entry access (which names the bad line)."""
    n = len(cassette)
    if cassette.path is None or n == 0 or not cassette.path.is_file():
        return None
    out = _Builder(n)
    stage = cassette.path.name
    try:
        for i, raw in cassette.lines_bytes():
            if not i & 4095:
                yield Progress("outcomes", i, n, "entries", stage)
                if cancel is not None:
                    cancel.raise_if_cancelled()
            record, exotic = parse_json_checked(raw)
            if NONFINITE_MARK in raw:  # {"$numberDouble": ...}: the float, as entries read
                record, exotic = decode_nonfinite(record), True
            if (
                not isinstance(record, dict)
                or record.get("seq") != cassette.seq(i)
                or record.get("tool") != cassette.tool(i)
            ):
                return None
            outcome = Outcome.of_record(record)
            out.add(outcome.fingerprint(finite=not exotic), outcome.is_error)
    except (OSError, ValueError, CassetteError):
        out.close()
        return None
    if out.count != n:
        out.close()
        return None
    return out.outcomes()


#: entries an outcome pass holds in memory before it writes them to its spools
_SPOOL_BATCH = 1 << 16


class _Builder:
    """The columns of an outcome pass as they grow. Inside a ``spill.spilling()`` block,
    for a long cassette, written to temporary files a batch of ``_SPOOL_BATCH`` entries at
    a time (``spill.Spool``: issue 31, the columns are never whole in memory, the
    fingerprints as 8-byte items, the error flags as 1-byte bools read back as ``bool``);
    otherwise in memory (``Fingerprints``, a list of bools), as before."""

    __slots__ = ("count", "errs", "fps", "spools")

    def __init__(self, n: int) -> None:
        from .spill import SPILL_MIN_ITEMS, Spool, is_spilling

        self.count = 0
        self.fps = Fingerprints()
        self.errs: list[bool] = []
        self.spools = (Spool("q"), Spool("B")) if is_spilling() and n >= SPILL_MIN_ITEMS else None

    def add(self, fingerprint: int, is_error: bool) -> None:
        self.fps.append(fingerprint)
        self.errs.append(is_error)
        self.count += 1
        if self.spools is not None and len(self.errs) >= _SPOOL_BATCH:
            self.spools[0].add(self.fps)
            self.spools[1].add(array("B", self.errs))
            self.fps, self.errs = Fingerprints(), []

    def outcomes(self) -> Outcomes:
        """The columns: in memory, or every batch's in one view of each spool."""
        if self.spools is None:
            return Outcomes(self.fps, self.errs)
        fps = self.spools[0].view(self.fps)
        errs = cast(memoryview, self.spools[1].view(array("B", self.errs))).cast("?")
        self.spools = None
        return Outcomes(fps, errs)  # type: ignore[arg-type]

    def close(self) -> None:
        """Let go of the spools' files (a pass given up)."""
        if self.spools is not None:
            for spool in self.spools:
                spool.close()
            self.spools = None


class _Table:
    """What is known of one cassette's outcomes: each entry's fingerprint once computed
    (``None`` before), and all of them with the error flags once a whole pass ran."""

    __slots__ = ("complete", "fingerprints")

    def __init__(self) -> None:
        #: made on the first ``entry_fingerprint`` (8 bytes an entry: a whole pass that
        #: comes first does not hold it beside its own columns); once ``complete``, its
        #: column (``Fingerprints``)
        self.fingerprints: list[int | None] | Fingerprints | None = None
        self.complete: Outcomes | None = None


#: the one cache of outcome facts, per cassette object (weakly: it goes with the cassette)
_outcome_cache: weakref.WeakKeyDictionary[Cassette, _Table] = weakref.WeakKeyDictionary()
_outcome_lock = threading.Lock()


def _table(cassette: Cassette) -> _Table:
    with _outcome_lock:
        table = _outcome_cache.get(cassette)
        if table is None:
            table = _outcome_cache[cassette] = _Table()
    return table


def entry_fingerprint(cassette: Cassette, i: int) -> int:
    """The ``outcome_fingerprint`` of entry ``i`` of ``cassette``, computed on first use
    (from the line's bytes for a file-backed entry not in memory) and cached.

    Raises:
        CassetteFormatError: the entry does not parse (file, line, field).
    """
    table = _table(cassette)
    fps = table.fingerprints
    if fps is None:
        with _outcome_lock:
            if table.fingerprints is None:
                table.fingerprints = [None] * len(cassette)
            fps = table.fingerprints
    fp = fps[i]
    if fp is None:
        fp = fps[i] = _fingerprint_of(cassette, i)
    return fp


def _fingerprint_of(cassette: Cassette, i: int) -> int:
    entry = cassette.held(i)
    if entry is not None or not cassette.is_file_backed:
        return Outcome.of_entry(
            entry if entry is not None else cassette.entry_view(i)
        ).fingerprint()
    raw = cassette.raw_line(i)
    try:
        parsed, exotic = parse_json_checked(raw)
    except ValueError:
        # a response the load did not parse is bad: reading the entry raises the error
        # that names the file, the line and the field
        return Outcome.of_entry(cassette.entry_view(i)).fingerprint()
    if NONFINITE_MARK in raw:
        parsed, exotic = decode_nonfinite(parsed), True
    return Outcome.of_record(parsed).fingerprint(finite=not exotic)


def same_outcome(a: Cassette, i: int, b: Cassette, j: int) -> bool:
    """Whether entry ``i`` of ``a`` and entry ``j`` of ``b`` have equal outcomes: their
    stored responses are byte-identical (``Cassette.response_hashes``: no parse), or their
    fingerprints are equal (``entry_fingerprint``)."""
    h = a.response_hashes()[i]
    if h != NO_RESPONSE_HASH and h == b.response_hashes()[j]:
        return True
    return entry_fingerprint(a, i) == entry_fingerprint(b, j)


class _Stored(msgspec.Struct, gc=False):
    """A cassette line's outcome as stored, its values left as bytes."""

    response: msgspec.Raw = msgspec.Raw()
    error: msgspec.Raw = msgspec.Raw()


_STORED = msgspec.json.Decoder(_Stored)


def stored_outcome(cassette: Cassette, i: int) -> tuple[bytes, bytes] | None:
    """``(response bytes, error bytes)`` of entry ``i`` as stored (one of them empty),
    read without building the values, or ``None`` (an in-memory cassette, a line the
    fast reader cannot split). Equal pairs mean equal outcomes; different pairs say
    nothing (``{"a":1}`` and ``{"a": 1}``). A bad line is reported by the entry."""
    if not cassette.is_file_backed:
        return None
    try:
        split = _STORED.decode(cassette.raw_line(i))
    except (msgspec.DecodeError, RecursionError):
        return None
    return bytes(split.response), bytes(split.error)


def same_stored_outcomes(cassette: Cassette, positions: list[int]) -> bool:
    """Whether the entries at ``positions`` all store the same response or error bytes
    (``stored_outcome``): then their outcomes are equal. ``False`` says nothing."""
    first = stored_outcome(cassette, positions[0])
    if first is None:
        return False
    return all(stored_outcome(cassette, i) == first for i in positions[1:])


def known_outcomes(cassette: Cassette) -> Outcomes | None:
    """The ``Outcomes`` of ``cassette`` when a whole pass has computed them already
    (``outcome_index``), else ``None``: never reads the file."""
    with _outcome_lock:
        table = _outcome_cache.get(cassette)
    return table.complete if table is not None else None


def outcome_index(cassette: Cassette) -> Outcomes:
    """The ``Outcomes`` of every entry of ``cassette``, computed once per cassette object
    (cached with ``entry_fingerprint``'s) and thread-safe. A file-backed cassette is read
    sequentially, one parse per line; any other cassette is read entry by entry. Each
    fingerprint equals ``entry_fingerprint(cassette, i)``."""
    return run_job(outcome_index_job(cassette))


def outcome_index_job(
    cassette: Cassette, cancel: CancelToken | None = None
) -> JobGenerator[Outcomes]:
    """``outcome_index`` as a job: yields ``Progress(stage="outcomes", unit="entries")``;
    raises ``Cancelled`` when ``cancel`` is set (nothing is cached then)."""
    table = _table(cassette)
    if table.complete is not None:
        return table.complete
    result = None
    if cassette.is_file_backed:
        result = yield from _scan_file(cassette, cancel)
    if result is None:
        result = yield from _scan_entries(cassette, cancel)
    with _outcome_lock:
        table.fingerprints = result.fingerprints  # every one known: the column itself
        table.complete = result
    from .spill import give_back

    give_back()  # what the columns held, when spilled (nothing otherwise)
    return result


def _scan_entries(
    cassette: Cassette, cancel: CancelToken | None
) -> Generator[Progress, None, Outcomes]:
    """Every entry's outcome facts, entry by entry (an in-memory cassette, or a file whose
    sequential read failed: a bad entry raises the error that names it)."""
    n = len(cassette)
    out = _Builder(n)
    try:
        for i, entry in enumerate(cassette):
            if not i & 4095:
                yield Progress("outcomes", i, n, "entries")
                if cancel is not None:
                    cancel.raise_if_cancelled()
            outcome = Outcome.of_entry(entry)
            out.add(outcome.fingerprint(), outcome.is_error)
    except BaseException:
        out.close()
        raise
    return out.outcomes()
