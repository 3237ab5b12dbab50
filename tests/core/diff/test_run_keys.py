"""The findings that group entries by replay key read compact keys (``_run_keys.RunKeys``:
the digest's code and a tool id, no ``(tool, digest text)`` tuple per entry; issue 31):
the repeated keys chosen, their positions, and the key a run answered in more than one
way equal the plain definitions (the code before, kept here) on random pairs, with the
columns in memory and in temporary files, and with the keys as tuples (a digest of
another form)."""

from __future__ import annotations

import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.diff import _repeated_keys as rk
from cassette_tui.core.diff import _run_keys
from cassette_tui.core.diff import _stale_responses as sr
from cassette_tui.core.diff.result import DiffResult
from cassette_tui.core.format import spill
from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.format.columns import digest_code
from cassette_tui.core.keys.replay_key import KeyIndex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.clash import NotADigestColumn
from support.diffed import diffed_calls
from support.factory import entry, write_cassette

#: a call: tool, args value, response kind (0-2 a value, 3 a 429, 4 an error entry)
calls = st.lists(
    st.tuples(st.sampled_from(["search", "read", "fetch"]), st.integers(0, 4), st.integers(0, 4)),
    max_size=50,
)


# -- the code before (main at 9fa9b9b), the reference -------------------------------------
def _old_repeated_positions(a: Cassette, b: Cassette, repeated: Any) -> tuple[dict, dict]:
    wanted = {c.key(i) for c, flags in zip((a, b), repeated, strict=True)
              for i in range(len(c)) if flags[i]}  # fmt: skip
    codes = {digest_code(d) for _, d in wanted}

    def index(c: Cassette) -> KeyIndex:
        all_codes = c.digest_codes()
        hits = [i for i in range(len(c)) if all_codes[i] in codes and c.key(i) in wanted]
        return KeyIndex.from_keys((c.key(i) for i in hits), hits)

    return index(a), index(b)


def _old_most_repeated(a: Cassette, b: Cassette, pos_a: dict, pos_b: dict) -> list:
    repeated = [
        k
        for k in pos_a.keys() | pos_b.keys()
        if len(pos_a.get(k, ())) > 1 or len(pos_b.get(k, ())) > 1
    ]
    repeated.sort(
        key=lambda k: (
            -abs(len(pos_a.get(k, ())) - len(pos_b.get(k, ()))),
            -max(len(pos_a.get(k, ())), len(pos_b.get(k, ()))),
            min(pos_a.get(k, [len(a)])[0], pos_b.get(k, [len(b)])[0]),
            k,
        ),
    )
    return repeated


def _old_varying(result: DiffResult, tool: str) -> tuple[str, list[int]] | None:
    for side, c, outcomes, repeated in (
        ("a", result.a, result.outcomes()[0], result.repeated()[0]),
        ("b", result.b, result.outcomes()[1], result.repeated()[1]),
    ):
        seen: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i in range(len(c)):
            if repeated[i] and c.tool(i) == tool and not outcomes.errors[i]:
                seen[c.key(i)].append(i)
        for indices in seen.values():
            if len({c.fingerprint(i) for i in indices}) > 1:
                return side, [c.seq(i) for i in indices][: sr.MAX_SEQS]
    return None


