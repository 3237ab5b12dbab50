"""Benchmark: grouping many runs by where they part (``core/why/grouping.py``, issue 28)
against importing them. Target: grouping 200 tau-bench runs takes well under a second
more than importing them.

    .venv/bin/python benchmarks/bench_group.py                   # the real file when present
    .venv/bin/python benchmarks/bench_group.py --generated --runs 2000 --calls 20
    .venv/bin/python benchmarks/bench_group.py --file RESULTS.json --rounds 5

Input: ``../shared/real/tau-bench/gpt-4o-airline.json`` (200 runs, 50 tasks x 4 trials)
when present, else (or with ``--generated``) a tau-bench results file of ``--runs`` runs
made in a temporary folder: tasks of 4 trials, ``--calls`` tool calls each, trials of a
task parting at a random step. Each measurement runs in a fresh interpreter (the
importer's cache is per process), timed after the imports of Python modules:

* ``import``: the file parsed and every run built as a cassette (the format detected
  once, ``list_runs``, then ``open_cassette`` of each run's path spec), what opening the
  runs costs anyway;
* ``import+group``: ``runs_of`` (the same, plus every call's key: the args digest under
  the rules) and ``group_by_task`` (the prefix tree and the first split per task);
* ``grouping alone``: in the ``import`` process, after it: every run's keys, the trees and
  splits (``group_by_task``), timed apart from the import (no noise between processes);
* ``cli``: ``cassette-tui group FILE --json`` end to end, interpreter start included.

Prints the median of ``--rounds`` rounds (and the spread), the difference ``group -
import``, and whether it is under ``--max-extra`` seconds (default 1.0).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real" / "tau-bench" / "gpt-4o-airline.json"
SCRIPT = Path(sys.executable).with_name("cassette-tui")

CHILD = r"""
import sys, time
from cassette_tui.core.importers.sources import detect_format, list_runs, open_cassette
from cassette_tui.core.why.grouping import group_by_task, runs_of
path, which = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if which == "import":
    fmt = detect_format(path)  # once, as the run selector and group do
    runs = [open_cassette(path + r.spec_suffix(), fmt=fmt) for r in list_runs(path, fmt=fmt)]
    n = len(runs)
    t1 = time.perf_counter()
    # the grouping alone, on the runs just imported (the same process: no noise between)
    from cassette_tui.core.why.grouping import GroupedRun
    infos = list_runs(path, fmt=fmt)
    grouped = [GroupedRun(str(i.index), [c.key(k) for k in range(len(c))], i.passed, i.task)
               for i, c in zip(infos, runs)]
    group_by_task(grouped)
    print(t1 - t0, n, time.perf_counter() - t1)
else:
    groups = group_by_task(runs_of([path]))
    n = sum(len(g.runs) for g in groups.values())
    print(time.perf_counter() - t0, n, 0.0)
"""


def generated(folder: Path, runs: int, calls: int, seed: int = 1) -> Path:
    """A tau-bench results file of ``runs`` runs (tasks of 4 trials), ``calls`` calls each;
    the trials of a task share a prefix and part at a random step."""
    rng = random.Random(seed)
    tools = ["get_user_details", "get_reservation_details", "search_direct_flight", "think",
             "search_onestop_flight", "calculate", "update_reservation_flights"]  # fmt: skip
    rows = []
    for n in range(runs):
        task, trial = divmod(n, 4)
        part = random.Random(task).randint(1, max(1, calls - 1))
        traj: list[dict] = [{"role": "user", "content": f"task {task}"}]
        for step in range(calls):
            branch = trial % 2 if step >= part else 0
            tool = tools[(task + step + branch) % len(tools)]
            args = {"id": f"T{task}-{step}-{branch}", "cabin": "economy", "n": step}
            call = {"id": f"c{step}", "type": "function",
                    "function": {"name": tool, "arguments": json.dumps(args)}}  # fmt: skip
            traj.append({"role": "assistant", "content": None, "tool_calls": [call]})
            answer = json.dumps({"ok": True, "rows": [rng.random() for _ in range(20)]})
            traj.append({"role": "tool", "tool_call_id": f"c{step}", "content": answer})
        reward = 1.0 if (trial % 2 == 0) else 0.0
        rows.append({"task_id": task, "trial": trial, "reward": reward, "info": {}, "traj": traj})
    path = folder / f"generated-{runs}.json"
    path.write_text(json.dumps(rows))
    return path


def child(path: Path, which: str) -> tuple[float, int, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), which], capture_output=True,
                         text=True, check=True)  # fmt: skip
    seconds, runs, alone = out.stdout.split()
    return float(seconds), int(runs), float(alone)


def cli(path: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([str(SCRIPT), "group", str(path), "--json"], stdout=subprocess.DEVNULL,
                   check=True)  # fmt: skip
    return time.perf_counter() - t0


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--file", type=Path, help="a tau-bench results file to group")
    parser.add_argument("--generated", action="store_true", help="generate the runs")
    parser.add_argument("--runs", type=int, default=200, help="generated runs (default 200)")
    parser.add_argument("--calls", type=int, default=10, help="calls per generated run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-extra", type=float, default=1.0, help="seconds (default 1.0)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-group-") as tmp:
        if args.file is not None:
            path = args.file
        elif REAL.is_file() and not args.generated:
            path = REAL
        else:
            if not args.generated:
                print(f"{REAL} is absent: generated runs instead")
            path = generated(Path(tmp), args.runs, args.calls)
        size = path.stat().st_size / 1e6
        imports, groups, alones, clis = [], [], [], []
        runs = 0
        for _ in range(args.rounds):  # interleaved: a busy machine slows both alike
            seconds, runs, alone = child(path, "import")
            imports.append(seconds)
            alones.append(alone)
            seconds, grouped, _ = child(path, "group")
            groups.append(seconds)
            assert grouped == runs, (grouped, runs)
            clis.append(cli(path))
        extra = [g - i for g, i in zip(groups, imports, strict=True)]
        print(f"{path.name}: {runs} runs, {size:.1f} MB; medians of {args.rounds} rounds")
        print(f"  import        {spread(imports)}")
        print(f"  import+group  {spread(groups)}")
        print(f"  group extra   {spread(extra)}")
        print(f"  grouping alone, on the imported runs (keys, tree, split)  {spread(alones)}")
        print(f"  cli group --json, end to end  {spread(clis)}")
        ok = max(statistics.median(extra), statistics.median(alones)) < args.max_extra
        print(f"  target: extra < {args.max_extra:.1f} s: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
