"""The guesses of a big message's entry start, made from its first piece while the rest
still streams in (issue 31: only the line's rest is left to write after its last byte):
``guess_call`` for a big tools/call line (``ArgsAhead``, ended by
``CassetteWriter.open_entry``), ``guess_answer`` for a big answer to the one call in flight
(``AnswerAhead``). The line's start is read with its long string as a placeholder and its
open brackets closed (``_closers``, ``_frame_before``). A guess is only written ahead: it is
checked against the line read whole, kept when the entry starts with exactly its bytes,
else taken back and the line written whole, so a wrong guess costs a rewrite, never a
wrong entry."""

from __future__ import annotations

import itertools
import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cassette_tui.core.format.cassette import dump_record
from cassette_tui.core.format.entry import Entry

from ._prepared import Pieces, _PreparedArgs, _spans_texts
from ._spans import Spans
from ._wire import TOOLS_CALL, Frame, read_line

if TYPE_CHECKING:
    from ._writer import CassetteWriter
    from .record import _Pending


#: a server line longer than this goes on to the host in pieces as it comes, its end
#: (the newline) once it is recorded (a 50 MB answer took 2.8x as long held back whole)
STREAM_FROM = 1 << 20


#: JSON's brackets, found outside the strings of a line's start (``_closers``)
_BRACKETS = re.compile(rb"[][{}]")
_CLOSE = {ord("{"): b"}", ord("["): b"]"}


def _closers(prefix: bytes | bytearray) -> bytes | None:
    """What closes the arrays and objects still open at the end of ``prefix`` (a line's
    start that ends between two values, no backslash in it), innermost first; ``None``
    when its brackets do not nest."""
    parts = prefix.split(b'"')
    if len(parts) % 2 == 0:  # it ends inside a string
        return None
    stack: list[int] = []
    for part in parts[::2]:  # outside the strings
        for found in _BRACKETS.finditer(part):
            char = found.group()[0]
            if char in _CLOSE:
                stack.append(char)
            elif not stack or _CLOSE[stack.pop()] != found.group():
                return None
    return b"".join(_CLOSE[char] for char in reversed(stack))


def _frame_before(data: bytes | bytearray, start: int, kind: str) -> Frame | None:
    """The one JSON-RPC message of ``kind`` that a line's first piece ``data`` makes with
    its long string (opening at ``start``) read as a placeholder and its open brackets
    closed; ``None`` when it makes no such single message (a batch, bytes not UTF-8)."""
    prefix = data[: start - 1]
    closers = _closers(prefix)
    if closers is None:
        return None
    parsed = read_line(bytes(prefix) + b'"\\u00000"' + closers)
    frames = parsed.frames
    if parsed.batch or parsed.lossy or len(frames) != 1 or frames[0].kind != kind:
        return None
    return frames[0]


def _written_in(pieces: Pieces, head: bytes, prepared: _PreparedArgs | AnswerAhead) -> int:
    """How many of a line's first ``pieces`` ``open_entry`` wrote for ``prepared``
    (``head`` then its args' text), or 0 when they are not its start."""
    text = prepared.text if isinstance(prepared, _PreparedArgs) else None
    if text is None or len(pieces) <= len(text) or pieces[0] != head:
        return 0
    if not all(a is b for a, b in zip(pieces[1:], text, strict=False)):
        return 0
    return 1 + len(text)


@dataclass(eq=False)
class AnswerAhead:
    """The entry an answer streaming in will make, guessed from its first piece
    (``RecordingProxy._guess_answer``): ``seq``, ``head`` (the line's bytes up to its long
    string's first byte), ``start`` (that byte's offset in the answer's line), and the
    string's bytes written after the head so far (``written``). Checked when the answer
    has ended (``written_in``): kept only when the line the entry really makes starts with
    exactly these bytes, else taken back and the line written whole."""

    seq: int
    head: bytes
    start: int
    written: int = 0

    def written_in(self, pieces: Pieces, response_at: int, spans: Spans | None) -> int:
        """How many of a line's first ``pieces`` were written ahead (the head, then the
        long string's bytes, which must be the whole of its first span), else 0."""
        if response_at < 0 or spans is None or not spans.spliced:
            return 0
        start, end = spans.bounds[spans.spliced[0]]
        at = response_at + 1  # the first span's bytes follow the text before it
        if start != self.start or end - start != self.written or at >= len(pieces):
            return 0
        before = pieces[:at]
        if any(isinstance(piece, memoryview) for piece in before):
            return 0
        if b"".join(before) != self.head:
            return 0
        return at + 1


