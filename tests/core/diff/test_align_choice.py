"""The alignment ``auto`` chooses (core/diff/align_choice.py) and the words of its reason.

The reason names the right run on each side: the run that makes the extra calls, and where
the other run makes the call it makes later; calls made in another order (each run makes
the other's call later) are said to be in another order, never extra calls (the diff
classes those rows ``moved``). The choice puts the right first divergence on screen:
measured on every tau-bench airline pass/fail pair, and on pairs made here."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core import diff_cassettes, load
from cassette_tui.core.diff.align_choice import choose_alignment, resolve_alignment
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_job
from cassette_tui.core.format.jobs import run_job
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


def _id_calls(*names: str) -> list[tuple[str, dict, dict]]:
    """``"get:x"`` -> a call of ``get`` with args ``{"id": "x"}`` answering ``{"r": "x"}``."""
    out = []
    for name in names:
        tool, _, arg = name.partition(":")
        out.append((tool, {"id": arg}, {"r": arg}))
    return out


@pytest.mark.parametrize(
    ("a", "b", "align", "first"),
    [
        # A looks up another record first, then makes B's call: key, A's extra step
        (["user:u", "get:x", "get:y", "pay:y"], ["user:u", "get:y", "pay:y"], "key", (2, None)),
        # B asks the user first: key, B's extra steps
        (["get:y", "pay:y"], ["user:u", "think:t", "get:y", "pay:y"], "key", (None, 1)),
        # another tool, made later by the other run with other args: key
        (["get:y", "send:50", "pay:1"], ["get:y", "pay:2"], "key", (2, None)),
        # a real choice: different tools, neither made later: seq, side by side
        (["user:u", "transfer:s"], ["user:u", "cancel:c", "cancel:d"], "seq", (2, 2)),
        # same tool, other args, never made by the other run: seq
        (["user:u", "get:x", "pay:x"], ["user:u", "get:y", "pay:y"], "seq", (2, 2)),
        # one run stops early: seq
        (["user:u"], ["user:u", "get:y"], "seq", (None, 2)),
    ],
    ids=["a-extra", "b-extra", "by-tool", "choice", "args", "prefix"],
)
def test_auto_alignment_kinds(a: list[str], b: list[str], align: str, first: tuple) -> None:
    ca, cb = make_cassette(_id_calls(*a)), make_cassette(_id_calls(*b))
    assert choose_alignment(ca, cb).align == align
    d = diff_cassettes(ca, cb, "auto")
    assert d.align == align and d.align_reason
    row = d.rows[d.first_divergence]
    assert (row.a_seq, row.b_seq) == first
    assert d.to_json()["align_reason"] == d.align_reason
    assert diff_cassettes(ca, cb, align).align_reason is None  # forced: no reason
    # the job resolves auto the same way (align_choice.resolve_alignment, one place)
    assert resolve_alignment(ca, cb, "auto") == (align, d.align_reason)
    job = run_job(diff_job(ca, cb, "auto"))
    assert (job.align, job.align_reason) == (d.align, d.align_reason)
    assert run_job(diff_job(ca, cb, align)).align_reason is None


def test_auto_chooses_by_the_calls_when_an_answer_differs_first() -> None:
    """An answer that differs before any call does no longer settles it for seq (issue
    28): the inserted step after it decides, as it would with equal answers."""
    a = make_cassette([("user", {"id": "u"}, {"tier": "gold"}), *_id_calls("get:x", "get:y")])
    b = make_cassette([("user", {"id": "u"}, {"tier": "silver"}), *_id_calls("get:y")])
    choice = choose_alignment(a, b)
    assert choice.align == "key" and "answer" not in choice.reason
    d = diff_cassettes(a, b, "auto")
    assert [(r.a_seq, r.b_seq, r.status) for r in d.rows] == [
        (1, 1, Status.RESPONSE_DRIFT),
        (2, None, Status.ONLY_A),
        (3, 2, Status.SAME),
    ]
    assert d.first_divergence == 0


def test_auto_on_runs_whose_every_answer_differs_keeps_the_rows_paired() -> None:
    """Every answer differs (a re-recording against a changed service) and B makes one
    extra call early: by seq every row after it would be shifted; auto aligns by key,
    so only that call is one-sided and every other row pairs its own call."""
    n = 300
    calls = [("get", {"id": str(i)}, {"v": i}) for i in range(n)]
    a = make_cassette(calls)
    changed = [(tool, args, {"v": -1 - resp["v"]}) for tool, args, resp in calls]
    b = make_cassette([*changed[:3], ("ping", {"id": "x"}, {"ok": True}), *changed[3:]])
    assert choose_alignment(a, b).align == "key"
    rows = diff_cassettes(a, b, "auto").rows
    assert [r.status for r in rows].count(Status.ONLY_B) == 1
    paired = [r for r in rows if r.a is not None and r.b is not None]
    assert len(paired) == n
    assert all(r.status is Status.RESPONSE_DRIFT for r in paired)
    assert all(a.entry_view(r.a).args == b.entry_view(r.b).args for r in paired)
    by_seq = diff_cassettes(a, b, "seq").rows
    shifted = sum(r.status in (Status.ARGS_DRIFT, Status.OTHER_CALL) for r in by_seq)
    assert shifted == n - 3  # what seq showed: every row after the extra call shifted


def test_sample_pair_shows_the_cause_by_default() -> None:
    """The repository's sample pair: the default diff shows the downstream drift that
    traces A's wrong read_file to the search ranking (it showed only with --align key)."""
    root = Path(__file__).resolve().parents[3] / "sample_cassettes"
    a, b = load(root / "fail.jsonl"), load(root / "fix.jsonl")
    auto = diff_cassettes(a, b, "auto")
    assert auto.align == "key"
    kinds = [f.kind for f in auto.findings]
    assert "downstream_drift" in kinds
    key = diff_cassettes(a, b, "key")
    assert [f.to_diff_json() for f in auto.findings] == [f.to_diff_json() for f in key.findings]


