"""The key alignment's chain of anchors (``align._longest_increasing``, issue 31: its
tails in temporary files while spilling, 16 bytes an anchor) is the chain of the plain
patience method it replaced, in memory and spilled."""

from __future__ import annotations

from array import array
from bisect import bisect_left

from cassette_tui.core.diff import align as al
from cassette_tui.core.format import spill
from hypothesis import given
from hypothesis import strategies as st


def _reference(cand_a: list[int], cand_b: list[int]) -> tuple[list[int], list[int]]:
    """The former code: tails grown by ``append``, ``bisect_left`` over all of them."""
    tails: list[int] = []
    tail_idx: list[int] = []
    prev = [-1] * len(cand_a)
    for ci, bj in enumerate(cand_b):
        pos = bisect_left(tails, bj)
        if pos == len(tails):
            tails.append(bj)
            tail_idx.append(ci)
        else:
            tails[pos] = bj
            tail_idx[pos] = ci
        prev[ci] = tail_idx[pos - 1] if pos else -1
    chain: list[tuple[int, int]] = []
    ci = tail_idx[-1] if tail_idx else -1
    while ci >= 0:
        chain.append((cand_a[ci], cand_b[ci]))
        ci = prev[ci]
    chain.reverse()
    return [a for a, _ in chain], [b for _, b in chain]


#: candidates: distinct increasing A indexes, B indexes with repeats, runs in order and out
candidates = st.lists(st.integers(0, 30), max_size=60)


@given(candidates, st.booleans())
def test_the_chain_is_the_plain_methods(cand_b: list[int], spilled: bool) -> None:
    cand_a = list(range(0, 2 * len(cand_b), 2))
    expected = _reference(cand_a, cand_b)
    if spilled:
        old = spill.SPILL_MIN_ITEMS
        spill.SPILL_MIN_ITEMS = 1
        try:
            with spill.spilling():
                chain_a, chain_b = al._longest_increasing(array("q", cand_a), array("q", cand_b))
        finally:
            spill.SPILL_MIN_ITEMS = old
    else:
        chain_a, chain_b = al._longest_increasing(array("q", cand_a), array("q", cand_b))
    assert (list(chain_a), list(chain_b)) == expected
