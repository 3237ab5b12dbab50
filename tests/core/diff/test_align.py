"""Alignment by seq and by call key (core/diff/align.py)."""

from __future__ import annotations

import itertools
import random

import pytest
from cassette_tui.core.diff.align import (
    align,
    align_by_key,
    align_by_seq,
    is_error_outcome,
    match_tokens,
    outcome_index,
)
from cassette_tui.core.diff.model import Status
from cassette_tui.core.format.cassette import Cassette, load
from support.factory import make_cassette


def cassette(*calls: tuple) -> Cassette:
    """Entries from (tool, args, response) triples; a response {"__error__": msg} raises."""
    return make_cassette(calls)


def lcs_length(a: list, b: list) -> int:
    dp = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            dp[i + 1][j + 1] = dp[i][j] + 1 if x == y else max(dp[i][j + 1], dp[i + 1][j])
    return dp[-1][-1]


def test_match_tokens_is_an_exact_lcs_on_small_inputs() -> None:
    rnd = random.Random(7)
    for _ in range(400):
        a = [rnd.randint(0, 4) for _ in range(rnd.randint(0, 25))]
        b = [rnd.randint(0, 4) for _ in range(rnd.randint(0, 25))]
        pairs = match_tokens(a, b)
        assert all(a[i] == b[j] for i, j in pairs)
        assert all(p[0] < q[0] and p[1] < q[1] for p, q in itertools.pairwise(pairs))
        assert len(pairs) == lcs_length(a, b), (a, b)


def test_match_tokens_large_inputs_use_anchors_and_stay_valid(monkeypatch) -> None:
    import cassette_tui.core.diff.align as mod

    monkeypatch.setattr(mod, "_MYERS_MAX_SIZE", 0)  # force the patience path everywhere
    rnd = random.Random(3)
    a = [rnd.randint(0, 50) for _ in range(300)]
    b = list(a)
    for _ in range(20):
        b.insert(rnd.randint(0, len(b)), 99)
    pairs = match_tokens(a, b)
    assert all(a[i] == b[j] for i, j in pairs)
    assert all(p[0] < q[0] and p[1] < q[1] for p, q in itertools.pairwise(pairs))
    assert len(pairs) == len(a)  # every original token is found again


def test_disjoint_and_identical_token_lists() -> None:
    assert match_tokens(list(range(1000)), list(range(1000, 2000))) == []
    assert match_tokens(list(range(1000)), list(range(1000))) == [(i, i) for i in range(1000)]


def test_by_seq_statuses() -> None:
    a = cassette(
        ("search", {"q": "x"}, {"hits": 1}),
        ("search", {"q": "x"}, {"hits": 1}),
        ("read", {"path": "a"}, {"text": "A"}),
        ("search", {"q": "y"}, {"hits": 2}),
        ("read", {"path": "b"}, {"text": "B"}),
    )
    b = cassette(
        ("search", {"q": "x"}, {"hits": 1}),
        ("search", {"q": "x"}, {"hits": 9}),
        ("read", {"path": "z"}, {"text": "A"}),
        ("read", {"path": "b"}, {"text": "B"}),
    )
    rows = align_by_seq(a, b)
    assert [r.status for r in rows] == [
        Status.SAME,
        Status.RESPONSE_DRIFT,
        Status.ARGS_DRIFT,
        Status.OTHER_CALL,
        Status.ONLY_A,
    ]
    assert [(r.a_seq, r.b_seq) for r in rows] == [(1, 1), (2, 2), (3, 3), (4, 4), (5, None)]
    assert rows[0].repeated_a and rows[0].repeated_b  # search {"q": "x"} twice on each side
    assert not rows[2].repeated_a
    assert rows[3].tool == "search"  # A's tool when the tools differ


