"""Issue 10: by-seq rows of two different tools show the two calls side by side (never a
drift of one tool's args against another's), and the default alignment (``auto``) puts
the right first divergence on screen: measured on every tau-bench airline pass/fail pair,
and on pairs made here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import diff_cassettes
from cassette_tui.core.diff.align_choice import choose_alignment, resolve_alignment
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_job
from cassette_tui.core.format.jobs import run_job
from cassette_tui.tui.text.detail import Limits, pair_detail
from rich.console import Console
from support.factory import entry, make_cassette, write_cassette

# -- two different tools at one step ---------------------------------------------------------


def _other_call_pair():
    a = make_cassette(
        [
            ("get_user", {"id": "u1"}, {"name": "Ann"}),
            ("search_direct", {"origin": "ATL", "dest": "ORD"}, [{"flight": "HAT227"}]),
            ("book", {"flight": "HAT227"}, {"ok": True}),
        ]
    )
    b = make_cassette(
        [
            ("get_user", {"id": "u1"}, {"name": "Ann"}),
            ("search_onestop", {"origin": "ATL", "dest": "PHL", "max": 2}, [[{"f": "HAT110"}]]),
            ("book", {"flight": "HAT110"}, {"ok": True}),
        ]
    )
    return a, b


def test_other_call_row_has_no_cross_tool_drift_and_both_calls() -> None:
    a, b = _other_call_pair()
    d = diff_cassettes(a, b, "seq")
    row = d.rows[1]
    assert row.status is Status.OTHER_CALL
    assert d.drift(1) == []  # no "tool $", no "args $.dest" of one tool against another
    assert d.calls(row) == {
        "a": {"seq": 2, "tool": "search_direct", "args": {"origin": "ATL", "dest": "ORD"}},
        "b": {
            "seq": 2,
            "tool": "search_onestop",
            "args": {"origin": "ATL", "dest": "PHL", "max": 2},
        },
    }
    doc = d.to_json()
    (other,) = [r for r in doc["rows"] if r["status"] == "other_call"]
    assert other["drift"] == [] and other["tool"] == "search_direct"
    assert other["tool_b"] == "search_onestop"
    assert other["calls"]["b"]["args"]["max"] == 2
    same_tool = [r for r in doc["rows"] if r["status"] == "args_drift"]
    assert same_tool and same_tool[0]["calls"] is None and same_tool[0]["drift"]
    first = d.findings[0]
    assert first.kind == "first_divergence"
    assert 'A called search_direct {"origin": "ATL", "dest": "ORD"}' in first.message
    assert 'B called search_onestop {"origin": "ATL", "dest": "PHL", "max": 2}' in first.message
    assert "args $." not in first.message and "tool $" not in first.message


def test_diff_text_shows_the_two_calls(tmp_path: Path) -> None:
    pa = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "get_user", {"id": "u1"}),
        entry(2, "search_direct", {"origin": "ATL", "dest": "ORD"}, response=[{"f": 1}]),
    )
    pb = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "get_user", {"id": "u1"}),
        entry(2, "search_onestop", {"origin": "ATL", "dest": "PHL"}, response=[[{"f": 2}]]),
    )
    out = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", "--align", "seq", str(pa), str(pb)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[1:4] == ["2", "2", "2"])
    assert "other call" in lines[at]
    assert lines[at + 1].split() == ["A", "search_direct", 'origin="ATL"', 'dest="ORD"']
    assert lines[at + 2].split() == ["B", "search_onestop", 'origin="ATL"', 'dest="PHL"']
    assert "~ tool $" not in out.stdout and "args $.dest" not in out.stdout


def test_detail_pane_puts_the_two_calls_side_by_side() -> None:
    a, b = _other_call_pair()
    d = diff_cassettes(a, b, "seq")
    console = Console(width=100, record=True, color_system=None)
    console.print(pair_detail(d, 1, d.drift(1), Limits(), {}))
    text = console.export_text()
    assert "search_direct ≠ search_onestop" in text
    assert "two different calls at this step, side by side" in text
    assert "A search_direct args" in text and "B search_onestop args" in text
    assert "drift (" not in text and "no drift" not in text
    console = Console(width=100, record=True, color_system=None)
    console.print(pair_detail(d, 2, d.drift(2), Limits(), {}))  # same tool: drift as ever
    assert "drift (" in console.export_text()


# -- the alignment chosen by default ---------------------------------------------------------


def _calls(*names: str) -> list[tuple[str, dict, dict]]:
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
    ca, cb = make_cassette(_calls(*a)), make_cassette(_calls(*b))
    assert choose_alignment(ca, cb).align == align
    d = diff_cassettes(ca, cb, "auto")
    assert d.align == align and d.align_reason
    row = d.rows[d.first_divergence]
    assert (row.a_seq, row.b_seq) == first
    assert d.to_json()["align_reason"] == d.align_reason
    assert diff_cassettes(ca, cb, align).align_reason is None  # forced: no reason
    # the job resolves auto the same way (alignchoice.resolve_alignment, one place)
    assert resolve_alignment(ca, cb, "auto") == (align, d.align_reason)
    job = run_job(diff_job(ca, cb, "auto"))
    assert (job.align, job.align_reason) == (d.align, d.align_reason)
    assert run_job(diff_job(ca, cb, align)).align_reason is None


def test_auto_keeps_seq_when_an_answer_differs_before_any_call() -> None:
    a = make_cassette([("user", {"id": "u"}, {"tier": "gold"}), *_calls("get:x", "get:y")])
    b = make_cassette([("user", {"id": "u"}, {"tier": "silver"}), *_calls("get:y")])
    choice = choose_alignment(a, b)
    assert choice.align == "seq" and "answer" in choice.reason
    # an answer that differs only in volatile metadata does not count: the inserted step does
    message = {"role": "assistant", "content": "hi"}
    llm_a = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1715785203,
             "model": "gpt-4o", "system_fingerprint": "fp_1",
             "choices": [{"index": 0, "message": message}]}  # fmt: skip
    llm_b = {**llm_a, "id": "chatcmpl-2", "created": 1715871611, "system_fingerprint": "fp_2"}
    a = make_cassette([("llm", {"p": 1}, llm_a), *_calls("get:x", "get:y")])
    b = make_cassette([("llm", {"p": 1}, llm_b), *_calls("get:y")])
    assert diff_cassettes(a, b, "seq").rows[0].status is Status.METADATA_DRIFT
    assert choose_alignment(a, b).align == "key"


def test_diff_cli_defaults_to_auto_and_align_forces(tmp_path: Path) -> None:
    pa = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "get", {"id": "x"}),
        entry(2, "get", {"id": "y"}),
        entry(3, "pay", {"id": "y"}),
    )
    pb = write_cassette(
        tmp_path / "b.jsonl", entry(1, "get", {"id": "y"}), entry(2, "pay", {"id": "y"})
    )

    def run(*extra: str) -> dict:
        out = subprocess.run(
            [sys.executable, "-m", "cassette_tui.tui.cli", "diff", "--json", *extra, str(pa), str(pb)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert out.returncode == 1, out.stderr
        return json.loads(out.stdout)

    auto = run()
    assert auto["align"] == "key" and "A makes 1 extra call" in auto["align_reason"]
    assert auto["first_divergence"]["status"] == "only_a"
    forced = run("--align", "seq")
    assert forced["align"] == "seq" and forced["align_reason"] is None
    assert forced["first_divergence"]["status"] == "args_drift"


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
