"""minimise (issue 28): the smallest set of a failing cassette's entries on which the agent
(a real subprocess, gated offline) still fails the same way, and the consistency of the
subset cassettes it writes (repeated keys, ``batch`` marks, an MCP sidecar)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.format.atomic import NotReplaceable, TargetExists
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.loop.agent import AgentCommand, resolve_agent
from cassette_tui.core.loop.options import LoopOptions
from cassette_tui.core.scan.lint import lint
from cassette_tui.core.why.ddmin import FAIL, PASS, UNRESOLVED, ddmin
from cassette_tui.core.why.failure import traceback_error
from cassette_tui.core.why.minimise import (
    EXIT_FOUND,
    EXIT_UNSURE,
    default_out,
    minimise_job,
)
from cassette_tui.core.why.subset import Subsets, sidecar_for, trimmed_sidecar
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import write_cassette
from support.loop import agent_cmd

AGENT = Path(__file__).resolve().parents[2] / "support" / "agents" / "minimise_agent.py"
OPTIONS = LoopOptions(jobs=2)


def _steps(folder: Path, steps: int, name: str = "fail.jsonl") -> Path:
    return write_cassette(
        folder / name,
        *[{"seq": i, "tool": "check", "args": {"step": i}, "response": {"state": "bad"}}
          for i in range(1, steps + 1)],
    )  # fmt: skip


def _agent(*args: str) -> AgentCommand:
    return resolve_agent(agent_cmd(*args, script=AGENT), None)


def test_two_of_twenty_entries_keep_the_failure(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 20)
    agent = _agent("--steps", "20", "--needs", "4,9", "--tolerant")
    result = run_job(minimise_job(cassette, agent, OPTIONS, runs=2))
    assert result.exit_status == EXIT_FOUND and result.one_minimal, result.summary()
    assert result.seqs == [4, 9] and result.tools == ["check", "check"]
    assert result.summary() == "2 of 20 entries keep the failure: seq 4 check, seq 9 check"
    assert result.failure is not None and result.failure.error == "AssertionError"
    assert result.failure.exit_code == 1 and result.failed == 2
    # the empty cassette first; every candidate a different subset (the cache), N runs each
    assert result.candidates[0].seqs == () and result.candidates[0].outcome == PASS
    assert len({c.seqs for c in result.candidates}) == len(result.candidates)
    assert result.replays == 2 * (1 + len(result.candidates))
    assert result.misses > 0  # the removed entries' calls missed, and the agent went on
    out = load(default_out(cassette))
    assert result.out == default_out(cassette) and out.path is not None
    assert [e.seq for e in out] == [4, 9] and lint(out) == []
    kept = [c for c in result.candidates if c.seqs == (4, 9)]
    assert len(kept) == 1 and kept[0].outcome == FAIL


def test_every_entry_is_needed_when_a_miss_is_another_failure(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 6)
    agent = _agent("--steps", "6", "--needs", "2,5")  # a miss is an uncaught CassetteMiss
    result = run_job(minimise_job(cassette, agent, OPTIONS, runs=1))
    # nothing could be removed: not "found" (exit 0) but 1, and no copy written as a result
    assert result.seqs == [1, 2, 3, 4, 5, 6] and result.exit_status == EXIT_UNSURE
    assert result.nothing_removed and result.one_minimal
    assert result.summary().startswith("nothing could be removed: all 6 entries keep the failure")
    assert result.out is None and not default_out(cassette).exists()
    assert all(c.outcome == PASS for c in result.candidates)
    assert all("fails another way: exit 1, CassetteMiss (a miss of check)" in c.why
               for c in result.candidates)  # fmt: skip
    assert result.misses == 0


def test_a_recorded_miss_is_the_failure_kept(tmp_path: Path) -> None:
    """The agent dies of a miss in the recording itself (step 5 was never recorded): that
    miss is the failure, so a candidate fails the same way only when it dies of the same
    miss, never of an earlier one on a removed entry."""
    cassette = write_cassette(
        tmp_path / "miss.jsonl",
        *[{"seq": i, "tool": "check", "args": {"step": i}, "response": {"state": "good"}}
          for i in (1, 2, 3, 4, 6, 7, 8)],
    )  # fmt: skip
    result = run_job(minimise_job(cassette, _agent("--steps", "8", "--needs", "9"), runs=1))
    assert result.failure is not None and result.failure.error == "CassetteMiss"
    assert result.failure.describe() == "exit 1, CassetteMiss (a miss of check)"
    assert result.whole is not None and result.whole.verdict == "unclean_replay"
    assert result.seqs == [1, 2, 3, 4] and result.exit_status == EXIT_FOUND


def test_an_exit_status_without_traceback_is_the_failure_too(tmp_path: Path) -> None:
    """No traceback says what the agent died of: a run whose last call missed is taken to
    have died of that miss (another failure), so the last step's entry stays; the others
    the agent got past go."""
    cassette = _steps(tmp_path, 8)
    agent = _agent("--steps", "8", "--needs", "3,6", "--tolerant", "--exit", "3")
    result = run_job(minimise_job(cassette, agent, OPTIONS, runs=1))
    assert result.failure is not None and result.failure.describe() == "exit 3"
    assert result.seqs == [3, 6, 8]
    gone = [c for c in result.candidates if c.seqs == (3, 6)]
    assert gone and gone[0].why == "fails another way: exit 3 (a miss of check)"


def test_a_flaky_cassette_has_nothing_definite_to_minimise(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 4)
    agent = _agent("--steps", "4", "--needs", "2", "--tolerant", "--flaky-run", "{run}")
    result = run_job(minimise_job(cassette, agent, OPTIONS, runs=2))
    assert result.minimal is None and result.exit_status == EXIT_UNSURE
    assert result.problem.startswith("flaky: the whole cassette fails (exit 1, AssertionError)")
    assert "in 1 of 2 runs" in result.problem and not result.candidates
    assert not default_out(cassette).exists()
    # accepted: a subset keeps the failure when it fails at least as often (1 of 2)
    accepted = run_job(minimise_job(cassette, agent, OPTIONS, runs=2, allow_flaky=True))
    assert accepted.seqs == [2] and accepted.exit_status == EXIT_FOUND


def test_a_flaky_candidate_is_unresolved_never_a_fail(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 8)
    # flaky only when step 7 misses: every candidate without seq 7 is neither fail nor pass
    agent = _agent("--steps", "8", "--needs", "2,5", "--tolerant", "--flaky-run", "{run}",
                   "--flaky-without", "7")  # fmt: skip
    result = run_job(minimise_job(cassette, agent, OPTIONS, runs=2))
    assert result.seqs == [2, 5, 7] and result.exit_status == EXIT_UNSURE
    unresolved = [c for c in result.candidates if c.outcome == UNRESOLVED]
    assert unresolved and all(c.why == "flaky: fails the same way in 1/2 runs" for c in unresolved)
    assert all(7 not in c.seqs for c in unresolved)


def test_a_passing_cassette_has_nothing_to_minimise(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 3)
    result = run_job(minimise_job(cassette, _agent("--steps", "3", "--needs", "9"), runs=1))
    assert result.minimal is None and result.exit_status == EXIT_FOUND  # as the gate: 0
    assert result.summary() == (
        "nothing to minimise: the agent passes every run of the whole cassette (1/1)"
    )
    assert not default_out(cassette).exists()


def test_a_failure_that_needs_no_entry_is_said_so(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 3)
    # needs nothing: fails whatever the answers, misses caught
    agent = _agent("--steps", "3", "--needs", "", "--tolerant")
    result = run_job(minimise_job(cassette, agent, OPTIONS, runs=1))
    assert result.seqs == [] and len(result.candidates) == 1
    assert result.summary().startswith("0 of 3 entries")
    assert load(default_out(cassette)).path is not None and len(load(default_out(cassette))) == 0


def test_a_repeated_key_keeps_its_earlier_recordings(tmp_path: Path) -> None:
    """step 1 is asked twice and the second answer matters: dropping the first recording
    would hand the first call the second's answer, so both stay (the closure)."""
    cassette = write_cassette(
        tmp_path / "rep.jsonl",
        {"seq": 1, "tool": "check", "args": {"step": 1}, "response": {"state": "good"}},
        {"seq": 2, "tool": "check", "args": {"step": 1}, "response": {"state": "bad"}},
        *[{"seq": i + 1, "tool": "check", "args": {"step": i}, "response": {"state": "bad"}}
          for i in range(2, 6)],
    )  # fmt: skip
    agent = _agent("--steps", "5", "--needs", "1,4", "--twice", "1", "--tolerant")
    result = run_job(minimise_job(cassette, agent, OPTIONS, runs=1))
    assert result.seqs == [1, 2, 5], result.summary()
    # no candidate kept seq 2 without seq 1
    assert not [c for c in result.candidates if 2 in c.seqs and 1 not in c.seqs]