class ArgsAhead(AnswerAhead):
    """The entry a big call line streaming in will make, its start guessed from its first
    piece (``guess_call``): ``head`` the line up to its args' long string's first byte,
    that string's bytes written after it as they pass; ended by ``open_entry`` when the
    call's args, read whole, start with exactly these bytes (``holds``)."""

    def holds(self, pieces: Pieces, spans: Spans | None) -> bool:
        """Whether an entry line's start (``open_entry``'s head, then the args' text in
        pieces from ``spans``) is the head then the whole first span written ahead."""
        if spans is None or not spans.spliced or len(pieces) < 3:
            return False
        start, end = spans.bounds[spans.spliced[0]]
        if start != self.start or end - start != self.written:
            return False
        if isinstance(pieces[0], memoryview) or isinstance(pieces[1], memoryview):
            return False
        return isinstance(pieces[2], memoryview) and pieces[0] + pieces[1] == self.head


#: this process's part of every placeholder (random: no value holds it by chance)
_MARKER = f"cassette-tui-value-{uuid.uuid4().hex}"
_markers = itertools.count()


def fresh_marker() -> str:
    """A placeholder text that no value of a line holds: this process's random part and a
    count (one ``uuid4`` a process; one a line read ``/dev/urandom`` each time, 7-13 us
    a big call here, issue 31)."""
    return f"{_MARKER}-{next(_markers)}"


def _entry_head(seq: int, tool: str) -> bytes:
    """Entry ``seq``'s line up to its args: ``{"seq":N,"tool":"T","args":``."""
    marker = fresh_marker()
    line = dump_record(Entry(seq, tool, marker).to_record(""))
    return line.partition(f'"{marker}"'.encode())[0]


def guess_call(writer: CassetteWriter, data: bytes | bytearray, start: int) -> ArgsAhead | None:
    """The start of the entry a big tools/call line will make, guessed from its first
    piece ``data`` (its long string opens at ``start``, ``LongStringWatch``): the line's
    start, read with its string as a placeholder and its open brackets closed, is one
    tools/call whose args hold that string and whose texts come from spans
    (``_spans_texts``). ``None`` when it cannot be guessed so; checked by ``open_entry``
    against the call read whole."""
    if writer.redactor is not None:
        return None
    frame = _frame_before(data, start, "request")
    if frame is None:
        return None
    params = frame.params
    if frame.method != TOOLS_CALL or not isinstance(params, dict):
        return None
    tool, args = params.get("name"), params.get("arguments")
    if not isinstance(tool, str) or args is None:
        return None
    placeholder = Spans(b"", [(start, start)])
    try:
        texts = _spans_texts(writer.rules, tool, args, placeholder)
    except (TypeError, ValueError, RecursionError):
        return None
    if texts is None:
        return None
    pieces = placeholder.splice(texts[0])
    if placeholder.spliced[:1] != [0] or isinstance(pieces[0], memoryview):
        return None
    seq = writer.seq + 1
    return ArgsAhead(seq, _entry_head(seq, tool) + pieces[0], start)


def guess_answer(
    writer: CassetteWriter, pending: list[_Pending], data: bytes | bytearray, start: int
) -> AnswerAhead | None:
    """The entry a big answer will make, guessed from its first piece ``data`` (its long
    string opens at ``start``, ``LongStringWatch``): the only request in flight
    (``pending``) is a tools/call, and the answer's start, read with its string as a
    placeholder and its open brackets closed, is a response. ``None`` when it cannot be
    guessed so. The guess is checked against the real line at its end
    (``AnswerAhead.written_in``): a wrong one costs a rewrite, never a wrong entry."""
    if len(pending) != 1 or writer.redactor is not None:
        return None
    req = pending[0]
    params = req.params
    if (
        req.method != TOOLS_CALL
        or req.alias is not None
        or req.ambiguous
        or req.prepared is not None
        or req.spans is not None
        or not isinstance(params, dict)
        or not isinstance(params.get("name"), str)
    ):
        return None
    args = params.get("arguments")
    args = {} if args is None else args
    frame = _frame_before(data, start, "response")
    if frame is None:
        return None
    seq = writer.seq + 1
    placeholder = Spans(b"", [(start, start)])
    try:
        pieces, at = writer._pieces(
            seq, params["name"], args, frame.doc.get("result"), None, {}, None,
            STREAM_FROM, None, placeholder,
        )  # fmt: skip
    except (TypeError, ValueError, RecursionError):
        return None
    if at < 0 or placeholder.spliced[:1] != [0]:
        return None
    before = pieces[: at + 1]
    if any(isinstance(piece, memoryview) for piece in before):
        return None
    return AnswerAhead(seq, b"".join(before), start)
