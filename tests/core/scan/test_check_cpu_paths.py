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


def _repeated_reference(
    cassette: Any, digests: list[str], failed: bytearray, header_forms: dict[int, str]
) -> dict[int, list[Finding]]:
    """The repeated-key test as it was before (main at 6b6ba7c)."""
    from collections import Counter

    from cassette_tui.core.format.outcome import same_stored_outcomes
    from cassette_tui.core.keys.repeats import (
        NO_HEADERS_FORM,
        REPEATED_SENTENCE,
        classify,
        plainly_repeated,
    )
    from cassette_tui.core.keys.replay_key import KeyIndex

    counts = Counter(digests)
    if len(counts) == len(digests):
        return {}
    twice = {dig for dig, count in counts.items() if count > 1}
    at = [i for i, d in enumerate(digests) if d in twice]
    positions = KeyIndex.from_keys(((cassette.tool(i), digests[i]) for i in at), at).repeated()
    found: dict[int, list[Finding]] = {}
    for (tool, dig), idxs in positions.items():
        seqs = [cassette.seq(i) for i in idxs]
        forms = {header_forms.get(i, NO_HEADERS_FORM) for i in idxs}
        fails = sum(failed[i] for i in idxs)
        if plainly_repeated(fails, len(idxs), forms) or same_stored_outcomes(cassette, idxs):
            kind, why = "repeated_key", REPEATED_SENTENCE
        else:
            kind, why = classify([cassette._entry(i) for i in idxs])
        found[idxs[0]] = [
            Finding(
                kind=kind,
                seq=seqs[0],
                message=f"{tool} {dig} recorded {len(seqs)} times (seq "
                f"{', '.join(map(str, seqs))}): {why}",
                seqs=tuple(seqs),
            )
        ]
    return found


_OUTCOMES = [
    {"response": {"hits": 1}},
    {"response": "Error: timeout"},
    {"error": {"type": "TimeoutError", "message": "timed out"}},
    {"error": {"type": "ValueError", "message": "bad"}},
]
_lines = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),  # tool
        st.sampled_from(["x", "y", "é"]),  # the q arg
        st.sampled_from(range(len(_OUTCOMES))),
        st.sampled_from([None, {"Accept": "text/csv"}, {"Accept": "application/json"}]),
        st.sampled_from(["right", "stale", "none", "other"]),  # the stored digest
    ),
    min_size=1,
    max_size=14,
)


@settings(max_examples=120, deadline=None)
@given(_lines)
def test_tail_findings_as_before_on_real_cassettes(made: list[Any]) -> None:
    """A cassette file of calls with repeated keys (a tool's args written again), header
    variants, errors, and stored digests right, stale, absent or of another form: the
    stale-digest and repeated-key findings of lint's pass are main's, one by one."""
    import json
    import tempfile
    from pathlib import Path

    from cassette_tui.core.format.cassette import load
    from cassette_tui.core.format.digest import digest

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.jsonl"
        lines = []
        for seq, (tool, q, outcome, headers, stored) in enumerate(made, 1):
            record: dict[str, Any] = {"seq": seq, "tool": tool, "args": {"q": q}}
            if stored != "none":
                record["args_digest"] = {
                    "right": digest({"q": q}),
                    "stale": digest({"q": q + "!"}),
                    "other": "md5:abc",
                }[stored]
            record.update(_OUTCOMES[outcome])
            if headers is not None:
                record["request_headers"] = headers
            lines.append(json.dumps(record, separators=(",", ":"), ensure_ascii=False))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cassette = load(path)
        passes = lint._entry_passes_all(cassette, None, None)
        assert lint._stale_digest_findings(cassette, passes.digests) == _stale_reference(
            cassette, passes.digests
        )
        assert lint._repeated_key_findings(
            cassette, passes.digests, passes.failed, passes.header_forms
        ) == _repeated_reference(cassette, passes.digests, passes.failed, passes.header_forms)
