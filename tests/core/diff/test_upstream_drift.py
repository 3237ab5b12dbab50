"""Downstream drift points upstream only when the upstream step differs between the runs,
and names one seq per side (the step that fed that side's value). tau-bench task 31 (both
runs read both reservations; the agent picked another one) and pairs made here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cassette_tui.core import diff_cassettes
from cassette_tui.core.format.findings import Finding
from support.factory import make_cassette


def downstream(result) -> list[Finding]:
    return [f for f in result.findings if f.kind == "downstream_drift"]


def named_seqs(finding: Finding, side: str) -> set[int]:
    """Every ``{side} seq N`` the finding's words name."""
    text = f"{finding.message} {finding.action}"
    return {int(n) for n in re.findall(rf"\b{side} seq (\d+)", text)}


def test_same_upstream_answer_is_not_blamed() -> None:
    """Both runs read the same two ids; A cancels one, B the other: the agent chose, the
    earlier answer (identical in both) is not the cause."""
    listing = {"reservations": [{"id": "D1EW9B"}, {"id": "9HBUV8"}]}
    a = make_cassette([("list", {"u": 1}, listing), ("cancel", {"id": "D1EW9B"}, {"ok": 1})])
    b = make_cassette([("list", {"u": 1}, listing), ("cancel", {"id": "9HBUV8"}, {"ok": 1})])
    for align in ("seq", "key", "auto"):
        d = diff_cassettes(a, b, align)
        assert d.rows[d.first_divergence].a_seq == 2
        assert downstream(d) == []


def test_differing_upstream_answer_is_blamed_with_its_seq() -> None:
    a = make_cassette([("search", {"q": "x"}, {"id": "ORD-771"}), ("get", {"id": "ORD-771"}, 1)])
    b = make_cassette([("search", {"q": "x"}, {"id": "ORD-990"}), ("get", {"id": "ORD-990"}, 1)])
    (down,) = downstream(diff_cassettes(a, b))
    assert down.seqs == {"a": [1, 2], "b": [1, 2]}
    assert down.action == (
        "Look upstream first, at the response that differs between the runs: A seq 1 "
        "(search) fed A's value; B seq 1 (search) fed B's value."
    )


def test_one_seq_per_side_when_the_sources_sit_on_different_rows() -> None:
    """A's value came from A seq 2, B's from B seq 1 (both rows differ): the words name
    A seq 2 and B seq 1 as the sources, never the seq a row pairs them with."""
    a = make_cassette(
        [
            ("search", {"q": "a"}, {"id": "AAAA1"}),
            ("search", {"q": "b"}, {"id": "BBBB1"}),
            ("book", {"id": "BBBB1"}, {"ok": 1}),
        ]
    )
    b = make_cassette(
        [
            ("search", {"q": "a"}, {"id": "CCCC2"}),
            ("search", {"q": "b"}, {"id": "DDDD2"}),
            ("book", {"id": "CCCC2"}, {"ok": 1}),
        ]
    )
    (down,) = downstream(diff_cassettes(a, b))
    assert down.evidence["source_a"]["seq"] == 2 and down.evidence["source_b"]["seq"] == 1
    assert down.seqs == {"a": [2, 3], "b": [1, 3]}
    assert named_seqs(down, "A") == {2, 3} and named_seqs(down, "B") == {1, 3}
    assert "A seq 2 (search) fed A's value; B seq 1 (search) fed B's value" in down.action


def test_only_the_side_whose_source_differs_is_named() -> None:
    """A's value came from an answer both runs share; B's from one that differs: only B's
    source is pointed at."""
    shared = {"ids": ["KEEP01"]}
    a = make_cassette(
        [("list", {}, shared), ("search", {"q": 1}, {"id": "OLD001"}), ("get", {"id": "KEEP01"}, 1)]
    )
    b = make_cassette(
        [("list", {}, shared), ("search", {"q": 1}, {"id": "NEW002"}), ("get", {"id": "NEW002"}, 1)]
    )
    (down,) = downstream(diff_cassettes(a, b))
    assert "source_a" not in down.evidence and down.evidence["source_b"]["seq"] == 2
    assert down.seqs == {"a": [3], "b": [2, 3]}
    assert named_seqs(down, "A") == {3} and named_seqs(down, "B") == {2, 3}


# -- tau-bench (../shared/real) ---------------------------------------------------------------
def _tau(real: Path, task: int, trial: int):
    from cassette_tui.core.importers.sources import open_cassette

    return open_cassette(f"{real / 'tau-bench' / 'gpt-4o-airline.json'}#task={task},trial={trial}")


@pytest.mark.parametrize("align", ["seq", "key", "auto"])
def test_task_31_blames_no_upstream_step(real: Path, align: str) -> None:
    """Both runs read reservations D1EW9B (seq 5) and 9HBUV8 (seq 6) with the same answers;
    the failing run cancelled the other one. Before: a downstream_drift blaming "A seq 5 /
    B seq 5" while its seqs named B seq 6."""
    d = diff_cassettes(_tau(real, 31, 2), _tau(real, 31, 3), align)
    row = d.rows[d.first_divergence]
    assert (row.a_seq, row.b_seq, row.status.value) == (7, 7, "args_drift")
    assert [f.kind for f in d.findings] == ["first_divergence"]
    assert downstream(d) == []


def test_task_6_names_each_sides_own_source(real: Path) -> None:
    """By seq, A's second flight came from A seq 4 and B's from B seq 3 (both other calls):
    each finding names one seq per side."""
    d = diff_cassettes(_tau(real, 6, 3), _tau(real, 6, 0), "seq")
    found = downstream(d)
    assert len(found) == 2
    for f in found:
        for side in ("a", "b"):
            source = f.evidence[f"source_{side}"]["seq"]
            assert named_seqs(f, side.upper()) == {source, 6}
            assert f.seqs[side] == [source, 6]
    assert [(f.evidence["source_a"]["seq"], f.evidence["source_b"]["seq"]) for f in found] == [
        (3, 3),
        (4, 3),
    ]
