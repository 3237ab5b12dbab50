"""Benchmark: what the gate costs beyond the agent's own runs, and what ``-j 2`` buys.

    .venv/bin/python benchmarks/bench_gate.py                 # 20 runs, 3 rounds
    .venv/bin/python benchmarks/bench_gate.py --runs 10 --rounds 1 --pairs 10

Agent: the demo agent (``sample_cassettes/agent.py``) replaying ``fix.jsonl``. The machine is
shared, so every comparison is made between measurements taken right after one another:

- overhead per replay: ``--pairs`` times, the agent run directly with ``subprocess.run``
  and the environment the gate gives it (``CASSETTE_MODE=replay``, ``CASSETTE_PATH``,
  ``CASSETTE_REPORT``: the same run), then a whole one-run ``replay_job`` (network off,
  the report read, the call log written, the runs folder made); the median of the paired
  differences (taken in alternating order), for each isolation. This is the worst case: a 20-run
  gate spreads its per-job costs over 20 runs.
- ``-j 2``: per round, a 20-run gate one at a time then the same with two at once; the
  median of the per-round ratios. A round of 20 direct runs is printed for scale.

Targets (issue 11): overhead at most 50 ms per replay; ``-j 2`` at most 0.6x ``-j 1``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.loop._isolation import probe_netns
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.core.loop.gate import gate_job
from cassette_tui.core.loop.options import LoopOptions
from cassette_tui.core.loop.replay import replay_job

ROOT = Path(__file__).resolve().parents[1]
AGENT = ROOT / "sample_cassettes" / "agent.py"
CASSETTE = ROOT / "sample_cassettes" / "fix.jsonl"


def direct(runs: int, folder: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env.update(CASSETTE_MODE="replay", CASSETTE_PATH=str(CASSETTE))
    start = time.perf_counter()
    for n in range(runs):
        env["CASSETTE_REPORT"] = str(folder / f"direct-{n}.json")
        done = subprocess.run(
            [sys.executable, str(AGENT)], env=env, capture_output=True, check=False
        )
        assert done.returncode == 0, done.stderr
    return time.perf_counter() - start


def gate(runs: int, jobs: int, isolation: str | None) -> float:
    agent = AgentCommand.parse(f"{sys.executable} {AGENT}")
    start = time.perf_counter()
    result = run_job(
        gate_job(CASSETTE, agent, LoopOptions(jobs=jobs, isolation=isolation), runs=runs)
    )
    elapsed = time.perf_counter() - start
    assert result.passed == runs, result.to_json()
    return elapsed


def replay(isolation: str | None) -> float:
    agent = AgentCommand.parse(f"{sys.executable} {AGENT}")
    start = time.perf_counter()
    result = run_job(replay_job(CASSETTE, agent, LoopOptions(isolation=isolation)))
    elapsed = time.perf_counter() - start
    assert result.clean, result.to_json()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=30)
    args = parser.parse_args()
    runs = args.runs
    netns, how = probe_netns()
    isolations: list[str | None] = [None, "guard"] if netns else ["guard"]
    names = {None: f"netns ({how})", "guard": "guard"}
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        folder = Path(tmp)
        direct(2, folder)  # warm the file cache
        diffs: dict[str | None, list[float]] = {iso: [] for iso in isolations}
        base: list[float] = []
        for i in range(args.pairs):
            for iso in isolations:
                # alternate the order (direct first, then replay first) so that a trend in
                # the machine's load falls on both sides alike
                if i % 2:
                    r = replay(iso)
                    d = direct(1, folder)
                else:
                    d = direct(1, folder)
                    r = replay(iso)
                base.append(d)
                diffs[iso].append(r - d)
        ratios, j1s, j2s, directs = [], [], [], []
        for _ in range(args.rounds):
            directs.append(direct(runs, folder))
            j1s.append(gate(runs, 1, isolations[0]))
            j2s.append(gate(runs, 2, isolations[0]))
            ratios.append(j2s[-1] / j1s[-1])
    med = statistics.median
    print(f"demo agent replaying {CASSETTE.name} (2 cores shared; medians)")
    print(f"  agent run directly (baseline)     {med(base) * 1000:7.1f} ms per run")
    for iso in isolations:
        over = med(diffs[iso]) * 1000
        ok = "ok" if over <= 50 else "OVER"
        print(
            f"  overhead of a replay, {names[iso]}: {over:+.1f} ms per replay "
            f"({args.pairs} pairs; target <= 50 ms: {ok})"
        )
    ratio = med(ratios)
    ok = "ok" if ratio <= 0.6 else "OVER"
    print(
        f"  {runs} runs: direct {med(directs):.2f} s, gate -j 1 {med(j1s):.2f} s, "
        f"gate -j 2 {med(j2s):.2f} s"
    )
    print(
        f"  gate -j 2 / gate -j 1             {ratio:7.2f}x "
        f"({args.rounds} rounds; target <= 0.6x: {ok})"
    )


if __name__ == "__main__":
    main()