# -- the checks ---------------------------------------------------------------------------
def _compare(result: DiffResult, part_flagged: int | None = None) -> None:
    """The new findings' keys equal the code before's; ``part_flagged``: the repeated keys
    counted in partitions of about that many flagged entries (``rk.PART_FLAGGED``)."""
    a, b = result.a, result.b
    pos_a, pos_b = _old_repeated_positions(a, b, result.repeated())
    old = [
        (k, pos_a.get(k, []), pos_b.get(k, []))
        for k in _old_most_repeated(a, b, pos_a, pos_b)[: rk.MAX_REPEATED]
    ]
    keys = _run_keys.RunKeys(a, b)
    with pytest.MonkeyPatch.context() as mp:
        if part_flagged is not None:
            mp.setattr(rk, "PART_FLAGGED", part_flagged)
        top = rk._top_repeated(keys, result.repeated())
    new_a, new_b = rk._positions(keys, "a", top), rk._positions(keys, "b", top)
    new = []
    for k in top:
        pa, pb = new_a.get(k, []), new_b.get(k, [])
        new.append((a.key(pa[0]) if pa else b.key(pb[0]), pa, pb))
    assert new == old
    for tool in ("search", "read", "fetch", "absent"):
        assert sr._varying_within_a_run(result, tool) == _old_varying(result, tool)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    calls,
    calls,
    st.sampled_from(["key", "seq"]),
    st.booleans(),
    st.sampled_from([None, 1, 2, 3, 5]),
)
def test_compact_keys_choose_and_place_the_repeated_keys_as_before(
    run: list, other: list, align: str, spilled: bool, part_flagged: int | None
) -> None:
    old_min = spill.SPILL_MIN_ITEMS
    spill.SPILL_MIN_ITEMS = 1  # every column in a temporary file, however short
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # B often a copy of A with a few calls more, so both runs share repeated keys
            result = diffed_calls(tmp, run, run[: len(run) // 2] + other, align, spilled)
            _compare(result, part_flagged)
    finally:
        spill.SPILL_MIN_ITEMS = old_min


@settings(max_examples=30, deadline=None)
@given(calls, calls, st.sampled_from([None, 1, 3]))
def test_tuple_keys_give_the_same_findings(
    run: list, other: list, part_flagged: int | None
) -> None:
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
        mp.setattr(_run_keys, "DigestColumn", NotADigestColumn)
        result = diffed_calls(tmp, run, run[: len(run) // 3] + other, "key", False)
        keys = _run_keys.RunKeys(result.a, result.b)
        assert len(result.a) == 0 or isinstance(keys.of("a")(0), tuple)
        _compare(result, part_flagged)


def test_int_keys_tell_the_tools_apart(tmp_path: Path) -> None:
    # the same args under two tools: the same digest, two keys
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "search", {"q": 1}, response={"v": 1}),
        entry(2, "read", {"q": 1}, response={"v": 1}),
    )
    ca = load(a)
    keys = _run_keys.RunKeys(ca, ca)
    key_of = keys.of("a")
    assert ca.digest_codes()[0] == ca.digest_codes()[1]
    assert key_of(0) != key_of(1) and key_of(0) == keys.of("b")(0)
    assert list(keys.positions("a", {keys.code("a", 0)})) == [0, 1]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls, st.integers(1, 7), st.booleans(), st.data())
def test_positions_read_the_codes_a_step_at_a_time_as_one_scan(
    run: list, step: int, spilled: bool, data: st.DataObject
) -> None:
    # the scan reads ``SCAN_STEP`` codes, then lets their pages go (issue 31: the whole
    # column no longer counts in VmRSS at 1M): the same positions as one scan of all
    old_min = spill.SPILL_MIN_ITEMS
    spill.SPILL_MIN_ITEMS = 1
    drops: list[object] = []
    try:
        with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
            mp.setattr(_run_keys, "SCAN_STEP", step)
            mp.setattr(_run_keys, "drop_pages", drops.append)
            result = diffed_calls(tmp, run, run, "key", spilled)
            keys = _run_keys.RunKeys(result.a, result.b)
            all_codes = list(result.a.digest_codes())
            wanted = set(data.draw(st.lists(st.sampled_from(all_codes))) if all_codes else [])
            expected = [i for i, code in enumerate(all_codes) if code in wanted]
            assert list(keys.positions("a", wanted)) == expected
            assert len(drops) == -(-len(all_codes) // step)  # one drop a step
    finally:
        spill.SPILL_MIN_ITEMS = old_min


def test_the_repeated_keys_are_counted_a_partition_at_a_time(tmp_path: Path) -> None:
    """Issue 31: no table of every repeated key at once (5.5 MB at 1M entries); with
    partitions of about 4 flagged entries, 40 repeated keys (80 flagged entries) are
    counted in 20 partitions, none holding more than a few keys, and the same five are
    chosen as by one count of all."""
    calls = [("search", k % 40, 0) for k in range(80)]
    result = diffed_calls(str(tmp_path), calls, calls[:30], "key", True)
    keys = _run_keys.RunKeys(result.a, result.b)
    held: list[int] = []
    counts = rk._repeated_counts

    def counted(*args: Any) -> Any:
        out = counts(*args)
        held.append(len(out.wanted))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rk, "PART_FLAGGED", 4)
        mp.setattr(rk, "_repeated_counts", counted)
        top = rk._top_repeated(keys, result.repeated())
    assert len(held) == 20 and sum(held) == 40 and max(held) <= 10
    _compare(result)
    assert len(top) == rk.MAX_REPEATED


def test_only_the_leading_keys_have_their_text_read(tmp_path: Path) -> None:
    """Issue 31: the key's text (the last tie-break) is read for the keys whose counts
    and first position rank within the first five, not for every repeated key (reading
    each reads the spilled columns at random: 8 MB more in ``VmRSS`` at 1M)."""
    calls = [("search", k % 40, 0) for k in range(80)]  # 40 keys, each twice in A
    result = diffed_calls(str(tmp_path), calls, calls[:30], "key", True)
    keys = _run_keys.RunKeys(result.a, result.b)
    read: list[int] = []
    cls = type(result.a)
    key = cls.key

    def counted(self: Cassette, i: int) -> Any:
        read.append(i)
        return key(self, i)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cls, "key", counted)
        top = rk._top_repeated(keys, result.repeated())
    assert len(top) == rk.MAX_REPEATED
    # keys 30-39: twice in A, never in B, each first at 30 (B's length: ``_ranked``), a
    # tie that their text breaks; the other 30 keys (once in B) rank after and are not read
    assert sorted(read) == list(range(30, 40))
    _compare(result)
