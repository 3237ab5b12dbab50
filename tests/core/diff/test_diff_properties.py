"""Properties of diff and alignment (hypothesis)."""

from __future__ import annotations

from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.entry import Entry
from hypothesis import given, settings
from hypothesis import strategies as st

TOOLS = st.sampled_from(["search", "read", "poll"])
ARGS = st.fixed_dictionaries({"q": st.integers(0, 3)})
RESPONSES = st.one_of(
    st.integers(0, 2),
    st.just(1.0),
    st.fixed_dictionaries({"status": st.sampled_from([200, 429])}),
)
CALLS = st.lists(st.tuples(TOOLS, ARGS, RESPONSES), max_size=14)

MIRROR = {
    Status.ONLY_A: Status.ONLY_B,
    Status.ONLY_B: Status.ONLY_A,
}


def make(calls) -> Cassette:
    return Cassette.from_entries(
        Entry(seq, tool, args, response) for seq, (tool, args, response) in enumerate(calls, 1)
    )


@settings(max_examples=150, deadline=None)
@given(CALLS)
def test_a_cassette_diffed_with_itself_is_all_same(calls) -> None:
    c = make(calls)
    for align in ("seq", "key"):
        result = diff_cassettes(c, c, align)
        assert result.is_same and result.findings == []
        assert all(r.status is Status.SAME for r in result.rows)
        assert len(result.rows) == len(c)


@settings(max_examples=200, deadline=None)
@given(CALLS, CALLS)
def test_alignment_never_loses_or_duplicates_a_step(calls_a, calls_b) -> None:
    a, b = make(calls_a), make(calls_b)
    for align in ("seq", "key"):
        rows = diff_cassettes(a, b, align).rows
        assert [r.a for r in rows if r.a is not None] == list(range(len(a)))
        # every B step once; in order, but for the moved calls (a reordered run)
        assert sorted(r.b for r in rows if r.b is not None) == list(range(len(b)))
        in_order = [r.b for r in rows if r.b is not None and r.status is not Status.MOVED]
        assert in_order == sorted(in_order)
        for r in rows:
            assert (r.a is None) == (r.status is Status.ONLY_B)
            assert (r.b is None) == (r.status is Status.ONLY_A)
            if align == "key" and r.a is not None and r.b is not None:
                assert a.tool(r.a) == b.tool(r.b)


@settings(max_examples=200, deadline=None)
@given(CALLS, CALLS)
def test_a_versus_b_mirrors_b_versus_a(calls_a, calls_b) -> None:
    a, b = make(calls_a), make(calls_b)
    for align in ("seq", "key"):
        ab = diff_cassettes(a, b, align)
        ba = diff_cassettes(b, a, align)
        pairs_ab = {(r.a, r.b, MIRROR.get(r.status, r.status)) for r in ab.rows}
        pairs_ba = {(r.b, r.a, r.status) for r in ba.rows}
        if align == "seq":
            assert pairs_ab == pairs_ba
        else:
            # An LCS with ties may pick other steps from the other side, so the rows need
            # not mirror one to one; the number of identical pairs (the LCS length of the
            # first pass) must, and every pair has the same status seen from either side.
            assert sum(r.status is Status.SAME for r in ab.rows) == sum(
                r.status is Status.SAME for r in ba.rows
            )
            for r in ab.rows:
                if r.a is not None and r.b is not None:
                    swapped = make([calls_b[r.b]]), make([calls_a[r.a]])
                    (single,) = diff_cassettes(*swapped, "seq").rows
                    # a moved pair is the same call with the same answer, elsewhere
                    expected = Status.SAME if r.status is Status.MOVED else r.status
                    assert single.status is expected
        assert ab.is_same == ba.is_same
        assert (ab.first_divergence is None) == (ba.first_divergence is None)
