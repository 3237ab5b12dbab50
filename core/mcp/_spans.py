"""A big line read without copying its big strings (issue 31: the proxy within 1.5x of a
direct connection).

A 50 MB ``tools/call`` or answer is nearly always one or a few long strings (a file's
text, a base64 image). Decoding them into Python strings, then encoding them again for the
cassette, cost the proxy more than the server's own work. ``read_spans`` instead finds each
long string's bytes in the line and decodes a *skeleton* of it: the line with each long
string replaced by a placeholder. The recording's texts (the entry's ``args`` and
``response``, the args' canonical text for the digest) are then the skeleton's texts with
each placeholder replaced by the string's bytes, as pieces (``memoryview``) of the line,
never joined: hashed and written as they are.

It applies only where those texts are exactly the ones the standard encoder writes (the
cassette's ``dump_record``, the digest's ``canonical_json``): the line holds no backslash
at all (so no string holds an escape, and a string's bytes are its text), it is valid JSON
(msgspec checks it, control characters included, without building a value), and each long
string is printable ASCII (its text is the same with ``ensure_ascii`` or without). Anything
else is read as before (``_wire.read_line``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

__all__ = ["BIG_STRING", "SPANS_FROM", "LongStringWatch", "Spans", "read_spans"]

#: a line at least this long is tried for spans (shorter ones decode in well under 1 ms)
SPANS_FROM = 1 << 16
#: a string at least this long is kept as a span of the line
BIG_STRING = 1 << 12
#: a line with more strings than this is read the ordinary way (each is one ``find``)
MAX_STRINGS = 5000
#: a placeholder is this character then the span's index: a string of the line itself can
#: never hold it (NUL is written ``\\u0000`` in JSON, and the line has no backslash)
_MARK = "\x00"
#: how a placeholder string starts in orjson's text (it writes NUL as ``\\u0000``)
_MARK_TEXT = b'"\\u0000'
_SPACE = b" \t\r\n"


@dataclass(slots=True)
class Spans:
    """The long strings of one line: ``data`` the line (bytes or bytearray, never changed
    while this lives), ``bounds`` each string's ``(start, end)`` (its bytes without the
    quotes)."""

    data: bytes | bytearray
    bounds: list[tuple[int, int]]
    #: the index of each span the last ``splice`` put in, in order
    spliced: list[int] = field(default_factory=list)

    def piece(self, index: int) -> memoryview:
        start, end = self.bounds[index]
        return memoryview(self.data)[start:end]

    def holds(self, value: Any) -> bool:
        """Whether ``value`` (part of the skeleton) holds a placeholder."""
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                if item.startswith(_MARK):
                    return True
            elif isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        return False

    def splice(self, text: bytes) -> list[bytes | memoryview]:
        """``text`` (orjson's text of part of the skeleton) as pieces, each placeholder
        replaced by its string's bytes (between the quotes, which stay)."""
        pieces: list[bytes | memoryview] = []
        self.spliced = []
        pos = 0
        while (at := text.find(_MARK_TEXT, pos)) >= 0:
            close = text.index(b'"', at + len(_MARK_TEXT))
            index = int(text[at + len(_MARK_TEXT) : close])
            self.spliced.append(index)
            pieces.append(text[pos : at + 1])
            pieces.append(self.piece(index))
            pos = close
        pieces.append(text[pos:])
        return pieces

    def real(self, value: Any) -> Any:
        """``value`` (part of the skeleton) with every placeholder replaced by its string:
        the value the line holds (for what is kept other than as entry texts)."""
        if isinstance(value, str):
            if value.startswith(_MARK):
                return str(self.piece(int(value[1:])), "ascii")
            return value
        if isinstance(value, dict):
            return {k: self.real(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.real(v) for v in value]
        return value


_RAW = msgspec.json.Decoder(msgspec.Raw)


def read_spans(
    line: bytes | bytearray, checked: tuple[int, int] | None = None
) -> tuple[bytes, Spans] | None:
    """``(skeleton, spans)`` for a line whose long strings can be kept as spans (see the
    module docstring), else ``None``. The skeleton is the line with each string of
    ``BIG_STRING`` bytes or more (a value, never a key) replaced by a placeholder: read it
    with ``_wire.read_line``.

    ``checked``: ``(start, end)``, the bytes of one string of the line between its quotes
    that ``LongStringWatch`` checked as they passed (printable ASCII, no quote, no
    backslash); they are not looked at again (a 50 MB answer's check took 30-70 ms after
    its last byte). The answer is the same as without it (a property test)."""
    if len(line) < SPANS_FROM:
        return None
    if checked is not None:
        c_start, c_end = checked
        if not (
            0 < c_start <= c_end < len(line)
            and line[c_start - 1] == 0x22
            and line[c_end] == 0x22
            and line.find(b"\\", 0, c_start) < 0
            and line.find(b"\\", c_end) < 0
        ):
            return None
    elif line.find(b"\\") >= 0:
        return None
    else:
        c_start = c_end = -1
    bounds: list[tuple[int, int]] = []
    parts: list[bytes | bytearray] = []
    pos = index = strings = 0
    while (start := line.find(b'"', index)) >= 0:
        end = c_end if start + 1 == c_start else line.find(b'"', start + 1)
        strings += 1
        if end < 0 or strings > MAX_STRINGS:
            return None
        index = end + 1
        if end - start - 1 < BIG_STRING:
            continue
        after = index
        while after < len(line) and line[after] in _SPACE:
            after += 1
        if line[after : after + 1] == b":":  # a key: its order decides the canonical text
            return None
        parts.append(line[pos:start])
        parts.append(b'"\\u0000%d"' % len(bounds))
        bounds.append((start + 1, end))
        pos = index
    if not bounds:
        return None
    spans = Spans(line, bounds)
    # printable ASCII: the same text with ensure_ascii or without (a line all ASCII is
    # checked at once; else each long string, on a copy); the checked string is already
    if c_start < 0:
        whole_ascii = line.isascii()
        rest = line
    else:
        rest = line[:c_start] + line[c_end:]  # the line with the checked string empty
        whole_ascii = rest.isascii()
    for start, end in bounds:
        if start == c_start:
            continue
        if not whole_ascii and not line[start:end].isascii():
            return None
        if line.find(b"\x7f", start, end) >= 0:
            return None
    try:  # valid JSON, no control character in a string: checked without a value
        _RAW.decode(rest)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None  # (nested too deep: read whole, ``read_line`` says so)
    parts.append(line[pos:])
    return b"".join(parts), spans


#: the bytes a long string watched as it passes may hold: printable ASCII but the quote
#: and the backslash (``read_spans``'s rule for a long string, JSON's for a string's bytes)
_PLAIN = bytes(c for c in range(0x20, 0x7F) if c not in b'"\\')


def _plain(data: bytes | bytearray, first: int, last: int) -> bool:
    """Whether ``data[first:last]`` is all ``_PLAIN`` bytes, without copying it into fresh
    memory: a range of ``_QUOTED_FROM`` bytes or more in an ASCII ``data`` by
    ``_quoted_plain`` (the quote, the backslash and DEL found by ``find``, the control
    characters by a JSON string's reader: 0.2-0.3 ms a MB against 0.55-0.7 for
    ``translate``), else ``_translated_plain``."""
    if last - first >= _QUOTED_FROM and data.isascii():
        plain = _quoted_plain(data, first, last)
        if plain is not None:
            return plain
    return _translated_plain(data, first, last)


#: a range this long or longer is checked by ``_quoted_plain`` (below, ``translate``'s
#: one call costs less than the reader's and the joins)
_QUOTED_FROM = 1 << 14
#: the ASCII bytes a JSON string reader lets through that ``_PLAIN`` has not: its closing
#: quote, the escapes' backslash, and DEL (valid in JSON, escaped by ``ensure_ascii``)
_NOT_PLAIN_FOUND = (b'"', b"\\", b"\x7f")


def _quoted_plain(data: bytes | bytearray, first: int, last: int) -> bool | None:
    """``_plain`` of a range of an ASCII ``data``: no byte of ``_NOT_PLAIN_FOUND`` in it
    (``find``, at memory speed), and the range, quoted, a valid JSON string for jiter
    (``pydantic_core.from_json``, in the ``mcp`` extra), which rejects a control
    character (RFC 8259 section 7). ``None`` without pydantic_core."""
    try:
        from pydantic_core import from_json
    except ImportError:  # pragma: no cover - the mcp extra brings it
        return None
    for byte in _NOT_PLAIN_FOUND:
        if data.find(byte, first, last) >= 0:
            return False
    with memoryview(data) as view, view[first:last] as part:
        quoted = b"".join((b'"', part, b'"'))
    try:
        from_json(quoted)
    except ValueError:
        return False
    return True


def _translated_plain(data: bytes | bytearray, first: int, last: int) -> bool:
    """``_plain`` by ``translate``: the bytes of the whole that are not plain (a translate
    that deletes the plain ones, which writes nothing for them) are exactly those of the
    parts around the range (issue 31: the copy of a 1 MB piece's string cost 0.3-0.6 ms
    in fresh pages, on the answer's way)."""
    if first == 0 and last == len(data):
        return not data.translate(None, _PLAIN)
    inner = len(data.translate(None, _PLAIN))
    if not inner:
        return True
    outer = data[:first].translate(None, _PLAIN), data[last:].translate(None, _PLAIN)
    return inner == len(outer[0]) + len(outer[1])


class LongStringWatch:
    """A line's pieces watched as they pass (issue 31: the recording of a big message
    done while it streams, not after its last byte): the string still open at the end of
    the first piece (a long string: a file's text, a base64 image) is found and its bytes
    checked as they come, so that ``read_spans`` need not look at them again
    (``checked``). Feed each piece in order to ``feed``; it says which of the piece's bytes
    are the string's (to be written ahead). Any surprise (a backslash, a byte that is not
    printable ASCII, no string open at the first piece's end) only ends the watch:
    ``checked`` is then ``None`` and the line is read the ordinary way.

    Used for a server's answer over stdio (``record._pump_server``) and meant for any
    message that comes in pieces (an HTTP body)."""

    __slots__ = ("_pos", "_watching", "end", "start")

    def __init__(self) -> None:
        self._pos = 0  # the line's bytes fed so far
        self._watching = True
        #: the string's first byte (after its quote) and the offset of its closing quote
        self.start = -1
        self.end = -1

    @property
    def checked(self) -> tuple[int, int] | None:
        """``(start, end)`` of the string, for ``read_spans``, once it closed unsurprised."""
        if self._watching and self.end >= 0:
            return self.start, self.end
        return None

    def feed(self, data: bytes | bytearray) -> tuple[int, int] | None:
        """Watch the next piece of the line; ``(start, end)`` offsets into ``data`` of the
        string's bytes in it (checked), or ``None`` when it holds none of them."""
        pos = self._pos
        self._pos += len(data)
        if not self._watching or self.end >= 0:
            return None
        if self.start < 0:  # the first piece: the string open at its end
            if pos or data.find(b"\\") >= 0:
                self._watching = False
                return None
            opening = -1
            at = 0
            while (at := data.find(b'"', at)) >= 0:
                closing = data.find(b'"', at + 1)
                if closing < 0:
                    opening = at
                    break
                at = closing + 1
            if opening < 0:
                self._watching = False
                return None
            self.start = opening + 1
            first = opening + 1
        else:
            first = 0
        close = data.find(b'"', first)
        last = len(data) if close < 0 else close
        if not _plain(data, first, last):
            self._watching = False
            return None
        if close >= 0:
            self.end = pos + close
        return first, last
