"""The demo agent under the pytest plugin (``cassette`` marker): each test replays the fixed
run. ``test_sampled_answer`` runs the agent in its flaky mode, so

    python -m pytest sample_cassettes/test_gate_demo.py --cassette-gate=20 -n auto

gates it flaky (the nondeterminism is after the tool layer) while ``test_fixed_run`` stays
deterministic. Not part of the project's own test suite (``testpaths`` is ``tests``).
"""

from __future__ import annotations

import agent  # the demo agent beside this file (pytest puts this folder on sys.path)
import pytest


@pytest.mark.cassette("fix.jsonl")
def test_fixed_run() -> None:
    assert agent.run() == 0


@pytest.mark.cassette("fix.jsonl")
def test_sampled_answer() -> None:
    assert agent.run(flaky=True) == 0
