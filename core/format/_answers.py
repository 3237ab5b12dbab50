"""The replayer's start: every line of a file-backed cassette checked fully, once, and
where each plain answer lies in the file (``Cassette.checked_answers``).

``load`` checks each line's top level only (docs/engine.md); what an entry's values hold
(a key repeated in a nested object, nesting past ``depth.MAX_DEPTH``, integers past 64
bits) is checked when the entry is parsed. A replay would pay that check at every call;
the article's reference parses every line at its load instead. So the replayer checks
every line as an entry parse does, in one sequential read when it opens its cassette (a
bad line refused then, naming the file, the line and the field), computing the replay
keys in the same read, and keeps per entry where its response's bytes are (``Answers``:
16 bytes an entry). A call reads those bytes (one ``pread``) and decodes them afresh with
orjson (twice msgspec's speed on long strings; the start made sure orjson reads them
exactly: no integer past 64 bits): a new object for each call, never shared.

The start parses every line anyway (the check), so when the plain answers are small in
all (``HELD_ANSWER_BYTES``) it also keeps each plain answer's parsed value, as the
article's load does: the first serve of an entry hands that object out and drops it (so
it is handed out once, never again: bugcase 23), and any later serve of the entry
decodes afresh from the bytes. A forked child inherits the objects its parent had not
served yet: each process hands out its own copy once (memory is not shared).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import msgspec
import orjson

from .digest import digest, fast_digest
from .errors import CassetteFormatError
from .jsonvalue import NONFINITE_MARK

if TYPE_CHECKING:
    from ._view import Cassette

#: what ``Answers.read`` gives for an entry that is not plain (or not read back as
#: checked): the caller parses the entry by the engine's rules instead
NOT_PLAIN: Final = object()

#: the plain answers' total bytes up to which the start keeps each one's parsed value for
#: its first serve (the decode then moves from the call to the start, which parses every
#: line anyway). Parsed JSON takes up to about 4x its text in memory (the benchmark's
#: search answers: 24.5 MB of them took the start from 39 to 136 MB) and each object kept
#: costs the cyclic collector's passes, so a cassette with more answer bytes keeps none
#: (its start stays at 16 bytes an entry, where the article's load holds every answer)
#: and each call decodes its own
HELD_ANSWER_BYTES: Final = 32 << 20
#: a held answer's slot once served (or never held): the next serve decodes its bytes
_GONE: Final = object()


class _Response(msgspec.Struct, gc=False):
    """A line as the start reads it for its response's bytes (the rest skipped)."""

    response: msgspec.Raw = msgspec.Raw()


_RESPONSE = msgspec.json.Decoder(_Response)
#: the bytes one read holds for the calls that follow (a few dozen answers)
_WINDOW = 1 << 18
_loads = orjson.loads
_dumps = orjson.dumps


class Answers:
    """Where each checked entry's response is in the cassette file: ``offsets[i]`` (bytes
    from the file's start, ``-1``: not plain) and ``lengths[i]``. Plain: a response, no
    error, read by msgspec, no ``$numberDouble`` mark (whose value the entry parse
    rewrites), a value orjson writes (so reads back exactly: no integer past 64 bits, at
    most 254 levels), and the whole line checked by ``Cassette.checked_answers``.

    Not thread-safe on its own: the replayer reads under its lock.
    """

    __slots__ = (
        "_base", "_cassette", "_end", "_held", "_next", "_view", "lengths", "offsets", "seqs"
    )  # fmt: skip

    def __init__(
        self,
        cassette: Cassette,
        offsets: array[int],
        lengths: array[int],
        held: list[Any] | None = None,
    ) -> None:
        self._cassette = cassette
        #: each plain answer's parsed value until its first serve hands it out (``_GONE``:
        #: served, or never held), or ``None``: every serve decodes (``HELD_ANSWER_BYTES``)
        self._held = held
        self.offsets = offsets
        self.lengths = lengths
        #: each entry's seq (the cassette's index, not a copy): ``seqs[i]``
        self.seqs: Sequence[int] = cassette._seqs
        #: the bytes last read (``_WINDOW`` of the file from ``_base`` to ``_end``), and
        #: where the last answer read ended: calls that go forward through the file (in
        #: recorded order, the common case) are served from one read of many answers
        self._view = memoryview(b"")
        self._base = 0
        self._end = 0
        self._next = 0

    def read(self, i: int) -> Any:
        """Entry ``i``'s response, a new object: the value the start parsed, at its first
        serve (handed out once, then dropped), else decoded afresh from its bytes; or
        ``NOT_PLAIN``: not a plain entry, or its bytes no longer decode as checked (the
        file cut or written over in place since: the entry parse then names what is
        wrong)."""
        held = self._held
        if held is not None:
            value = held[i]
            if value is not _GONE:
                held[i] = _GONE  # never handed out again: a later serve decodes afresh
                return value
        off = self.offsets[i]
        end = off + self.lengths[i]
        base = self._base
        if base <= off and end <= self._end:  # in the bytes held (``off`` is never -1 here:
            self._next = end  # a window starts at an answer, at 0 or later)
            try:
                return _loads(self._view[off - base : end - base])
            except orjson.JSONDecodeError:
                return NOT_PLAIN
        if off < 0:
            return NOT_PLAIN
        n = end - off
        # past the bytes held: read on from here, a window when the calls go forward
        # (a call far from the last one reads its own bytes only)
        forward = self._next <= off < self._next + _WINDOW
        raw = self._pread(off, _WINDOW if forward and n < _WINDOW else n)
        if len(raw) < n:  # cut since: the entry parse names it
            return NOT_PLAIN
        self._next = end
        if len(raw) > n:
            self._view, self._base, self._end = memoryview(raw), off, off + len(raw)
        try:
            return _loads(raw if len(raw) == n else self._view[:n])
        except orjson.JSONDecodeError:
            return NOT_PLAIN

    def _pread(self, off: int, size: int) -> bytes:
        """``size`` bytes of the file from ``off`` (fewer at its end; none when it cannot
        be read: the entry parse then names why)."""
        cassette = self._cassette
        fd = cassette._fd
        try:
            if fd is None:
                fd = cassette._open_fd(cassette.path)  # type: ignore[arg-type]
            return os.pread(fd, size, off)
        except (OSError, CassetteFormatError):
            return b""


