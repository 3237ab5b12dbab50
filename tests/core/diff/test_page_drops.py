"""The passes that read a spilled column (``format/spill.py``) from start to end read it
a step at a time and let its pages go after each (issue 31: under load the pager's turn
comes late, and a whole column's pages counted in ``VmRSS`` at 1M): the key alignment's
hash partitions (``align._partition``, which now also gives the partition's tokens, so its
counts no longer read the columns at random), the candidates written per partition
(``_parted_anchors``), the pairs read for the gaps (``_paired``), and the findings'
loops over flagged entries (``_repeated_keys._repeated_counts``, ``_cycles``,
``_stale_responses._varying_within_a_run``). Each gives what the code before gave (kept
here as reference), with steps of 1 to a few items."""

from __future__ import annotations

import tempfile
from array import array
from typing import Any

import pytest
from cassette_tui.core.diff import _repeated_keys as rk
from cassette_tui.core.diff import _run_keys
from cassette_tui.core.diff import _stale_responses as sr
from cassette_tui.core.diff import align as al
from cassette_tui.core.diff.result import DiffResult
from cassette_tui.core.format import spill
from cassette_tui.core.format.cassette import Cassette
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.clash import Clash
from support.diffed import diffed_calls

u64 = st.integers(0, (1 << 64) - 1)


# -- the code before (main at 1ab12af), the reference -------------------------------------
def _old_partition(ta: Any, tb: Any, region: tuple[int, int, int, int], part: int, parts: int):
    a0, a1, b0, b1 = region
    from itertools import compress

    return (
        array("q", compress(range(a0, a1), (hash(ta[i]) % parts == part for i in range(a0, a1)))),
        array("q", compress(range(b0, b1), (hash(tb[j]) % parts == part for j in range(b0, b1)))),
    )


def _old_paired(partner: Any, a0: int, a1: int) -> list[tuple[int, int]]:
    return [(i, partner[i]) for i in range(a0, a1) if partner[i] >= 0]


