"""The base64/hex runs' test of the secret prefilter (``_runs_free``) answers as main's did
before issue 31's fourth round (session 14, branch check-runs), which let each run go by
its cheapest test first: a run of 16 to 22 bytes by the ten bytes its 16 hex digits in a
row would cover (``isalnum`` of bytes 6 to 15), a long one by ``_b64_text``'s alphabet
refusal before ``_run_hides_secret`` is called. The reference below is a copy of the
function as it was; lines are built from runs of every length around the limits (15, 16,
22, 23 and ``B64_DECODE_MIN``), of the hex and base64 alphabets, next to args digests,
escapes, non-ASCII text and the line's ends, and ``lines_secret_free`` is compared too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cassette_tui.core.scan import _secret_prefilter as P
from hypothesis import example, given, settings
from hypothesis import strategies as st


def _reference_runs_free(raw: bytes, delimiter: bytes) -> bool:
    """``_runs_free`` as it was on main at 0534484 (copied, unchanged but for names)."""
    masked = raw.translate(P._B64_MASK)
    find = masked.find
    at = find(P._MASKED_RUN)
    if at < 0:
        return True
    digest_head = P._DIGEST_HEADS[delimiter]
    head_length = len(digest_head)
    while at >= 0:
        start = at
        end = find(b" ", start)
        if end < 0:
            end = len(masked)
        at = find(P._MASKED_RUN, end)
        length = end - start
        if length < 23:
            if (
                length == 16
                and start >= head_length
                and raw.startswith(digest_head, start - head_length)
            ):
                continue
            if P._HEX16.search(raw, start, end) is None:
                continue
            run = raw[start:end]
            if P._HEX_BYTES.fullmatch(run) is None or len(set(run)) < 9:
                continue
        else:
            run = raw[start:end]
            if length >= P.B64_DECODE_MIN and P._run_hides_secret(run):
                return False
            distinct = len(set(run))
            if distinct < 9 or (distinct < 23 and P._HEX_BYTES.fullmatch(run) is None):
                continue
        if not P._entropy_skipped(raw, start, delimiter) and P._run_may_be_entropic(run):
            return False
    return True


_HEX = "0123456789abcdefABCDEF"
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_URLSAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_WORDS = "abcdefghijklmnopqrstuvwxyz-/"
_LENGTHS = [14, 15, 16, 17, 21, 22, 23, 24, 25, 28, 32, 40, 44]


@st.composite
def _runs(draw: Any) -> str:
    """A run of one alphabet (or a mix) at a length around the limits, maybe padded."""
    alphabet = draw(st.sampled_from([_HEX, _HEX[:16], _B64, _URLSAFE, _WORDS, _HEX + "-"]))
    length = draw(st.sampled_from(_LENGTHS) | st.integers(1, 60))
    run = draw(st.text(alphabet, min_size=length, max_size=length))
    if draw(st.booleans()):  # a base64 secret, as the scan decodes it
        run = draw(st.sampled_from(_SECRET_B64)) if draw(st.booleans()) else run
    return run + draw(st.sampled_from(["", "", "=", "==", "==="]))


_SECRET_B64 = [
    "Z2hwX2FCY0RlRmdIaUprTG1Ob1BxUnNUdVZ3WHlaMDEyMzQ1Njc4OQ==",
    "ZXhwb3J0IEdJVEhVQl9UT0tFTj1naHBfYUJjRGVGZ0hpSmtMbU5vUHFSc1R1VndYeVowMTIzNDU2Nzg5",
    "QUtJQUlPU0ZPRE5ON0VYQU1QTEU",
    # hex ids over the entropy limit, alone and in runs of 16 to 22 (hex at either end)
    "f645bb258e97cab5",
    "zz-f645bb258e97cab5",
    "f645bb258e97cab5-zz",
    "wxyzq-f645bb258e97cab5",
    "3f2a9c2e1b4d5f60aa3f2a9c2e1b4d5f60aa1234",
    "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
]

_GLUE = [
    '"',
    '":"',
    '","',
    ",",
    " ",
    "/",
    "-",
    ".",
    "é",
    "日本",
    "\\n",
    '\\"',
    "\\u00e9",
    "\\\\",
    "\x00",
    '"args_digest":"sha256:',
    "\x00args_digest\x00:\x00sha256:",
    '"etag":"',
    '"x-req-id":"',
    '"content":"',
    '{"a":"',
    "[",
]


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(_runs() | st.sampled_from(_GLUE) | st.text(max_size=4), max_size=10),
    rebuilt=st.booleans(),
)
@example(pieces=['"args_digest":"sha256:', "1ff6289664b0033a", '"'], rebuilt=False)
@example(pieces=["1ff6289664b0033a"], rebuilt=False)
@example(pieces=["sha256:", "1ff6289664b0033a"], rebuilt=False)
@example(pieces=["xx-3f2a9c2e1b4d5f60"], rebuilt=False)
@example(pieces=["3f2a9c2e1b4d5f60a-x"], rebuilt=True)
@example(pieces=['"etag":"', "3f2a9c2e1b4d5f60aa3f2a9c2e1b4d5f60aa1234", '"'], rebuilt=False)
@example(pieces=['"q":"', _SECRET_B64[0], '"'], rebuilt=False)
@example(pieces=['"q":"', "f645bb258e97cab5", '"'], rebuilt=False)
@example(pieces=['"q":"', "zz-f645bb258e97cab5", '"'], rebuilt=True)
@example(pieces=['"q":"', "wxyzq-f645bb258e97cab5", '"'], rebuilt=False)
@example(pieces=['"q":"', "f645bb258e97cab5-wxyzq", '"'], rebuilt=False)
def test_the_runs_test_answers_as_main_s(pieces: list[str], rebuilt: bool) -> None:
    raw = "".join(pieces).encode("utf-8", "surrogatepass")
    delimiter = b"\x00" if rebuilt else b'"'
    if rebuilt:
        raw = raw.replace(b'"', b"\x00")
    assert P._runs_free(raw, delimiter) == _reference_runs_free(raw, delimiter)


@contextmanager
def _main_s_runs_test() -> Iterator[None]:
    """Main's runs' test in place of ours for the duration."""
    ours = P._runs_free
    P._runs_free = _reference_runs_free
    try:
        yield
    finally:
        P._runs_free = ours


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.lists(_runs() | st.sampled_from(_GLUE), max_size=8), max_size=6))
def test_lines_secret_free_answers_as_with_main_s_runs_test(lines: list[list[str]]) -> None:
    raws = [("{" + "".join(pieces) + "}").encode("utf-8", "surrogatepass") for pieces in lines]
    ours = P.lines_secret_free(raws)
    with _main_s_runs_test():
        assert P.lines_secret_free(raws) == ours


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(
        _runs() | st.sampled_from(_GLUE) | st.text(max_size=4), min_size=1, max_size=12
    ),
    urls=st.integers(0, 80),
    repeat=st.integers(1, 40),
    rebuilt=st.booleans(),
)
@example(pieces=["f645bb258e97cab5"], urls=40, repeat=1, rebuilt=True)
@example(pieces=["wxyzq-f645bb258e97cab5"], urls=40, repeat=1, rebuilt=False)
@example(pieces=[" ", _SECRET_B64[1]], urls=60, repeat=2, rebuilt=True)
def test_the_runs_test_of_a_long_line_answers_as_the_loop_s(
    pieces: list[str], urls: int, repeat: int, rebuilt: bool
) -> None:
    """``runs_free`` of a long line (past ``_SPARSE_MIN``, with many runs of 16 to 22: URLs,
    after which the rest of the line is searched by two masks) answers as ``_runs_free``
    and main's copy above, whatever runs follow the URLs."""
    head = " ".join(f"https://reader{i}@example.com/docs/page/{i}" for i in range(urls))
    raw = (head + " " + "".join(pieces) * repeat).encode("utf-8", "surrogatepass")
    raw += b" " * max(0, P._SPARSE_MIN - len(raw))
    delimiter = b"\x00" if rebuilt else b'"'
    if rebuilt:
        raw = raw.replace(b'"', b"\x00")
    assert P.runs_free(raw, delimiter) == P._runs_free(raw, delimiter)
    assert P.runs_free(raw, delimiter) == _reference_runs_free(raw, delimiter)
