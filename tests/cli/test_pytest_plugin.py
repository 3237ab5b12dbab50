"""The pytest plugin (entry point ``pytest11``) in a real pytest subprocess on a small
project: replay from a named cassette, a pinned fixture, record modes, and the gate, alone
and spread over two pytest-xdist workers."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from support.child_pytest import pytest_argv
from support.loop import LOOP_CASSETTE
from support.paths import SCRIPT

TESTS = """
import random

import pytest

LIVE = []


def live(tool, args):
    LIVE.append(tool)
    return {"live": tool}


@pytest.mark.cassette("loop.jsonl")
def test_deterministic(cassette):
    dispatch = cassette.wrap(live)
    assert dispatch("lookup", {"key": "a"}) == {"value": 1}
    assert LIVE == [] and cassette.mode == "replay"


@pytest.mark.cassette("loop")
def test_env_wrapped_dispatcher_replays_too():
    from cassette_tui.core import wrap_dispatcher

    assert wrap_dispatcher(live)("lookup", {"key": "b"}) == {"value": 2}


@pytest.mark.cassette("loop.jsonl")
def test_flaky(cassette):
    cassette.wrap(live)("lookup", {"key": "a"})
    assert random.random() < 0.5, "the sampled answer was wrong"


@pytest.mark.cassette("loop.jsonl")
def test_fork(cassette):
    dispatch = cassette.wrap(live)
    dispatch("lookup", {"key": "a"})
    assert dispatch("fetch", {"path": random.choice("xy")})["text"] == "good"


@pytest.mark.cassette("loop.jsonl")
def test_miss(cassette):
    cassette.wrap(live)("lookup", {"key": "zzz"})


@pytest.mark.cassette("loop.jsonl")
def test_catches_and_carries_on(cassette):
    dispatch = cassette.wrap(live)
    try:
        dispatch("lookup", {"key": "zzz"})
    except Exception:
        pass  # a hostile agent: swallows the miss and passes
    dispatch("lookup", {"key": "a"})


@pytest.mark.cassette("loop.jsonl")
def test_never_calls(cassette):
    cassette.wrap(live)


@pytest.mark.cassette()
def test_recorded(cassette):
    dispatch = cassette.wrap(live)
    assert dispatch("lookup", {"key": "new"}) == {"live": "lookup"}


def test_unmarked_is_untouched():
    import os

    assert "CASSETTE_MODE" not in os.environ
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    cassettes = tmp_path / "cassettes"
    cassettes.mkdir()
    (cassettes / "loop.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in LOOP_CASSETTE), encoding="utf-8"
    )
    (tmp_path / "test_agent.py").write_text(TESTS, encoding="utf-8")
    return tmp_path


