"""The words of ``choose_alignment``'s reason name the right run on each side: the run
that makes the extra calls, and where the other run makes the call it makes later; calls
made in another order (each run makes the other's call later) are said to be in another
order, never extra calls (the diff classes those rows ``moved``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core import diff_cassettes, load
from cassette_tui.core.diff.align_choice import choose_alignment
from cassette_tui.core.diff.model import Status
from support.factory import make_cassette


def _calls(*specs: tuple[str, str]) -> list[tuple[str, dict, dict]]:
    return [(tool, {"q": q}, {"r": q}) for tool, q in specs]


def test_extra_calls_in_a_before_the_call_b_makes() -> None:
    a = make_cassette(_calls(("search", "1"), ("search", "2"), ("vector_search", "v")))
    b = make_cassette(_calls(("vector_search", "v"), ("summarize", "s")))
    choice = choose_alignment(a, b)
    assert choice.align == "key"
    assert choice.reason.startswith(
        "A makes 2 extra calls (seq 1-2) before the call B makes at seq 1 (vector_search), "
        "made by A at seq 3:"
    )


def test_extra_calls_in_b_before_a_tool_a_calls_with_other_args() -> None:
    a = make_cassette(_calls(("vector_search", "v"), ("summarize", "s")))
    b = make_cassette(_calls(("search", "1"), ("vector_search", "w"), ("summarize", "t")))
    choice = choose_alignment(a, b)
    assert choice.align == "key"
    assert choice.reason.startswith(
        "B makes 1 extra call (seq 1) before calling vector_search, the tool A calls at "
        "seq 1 (B calls it at seq 2, with other args):"
    )
    assert "which B makes" not in choice.reason


def test_calls_in_another_order_are_not_extra_calls() -> None:
    a = make_cassette(_calls(("get", "lisbon"), ("get", "oslo"), ("get", "cairo"), ("sum", "x")))
    b = make_cassette(_calls(("get", "cairo"), ("get", "lisbon"), ("get", "oslo"), ("sum", "x")))
    choice = choose_alignment(a, b)
    assert choice.align == "key"
    assert "extra" not in choice.reason
    assert choice.reason.startswith(
        "the runs make the same calls in another order from seq 1: A's call there (get) is "
        "B's seq 2, B's (get) is A's seq 3:"
    )
    statuses = {row.status for row in diff_cassettes(a, b, "auto").rows}
    assert Status.MOVED in statuses and not statuses & {Status.ONLY_A, Status.ONLY_B}


def test_bugcase_29_parallel_calls_reordered(real: Path) -> None:
    case = real / "bugcases" / "29_parallel_calls_reordered"
    result = diff_cassettes(load(case / "a.jsonl"), load(case / "b.jsonl"), "auto")
    assert result.align == "key" and result.align_reason is not None
    assert "another order" in result.align_reason and "extra" not in result.align_reason
    assert any(row.status is Status.MOVED for row in result.rows)
    assert not any("extra call" in f.message for f in result.findings)


@pytest.mark.parametrize("swap", [False, True])
def test_the_side_named_is_the_side_with_the_extra_calls(swap: bool) -> None:
    longer = make_cassette(_calls(("a", "1"), ("a", "2"), ("b", "1"), ("c", "1")))
    shorter = make_cassette(_calls(("b", "1"), ("c", "1")))
    a, b = (shorter, longer) if swap else (longer, shorter)
    reason = choose_alignment(a, b).reason
    side, other = ("B", "A") if swap else ("A", "B")
    assert reason.startswith(f"{side} makes 2 extra calls (seq 1-2) before the call {other} "
                             f"makes at seq 1 (b), made by {side} at seq 3")  # fmt: skip