def test_by_key_inserted_retry_is_one_sided_and_later_rows_do_not_shift() -> None:
    ok = {"status": 200, "top": "doc.md"}
    a = cassette(
        ("search", {"q": "x"}, {"status": 429}),
        ("search", {"q": "x"}, {"status": 429}),
        ("search", {"q": "x"}, ok),
        ("read", {"path": "doc.md"}, {"text": "t"}),
    )
    b = cassette(("search", {"q": "x"}, ok), ("read", {"path": "doc.md"}, {"text": "t"}))
    rows = align_by_key(a, b)
    assert [(r.a_seq, r.b_seq, r.status) for r in rows] == [
        (1, None, Status.ONLY_A),
        (2, None, Status.ONLY_A),
        (3, 1, Status.SAME),
        (4, 2, Status.SAME),
    ]
    assert rows[0].error_a and rows[1].error_a and not rows[2].error_a
    # by seq the same runs shift: every row after the first differs
    assert [r.status for r in align_by_seq(a, b)] == [
        Status.RESPONSE_DRIFT,
        Status.OTHER_CALL,
        Status.ONLY_A,
        Status.ONLY_A,
    ]


def test_by_key_nth_occurrence_pairs_with_nth() -> None:
    a = cassette(*[("poll", {"job": 1}, {"n": i}) for i in range(3)])
    b = cassette(*[("poll", {"job": 1}, {"n": i + 10}) for i in range(3)])
    rows = align_by_key(a, b)
    assert [(r.a_seq, r.b_seq) for r in rows] == [(1, 1), (2, 2), (3, 3)]
    assert all(r.status is Status.RESPONSE_DRIFT for r in rows)


def test_by_key_pairs_identical_steps_before_same_key() -> None:
    a = cassette(("get", {"k": 1}, {"v": "old"}), ("get", {"k": 1}, {"v": "new"}))
    b = cassette(("get", {"k": 1}, {"v": "new"}))
    rows = align_by_key(a, b)
    assert [(r.a_seq, r.b_seq, r.status) for r in rows] == [
        (1, None, Status.ONLY_A),
        (2, 1, Status.SAME),
    ]


def test_by_key_same_tool_other_args_is_args_drift() -> None:
    a = cassette(("search", {"q": "x"}, {"h": 1}), ("read", {"path": "a.md"}, {"t": 1}))
    b = cassette(("search", {"q": "x"}, {"h": 1}), ("read", {"path": "b.md"}, {"t": 1}))
    rows = align_by_key(a, b)
    assert [r.status for r in rows] == [Status.SAME, Status.ARGS_DRIFT]


def test_error_entry_against_success_is_flagged() -> None:
    a = cassette(("get", {"k": 1}, {"__error__": "boom"}))
    b = cassette(("get", {"k": 1}, {"v": 1}))
    (row,) = align(a, b, "seq")
    assert row.status is Status.RESPONSE_DRIFT
    assert row.error_a and not row.error_b


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ({"status": 429}, True),
        ({"status_code": 503, "body": ""}, True),
        ({"status": {"code": 404, "message": "Not Found"}}, True),
        ({"status": "500"}, True),
        ({"status": 200}, False),
        ({"status": "ok"}, False),
        ({"code": 42}, False),
        ([429], False),
        ("HTTP 429", False),
    ],
)
def test_is_error_outcome(response, expected) -> None:
    assert is_error_outcome(False, response) is expected


def test_outcome_index_file_scan_matches_entry_access(tmp_path, samples) -> None:
    c = load(samples / "fail.jsonl")
    scanned = outcome_index(c)
    in_memory = outcome_index(Cassette.from_entries(list(c)))
    assert scanned.fingerprints == in_memory.fingerprints
    assert scanned.errors == in_memory.errors == [True] * 4 + [False] * 3


def test_unknown_alignment_raises() -> None:
    with pytest.raises(ValueError, match="unknown alignment"):
        align(cassette(), cassette(), "time")


def test_real_bugcase_07_retry_after_error(real) -> None:
    """The failing side has one extra call, a 429, whose key equals the next call's, which
    matches the passing run's only call."""
    case = real / "bugcases" / "07_retry_after_error"
    fail, ok = load(case / "fail.jsonl"), load(case / "pass.jsonl")
    assert fail.key(0) == fail.key(1) == ok.key(0)
    rows = align_by_key(fail, ok)
    assert [(r.a_seq, r.b_seq, r.status) for r in rows] == [
        (1, None, Status.ONLY_A),
        (2, 1, Status.SAME),
    ]
    assert rows[0].error_a and rows[0].repeated_a
