"""A big line's long string checked as its pieces pass (``LongStringWatch``, issue 31):
``read_spans`` told which bytes were checked gives exactly what it gives without, for
any line and any split into pieces: valid, bad JSON, cut mid-string, a control character,
a backslash or a non-ASCII byte in the long string."""

from __future__ import annotations

import json

from cassette_tui.core.mcp._spans import (
    _PLAIN,
    BIG_STRING,
    SPANS_FROM,
    LongStringWatch,
    _plain,
    read_spans,
)
from hypothesis import event, given, settings
from hypothesis import strategies as st


def repeated(size: int) -> st.SearchStrategy[str]:
    """Printable ASCII text of at least ``size`` characters, no quote nor backslash."""
    return st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1).map(
        lambda s: (s.replace('"', "'").replace("\\", "/") * (size // len(s) + 1))[: size + len(s)]
    )


LONG = repeated(SPANS_FROM) | repeated(BIG_STRING)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=6,
)
#: what may be put into a line to spoil it (or not): JSON's delimiters, escapes, control
#: characters, DEL, non-ASCII, a lone UTF-8 lead byte
SPOILERS = st.sampled_from(
    [
        b"\\",
        b'"',
        b"\\n",
        b"\\u0041",
        b"\x00",
        b"\x1f",
        b"\t",
        b"\x7f",
        "é".encode(),
        b"\xc3",
        b"}",
        b"x",
    ]
)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """A server answer or a call line, one long string in it most often, maybe spoiled
    (a byte put in, the line cut)."""
    long = draw(LONG)
    value = draw(VALUES)
    shape = draw(st.sampled_from(["answer", "call", "two", "key"]))
    if shape == "answer":
        doc = {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": long}], "v": value},
        }
    elif shape == "call":
        doc = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "t", "arguments": {"a": value, "text": long}},
        }
    elif shape == "two":
        doc = {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"a": long, "b": value, "c": long[: BIG_STRING + 3]},
        }
    else:
        doc = {"jsonrpc": "2.0", "id": 4, "result": {long: 1}}
    spaced = draw(st.booleans())
    line = (json.dumps(doc) if spaced else json.dumps(doc, separators=(",", ":"))).encode() + b"\n"
    line = line.ljust(SPANS_FROM) if len(line) < SPANS_FROM and draw(st.booleans()) else line
    spoil = draw(st.integers(0, 3))
    if spoil == 1:  # a byte put in anywhere (most often inside the long string)
        at = draw(st.integers(0, len(line)))
        line = line[:at] + draw(SPOILERS) + line[at:]
    elif spoil == 2:  # cut: mid-string, mid-structure
        line = line[: draw(st.integers(0, len(line)))]
    return line


@settings(max_examples=400, deadline=None)
@given(lines(), st.lists(st.integers(1, 1 << 18), max_size=12))
def test_read_spans_checked_is_read_spans(line: bytes, cuts: list[int]) -> None:
    watch = LongStringWatch()
    passed = bytearray()
    pos = 0
    for size in [*cuts, len(line)]:
        piece = line[pos : pos + size]
        if not piece:
            break
        got = watch.feed(piece)
        if got is not None:
            start, end = got
            assert 0 <= start <= end <= len(piece)
            passed += piece[start:end]
        pos += len(piece)
    checked = watch.checked
    event(f"checked: {checked is not None}")
    if checked is not None:
        start, end = checked
        assert bytes(passed) == line[start:end]  # the string's bytes, each handed on once
        assert line[start - 1 : start] == b'"' and line[end : end + 1] == b'"'
    assert read_spans(line, checked) == read_spans(line)
    assert read_spans(bytearray(line), checked) == read_spans(line)


def _plain_before(data: bytes | bytearray, first: int, last: int) -> bool:
    """The check ``LongStringWatch.feed`` made before ``_plain`` (a copy of the string's
    bytes, translated): the reference."""
    return not data[first:last].translate(None, _PLAIN)


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=300) | st.text('ab "\\\x01\x7f\u00e9', max_size=300).map(str.encode),
    st.data(),
    st.booleans(),
)
def test_plain_is_the_copied_check(raw: bytes, data: st.DataObject, mutable: bool) -> None:
    first = data.draw(st.integers(0, len(raw)))
    last = data.draw(st.integers(first, len(raw)))
    piece = bytearray(raw) if mutable else raw
    assert _plain(piece, first, last) == _plain_before(piece, first, last)
