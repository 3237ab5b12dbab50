"""Issue 31's fifth round of ``check`` answers as main's did before it (9fa9b9b): the
one-byte ``in`` tests of the lines written as ints (``0x5C in raw``: ``bytes in bytes``
first tries its operand as an int and clears the TypeError), and the runs' test letting a
long run that is not alphanumeric go by a bound on its distinct bytes (``_COMMON``) before
``set``. Each reference below is a copy of the function as it was on main; lines are built
from runs around the limits (22, 23 and 24 distinct bytes, ``_COMMON``'s bytes and
others), escapes, NULs, DEL, C1 controls and U+FFFD, and compared byte for byte.
"""

from __future__ import annotations

import re
from typing import Any

from cassette_tui.core.scan import _secret_prefilter as P
from cassette_tui.core.scan import lint as L
from hypothesis import example, given, settings
from hypothesis import strategies as st


def _reference_runs_free(raw: bytes, delimiter: bytes) -> bool:
    """``_runs_free`` as it was on main at 9fa9b9b (copied, unchanged but for names)."""
    masked = raw.translate(P._B64_MASK)
    find = masked.find
    at = find(P._MASKED_RUN)
    if at < 0:
        return True
    size = len(masked)
    while at >= 0:
        start = at
        end = find(b" ", start + 16)
        if end < 0:
            end = size
            at = -1
        else:
            at = find(P._MASKED_RUN, end)
        length = end - start
        if length < 23:
            if (
                length == 16
                and start >= P._HEAD_LENGTH
                and raw.startswith(P._DIGEST_HEADS[delimiter], start - P._HEAD_LENGTH)
            ):
                continue
            run = raw[start:end]
            if not run.isalnum() or P._HEX_BYTES.fullmatch(run) is None or len(set(run)) < 9:
                continue
        else:
            run = raw[start:end]
            if (
                length >= P.B64_DECODE_MIN
                and not ((b"/" in run or b"+" in run) and (b"-" in run or b"_" in run))
                and P._run_hides_secret(run)
            ):
                return False
            distinct = len(set(run))
            if distinct < 9 or (
                distinct < 23 and (not run.isalnum() or P._HEX_BYTES.fullmatch(run) is None)
            ):
                continue
        if not P._entropy_skipped(raw, start, delimiter) and P._run_may_be_entropic(run):
            return False
    return True


def _reference_texts_line(raw: bytes) -> bytes | None:
    """``_texts_line`` as it was on main at 9fa9b9b."""
    if b"\x00" in raw:
        return None
    line = raw.replace(b'"', b"\x00")
    if b"\\" not in line:
        return line
    unescaped = P._unescaped(line.split(b"\\"))
    if unescaped is None:
        return None
    line, backslash = unescaped
    if backslash and P._json_text_with_backslash(line):
        return None
    return line


_C1 = re.compile(rb"\xc2[\x80-\x9f]")
_U_OR_B = re.compile(rb"\\[ub]")


def _reference_may_be_binary(raw: bytes) -> bool:
    """``lint._may_be_binary`` as it was on main at 9fa9b9b."""
    return (
        (b"\\" in raw and _U_OR_B.search(raw) is not None)
        or b"\x7f" in raw
        or (
            not raw.isascii()
            and (
                (b"\xef" in raw and b"\xef\xbf\xbd" in raw)
                or (b"\xc2" in raw and _C1.search(raw) is not None)
            )
        )
    )


#: runs of many distinct bytes: the alphabet's rarest first, so a short run already holds
#: 23 that ``_COMMON`` does not cover, and the common ones, so the bound just fails
_RARE = "bfghjkqvwxyzBFGHJKQVWXYZ0123456789"
_COMMON_TEXT = P._COMMON.decode()
_PUNCT = "-/_+="


@st.composite
def _long_runs(draw: Any) -> str:
    """A long run that is not alphanumeric, with about 22 to 24 distinct bytes (or any)."""
    rare = draw(st.integers(0, 12))
    common = draw(st.integers(0, len(_COMMON_TEXT)))
    pool = _RARE[:rare] + _COMMON_TEXT[:common] + draw(st.sampled_from(_PUNCT))
    run = list(pool)
    run += draw(st.lists(st.sampled_from(pool), max_size=30))
    return "".join(draw(st.permutations(run)))


_GLUE = [
    '"',
    '":"',
    '","',
    " ",
    "/",
    "-",
    "é",
    "\\n",
    '\\"',
    "\\u00e9",
    "\\\\",
    "\\b",
    "\x00",
    "\x7f",
    "\u0085",
    "\ufffd",
    '"args_digest":"sha256:',
    '"etag":"',
    '"content":"',
    "{",
    "[",
]
_HEXISH = st.text("0123456789abcdef", min_size=14, max_size=24)


def _line(pieces: list[str]) -> bytes:
    return "".join(pieces).encode("utf-8", "surrogatepass")


_PIECES = st.lists(
    _long_runs() | _HEXISH | st.sampled_from(_GLUE) | st.text(max_size=6), max_size=10
)


@settings(max_examples=500, deadline=None)
@given(pieces=_PIECES, rebuilt=st.booleans())
@example(pieces=['"p":"', "bfghjkqvwxyz0123456-/etaoinr", '"'], rebuilt=False)
@example(pieces=['"p":"', "com/v3/serialize/role/registry-document", '"'], rebuilt=False)
@example(pieces=['"p":"', "bfghjkqvwxyzBFGHJKQVWXYZ-", '"'], rebuilt=True)
def test_the_runs_test_answers_as_main_s(pieces: list[str], rebuilt: bool) -> None:
    raw = _line(pieces)
    delimiter = b"\x00" if rebuilt else b'"'
    if rebuilt:
        raw = raw.replace(b'"', b"\x00")
    assert P._runs_free(raw, delimiter) == _reference_runs_free(raw, delimiter)


@settings(max_examples=400, deadline=None)
@given(pieces=_PIECES)
@example(pieces=["\\\\", '{"a":"', "\\\\", '"}'])
@example(pieces=["\x00", "\\n"])
def test_the_line_rebuild_answers_as_main_s(pieces: list[str]) -> None:
    raw = _line(pieces)
    assert P._texts_line(raw) == _reference_texts_line(raw)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_PIECES, max_size=6))
def test_lines_secret_free_answers_as_with_main_s_pieces(lines: list[list[str]]) -> None:
    raws = [b"{" + _line(pieces) + b"}" for pieces in lines]
    ours = P.lines_secret_free(raws)
    saved = P._runs_free, P._texts_line
    P._runs_free, P._texts_line = _reference_runs_free, _reference_texts_line
    try:
        assert P.lines_secret_free(raws) == ours
    finally:
        P._runs_free, P._texts_line = saved


@settings(max_examples=400, deadline=None)
@given(raw=st.binary(max_size=40) | _PIECES.map(_line))
@example(raw=b"\xef\xbf\xbd")
@example(raw=b"\xc2\x85")
@example(raw=b"\xc2")
@example(raw=b"\\u0000")
def test_the_binary_pre_test_answers_as_main_s(raw: bytes) -> None:
    assert L._may_be_binary(raw) == _reference_may_be_binary(raw)
