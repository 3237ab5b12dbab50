"""``check``'s faster paths (issue 31, branch check-3x) give what the paths they replaced
gave, for any input (hypothesis):

- the stale-digest test compares the stored digests with the recomputed ones joined, block
  by block (``lint._stale_candidates``), where it made a text per entry from the stored
  column: the same findings, for stored columns with no digest, another text, or standard
  digests, and recomputed digests equal or not, of any length;
- a line's binary test (``lint._may_be_binary``) skips the U+FFFD and C1 tests of an ASCII
  line: the same answer as the four tests in turn.
"""

from __future__ import annotations

import re
from typing import Any

from cassette_tui.core.format.columns import DigestColumn
from cassette_tui.core.format.findings import Finding
from cassette_tui.core.scan import lint
from hypothesis import given, settings
from hypothesis import strategies as st

HEX = "0123456789abcdef"
standard = st.text(HEX, min_size=16, max_size=16).map("sha256:".__add__)
#: stored texts: standard digests from a small pool (so equal ones come up), none, or
#: another text (upper-case hex, short, the prefix alone)
stored_text = st.one_of(
    st.sampled_from(["sha256:" + c * 16 for c in "0af"]),
    standard,
    st.none(),
    st.sampled_from(["sha256:ABCDEF0123456789", "sha256:12", "md5:x", "sha256:"]),
)


class _Stub:
    """What ``_stale_digest_findings`` reads of a cassette: its stored digest column."""

    def __init__(self, stored: list[str | None]) -> None:
        self._stored = DigestColumn(stored)

    def stored_digests(self) -> DigestColumn:
        return self._stored

    def stored_digest(self, i: int) -> str | None:
        return self._stored[i]

    def seq(self, i: int) -> int:
        return i + 1


def _stale_reference(cassette: Any, digests: list[str]) -> dict[int, list[Finding]]:
    """The test as it was before (main at 6b6ba7c): a text per entry, compared in turn."""
    stored = map(cassette.stored_digest, range(len(digests)))
    return {
        i: [
            Finding(
                kind="stale_digest",
                seq=cassette.seq(i),
                path="$.args_digest",
                message=f"stored args digest {old} but its args now digest to {new}: "
                "args edited after recording, or different normalization rules",
            )
        ]
        for i, (old, new) in enumerate(zip(stored, digests, strict=True))
        if old is not None and old != new
    }


@st.composite
def stored_and_digests(draw: Any) -> tuple[list[str | None], list[str]]:
    stored = draw(st.lists(stored_text, max_size=40))
    # each recomputed digest: the stored one when standard (most entries), or another
    digests = []
    for old in stored:
        same = old is not None and len(old) == 23 and draw(st.booleans())
        digests.append(old if same else draw(standard | st.sampled_from(["sha256:ab", "x"])))
    return stored, digests


@settings(max_examples=300, deadline=None)
@given(stored_and_digests())
def test_stale_digests_as_the_text_compare_found_them(
    pair: tuple[list[str | None], list[str]],
) -> None:
    stored, digests = pair
    cassette = _Stub(stored)
    got = lint._stale_digest_findings(cassette, digests)  # type: ignore[arg-type]
    assert got == _stale_reference(cassette, digests)
    # and the found positions are exactly the differing ones
    assert sorted(got) == [
        i for i, (a, b) in enumerate(zip(stored, digests, strict=True)) if a is not None and a != b
    ]


def test_stale_digests_in_blocks_past_the_first() -> None:
    """A column of several blocks (``_STALE_BLOCK`` entries each) with one stale digest
    in the third block and one at the very end: both found, nothing else."""
    n = 3 * lint._STALE_BLOCK + 5
    stored: list[str | None] = [f"sha256:{i:016x}" for i in range(n)]
    digests = [s for s in stored if s is not None]
    digests[2 * lint._STALE_BLOCK + 7] = "sha256:" + "f" * 16
    digests[-1] = "sha256:" + "e" * 16
    cassette = _Stub(stored)
    got = lint._stale_digest_findings(cassette, digests)  # type: ignore[arg-type]
    assert got == _stale_reference(cassette, digests)
    assert sorted(got) == [2 * lint._STALE_BLOCK + 7, n - 1]


_C1 = re.compile(rb"\xc2[\x80-\x9f]")
_ESC = re.compile(rb"\\[ub]")


def _may_be_binary_reference(raw: bytes) -> bool:
    """The binary test as it was before: the four tests in turn."""
    return (
        (b"\\" in raw and _ESC.search(raw) is not None)
        or b"\x7f" in raw
        or (b"\xef" in raw and b"\xef\xbf\xbd" in raw)
        or (b"\xc2" in raw and _C1.search(raw) is not None)
    )


#: pieces a line is made of: plain text, escapes, DEL, U+FFFD and its parts, C1 controls
#: and other two-byte sequences, other non-ASCII text
_PIECES = st.sampled_from(
    [
        b'{"a":"x"}',
        b"text ",
        b"\\u0000",
        b"\\b",
        b"\\n",
        b"\\\\",
        b"u",
        b"\x7f",
        b"\xef\xbf\xbd",
        b"\xef\xbf",
        b"\xef",
        b"\xc2\x85",
        b"\xc2\xa0",
        b"\xc2",
        "é".encode(),
        "日本".encode(),
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES | st.binary(max_size=4), max_size=12).map(b"".join))
def test_binary_test_answers_as_the_four_tests(raw: bytes) -> None:
    assert lint._may_be_binary(raw) == _may_be_binary_reference(raw)
