"""A huge ``--runs`` (bisect, minimise and gate share the runner) costs memory for the runs
started, not for the runs asked for: specs are made as runs start."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

from cassette_tui.core.format.jobs import CancelToken
from cassette_tui.core.loop._runner import ProcessSpec, run_processes


def test_the_runner_makes_a_spec_only_when_it_starts_its_run(tmp_path: Path) -> None:
    made: list[int] = []
    token = CancelToken()

    def specs() -> Iterator[ProcessSpec]:
        for n in range(1, 10**9):  # a billion runs asked for: never built up front
            made.append(n)
            yield ProcessSpec(n, [sys.executable, "-c", "pass"], dict(os.environ),
                              tmp_path / f"run-{n}.stdout", tmp_path / f"run-{n}.stderr",
                              timeout=120)  # fmt: skip

    outcomes = []
    for outcome in run_processes(specs(), 2, token):
        outcomes.append(outcome)
        if len(outcomes) == 3:
            token.cancel()
    assert len(made) <= 3 + 2 + 1, len(made)  # what ran, what was running, one peeked
    assert all(o.status in ("exited", "cancelled") for o in outcomes)