def test_the_output_is_never_replaced_without_force(tmp_path: Path) -> None:
    cassette = _steps(tmp_path, 2)
    mine = tmp_path / "fail.min.jsonl"
    mine.write_text("mine\n")
    agent = _agent("--steps", "2", "--needs", "1")
    with pytest.raises(TargetExists):  # before any replay
        run_job(minimise_job(cassette, agent, OPTIONS, runs=1))
    assert mine.read_text() == "mine\n"
    with pytest.raises(ValueError, match="is the cassette being minimised"):
        run_job(minimise_job(cassette, agent, OPTIONS, runs=1, out=cassette, force=True))
    link = tmp_path / "link.jsonl"
    link.symlink_to(mine)
    with pytest.raises(NotReplaceable):  # not even with force, and before any replay
        run_job(minimise_job(cassette, agent, OPTIONS, runs=1, out=link, force=True))
    tolerant = _agent("--steps", "2", "--needs", "1", "--tolerant")  # gets past a miss
    result = run_job(minimise_job(cassette, tolerant, OPTIONS, runs=1, force=True))
    assert [e.seq for e in load(mine)] == [1]  # replaced, with force
    assert result.out == mine


def test_batch_marks_follow_the_calls_kept(tmp_path: Path) -> None:
    rows = [{"seq": i, "tool": "fetch", "args": {"n": i}, "response": i} for i in range(1, 6)]
    for row in rows[:3]:
        row["batch"] = 1  # seqs 1-3 ran together
    recording = load(write_cassette(tmp_path / "b.jsonl", *rows))
    subsets = Subsets(recording)
    marks = {e.seq: e.extra.get("batch") for e in subsets.entries([1, 2, 4])}
    assert marks == {2: 2, 3: 2, 5: None}  # the batch starts at the first call kept
    single = subsets.entries([2, 3])
    assert [e.extra.get("batch") for e in single] == [None, None]  # ran alone, now
    written = load(subsets.write([1, 2, 4], tmp_path / "sub.jsonl"))
    assert lint(written) == [] and [e.seq for e in written] == [2, 3, 5]