def _old_cycles(c: Cassette, repeated: bytearray) -> list[tuple[int, int, int]]:
    tools, digests = c._tools, c.digest_codes()
    n = len(digests)

    def same(i: int, j: int) -> bool:
        return repeated[i] == 1 and digests[i] == digests[j] and tools[i] == tools[j]

    found: list[tuple[int, int, int]] = []
    covered = bytearray(n)
    for period in range(2, rk.MAX_CYCLE + 1):
        i = 0
        while i + period < n:
            if not same(i, i + period):
                i += 1
                continue
            run = 0
            while i + period + run < n and same(i + run, i + period + run):
                run += 1
            span = run + period
            if (
                span >= 2 * period
                and not covered[i]
                and len({c.key(k) for k in range(i, i + period)}) == period
            ):
                found.append((i, period, span // period))
                covered[i : i + span] = b"\x01" * span
            i += run + 1
    found.sort(key=lambda f: -f[1] * f[2])
    return found


# -- the alignment ------------------------------------------------------------------------
def _columns(values: list[int], kind: str) -> Any:
    """``values`` as a list, an ``array("Q")`` or a spilled view of one."""
    if kind == "list":
        return list(values)
    column = array("Q", values)
    return spill.spilled(column) if kind == "spilled" else column


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.integers(0, 40) | u64, max_size=60),
    st.lists(st.integers(0, 40) | u64, max_size=60),
    st.sampled_from(["list", "array", "spilled"]),
    st.integers(1, 9),
    st.sampled_from([1, 2, 4, 8]),
    st.data(),
)
def test_a_partition_read_a_step_at_a_time_is_the_one_before_with_its_tokens(
    a: list[int], b: list[int], kind: str, step: int, parts: int, data: st.DataObject
) -> None:
    ta, tb = _columns(a, kind), _columns(b, kind)
    a0 = data.draw(st.integers(0, len(a)))
    a1 = data.draw(st.integers(a0, len(a)))
    b0 = data.draw(st.integers(0, len(b)))
    b1 = data.draw(st.integers(b0, len(b)))
    part = data.draw(st.integers(0, parts - 1))
    expected = _old_partition(ta, tb, (a0, a1, b0, b1), part, parts)
    drops: list[object] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(al, "_SIDE_BATCH", step)
        mp.setattr(al, "drop_pages", drops.append)
        positions, tokens = al._partition(ta, tb, (a0, a1, b0, b1), part, parts)
    assert [list(p) for p in positions] == [list(p) for p in expected]
    assert list(tokens[0]) == [ta[i] for i in expected[0]]
    assert list(tokens[1]) == [tb[j] for j in expected[1]]
    # one drop a step of each side
    assert len(drops) == -(-(a1 - a0) // step) + -(-(b1 - b0) // step)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 60), max_size=80),
    st.lists(st.integers(0, 60), max_size=80),
    st.sampled_from(["list", "array", "spilled", "clash"]),
    st.sampled_from([2, 5, 16]),
    st.integers(1, 7),
    st.integers(1, 5),
)
def test_anchors_by_partition_in_steps_are_the_whole_regions(
    a: list[int], b: list[int], kind: str, part_tokens: int, step: int, found_step: int
) -> None:
    if kind == "clash":
        ta: Any = [Clash(x) for x in a]
        tb: Any = [Clash(x) for x in b]
    else:
        ta, tb = _columns(a, kind), _columns(b, kind)
    whole = al._anchors(list(ta), list(tb), 0, len(ta), 0, len(tb))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spill, "SPILL_MIN_ITEMS", 1)
        mp.setattr(al, "_PART_TOKENS", part_tokens)
        mp.setattr(al, "_SIDE_BATCH", step)
        mp.setattr(al, "_FOUND_STEP", found_step)
        with spill.spilling():
            parted = al._anchors(ta, tb, 0, len(ta), 0, len(tb))
    assert [list(x) for x in parted] == [list(x) for x in whole]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(-1, 30), max_size=60),
    st.booleans(),
    st.integers(1, 9),
    st.data(),
)
def test_pairs_read_a_step_at_a_time_are_the_ones_before(
    partner: list[int], spilled: bool, step: int, data: st.DataObject
) -> None:
    column: Any = array("q", partner)
    if spilled:
        column = spill.spilled(column)
    a0 = data.draw(st.integers(0, len(partner)))
    a1 = data.draw(st.integers(a0, len(partner)))
    drops: list[object] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(al, "_SIDE_BATCH", step)
        mp.setattr(al, "drop_pages", drops.append)
        assert list(al._paired(column, a0, a1)) == _old_paired(column, a0, a1)
    assert len(drops) == -(-(a1 - a0) // step)


# -- the findings -------------------------------------------------------------------------
#: a call: tool, args value, response kind (0-2 a value, 3 a 429, 4 an error entry)
calls = st.lists(
    st.tuples(st.sampled_from(["search", "read", "fetch"]), st.integers(0, 3), st.integers(0, 4)),
    max_size=50,
)


def _findings(result: DiffResult) -> list[Any]:
    """The repeated-key findings (the counts, the cycles) and the varying answers."""
    out: list[Any] = [f.to_diff_json() for f in rk.repeated_keys(result)]
    out.extend(
        rk._cycles(c, flags)
        for c, flags in zip((result.a, result.b), result.repeated(), strict=True)
    )
    out.extend(sr._varying_within_a_run(result, tool) for tool in ("search", "read", "fetch"))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls, calls, st.booleans(), st.integers(1, 7))
def test_findings_read_in_steps_are_the_findings_read_at_once(
    run: list, other: list, spilled: bool, step: int
) -> None:
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
        mp.setattr(spill, "SPILL_MIN_ITEMS", 1)
        # a loop back to back (the same calls twice) in A, so the cycles are found
        pair = (run + run[-4:] * 3, run[: len(run) // 2] + other)
        result = diffed_calls(tmp, *pair, "key", spilled)
        once = _findings(result)  # the step larger than any run: read at once
        if spilled:
            # the alignment's repeated-key flags in temporary files too, read the same
            assert all(isinstance(f, memoryview) for f in result.repeated() if f)
            assert once == _findings(diffed_calls(tmp, *pair, "key", False))
        for c, flags in zip((result.a, result.b), result.repeated(), strict=True):
            assert rk._cycles(c, flags) == _old_cycles(c, flags)
        drops: list[object] = []
        mp.setattr(rk, "SCAN_STEP", step)
        mp.setattr(sr, "SCAN_STEP", step)
        mp.setattr(rk, "drop_pages", drops.append)
        mp.setattr(_run_keys, "drop_pages", drops.append)
        assert _findings(result) == once
        if len(result.a) > step + 6:
            assert drops  # the pages were let go along the way
