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

from dataclasses import dataclass
from typing import Any

import msgspec

__all__ = ["BIG_STRING", "SPANS_FROM", "Spans", "read_spans"]

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
        pos = 0
        while (at := text.find(_MARK_TEXT, pos)) >= 0:
            close = text.index(b'"', at + len(_MARK_TEXT))
            index = int(text[at + len(_MARK_TEXT) : close])
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


def read_spans(line: bytes | bytearray) -> tuple[bytes, Spans] | None:
    """``(skeleton, spans)`` for a line whose long strings can be kept as spans (see the
    module docstring), else ``None``. The skeleton is the line with each string of
    ``BIG_STRING`` bytes or more (a value, never a key) replaced by a placeholder: read it
    with ``_wire.read_line``."""
    if len(line) < SPANS_FROM or line.find(b"\\") >= 0:
        return None
    bounds: list[tuple[int, int]] = []
    parts: list[bytes | bytearray] = []
    pos = index = strings = 0
    while (start := line.find(b'"', index)) >= 0:
        end = line.find(b'"', start + 1)
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
    # checked at once; else each long string, on a copy)
    whole_ascii = line.isascii()
    for start, end in bounds:
        if not whole_ascii and not line[start:end].isascii():
            return None
        if line.find(b"\x7f", start, end) >= 0:
            return None
    try:  # valid JSON, no control character in a string: checked without a value
        _RAW.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    parts.append(line[pos:])
    return b"".join(parts), spans