def test_the_mcp_sidecar_is_written_beside_the_subset(tmp_path: Path) -> None:
    rows = [{"seq": i, "tool": "git_status", "args": {"n": i}, "response": {"content": []}}
            for i in range(1, 5)]  # fmt: skip
    cassette = write_cassette(tmp_path / "git.jsonl", *rows)
    facts = {
        "format": "cassette-tui/mcp-server-facts", "version": 1, "cassette": "git.jsonl",
        "server": {"command": ["mcp-server-git"]}, "exchanges": [],
        "server_messages": [
            {"message": {"jsonrpc": "2.0", "method": "notifications/x"},
             "before": {"seq": 2}, "after": {"seq": 1}},
            {"line": "ready", "before": {"exchange": 0}, "after": None},
        ],
    }  # fmt: skip
    sidecar_for(cassette).write_text(json.dumps(facts))
    subsets = Subsets(load(cassette))
    out = subsets.write([0, 3], tmp_path / "git.min.jsonl")
    doc = json.loads(sidecar_for(out).read_text())
    assert sidecar_for(out).name == "git.min.mcp.json" and doc["cassette"] == "git.min.jsonl"
    assert doc["server_messages"][0]["before"] == {"seq": 4}  # seq 2 removed: the next kept
    assert doc["server_messages"][0]["after"] == {"seq": 1}
    assert doc["server_messages"][1] == facts["server_messages"][1]
    assert trimmed_sidecar(facts, set(), "x.jsonl")["server_messages"][0]["before"] is None


def test_the_default_output_is_beside_the_cassette(tmp_path: Path) -> None:
    assert default_out("runs/fail.jsonl") == Path("runs/fail.min.jsonl")
    assert default_out("runs/fail") == Path("runs/fail.min.jsonl")
    assert default_out("tau/airline.json#task=6,trial=1") == Path(
        "tau/airline.task-6.trial-1.min.jsonl"
    )


def test_the_error_of_a_traceback() -> None:
    tail = (
        'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
        "    main()\n    ^^^^^^\n"
        "cassette_tui.core.CassetteMiss: cassette miss: check was not recorded\n"
        "  nearest: seq 1\n"
    )
    assert traceback_error(tail) == "CassetteMiss"
    assert traceback_error("  nearest: seq 1\nValueError: bad\n") == "ValueError"
    assert traceback_error('  File "a.py", line 1\nAssertionError\n') == "AssertionError"
    assert traceback_error("some words: here\n") is None
    group = (
        "  + Exception Group Traceback (most recent call last):\n"
        '  |   File "a.py", line 1, in <module>\n'
        "  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)\n"
        "  +-+---------------- 1 ----------------\n"
        '    | Traceback (most recent call last):\n    |   File "b.py", line 2, in call\n'
        "    |     validate()\n"
        "    | pydantic_core._pydantic_core.ValidationError: 2 validation errors for X\n"
        "CallToolResult.resultType\n  Field required [type=missing]\n"
        "    +------------------------------------\n"
    )
    assert traceback_error(group) == "ValidationError"


