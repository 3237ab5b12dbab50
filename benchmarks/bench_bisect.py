"""Benchmark: how many candidates (gates) and agent runs ``bisect`` needs against |D|, the
number of differing responses, and what one bisect costs against one gate of its agent.

    .venv/bin/python benchmarks/bench_bisect.py                  # |D| = 4..64, 2 culprits
    .venv/bin/python benchmarks/bench_bisect.py --real 12 --runs 2

Part 1 counts the oracle calls of ``ddmin`` (``core/why/ddmin.py``) with an exact oracle,
for |D| in 4, 8, ..., 64 and k culprits spread over D, against |D| log2 |D| (the bound
delta debugging is known for when the failure needs few items). Part 2 runs a real
bisect of the test agent (``tests/support/agents/bisect_agent.py``, needs 2 of ``--real``
responses) and a single gate of the failing cassette in the same run: the ratio is how
many gates the answer cost.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import tempfile
import time
from pathlib import Path

from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.loop.agent import resolve_agent
from cassette_tui.core.loop.gate import gate_job
from cassette_tui.core.loop.options import LoopOptions
from cassette_tui.core.why.bisect import bisect_job
from cassette_tui.core.why.ddmin import FAIL, PASS, ddmin

ROOT = Path(__file__).resolve().parents[1]
AGENT = ROOT / "tests" / "support" / "agents" / "bisect_agent.py"


def count_tests(n: int, culprits: set[int]) -> int:
    calls = 0

    def test(subset: list[int]):
        nonlocal calls
        calls += 1
        return FAIL if culprits <= set(subset) else PASS
        yield  # a job

    search = run_job(ddmin(list(range(n)), test))
    assert set(search.minimal) == culprits, (n, culprits, search.minimal)
    return calls + 2  # bisect also checks both ends


def write_pair(folder: Path, steps: int) -> tuple[Path, Path]:
    paths = []
    for name, state in (("fail", "bad"), ("pass", "good")):
        p = folder / f"{name}.jsonl"
        p.write_text("".join(json.dumps({"seq": i, "tool": "check", "args": {"step": i},
                                         "response": {"state": state}}) + "\n"
                             for i in range(1, steps + 1)))  # fmt: skip
        paths.append(p)
    return paths[0], paths[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--real", type=int, default=12, help="|D| of the real bisect (0: skip)")
    parser.add_argument("--runs", type=int, default=2, help="replays per candidate")
    args = parser.parse_args()
    print("|D|  k  candidates  |D|log2|D|  ratio")
    for n in (4, 8, 16, 32, 64):
        for k in (1, 2, 3):
            culprits = {round(i * (n - 1) / max(1, k - 1)) for i in range(k)} if k > 1 else {n // 2}
            tests = count_tests(n, culprits)
            bound = n * math.log2(n)
            print(f"{n:3d}  {k}  {tests:10d}  {bound:10.0f}  {tests / bound:5.2f}")
    if args.real:
        with tempfile.TemporaryDirectory() as tmp:
            fail, passing = write_pair(Path(tmp), args.real)
            needs = f"3,{max(4, args.real - 5)}"
            agent = resolve_agent(shlex.join([sys.executable, str(AGENT), "--steps",
                                              str(args.real), "--needs", needs]), None)  # fmt: skip
            options = LoopOptions(jobs=2)
            t0 = time.perf_counter()
            run_job(gate_job(fail, agent, options, runs=args.runs))
            one_gate = time.perf_counter() - t0
            t0 = time.perf_counter()
            result = run_job(bisect_job(fail, passing, agent, Path(tmp) / "out", options,
                                        runs=args.runs))  # fmt: skip
            took = time.perf_counter() - t0
            print(f"real bisect, |D|={args.real}, needs {needs}: {result.summary()}")
            print(f"  {len(result.candidates)} candidates, {result.replays} agent runs, "
                  f"{took:.1f} s; one gate of {args.runs} runs {one_gate:.2f} s: "
                  f"{took / one_gate:.1f} gates")  # fmt: skip


if __name__ == "__main__":
    main()
