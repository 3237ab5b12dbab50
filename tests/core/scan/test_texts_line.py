"""The secret prefilter's line rebuild (``_secret_prefilter._texts_line``) gives what a JSON parser
reads: each string's decoded text between ``\\x00`` delimiters.

Session 6 made the rebuild one pass over the escapes (split at the backslashes) instead of
a chain of replaces plus a regex with a callback per quote on lines with an escaped
backslash (224 us a line there). ``_reference`` below is the rebuild as it was (6eb101f ..
994c19f), kept here as the oracle: the two agree on every JSON line.
"""

from __future__ import annotations

import json
import re
import tracemalloc
from typing import Any
from unittest import mock

from cassette_tui.core.scan import _secret_prefilter
from cassette_tui.core.scan._secret_prefilter import _candidate_runs, _texts_line
from hypothesis import example, given, settings
from hypothesis import strategies as st

# -- the rebuild as it was (994c19f), the oracle ---------------------------------------------
_ESCAPES = {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"b": b"\b", b"f": b"\f", b"/": b"/"}
_UNICODE_ESCAPE = re.compile(
    rb"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})"
)
_JSON_ESCAPE = re.compile(
    rb"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})"
    rb'|\\(["\\/bfnrt])|"'
)
_SIMPLE_ESCAPES = {b'"': b'"', b"\\": b"\\", **_ESCAPES}


def _unicode_char(m: re.Match[bytes]) -> bytes:
    if m.group(3) is not None:
        code = int(m.group(3), 16)
        if 0xD800 <= code <= 0xDFFF or code in (0, 0x5C):
            raise ValueError("a lone surrogate, a NUL or a backslash")
    else:
        code = 0x10000 + ((int(m.group(1), 16) - 0xD800) << 10) + int(m.group(2), 16) - 0xDC00
    return chr(code).encode("utf-8")


def _exact_char(m: re.Match[bytes]) -> bytes:
    if m.group(4) is not None:
        return _SIMPLE_ESCAPES[m.group(4)]
    if m.group(0) == b'"':
        return b"\x00"
    return _unicode_char(m)


def _reference_exact(raw: bytes) -> bytes | None:
    try:
        line = _JSON_ESCAPE.sub(_exact_char, raw)
    except ValueError:
        return None
    if b"\\" in line:
        for text in line.split(b"\x00")[1::2]:
            if b"\\" in text and (b"{" in text or b"[" in text):
                return None
    return line


def _reference(raw: bytes) -> bytes | None:
    if b"\x00" in raw or b"\x01" in raw:
        return None
    if b"\\" not in raw:
        return raw.replace(b'"', b"\x00")
    if b"\\\\" in raw:
        return _reference_exact(raw)
    line = raw.replace(b'\\"', b"\x01").replace(b'"', b"\x00").replace(b"\x01", b'"')
    for code, char in _ESCAPES.items():
        line = line.replace(b"\\" + code, char)
    if b"\\u" in line:
        try:
            line = _UNICODE_ESCAPE.sub(_unicode_char, line)
        except ValueError:
            return None
    if b"\\" in line:
        return None
    return line


# -- JSON lines with every kind of escape ------------------------------------------------------
_odd_text = st.lists(
    st.sampled_from(
        ['"', "\\", "/", "\n", "\t", "\r", "\b", "\f", "\x00", "\x01", "\x1f", "{", "[", "a"]
        + ["é", "\u2028", "\ud83d\ude00", "\ud800", "\udc00", "\ufffd", " ", ":", "u", "0"]
    ),
    max_size=12,
).map("".join)
_texts = st.one_of(st.text(max_size=12), _odd_text)
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | _texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_texts, inner, max_size=3),
    max_leaves=8,
)


def _lines(value: Any) -> list[bytes]:
    return [
        json.dumps(value, ensure_ascii=True).encode("utf-8"),
        json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"),
        json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogatepass"
        ),
    ]


@settings(max_examples=400, deadline=None)
@given(value=_values)
@example(value={"p": "C:\\x", "q": 'a\\"b'})
@example(value=["\\", '\\"', "\\\\", "\ud83d\ude00", "\ud800", "\udc00x", "\x00", "\\u005c"])
@example(value={"re": "entry\\(", "json": '{"a": "\\n"}'})
def test_the_rebuild_is_the_old_one(value: Any) -> None:
    for raw in _lines(value):
        assert _texts_line(raw) == _reference(raw), raw