@settings(max_examples=80, deadline=None)
@given(
    st.integers(2, 14).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.dictionaries(
                st.frozensets(st.integers(0, n - 1), max_size=n),
                st.sampled_from([FAIL, PASS, UNRESOLVED]),
                max_size=60,
            ),
        )
    )
)
def test_ddmin_result_is_1_minimal_for_any_deterministic_oracle(
    case: tuple[int, dict[frozenset[int], str]],
) -> None:
    """Whatever a deterministic oracle answers (not monotone, with unresolved outcomes),
    the subset ddmin returns fails, and removing any one of its items does not fail."""
    n, table = case
    everything = frozenset(range(n))

    def outcome(subset: frozenset[int]) -> str:
        return FAIL if subset == everything else table.get(subset, PASS)

    def test(subset: list[int]):
        return outcome(frozenset(subset))
        yield  # a job

    search = run_job(ddmin(list(range(n)), test))
    minimal = frozenset(search.minimal)
    assert search.done and outcome(minimal) == FAIL
    if len(minimal) > 1:
        assert all(outcome(minimal - {x}) != FAIL for x in minimal)


def test_shrink_responses_keeps_only_what_the_failure_reads(tmp_path: Path) -> None:
    response = {"state": "bad", "noise": {"a": [1, 2, 3], "b": "x"},
                "results": [{"id": 1}, {"id": 2, "hit": True, "title": "t"}, {"id": 3}]}  # fmt: skip
    cassette = write_cassette(
        tmp_path / "r.jsonl",
        *[{"seq": i, "tool": "check", "args": {"step": i}, "response": response}
          for i in range(1, 5)],
    )  # fmt: skip
    agent = _agent("--steps", "4", "--needs", "3", "--tolerant", "--need-hit")
    result = run_job(minimise_job(cassette, agent, OPTIONS, runs=1, shrink_responses=True))
    assert result.seqs == [3] and result.exit_status == EXIT_FOUND
    out = load(default_out(cassette))
    # "state" is read (without it a KeyError: another failure), one hit is needed
    assert [e.response for e in out] == [{"state": "bad", "results": [{"hit": True}]}]
    assert "seq 3 $.noise" in result.removed
    assert any(c.response.startswith("seq 3 $: 0 of 3 parts") for c in result.candidates)
    tried = [c for c in result.candidates if c.response == "seq 3 $: 0 of 3 parts"]
    assert tried[0].why == "fails another way: exit 1, KeyError"
    assert lint(out) == []


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=4),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(json_values, st.data())
def test_keeping_parts_of_a_container_leaves_the_rest(value: object, data: st.DataObject) -> None:
    import copy

    from cassette_tui.core.why.shrink import at, child_containers, keeping, parts

    before = copy.deepcopy(value)
    paths = [()] if isinstance(value, dict | list) else []
    found = []
    while paths:  # every container inside value
        path = paths.pop()
        found.append(path)
        paths.extend(child_containers(value, path))
    for path in found:
        items = parts(value, path)
        assert keeping(value, path, items) == value  # all kept: the same value
        sub = data.draw(st.lists(st.sampled_from(items), unique=True) if items else st.just([]))
        cut = keeping(value, path, sub)
        inner = at(cut, path)
        want = at(value, path)
        if isinstance(want, dict):
            assert list(inner) == [k for k in want if k in sub]
        else:
            assert inner == [v for i, v in enumerate(want) if i in sub]
    assert value == before  # the recorded response is never changed in place


def test_a_whole_gate_that_measured_nothing_says_why(tmp_path: Path) -> None:
    """An agent that dies on import: nothing to minimise, and the problem names what the
    agent died of (its last line of stderr), not the verdict's name alone."""
    import shlex
    import sys

    cassette = _steps(tmp_path, 2)
    code = "raise ModuleNotFoundError(\"No module named 'my_agent_deps'\")"
    agent = resolve_agent(shlex.join([sys.executable, "-c", code]), None)
    result = run_job(minimise_job(cassette, agent, OPTIONS, runs=1))
    assert result.minimal is None and result.exit_status == 2
    assert "measured nothing (no_tool_call" in result.problem
    assert "ModuleNotFoundError: No module named 'my_agent_deps'" in result.problem
