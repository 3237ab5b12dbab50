"""bisect (issue 28): delta debugging over the responses that differ, the gate as the
oracle, hybrid cassettes of the passing run with some of the failing run's answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.core.loop.options import LoopOptions
from cassette_tui.core.why.bisect import EXIT_FOUND, EXIT_NO_ANSWER, bisect_job
from cassette_tui.core.why.ddmin import FAIL, PASS, UNRESOLVED, ddmin
from cassette_tui.core.why.hybrid import differing_steps, hybrid_entries
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import write_cassette
from support.loop import agent_cmd

AGENT = Path(__file__).resolve().parents[2] / "support" / "agents" / "bisect_agent.py"


def _pair(folder: Path, steps: int, *, recover: bool = False) -> tuple[Path, Path]:
    def run(state: str) -> list[dict]:
        out = []
        for i in range(1, steps + 1):
            out.append({"seq": len(out) + 1, "tool": "check", "args": {"step": i},
                        "response": {"state": state, "n": i}})  # fmt: skip
            if recover and state == "bad" and i == 1:
                out.append({"seq": len(out) + 1, "tool": "recover", "args": {"from": 1},
                            "response": {"ok": True}})  # fmt: skip
        return out

    return (
        write_cassette(folder / "fail.jsonl", *run("bad")),
        write_cassette(folder / "pass.jsonl", *run("good")),
    )


def _agent(*args: str) -> AgentCommand:
    from cassette_tui.core.loop.agent import resolve_agent

    return resolve_agent(agent_cmd(*args, script=AGENT), None)


def _ddmin_pure(items: list[int], culprits: set[int]) -> tuple[list[int], int]:
    calls = 0

    def test(subset: list[int]):
        nonlocal calls
        calls += 1
        return FAIL if culprits <= set(subset) else PASS
        yield  # a job

    search = run_job(ddmin(items, test))
    return search.minimal, calls


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 40).flatmap(
        lambda n: st.tuples(st.just(n), st.sets(st.integers(0, n - 1), min_size=1, max_size=3))
    )
)
def test_ddmin_finds_exactly_the_culprits(case: tuple[int, set[int]]) -> None:
    n, culprits = case
    minimal, calls = _ddmin_pure(list(range(n)), culprits)
    assert set(minimal) == culprits
    assert calls <= 4 * len(culprits) * max(1, n).bit_length() * 4  # about |D| log |D| at most


def test_ddmin_never_counts_unresolved_as_pass_or_fail() -> None:
    def test(subset: list[int]):
        if subset == [0, 1]:
            return UNRESOLVED  # a flaky candidate stays unresolved
        return FAIL if {1, 2} <= set(subset) else PASS
        yield

    search = run_job(ddmin([0, 1, 2, 3], test))
    assert search.minimal == [1, 2]
    assert (frozenset({0, 1}), UNRESOLVED) in search.tested


def test_hybrid_takes_the_chosen_answers_and_keeps_the_failing_only_calls(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 4, recover=True)
    a, b = load(fail), load(passing)
    steps = differing_steps(diff_cassettes(a, b, align="key"))
    assert [s.a_seq for s in steps] == [1, 3, 4, 5] and [s.b_seq for s in steps] == [1, 2, 3, 4]
    entries = hybrid_entries(a, b, [steps[1]])
    assert [e.response["state"] for e in entries[:4]] == ["good", "bad", "good", "good"]
    assert [e.args for e in entries[:4]] == [{"step": i} for i in range(1, 5)]
    assert entries[4].tool == "recover" and entries[4].seq == 5  # A's path stays open


def test_a_step_names_the_part_that_differs_never_a_bare_dollar(tmp_path: Path) -> None:
    """An error in A where B was answered (a 429 then the quote) is ``error response``; a
    change inside the response keeps its path; a whole other response is ``response``."""
    calls = [("quote", {"s": "ACME"}), ("hours", {"x": "XNYS"}), ("news", {"s": "ACME"})]
    a = [{"seq": 1, "tool": "quote", "args": calls[0][1],
          "error": {"type": "RateLimited", "message": "429"}},
         {"seq": 2, "tool": "hours", "args": calls[1][1], "response": {"open": "09:30"}},
         {"seq": 3, "tool": "news", "args": calls[2][1], "response": "none"}]  # fmt: skip
    b = [{"seq": 1, "tool": "quote", "args": calls[0][1], "response": {"price": 12.5}},
         {"seq": 2, "tool": "hours", "args": calls[1][1], "response": {"open": "10:00"}},
         {"seq": 3, "tool": "news", "args": calls[2][1], "response": "merger"}]  # fmt: skip
    fail = load(write_cassette(tmp_path / "fail.jsonl", *a))
    passing = load(write_cassette(tmp_path / "pass.jsonl", *b))
    steps = differing_steps(diff_cassettes(fail, passing, align="key"))
    assert [s.label() for s in steps] == [
        "A seq 1 quote error response",
        "A seq 2 hours $.open",
        "A seq 3 news response",
    ]


def test_bisect_finds_the_two_of_twelve_responses(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 12)
    result = run_job(bisect_job(fail, passing, _agent("--steps", "12", "--needs", "3,7"),
                                tmp_path / "bisect", LoopOptions(jobs=2), runs=2))  # fmt: skip
    assert result.exit_status == EXIT_FOUND, result.summary()
    assert [s.a_seq for s in result.minimal or []] == [3, 7]
    assert result.summary().startswith("2 of 12 differing responses suffice: A seq 3 check")
    assert result.candidates[0].outcome == PASS and result.candidates[1].outcome == FAIL
    # every candidate is a cassette on disk, and the minimal one replays to the failure
    assert all(c.cassette.exists() for c in result.candidates)
    minimal = load(tmp_path / "bisect" / "minimal.jsonl")
    bad = [e.args["step"] for e in minimal if e.response["state"] == "bad"]
    assert bad == [3, 7]
    assert result.replays == 2 * len(result.candidates)
    doc = result.to_json()
    assert json.loads(json.dumps(doc))["minimal"][0]["a_seq"] == 3


def test_bisect_keeps_the_failing_path_open(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 6, recover=True)
    result = run_job(bisect_job(fail, passing, _agent("--steps", "6", "--needs", "1,5", "--follow"),
                                tmp_path / "out", LoopOptions(jobs=2), runs=1))  # fmt: skip
    assert [s.tool for s in result.minimal or []] == ["check", "check"]
    assert [s.a_seq for s in result.minimal or []] == [1, 6]  # A's seqs: recover sits at 2
    assert not [c for c in result.candidates if "left the recording" in c.why]


def test_bisect_says_when_the_responses_do_not_explain_the_failure(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 4)
    # this agent fails only when step 9 is bad: no step 9 exists, so A's answers never fail it
    result = run_job(bisect_job(fail, passing, _agent("--steps", "4", "--needs", "9"),
                                tmp_path / "out", LoopOptions(jobs=2), runs=1))  # fmt: skip
    assert result.minimal is None and result.exit_status == EXIT_NO_ANSWER
    assert "all of A's differing responses" in result.problem and "pass" in result.problem


def test_bisect_of_identical_runs_has_nothing_to_bisect(tmp_path: Path) -> None:
    fail, _ = _pair(tmp_path, 3)
    result = run_job(bisect_job(fail, fail, _agent(), tmp_path / "out", runs=1))
    assert result.exit_status == EXIT_NO_ANSWER and "nothing to bisect" in result.problem


def test_bisect_refuses_a_folder_with_a_previous_bisect(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 2)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "candidate-001.jsonl").write_text("")
    with pytest.raises(FileExistsError, match="previous bisect"):
        run_job(bisect_job(fail, passing, _agent(), tmp_path / "out", runs=1))


def test_bisect_refuses_a_folder_with_a_minimal_before_any_replay(tmp_path: Path) -> None:
    # found only at the end, a minimal.jsonl there failed the bisect after every replay
    fail, passing = _pair(tmp_path, 2)
    out = tmp_path / "out"
    out.mkdir()
    (out / "minimal.jsonl").write_text("mine\n")
    with pytest.raises(FileExistsError, match="previous bisect"):
        run_job(bisect_job(fail, passing, _agent(), out, runs=1))
    assert (out / "minimal.jsonl").read_text() == "mine\n"
    assert not list(out.glob("candidate-*.jsonl"))


def test_a_candidate_that_left_the_recording_says_where(tmp_path: Path) -> None:
    """With A's answer at step 1 alone, the agent asks ``lost``, a call neither run made:
    that candidate is unresolved and its why names the call number of the miss and the
    last recorded step served before it; the progress names each candidate before its
    gate (its steps) and after it (the ``Candidate``)."""
    fail, passing = _pair(tmp_path, 4)
    agent = _agent("--steps", "4", "--needs", "1,2", "--when", "1", "--then", "lost")
    events = []
    job = bisect_job(fail, passing, agent, tmp_path / "out", LoopOptions(jobs=2), runs=1)
    result = run_job(job, events.append)
    lost = [c for c in result.candidates if c.outcome == UNRESOLVED]
    assert [[s.a_seq for s in c.steps] for c in lost] == [[1]]
    assert lost[0].why == "left the recording: a miss of lost at call 5 (after seq 4) in run 1"
    assert [s.a_seq for s in result.minimal or []] == [1, 2]
    tried = [e.item for e in events if e.stage == "bisect" and isinstance(e.item, tuple)]
    done = [e.item for e in events if e.stage == "bisect" and not isinstance(e.item, tuple)]
    assert done == result.candidates
    assert tried == [c.steps for c in result.candidates]


def test_a_bisect_stopped_before_the_ends_says_so_not_a_blank_reason() -> None:
    """Ctrl-C during the first gate: there is no problem to name, so the answer says it
    stopped before both ends were checked (it used to print ``no answer: `` and nothing)."""
    from cassette_tui.core.why.bisect import BisectResult

    result = BisectResult("a.jsonl", "b.jsonl", [], None, cancelled=True)
    summary = result.summary()
    assert not summary.rstrip().endswith(":"), summary
    assert "stopped before both ends were checked" in summary


def test_nothing_to_bisect_leaves_no_empty_folder(tmp_path: Path) -> None:
    """With no differing response no hybrid is written: no folder is made beside FAIL
    and none is named as holding hybrids (each try used to leave an empty one)."""
    fail, _ = _pair(tmp_path, 3)
    out = tmp_path / "out"
    result = run_job(bisect_job(fail, fail, _agent(), out, runs=1))
    assert result.exit_status == EXIT_NO_ANSWER
    assert not out.exists() and result.out_dir is None


def _calls_only(folder: Path, name: str, n: int) -> Path:
    return write_cassette(
        folder / name,
        *[{"seq": i, "tool": "check", "args": {"step": i}, "response": {"state": "good", "n": i}}
          for i in range(1, n + 1)],
    )  # fmt: skip


@pytest.mark.parametrize("a_calls", [0, 1])
def test_runs_that_part_on_calls_say_so_not_no_different_response(
    tmp_path: Path, a_calls: int
) -> None:
    """An empty or one-entry failing run against a passing run of 3 calls: no response
    differs, but the calls do; the answer says the runs part on their calls (how many each
    made, where), that bisect swaps responses so has nothing to try, and what to run."""
    fail = _calls_only(tmp_path, "fail.jsonl", a_calls)
    passing = _calls_only(tmp_path, "pass.jsonl", 3)
    result = run_job(bisect_job(fail, passing, _agent(), tmp_path / "out", runs=1))
    assert result.exit_status == EXIT_NO_ANSWER and result.candidates == []
    problem = result.problem
    assert "no step has a different response" not in problem
    assert "the runs part on their calls, not on their responses" in problem
    made = "A made no call" if a_calls == 0 else "A made 1 call"
    assert f"{made}, B 3" in problem
    assert f"first at row {a_calls + 1}: B seq {a_calls + 1} check, a step only B made" in problem
    assert f"cassette-tui diff {fail} {passing}" in problem
    assert not (tmp_path / "out").exists()


def test_identical_runs_say_nothing_in_the_recordings_tells_them_apart(tmp_path: Path) -> None:
    fail = _calls_only(tmp_path, "fail.jsonl", 2)
    result = run_job(bisect_job(fail, fail, _agent(), tmp_path / "out", runs=1))
    assert result.exit_status == EXIT_NO_ANSWER
    assert "the same calls with the same responses" in result.problem
    assert f"cassette-tui gate {fail}" in result.problem


def _crashing_agent() -> AgentCommand:
    """An agent that dies on import, before any tool call (a venv without the package)."""
    import shlex
    import sys

    from cassette_tui.core.loop.agent import resolve_agent

    code = "raise ModuleNotFoundError(\"No module named 'my_agent_deps'\")"
    return resolve_agent(shlex.join([sys.executable, "-c", code]), None)


def test_an_agent_that_never_reaches_a_tool_call_is_named_as_the_problem(tmp_path: Path) -> None:
    """The agent crashes on import: the first end's gate measured nothing. The answer says
    the agent made no tool call and why (its last line of stderr), not that the responses
    do not explain the outcome, and no "set minimal among the resolved" is claimed."""
    fail, passing = _pair(tmp_path, 2)
    result = run_job(bisect_job(fail, passing, _crashing_agent(), tmp_path / "out", runs=1))
    assert result.exit_status == EXIT_NO_ANSWER and result.minimal is None
    assert "does not explain the outcome" not in result.problem
    assert "the agent made no tool call" in result.problem
    assert "ModuleNotFoundError: No module named 'my_agent_deps'" in result.problem
    assert "ModuleNotFoundError" in result.candidates[0].why