# -- the tau-bench airline pairs (../shared/real) ----------------------------------------------
#: task -> the right first divergence (A seq, B seq), A the failing trial and B the passing one
#: of the task's default pair, read off each pair by hand: two different calls at one step
#: pair side by side; an extra step that the other run skips is one-sided. Task 13 crosses
#: (each run makes the other's step 2 later): either reading is right.
RIGHT: dict[str, set[tuple[int | None, int | None]]] = {
    "1": {(1, 1)}, "2": {(5, 5)}, "5": {(3, None)}, "6": {(3, 3)}, "7": {(4, 4)},
    "11": {(3, 3)}, "13": {(2, 2), (2, None)}, "15": {(None, 1)}, "16": {(None, 1)},
    "17": {(None, 2)}, "21": {(3, 3)}, "26": {(3, 3)}, "27": {(3, 3)}, "29": {(1, None)},
    "30": {(9, 9)}, "31": {(7, 7)}, "34": {(3, 3)}, "37": {(5, None)}, "39": {(2, None)},
    "40": {(7, 7)}, "41": {(2, 2)}, "43": {(2, 2)}, "44": {(2, 2)}, "45": {(3, 3)},
    "46": {(3, 3)}, "47": {(1, None)},
}  # fmt: skip


def test_default_alignment_measured_on_every_tau_bench_pair(real: Path) -> None:
    """The README's figures: how many of the 26 pairs each default gets right."""
    from cassette_tui.core.format.multi_run import task_pairs
    from cassette_tui.core.importers.sources import list_runs, open_cassette

    path = real / "tau-bench" / "gpt-4o-airline.json"
    pairs = {t: p.default() for t, p in task_pairs(list_runs(path)).items() if p.has_pair}
    assert set(pairs) == set(RIGHT)
    right: dict[str, list[str]] = {"seq": [], "key": [], "key_if_other_call": [], "auto": []}
    for task, chosen in pairs.items():
        assert chosen is not None
        good, bad = chosen
        a = open_cassette(f"{path}{bad.spec_suffix()}")
        b = open_cassette(f"{path}{good.spec_suffix()}")
        found = {}
        for align in ("seq", "key", "auto"):
            d = diff_cassettes(a, b, align)
            row = d.rows[d.first_divergence]
            found[align] = ((row.a_seq, row.b_seq), row.status)
        by_seq_other = found["seq"][1] is Status.OTHER_CALL
        found["key_if_other_call"] = found["key" if by_seq_other else "seq"]
        for name, (first, _status) in found.items():
            if first in RIGHT[task]:
                right[name].append(task)
    counts = {name: len(tasks) for name, tasks in right.items()}
    assert counts == {"seq": 22, "key": 15, "key_if_other_call": 13, "auto": 26}, right
    # the three pairs that needed the key toggle read right by default now
    assert {"5", "6", "30"} <= set(right["auto"])
