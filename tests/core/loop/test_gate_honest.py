"""An honest gate (issue 29): only clean replays measure the agent. Hostile agents
(``support/agents/loop_agent.py``) crash on a miss, catch a miss and exit 0, die before
their first call, hang past the timeout, write to a full disk, are killed by a signal;
each gets a verdict of its own, never ``deterministic``."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.core.loop.gate import VERDICT_EXIT, VERDICTS, GateResult, gate_job, verdict_of
from cassette_tui.core.loop.options import LoopOptions, default_jobs
from cassette_tui.core.loop.results import TIMEOUT_HINT, RunResult, RunsResult
from support.loop import agent_cmd, loop_cassette

#: a generous timeout for runs that must end by themselves on a loaded machine
SLOW = 120.0


def agent(*args: str) -> AgentCommand:
    return AgentCommand.parse(agent_cmd(*args))


def gate(tmp_path: Path, mode: str, runs: int = 2, **kwargs) -> GateResult:
    cassette = loop_cassette(tmp_path)
    strict = kwargs.pop("strict", False)
    options = LoopOptions(**{"timeout": SLOW, "jobs": 2, **kwargs})
    return run_job(gate_job(cassette, agent(mode), options, runs=runs, strict=strict))


def not_clean(result: GateResult) -> list[tuple[int, str]]:
    return [(d["run"], d["replay"]) for d in result.to_json()["not_clean"]]


def test_every_run_crashing_on_a_miss_is_an_unclean_replay_not_deterministic(
    tmp_path: Path,
) -> None:
    result = gate(tmp_path, "miss", runs=3)
    assert [r.status for r in result.results] == ["crashed"] * 3
    assert result.verdict == "unclean_replay" and result.exit_status == 2
    assert result.clean == 0 and result.passed == 0
    assert not_clean(result) == [(1, "unclean"), (2, "unclean"), (3, "unclean")]
    assert result.to_json()["not_clean"][0]["why"] == "1 miss"
    assert [r["replay"] for r in result.to_json()["results"]] == ["unclean"] * 3


def test_an_agent_that_catches_the_miss_and_exits_0_is_not_a_pass(tmp_path: Path) -> None:
    result = gate(tmp_path, "catch-miss", runs=2)
    assert [r.status for r in result.results] == ["passed", "passed"]  # the agent's word
    assert result.verdict == "unclean_replay" and result.exit_status == 2
    assert result.passed == 0 and result.total("misses") == 2
    doc = result.to_json()
    assert (doc["passed"], doc["clean"], doc["verdict"]) == (0, 0, "unclean_replay")


def test_no_run_reaching_a_tool_call_is_an_error(tmp_path: Path) -> None:
    result = gate(tmp_path, "crash-early", runs=3)
    assert result.verdict == "no_tool_call" and result.exit_status == 2
    assert all(r.calls is None for r in result.results)
    assert "retry_policy_v2" in result.results[0].stderr_tail
    assert not_clean(result) == [(n, "no_tool_call") for n in (1, 2, 3)]


def test_timeouts_are_infrastructure_and_say_it_may_be_the_machine(tmp_path: Path) -> None:
    """Run 1 passes, the others hang past the timeout: not flaky, not deterministic."""
    piddir = tmp_path / "pids"
    piddir.mkdir()
    cassette = loop_cassette(tmp_path)
    cmd = AgentCommand.parse(agent_cmd("pass-then-hang", "{run}", str(piddir)))
    options = LoopOptions(timeout=8.0, jobs=3)
    result = run_job(gate_job(cassette, cmd, options, runs=3))
    statuses = [r.status for r in result.results]
    assert statuses[0] == "passed" and statuses[1:] == ["timeout", "timeout"]
    assert result.verdict == "infrastructure" and result.exit_status == 2
    assert result.clean == 1 and result.passed == 1
    why = result.to_json()["not_clean"][0]
    assert why["replay"] == "infrastructure" and TIMEOUT_HINT in why["why"]
    assert result.runs_result.jobs == 3


def test_a_full_disk_is_infrastructure(tmp_path: Path) -> None:
    result = gate(tmp_path, "disk-full", runs=2)
    assert all("No space left on device" in r.stderr_tail for r in result.results)
    assert result.verdict == "infrastructure" and result.exit_status == 2
    assert "disk space" in result.to_json()["not_clean"][0]["why"]


def test_a_run_killed_by_a_signal_is_infrastructure(tmp_path: Path) -> None:
    result = gate(tmp_path, "kill-self", runs=2)
    assert [r.exit_code for r in result.results] == [-9, -9]
    assert result.verdict == "infrastructure" and result.exit_status == 2
    assert result.to_json()["not_clean"][0]["why"] == "killed by SIGKILL"


def test_strict_makes_unused_recordings_unclean(tmp_path: Path) -> None:
    """``pass`` calls lookup a and b; the two fetch recordings stay unused."""
    assert gate(tmp_path, "pass").verdict == "deterministic"
    result = gate(tmp_path, "pass", strict=True)
    assert result.verdict == "unclean_replay" and result.strict
    assert result.to_json()["not_clean"][0]["why"] == "2 recorded calls unused (--strict)"


def test_clean_replays_that_agree_are_deterministic_with_exit_0(tmp_path: Path) -> None:
    result = gate(tmp_path, "fail", runs=2)
    assert (result.verdict, result.exit_status, result.clean, result.passed) == (
        "deterministic", 0, 2, 0,
    )  # fmt: skip
    assert result.to_json()["not_clean"] == []


def test_the_verdict_rule_over_kinds() -> None:
    """``verdict_of``: the one rule of the CLI's gate and the pytest plugin's."""
    assert verdict_of([]) == "incomplete"
    assert verdict_of([("clean", True, True, False)] * 3) == "deterministic"
    assert verdict_of([("clean", True, True, False), ("clean", False, True, False)]) == "flaky"
    # clean replays that disagree are flaky whatever else happened
    mixed = [("clean", True, True, False), ("clean", False, True, False)]
    assert verdict_of([*mixed, ("infrastructure", False, False, False)]) == "flaky"
    assert verdict_of([("clean", True, True, False), ("unclean", True, True, False)]) == (
        "unclean_replay"
    )
    assert verdict_of([("clean", True, True, False), ("no_tool_call", False, False, False)]) == (
        "unclean_replay"
    )
    assert verdict_of([("clean", True, True, False), ("infrastructure", False, True, False)]) == (
        "infrastructure"
    )
    assert verdict_of([("infrastructure", False, False, False)] * 2) == "no_tool_call"
    assert verdict_of([("no_tool_call", True, False, True)]) == "no_replay"
    assert set(VERDICT_EXIT) == set(VERDICTS)
    assert {v for v, code in VERDICT_EXIT.items() if code != 2} == {"deterministic", "flaky"}


def test_a_result_with_no_completed_run_is_incomplete() -> None:
    rr = RunsResult(Path("c.jsonl"), "a", 1, [RunResult(1, "cancelled", None, 0.0, "guard")],
                    "guard", "", None)  # fmt: skip
    result = GateResult(rr, None)
    assert result.verdict == "incomplete" and result.exit_status == 2


@pytest.mark.parametrize(
    ("content", "expected"),
    [("200000 100000\n", 2), ("150000 100000\n", 2), ("50000 100000\n", 1), ("max 100000\n", None)],
)
def test_default_jobs_is_no_more_than_the_cpus_and_the_cgroup_quota(
    tmp_path: Path, content: str, expected: int | None
) -> None:
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text(content)
    cpus = default_jobs(tmp_path / "absent")
    assert cpus >= 1
    assert default_jobs(cpu_max) == (cpus if expected is None else min(cpus, expected))
    assert LoopOptions().workers == default_jobs()


def test_the_readme_tables_every_verdict_with_its_exit_status() -> None:
    from support.paths import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].strip("`") in VERDICTS:
            rows[cells[0].strip("`")] = int(cells[2])
    assert rows == VERDICT_EXIT


def test_a_runs_folder_that_cannot_be_written_is_infrastructure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The controller's own write of a run's call log fails for want of space (a full
    disk, simulated at the write): infrastructure, naming the file, never the agent."""
    import errno

    from cassette_tui.core.loop import _runs

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_runs, "write_call_log", full)
    result = gate(tmp_path, "pass", runs=2)
    assert [r.status for r in result.results] == ["passed", "passed"]
    assert result.verdict == "infrastructure" and result.exit_status == 2
    why = result.to_json()["not_clean"][0]["why"]
    assert why.startswith("the runs folder could not be written: ")
    assert "run-01.jsonl: No space left on device" in why
