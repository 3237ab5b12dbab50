"""Benchmark: how many gates (candidates) and agent runs ``minimise`` needs against the
number of entries in the cassette, when 2 of them keep the failure.

    .venv/bin/python benchmarks/bench_minimise.py                   # 10, 20, 40 entries
    .venv/bin/python benchmarks/bench_minimise.py --sizes 10,20,40,80 --runs 2

For each size n, a real minimise (``core/why/minimise.py``) of a cassette of n ``check``
entries, with the test agent ``tests/support/agents/minimise_agent.py`` that needs steps
2 and n - 3 answered and catches the other misses, ``--runs`` offline replays per gate,
and one gate of the whole cassette in the same process: the ratio is how many gates the
answer cost. ``gates`` counts the whole cassette's gate, the empty cassette's and ddmin's
candidates; n log2 n is the bound delta debugging is known for with few culprits.
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
from cassette_tui.core.why.minimise import minimise_job

ROOT = Path(__file__).resolve().parents[1]
AGENT = ROOT / "tests" / "support" / "agents" / "minimise_agent.py"


def write_steps(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"seq": i, "tool": "check", "args": {"step": i},
                                        "response": {"state": "bad"}}) + "\n"
                            for i in range(1, n + 1)))  # fmt: skip
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10,20,40", help="entries per cassette, comma-separated")
    parser.add_argument("--runs", type=int, default=2, help="replays per gate")
    parser.add_argument("--jobs", type=int, default=2, help="replays at once")
    args = parser.parse_args()
    options = LoopOptions(jobs=args.jobs)
    print("entries  kept  gates  n*log2(n)  agent runs  seconds  one gate s  gates' worth")
    for n in (int(x) for x in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            cassette = write_steps(Path(tmp) / "fail.jsonl", n)
            needs = f"2,{n - 3}"
            agent = resolve_agent(shlex.join([sys.executable, str(AGENT), "--steps", str(n),
                                              "--needs", needs, "--tolerant"]), None)  # fmt: skip
            t0 = time.perf_counter()
            run_job(gate_job(cassette, agent, options, runs=args.runs))
            one_gate = time.perf_counter() - t0
            t0 = time.perf_counter()
            result = run_job(minimise_job(cassette, agent, options, runs=args.runs))
            took = time.perf_counter() - t0
            assert result.seqs == [2, n - 3], result.summary()
            gates = 1 + len(result.candidates)
            print(f"{n:7d}  {len(result.seqs):4d}  {gates:5d}  {n * math.log2(n):9.0f}  "
                  f"{result.replays:10d}  {took:7.1f}  {one_gate:10.2f}  "
                  f"{took / one_gate:12.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
