"""Benchmark: what the secret scan adds to ``check``, as a ratio against plain ``check``.

Usage::

    .venv/bin/python benchmarks/bench_secrets.py [--entries 100000] [--keep DIR] [--redact]
        [--repeat 1]

Generates a cassette with ``../shared/bench/gen_cassette.py`` (realistic agent traffic:
small dicts, ~2 KB hit lists, ~50 KB documents, shell output; ~171 MB at 100k entries) in
a temporary folder (or DIR with ``--keep``, reused when there), then times, each as the
installed ``cassette-tui`` in a fresh process, the same file:

* ``check --no-secrets``: plain ``check`` (load + lint), the baseline;
* ``check``: lint and the secret scan (the default);
* ``check --secrets``: the scan alone;
* with ``--redact``: ``redact FILE -o OUT`` (two scan passes and the write).

Each figure is printed with its ratio to the baseline measured in the same run, so noise
from other work on the machine cancels out; with ``--repeat N`` the commands run in turn N
times and the fastest of each counts. Generated files are deleted unless kept.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT.parent / "shared" / "bench" / "gen_cassette.py"
SCRIPT = Path(sys.executable).parent / "cassette-tui"


def generate(folder: Path, entries: int) -> Path:
    label = f"{entries // 1000}k" if entries % 1000 == 0 else str(entries)
    path = folder / f"cassette_{label}.jsonl"
    if not path.exists():
        if not GENERATOR.is_file():
            sys.exit(f"bench_secrets: the generator is not there: {GENERATOR}")
        subprocess.run(
            [sys.executable, str(GENERATOR), "--out", str(folder), "--sizes", str(entries)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return path


def timed(args: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    done = subprocess.run(
        [str(SCRIPT), *args], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    wall = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        sys.exit(f"bench_secrets: cassette-tui {' '.join(args)} failed: {done.stderr.decode()}")
    return wall, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, default=None, help="keep (and reuse) the file here")
    parser.add_argument("--redact", action="store_true", help="also time the redact command")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each; the fastest counts")
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-secrets-") as tmp:
        folder = opts.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = generate(folder, opts.entries)
        size_mb = path.stat().st_size / 1e6
        print(f"cassette: {opts.entries} entries, {size_mb:.0f} MB ({path.name})")
        runs = [("check --no-secrets (baseline)", ["check", "--no-secrets", str(path)])]
        runs.append(("check (lint + secret scan)", ["check", str(path)]))
        runs.append(("check --secrets (scan alone)", ["check", "--secrets", str(path)]))
        if opts.redact:
            out = Path(tmp) / "redacted.jsonl"
            runs.append(("redact -o OUT", ["redact", str(path), "-o", str(out), "--force"]))
        best = [float("inf")] * len(runs)
        for _ in range(opts.repeat):
            for i, (_, args) in enumerate(runs):
                best[i] = min(best[i], timed(args)[0])
        for (label, _), wall in zip(runs, best, strict=True):
            print(f"{label:<31} {wall:7.2f} s   {wall / best[0]:.2f}x")


if __name__ == "__main__":
    main()
