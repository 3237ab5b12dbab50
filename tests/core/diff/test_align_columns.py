"""The key alignment in columns (issue 31): its anchors found without a dict an entry are
the plain definition's, and a key's 64-bit token keeps tools apart."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence

from cassette_tui.core.diff import align as al
from cassette_tui.core.diff.model import Status
from hypothesis import given, settings
from hypothesis import strategies as st
from support.clash import Clash
from support.factory import make_cassette


def plain_candidates(ta: Sequence[Hashable], tb: Sequence[Hashable]) -> list[tuple[int, int]]:
    """The anchors' candidates as defined before the columns: tokens unique on both
    sides (patience), else every common token with its n-th occurrences paired."""
    count_a, count_b = Counter(ta), Counter(tb)
    common = count_a.keys() & count_b.keys()
    unique = {t for t in common if count_a[t] == 1 and count_b[t] == 1}
    chosen = unique or common
    pos_b: dict[Hashable, list[int]] = defaultdict(list)
    for j, t in enumerate(tb):
        if t in chosen:
            pos_b[t].append(j)
    seen: Counter[Hashable] = Counter()
    cands = []
    for i, t in enumerate(ta):
        if t in chosen:
            nth = seen[t]
            seen[t] += 1
            if nth < len(pos_b[t]):
                cands.append((i, pos_b[t][nth]))
    return cands


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 40), max_size=60),
    st.lists(st.integers(0, 40), max_size=60),
    st.booleans(),
)
def test_anchor_candidates_are_the_plain_definitions(
    a: list[int], b: list[int], clash: bool
) -> None:
    ta: list[Hashable] = [Clash(x) for x in a] if clash else list(a)
    tb: list[Hashable] = [Clash(x) for x in b] if clash else list(b)
    cands = plain_candidates(ta, tb)
    chain = al._anchors(ta, tb, 0, len(ta), 0, len(tb))
    expected = al._longest_increasing([i for i, _ in cands], [j for _, j in cands])
    assert list(zip(*chain, strict=True)) == list(zip(*expected, strict=True))
    unique = al._unique_anchors(ta, tb, 0, len(ta), 0, len(tb))
    counts_a, counts_b = Counter(ta), Counter(tb)
    if any(counts_a[t] == 1 and counts_b[t] == 1 for t in counts_a):
        assert list(zip(*unique, strict=True)) == cands


def test_same_args_under_two_tools_are_two_keys() -> None:
    # the same args digest under another tool: the key's token differs (the tool's salt)
    a = make_cassette([("search", {}, 1), ("read", {}, 2)])
    b = make_cassette([("read", {}, 2), ("search", {}, 1)])
    assert a.digest(0) == b.digest(0)
    rows = al.align_by_key(a, b)
    assert [(r.a, r.b, r.status) for r in rows] == [
        (0, None, Status.ONLY_A),
        (1, 0, Status.SAME),
        (None, 1, Status.ONLY_B),
    ]
