"""The ``error_response`` findings' failed rows read compact keys (``_run_keys.RunKeys``:
the digest's code and a tool id, no ``(tool, digest text)`` set of the one-sided failed
calls; issue 31, ``diff --json`` at 1M): the rows counted and kept equal the code before
(kept here as the reference) on random pairs, with the columns in memory and in
temporary files, read a step at a time, and with the keys as tuples (a digest of another
form)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence

import pytest
from cassette_tui.core.diff import _error_responses as er
from cassette_tui.core.diff import _run_keys
from cassette_tui.core.diff.result import DiffResult
from cassette_tui.core.format import spill
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.columns import digest_code
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.clash import NotADigestColumn
from support.diffed import diffed_calls

#: a call: tool, args value, response kind (0-2 a value, 3 a 429, 4 an error entry)
calls = st.lists(
    st.tuples(st.sampled_from(["search", "read", "fetch"]), st.integers(0, 3), st.integers(0, 4)),
    max_size=50,
)


# -- the code before (main at 6cae289), the reference -------------------------------------
def _old_failed_rows(result: DiffResult) -> tuple:
    errors_a, errors_b = (o.errors for o in result.outcomes())
    wanted_a: set[tuple[str, str]] = set()
    wanted_b: set[tuple[str, str]] = set()
    for row in result.rows:
        if row.a is not None and row.b is None and row.error_a:
            wanted_b.add(result.a.key(row.a))
        elif row.b is not None and row.a is None and row.error_b:
            wanted_a.add(result.b.key(row.b))
    ok_keys_a = _old_ok_keys(result.a, errors_a, wanted_a)
    ok_keys_b = _old_ok_keys(result.b, errors_b, wanted_b)
    counts = [0, 0]
    kept: tuple[list, list] = ([], [])
    for i, row in enumerate(result.rows):
        if row.a is not None and row.b is not None:
            if not (row.error_a or row.error_b):
                continue
        elif row.a is not None:
            if not (row.error_a and result.a.key(row.a) in ok_keys_b):
                continue
        elif row.b is None or not (row.error_b and result.b.key(row.b) in ok_keys_a):
            continue
        for side, (c, pos, error) in enumerate(
            ((result.a, row.a, row.error_a), (result.b, row.b, row.error_b))
        ):
            if error and not er._malformed(c, pos):
                counts[side] += 1
                if len(kept[side]) < er._KEPT:
                    kept[side].append((i, row))
    return (counts[0], kept[0]), (counts[1], kept[1])


def _old_ok_keys(c: Cassette, errors: Sequence[bool], wanted: set) -> set:
    if not wanted:
        return set()
    codes = {digest_code(d) for _, d in wanted}
    all_codes = c.digest_codes()
    return {
        c.key(i)
        for i in range(len(c))
        if all_codes[i] in codes and not errors[i] and c.key(i) in wanted
    }


# -- the checks ---------------------------------------------------------------------------


def _plain(failed: tuple) -> list:
    """The failed rows as comparable values (a ``Row``'s positions and seqs)."""
    return [
        (count, [(i, row.a, row.b, row.a_seq, row.b_seq) for i, row in kept])
        for count, kept in failed
    ]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls, calls, st.sampled_from(["key", "seq"]), st.booleans(), st.integers(1, 5))
def test_failed_rows_by_compact_keys_equal_the_code_before(
    run: list, other: list, align: str, spilled: bool, step: int
) -> None:
    old_min = spill.SPILL_MIN_ITEMS
    spill.SPILL_MIN_ITEMS = 1  # every column in a temporary file, however short
    try:
        with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
            mp.setattr(er, "SCAN_STEP", step)  # the loops' page drops, often
            # B often a copy of A with some calls more, so one-sided calls share keys
            result = diffed_calls(tmp, run, run[: len(run) // 2] + other, align, spilled)
            expected = _plain(_old_failed_rows(result))
            # no key text made: the int compact keys and digest codes alone
            mp.setattr(Cassette, "key", _no_key_text)
            assert _plain(er._failed_rows(result)) == expected
    finally:
        spill.SPILL_MIN_ITEMS = old_min


def _no_key_text(self: Cassette, i: int) -> tuple[str, str]:
    raise AssertionError("a (tool, digest text) key made for the failed rows")


@settings(max_examples=30, deadline=None)
@given(calls, calls)
def test_tuple_keys_give_the_same_failed_rows(run: list, other: list) -> None:
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
        mp.setattr(_run_keys, "DigestColumn", NotADigestColumn)
        result = diffed_calls(tmp, run, run[: len(run) // 3] + other, "key", False)
        assert _plain(er._failed_rows(result)) == _plain(_old_failed_rows(result))