@settings(max_examples=200, deadline=None)
@given(value=_values)
@example(value=["\\" * 9, "\\u00e9\n" * 5, '\\"' * 7])
def test_the_rebuild_in_blocks_is_the_old_one(value: Any) -> None:
    """The rebuild joins its parts a block at a time past ``_JOIN_BLOCK`` of them (a line
    of millions of escapes): here blocks of 3 parts, so every line crosses blocks."""
    with mock.patch.object(_secret_prefilter, "_JOIN_BLOCK", 3):
        for raw in _lines(value):
            assert _texts_line(raw) == _reference(raw), raw


def test_a_line_of_many_escapes_is_rebuilt_in_memory_of_its_size() -> None:
    """A line of 500,000 escaped backslashes (1 MB): joined at once, the rebuild held a
    buffer view of 80 bytes for each of its 1M parts (96 bytes a byte of the line; 2M
    escapes took 400 MB); joined in blocks, a few lists of pointers."""
    raw = json.dumps({"p": "\\" * 500_000}).encode()
    tracemalloc.start()
    try:
        rebuilt = _texts_line(raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rebuilt == _reference(raw)
    assert peak < 40 * len(raw), peak / len(raw)


def test_each_text_is_its_decoded_value_between_delimiters() -> None:
    value = {"k\n": 'a"b\\c/d\u00e9\U0001f600', "t": "\t\r\b\f"}
    raw = json.dumps(value).encode("ascii")
    rebuilt = _texts_line(raw)
    assert rebuilt is not None
    texts = rebuilt.split(b"\x00")[1::2]
    want = [t.encode("utf-8") for pair in value.items() for t in pair]
    assert texts == want


def test_what_cannot_be_rebuilt_is_none() -> None:
    assert _texts_line(b'{"a":"\\u0000"}') is None  # a NUL
    assert _texts_line(b'{"a":"\\u005c"}') is None  # a backslash written as \u
    assert _texts_line(b'{"a":"\\ud800"}') is None  # a lone surrogate
    assert _texts_line(b'{"a":"\\ud800\\u0041"}') is None  # a high half without its low
    assert _texts_line(b'{"a":"\\x41"}') is None  # not a JSON escape
    assert _texts_line(b'{"a":"\\\\{\\"k\\": 1}"}') is None  # JSON in a text, a backslash
    assert _texts_line(b'{"a":"x"}\\') is None  # a lone backslash at the end
    assert _texts_line(b'{"a":"C:\\\\x"}') == b"{\x00a\x00:\x00C:\\x\x00}"


# -- the base64 runs the entropy test may call random ------------------------------------
_RUN_RE = re.compile(rb"[A-Za-z0-9+/\-_=]{23,}|[0-9a-fA-F]{16,}")
_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=")


def _reference_runs(raw: bytes) -> list[tuple[int, int]]:
    """The runs as the prefilter found them until session 6: each match of the runs'
    regex, widened to the whole base64 run around it; each run once."""
    spans: list[tuple[int, int]] = []
    for m in _RUN_RE.finditer(raw):
        start, end = m.span()
        while start and raw[start - 1] in _B64:
            start -= 1
        while end < len(raw) and raw[end] in _B64:
            end += 1
        if (start, end) not in spans:
            spans.append((start, end))
    return spans


_run_bytes = st.lists(
    st.sampled_from([b"a", b"F", b"0", b"9", b"+", b"/", b"-", b"_", b"=", b"g", b"Z"])
    | st.sampled_from([b" ", b"\x00", b":", b"\\", b".", b"\xc3\xa9"]),
    max_size=80,
).map(b"".join)


@settings(max_examples=500, deadline=None)
@given(raw=_run_bytes)
@example(raw=b"0123456789abcdef")
@example(raw=b"g0123456789abcdefg")
@example(raw=b"x" * 22 + b" " + b"x" * 23)
@example(raw=b"0123456789abcde gg 0123456789abcdef0")
def test_the_candidate_runs_are_those_the_regex_found(raw: bytes) -> None:
    assert list(_candidate_runs(raw)) == _reference_runs(raw)