def _orjson_reads_back(value: Any) -> bool:
    """Whether orjson reads ``value``'s JSON back as ``value`` (a value msgspec read, so
    no NaN): it writes it, so it holds no integer past 64 bits (which orjson reads as a
    float) and no nesting past 254 levels."""
    try:
        _dumps(value)
    except TypeError:
        return False
    return True


def _find(line: bytes, value: bytes) -> int:
    """Where the bytes ``value`` (a value's JSON as the line holds it) are in ``line``:
    the same bytes anywhere decode to the same value. Looked for by their first bytes
    (a long needle is slow to find), then compared whole."""
    head = value[:16]
    at = line.find(head)
    while at >= 0 and line[at : at + len(value)] != value:
        at = line.find(head, at + 1)
    return at


def check_every_line(cassette: Cassette) -> Answers:
    """Parse every entry of the file-backed ``cassette`` by the engine's rules
    (``Cassette._parse_entry``: repeated keys at any depth, the depth limit, the format's
    rules), in one sequential read; compute its replay keys in the same read when they are
    not known yet (not the response hashes, which a replay does not use: computed when
    asked for); return where each plain response is, and, when the plain answers come to
    at most ``HELD_ANSWER_BYTES`` in all, each one's parsed value (the entry parse's,
    which the start makes anyway) for its first serve.

    Raises:
        CassetteFormatError: the first line that does not parse or breaks a rule (file,
            line, field), or the file changed since the load.
    """
    n = len(cassette)
    offsets = array("q", bytes(8 * n))
    lengths = array("q", bytes(8 * n))
    assert cassette.path is not None and cassette._offsets is not None
    # the descriptor calls read with, opened (and checked to be the file the load read)
    # before the check: the bytes checked are the bytes served
    if cassette._fd is None:
        cassette._open_fd(cassette.path)
    line_offsets = cassette._offsets
    keys = cassette._digests is None
    digests: list[str] = [""] * n if keys else []
    apply = cassette.rules.apply
    decode_response = _RESPONSE.decode
    checked = cassette._checked_record
    held: list[Any] | None = [_GONE] * n if HELD_ANSWER_BYTES > 0 else None
    held_bytes = 0
    for i, raw in cassette.lines_bytes():
        record = checked(i, raw)  # raises CassetteFormatError (file, line, field)
        plain = "error" not in record
        try:
            response = bytes(decode_response(raw).response) if plain else b""
        except (msgspec.DecodeError, RecursionError):  # read by the standard library
            response = b""
        at = _find(raw, response) if response else -1
        if at >= 0 and (
            (b"$" in response and NONFINITE_MARK in response)
            or not _orjson_reads_back(record["response"])
        ):
            at = -1
        if at >= 0:
            offsets[i] = line_offsets[i] + at
            lengths[i] = len(response)
            if held is not None:
                held_bytes += len(response)
                if held_bytes <= HELD_ANSWER_BYTES:
                    # the entry parse's own value (equal to orjson's decode of the bytes,
                    # or, where orjson refuses them, to what the call's parse would give)
                    held[i] = record["response"]
                else:  # past the cap: none kept, every call decodes (the memory stays low)
                    held = None
        else:
            offsets[i] = -1
        if keys:
            value = apply(record["tool"], record["args"])
            digests[i] = fast_digest(value) or digest(value)
    if keys:
        cassette._set_digests(digests)
    return Answers(cassette, offsets, lengths, held)