def pytest_run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CASSETTE_", "PYTEST_"))}
    return subprocess.run(
        pytest_argv("-q", "-rA", *args),
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_replay_from_a_named_cassette(project: Path) -> None:
    done = pytest_run(project, "-k", "deterministic or env_wrapped or unmarked")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


def test_a_miss_fails_the_test_and_names_the_nearest_call(project: Path) -> None:
    done = pytest_run(project, "-k", "miss")
    assert done.returncode == 1
    assert "CassetteMiss" in done.stdout and "nearest: seq 1" in done.stdout


def test_record_modes(project: Path) -> None:
    target = project / "cassettes" / "test_agent" / "test_recorded.jsonl"
    done = pytest_run(project, "-k", "recorded")
    assert done.returncode == 1 and "--cassette-record=once" in done.stdout
    assert not target.exists()
    done = pytest_run(project, "-k", "recorded", "--cassette-record=once")
    assert done.returncode == 0, done.stdout
    lines = target.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["args"] == {"key": "new"}
    before = target.read_bytes()
    done = pytest_run(project, "-k", "recorded", "--cassette-record=once")  # now replays
    assert done.returncode == 0 and target.read_bytes() == before
    done = pytest_run(project, "-k", "recorded", "--cassette-record=all")  # re-records
    assert (
        done.returncode == 0
        and json.loads(target.read_text())["recorded_at"] != json.loads(before)["recorded_at"]
        or target.read_bytes() != before
    )


def test_a_pinned_fixture_replays(project: Path) -> None:
    fixtures = project / "cassettes" / "fixtures"
    pinned = subprocess.run(
        [str(SCRIPT), "pin", str(project / "cassettes" / "loop.jsonl"), "--seq", "3",
         "-o", str(fixtures), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    name = Path(json.loads(pinned.stdout)["fixture"]).name
    (project / "test_pinned.py").write_text(
        textwrap.dedent(f"""
        import pytest

        @pytest.mark.cassette("fixtures/{name}")
        def test_pinned(cassette):
            dispatch = cassette.wrap(lambda tool, args: 1 / 0)
            assert dispatch("fetch", {{"path": "x"}}) == {{"text": "good"}}
        """),
        encoding="utf-8",
    )
    done = pytest_run(project, "test_pinned.py")
    assert done.returncode == 0, done.stdout


def test_gate_deterministic_and_flaky(project: Path) -> None:
    done = pytest_run(project, "-k", "deterministic", "--cassette-gate=5")
    assert done.returncode == 0, done.stdout
    assert "5 passed" in done.stdout
    assert "deterministic test_agent.py::test_deterministic: 5/5 passed" in done.stdout
    done = pytest_run(project, "-k", "flaky", "--cassette-gate=20")
    assert done.returncode == 1
    assert "FLAKY test_agent.py::test_flaky:" in done.stdout
    assert "after the tool layer" in done.stdout


def test_gate_junit_one_case_per_gated_test(project: Path) -> None:
    """--cassette-junit: one JUnit test case per gated test; flaky is a failure with where
    the runs part, not measured is an error, deterministic passes (issue 30)."""
    import junitparser

    report = project / "reports" / "gate.xml"
    done = pytest_run(project, "-k", "deterministic or fork or catches_and_carries_on",
                      "--cassette-gate=16", f"--cassette-junit={report}")  # fmt: skip
    assert done.returncode == 2, done.stdout  # one test not measured
    suite = next(iter(junitparser.JUnitXml.fromfile(str(report))))
    cases = {c.name: c for c in suite}
    assert set(cases) == {"test_deterministic", "test_fork", "test_catches_and_carries_on"}
    assert (suite.tests, suite.failures, suite.errors) == (3, 1, 1)
    assert cases["test_deterministic"].is_passed
    (failure,) = cases["test_fork"].result
    assert isinstance(failure, junitparser.Failure) and failure.type == "flaky"
    assert "The runs part at call 2" in failure.text
    (error,) = cases["test_catches_and_carries_on"].result
    assert isinstance(error, junitparser.Error) and error.type == "unclean_replay"
    assert cases["test_fork"].classname == "test_agent"


def test_gate_junit_never_replaces_a_cassette(project: Path) -> None:
    # `gate --junit` refuses a path that is no JUnit report; --cassette-junit wrote over it
    cassette = project / "cassettes" / "loop.jsonl"
    before = cassette.read_bytes()
    done = pytest_run(project, "-k", "deterministic", "--cassette-gate=2",
                      f"--cassette-junit={cassette}")  # fmt: skip
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "exists and is not a JUnit XML report; not replaced" in done.stderr
    assert cassette.read_bytes() == before


@pytest.mark.parametrize("workers", ["0", "2"])
def test_gate_over_xdist_workers_says_where_runs_part(project: Path, workers: str) -> None:
    done = pytest_run(project, "-k", "fork", "--cassette-gate=20", "-n", workers)
    assert done.returncode == 1, done.stdout
    out = done.stdout
    assert "FLAKY test_agent.py::test_fork:" in out
    assert "The runs part at call 2:" in out
    summary = next(line for line in out.splitlines() if "FLAKY test_agent.py::test_fork" in line)
    passed, runs = summary.rsplit(":", 1)[1].split()[0].split("/")
    assert runs == "20" and 0 < int(passed) < 20
    if workers == "2":  # the runs were spread over both workers
        assert "(runs on gw0, gw1)" in summary


def test_gate_an_unclean_replay_is_no_pass_and_exits_2(project: Path) -> None:
    """A test that catches its miss passes every run, yet the gate says ``unclean_replay``
    (a clean replay has no miss), names each run and why, and the session exits 2."""
    done = pytest_run(project, "-k", "catches_and_carries_on", "--cassette-gate=3")
    assert done.returncode == 2, done.stdout
    out = done.stdout
    assert "3 passed" in out  # pytest's word: each run passed
    assert (
        "unclean_replay test_agent.py::test_catches_and_carries_on: 0 of 3 runs replayed "
        "cleanly" in out
    )
    assert "    run 2: unclean: 1 miss" in out
    assert "1 test(s) not measured under --cassette-gate" in out and "deterministic" not in out
    done = pytest_run(project, "-k", "test_miss", "--cassette-gate=2")  # fails on its miss
    assert done.returncode == 2, done.stdout
    assert "unclean_replay test_agent.py::test_miss: 0 of 2 runs replayed cleanly" in done.stdout


def test_gate_a_test_that_replays_nothing_exits_2(project: Path) -> None:
    """A marked test that passes without a tool call: ``no_replay`` (as the CLI's gate says
    of an agent that exits 0 having replayed nothing), exit 2."""
    done = pytest_run(project, "-k", "never_calls", "--cassette-gate=2")
    assert done.returncode == 2, done.stdout
    assert "no_replay test_agent.py::test_never_calls: 0 of 2 runs replayed cleanly" in (
        done.stdout
    )
    assert "    run 1: no_tool_call: no tool call (its replay report has none)" in done.stdout


def test_a_miss_with_a_live_secret_fails_without_printing_it(project: Path) -> None:
    """Issue 26: the failure message of a miss (the exception's text, pytest's report)
    masks a live secret the agent read from its environment."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake
    (project / "test_secret.py").write_text(
        textwrap.dedent("""
        import os

        import pytest

        @pytest.mark.cassette("loop.jsonl")
        def test_secret_miss(cassette):
            dispatch = cassette.wrap(lambda tool, args: {"live": tool})
            dispatch("lookup", {"key": "a", "token": os.environ["LEAK_TOKEN"]})
        """),
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CASSETTE_", "PYTEST_"))}
    env["LEAK_TOKEN"] = token
    done = subprocess.run(
        pytest_argv("-q", "-rA", "test_secret.py"),
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "CassetteMiss" in out, out
    assert "$.token: absent in the recording, live '<redacted:github_token:" in out
    assert token not in out and token[4:14] not in out
