"""While spilling, the key alignment's pass tokens (``align._pass_tokens``) and the
anchor candidates of a region counted a hash partition at a time (``_parted_anchors``)
are written to their temporary files a batch of ``_SIDE_BATCH`` items at a time, never
made whole in memory first (issue 31: two 8 MB columns at 1M entries), and read the same
as the columns made in memory (the code before, kept here as reference)."""

from __future__ import annotations

from array import array
from typing import Any

import pytest
from cassette_tui.core.diff import align as al
from cassette_tui.core.format import spill
from cassette_tui.core.format.outcome import Fingerprints, Outcomes
from hypothesis import given, settings
from hypothesis import strategies as st

u64 = st.integers(0, (1 << 64) - 1)
i64 = st.integers(-(1 << 63), (1 << 63) - 1)


class _Batches:
    """Records the size of every batch a spool is given."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def spool(self, typecode: str) -> spill.Spool:
        out = spill.Spool(typecode)
        add = out.add

        def counted(items: array[int]) -> None:
            self.sizes.append(len(items))
            add(items)

        out.add = counted  # type: ignore[method-assign]
        return out


def _side(keys: list[int], fps: list[int], errs: list[bool]) -> Any:
    outcomes = Outcomes(Fingerprints(fps), errs)
    return al._Side(None, array("Q", keys), array("i", [0] * len(keys)), outcomes, bytearray())  # type: ignore[arg-type]


def _old_pass_tokens(sa: Any, sb: Any, depth: int) -> tuple[list[int], list[int]]:
    if depth == 0:
        return (
            list(al._mix(sa.keys, sa.outcomes.fingerprints)),
            list(al._mix(sb.keys, sb.outcomes.fingerprints)),
        )
    return list(al._mix(sa.keys, sa.outcomes.errors)), list(al._mix(sb.keys, sb.outcomes.errors))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(u64, i64, st.booleans()), max_size=40),
    st.lists(st.tuples(u64, i64, st.booleans()), max_size=40),
    st.sampled_from([0, 1]),
    st.integers(1, 9),
)
def test_pass_tokens_are_spooled_a_batch_at_a_time_as_the_whole_column(
    a: list, b: list, depth: int, batch: int
) -> None:
    sa, sb = (_side(*map(list, zip(*x, strict=True))) if x else _side([], [], []) for x in (a, b))
    expected = _old_pass_tokens(sa, sb, depth)
    batches = _Batches()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spill, "SPILL_MIN_ITEMS", 1)
        mp.setattr(al, "_SIDE_BATCH", batch)
        mp.setattr(al, "Spool", batches.spool)
        with spill.spilling():
            ta, tb = al._pass_tokens(sa, sb, depth)
            assert [list(ta), list(tb)] == list(expected)
    assert all(size <= batch for size in batches.sizes)
    # every non-empty side went through a spool, one batch per step
    assert len(batches.sizes) >= sum(-(-len(x) // batch) for x in (a, b))


def _old_parted_candidates(found: list[int], a0: int) -> tuple[list[int], list[int]]:
    return (
        [a0 + k for k, j in enumerate(found) if j >= 0],
        [j for j in found if j >= 0],
    )


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 30), max_size=60),
    st.lists(st.integers(0, 30), max_size=60),
    st.sampled_from([2, 5, 16]),
    st.integers(1, 7),
)
def test_parted_anchor_candidates_are_spooled_a_batch_at_a_time(
    a: list[int], b: list[int], part_tokens: int, batch: int
) -> None:
    whole = al._anchors(a, b, 0, len(a), 0, len(b))
    seen: list[tuple[list[int], list[int]]] = []
    longest = al._longest_increasing

    def chain(cand_a: Any, cand_b: Any) -> Any:
        seen.append((list(cand_a), list(cand_b)))
        return longest(cand_a, cand_b)

    batches = _Batches()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spill, "SPILL_MIN_ITEMS", 1)
        mp.setattr(al, "_PART_TOKENS", part_tokens)
        mp.setattr(al, "_SIDE_BATCH", batch)
        mp.setattr(al, "Spool", batches.spool)
        mp.setattr(al, "_longest_increasing", chain)
        with spill.spilling():
            parted = al._anchors(a, b, 0, len(a), 0, len(b))
            parted = tuple(list(x) for x in parted)
    assert [list(x) for x in parted] == [list(x) for x in whole]
    assert all(size <= batch for size in batches.sizes)
    if seen and batches.sizes:  # candidates found by partition: both columns spooled
        cand_a, cand_b = seen[0]
        unique = {t for t in a if a.count(t) == 1 and b.count(t) == 1}
        assert sorted(zip(cand_a, cand_b, strict=True)) == sorted(
            (i, b.index(a[i])) for i in range(len(a)) if a[i] in unique
        )
        # per column, one batch a step, then the view's empty tail
        assert len(batches.sizes) == 2 * (-(-len(a) // batch) + 1)
