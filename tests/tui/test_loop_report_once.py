"""The replay and gate reports are built once (``text/replay.py``'s ``replay_lines``,
``text/gate.py``'s ``gate_lines``): ``cassette-tui replay`` / ``gate`` print those lines,
and the app's replay and gate screens show the same lines in the same order (the replay
screen leaves the misses to its rows and fewer stderr lines; the gate screen names A and
the agent in its title, fewer odd runs, and marks the verdict line)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from cassette_tui.core.loop.divergence import Divergence
from cassette_tui.core.loop.gate import GateResult
from cassette_tui.core.loop.replay import ReplayResult
from cassette_tui.core.loop.results import RunResult, RunsResult
from cassette_tui.core.replay.report import ReplayReport
from cassette_tui.tui.commands.gate import print_gate
from cassette_tui.tui.commands.replay import print_replay
from cassette_tui.tui.screens.gate import ODD_RUNS, verdict_text
from cassette_tui.tui.screens.replay import STDERR_LINES, replay_report
from cassette_tui.tui.text.gate import gate_lines
from cassette_tui.tui.text.replay import CANCELLED_NOTE, repeat_lines, replay_lines

NAME = "fail.jsonl"
AGENT = "python agent.py"

MISS = {
    "tool": "search_docs",
    "digest": "sha256:0bde2b47072f677b",
    "args": {"q": "retry", "top_k": 5},
    "nearest": [
        {
            "seq": 1,
            "args_digest": "sha256:1454eb44939cd6b8",
            "differences": [
                {"path": "$.top_k", "recorded": 3, "live": 5, "absent": None, "kind": "other"}
            ],
        }
    ],
}


def _run(n: int = 1, **kw: Any) -> RunResult:
    base: dict[str, Any] = {"run": n, "status": "failed", "exit_code": 1,
                            "duration_s": 0.5, "isolation": "netns"}  # fmt: skip
    base.update(kw)
    return RunResult(**base)


def _runs(results: list[RunResult], **kw: Any) -> RunsResult:
    base: dict[str, Any] = {
        "cassette": Path(NAME),
        "agent": AGENT,
        "requested": len(results),
        "results": results,
        "isolation": "netns",
        "isolation_detail": "",
        "runs_dir": Path("/tmp/runs"),
        "source_format": "tau-bench",  # an imported run: the served line is said
    }
    base.update(kw)
    return RunsResult(**base)


def replay_result(**kw: Any) -> ReplayResult:
    report = {
        "calls": [
            {"n": 1, "tool": "search_docs", "digest": "sha256:0bde", "outcome": "miss"},
            {"n": 2, "tool": "read_file", "digest": "sha256:eec0", "outcome": "hit"},
            {"n": 3, "tool": "read_file", "digest": "sha256:eec0", "outcome": "exhausted"},
        ],
        "entries": 3,
        "used": 1,
        "repeats": [{"tool": "read_file", "digest": "sha256:eec0", "calls": 2, "recorded": 1}],
        "misses": [MISS],
        "unused_seqs": [1, 3],
    }
    tail = "\n".join(f"stderr line {n}" for n in range(10))
    run = _run(
        report=ReplayReport.from_json(report),
        call_log=Path("/tmp/runs/run-01.jsonl"),
        stderr_tail=tail,
    )
    return ReplayResult(_runs([run], **kw), cassette=None)  # type: ignore[arg-type]


def gate_result() -> GateResult:
    """Runs 1 and 2 replay cleanly, one passes, one fails (flaky); runs 3-7 time out."""
    hit = ReplayReport.from_json(
        {"calls": [{"n": 1, "tool": "read_file", "digest": "sha256:eec0", "outcome": "hit"}]}
    )
    runs = [
        _run(1, status="passed", exit_code=0, call_log=Path("/tmp/runs/run-01.jsonl"), report=hit),
        _run(2, call_log=Path("/tmp/runs/run-02.jsonl"), report=hit),
        *(_run(n, status="timeout", exit_code=None) for n in range(3, 8)),
    ]
    divergence = Divergence("after_tool_layer", None, (), 4, (3, 4), "Every run made 4 calls.")
    return GateResult(_runs(runs), divergence)


@pytest.mark.parametrize("cancelled", [False, True])
def test_the_replay_command_and_screen_say_the_same_lines_in_one_order(
    cancelled: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    result = replay_result(cancelled=cancelled)
    lines = replay_lines(result, NAME)
    print_replay(result, NAME)
    assert capsys.readouterr().out.splitlines() == [line.text for line in lines]
    kinds = [line.kind for line in lines]
    assert kinds[:5] == ["title", "served", "agent", "result", "isolation"]
    assert kinds[-1] == "files" and "miss" in kinds and "call_log" in kinds
    assert (CANCELLED_NOTE in lines[3].text) is cancelled  # the command says it too

    shown = replay_report(result, NAME, AGENT).plain.splitlines()
    expected = [
        line.text + ("  (d: against A)" if line.kind == "call_log" else "")
        for line in replay_lines(result, NAME, stderr_count=STDERR_LINES)
        if line.kind != "miss"  # rows on the screen
    ]
    assert shown == expected
    assert shown[0] == f"replay  {NAME}"


def test_the_gate_command_and_screen_say_the_same_lines_in_one_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = gate_result()
    lines = gate_lines(result, NAME)
    print_gate(result, NAME)
    out = capsys.readouterr().out.splitlines()
    # every line as built, then how to open two runs (the command's own words)
    assert out[: len(lines)] == [line.text for line in lines]
    assert out[len(lines)].startswith("open two runs side by side")
    kinds = [line.kind for line in lines]
    assert kinds[:5] == ["title", "served", "agent", "isolation", "verdict"]
    assert kinds.count("odd_run") == 5

    shown = verdict_text(result, NAME).plain.splitlines()
    built = gate_lines(result, NAME, odd_runs=ODD_RUNS)
    assert [line.kind for line in built].count("odd_run") == ODD_RUNS
    expected = [
        ("✗ flaky · " if line.kind == "verdict" else "") + line.text
        for line in built
        if line.kind not in ("title", "agent")  # in the screen's title
    ]
    assert shown[:-1] == expected
    assert shown[-1].startswith("d: run 2 (failed) vs run 1 (passed)")  # the screen's keys


def test_the_replay_text_lists_no_key_called_0_times() -> None:
    """An older report that still lists a key called 0 times: the text leaves it out."""
    old = {"repeats": [{"tool": "s", "digest": "sha256:x", "calls": 0, "recorded": 3}]}
    assert repeat_lines(SimpleNamespace(report=ReplayReport.from_json(old))) == []  # type: ignore[arg-type]
    old["repeats"].append({"tool": "t", "digest": "sha256:y", "calls": 2, "recorded": 1})
    assert repeat_lines(SimpleNamespace(report=ReplayReport.from_json(old))) == [  # type: ignore[arg-type]
        "repeated keys (served in recorded order):",
        "  t sha256:y  called 2x, recorded 1x",
    ]


def test_a_flaky_gate_with_runs_that_were_not_clean_counts_the_clean_ones_only() -> None:
    """Runs 1 and 2 replay cleanly and disagree (flaky); run 3 has a miss and exited 0,
    run 4 was killed by SIGKILL: both are left out of the rate, and named with why."""
    hit = {"n": 1, "tool": "read_file", "digest": "sha256:eec0", "outcome": "hit"}
    miss = {"n": 2, "tool": "search_docs", "digest": "sha256:0bde", "outcome": "miss"}
    clean = ReplayReport.from_json({"calls": [hit]})
    unclean = ReplayReport.from_json({"calls": [hit, miss], "misses": [MISS]})
    runs = [
        _run(1, status="passed", exit_code=0, report=clean),
        _run(2, report=clean),
        _run(3, status="passed", exit_code=0, report=unclean),
        _run(4, status="crashed", exit_code=-9, report=clean),
    ]
    result = GateResult(_runs(runs), None)
    assert (result.verdict, result.clean, result.passed, result.exit_status) == ("flaky", 2, 1, 1)
    text = [line.text for line in gate_lines(result, NAME)]
    assert "verdict flaky: 1/2 clean replays passed (50%); 2 of 4 runs not clean" in text
    assert "runs 3, 4 left out: not clean (listed below)" in text
    assert "  run 3: passed (exit 0) in 0.50 s · unclean: 1 miss" in text
    assert "  run 4: crashed (signal 9) in 0.50 s · infrastructure: killed by SIGKILL" in text
