"""The words on real data: tau-bench's task 2 trial 1 fails by hitting the step limit
before answering (issue 10). Read from ../shared/real, skipped where it is absent."""

from __future__ import annotations

import json

import pytest
from cassette_tui.core.format.context import call_context, run_outcome
from cassette_tui.core.importers.sources import open_cassette

#: ../shared/real, as in conftest.py (module-scoped fixtures cannot use the ``real`` one)
from support.paths import REAL

TAU = REAL / "tau-bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def tau_raw() -> list[dict]:
    if not TAU.is_file():
        pytest.skip(f"real-world data not available: {TAU} is absent")
    return json.loads(TAU.read_text())


def test_task_2_trial_1_hit_the_step_limit_without_answering(tau_raw: list[dict]) -> None:
    cassette = open_cassette(f"{TAU}#task=2,trial=1")
    outcome, warnings = run_outcome(cassette)
    assert warnings == []
    assert outcome is not None
    assert (outcome.reward, outcome.passed) == (0.0, False)
    assert (outcome.limit_reached, outcome.steps, outcome.final_answer) == (True, 30, None)
    assert outcome.summary() == "✗ reward 0 · step limit reached (30 steps)"
    passing = run_outcome(open_cassette(f"{TAU}#task=2,trial=2"))[0]
    assert passing is not None and passing.summary() == "✓ reward 1"
    assert passing.limit_reached is False and passing.final_answer


def test_the_step_limit_matches_the_raw_reward_info(tau_raw: list[dict]) -> None:
    """Every run whose info.reward_info is null, and only those, reach the limit; each took
    30 agent steps (tau-bench's default max_num_steps)."""
    limited = []
    for run in tau_raw:
        spec = f"{TAU}#task={run['task_id']},trial={run['trial']}"
        outcome = run_outcome(open_cassette(spec))[0]
        assert outcome is not None
        assert outcome.limit_reached is (run["info"]["reward_info"] is None)
        if outcome.limit_reached:
            limited.append((run["task_id"], run["trial"], outcome.steps))
    assert len(limited) == 5  # the README of ../shared/real says so
    assert (2, 1, 30) in limited and {steps for *_, steps in limited} == {30}


def test_each_call_keeps_the_message_it_answered(tau_raw: list[dict]) -> None:
    cassette = open_cassette(f"{TAU}#task=2,trial=1")
    first = call_context(cassette[0])[0]
    assert first is not None and first.answered is not None
    assert first.answered.role == "user" and first.answered.text
    contexts = [call_context(cassette[i])[0] for i in range(len(cassette))]
    assert all(c is not None and c.answered is not None for c in contexts)
    tool_answers = [c.answered for c in contexts if c and c.answered and c.answered.role == "tool"]
    assert tool_answers and all(len(a.seqs) == 1 for a in tool_answers)
