"""Benchmark: align and diagnose two large cassettes whose every response differs.

    .venv/bin/python benchmarks/bench_diff.py            # 10k and 100k entries
    .venv/bin/python benchmarks/bench_diff.py --sizes 10000

For each size it writes two cassettes into a temporary folder: the same task run twice,
with every response different (a salt and a score per run) and realistic inserted steps
(A retries a rate-limited call every 40 steps; B makes an extra lookup every 70 steps).
Each case then runs in a fresh subprocess and reports wall time and peak memory
(``ru_maxrss``):

- ``load``: open both cassettes (the baseline every diff pays);
- ``difflib``: load, then ``difflib.SequenceMatcher(autojunk=False)`` on the call keys
  (the standard library's answer to the alignment; 10k only, it is quadratic);
- ``diff seq`` / ``diff key``: load, align, first divergence and findings (no deepdiff
  beyond the handful the findings show);
- ``cli diff`` / ``cli json``: the ``cassette-tui diff`` command, text output and
  ``--json`` (every row with its drift, streamed), output to ``/dev/null``; the
  process opens nothing before it (until issue 31 it held both cassettes opened a
  second time, which the peaks of these cases included);
- ``cli all``: ``diff --limit 0``, every row that differs with its drift, as text
  (``--cases "cli all,cli json"``; issue 31: within 1.5x of ``cli json``).

``--baseline DIR`` runs every case a second time on an older tree of the project (a
``git archive`` or worktree of it; its ``core/``, ``tui/``, ``pytest_plugin/`` are put first
on ``PYTHONPATH``), printed beside ours: before and after in the same run. ``--dir DIR``
keeps the generated cassettes there and reuses them (a 1M pair takes minutes to write).
Peak memory is the case's own ``ru_maxrss``.

Issue 31: ``diff --json`` and ``diff --limit 0`` at 1M entries in memory that does not grow
with the rows (compare the peaks at 100k and 1M), and ``cli all`` within 1.5x of
``cli json``.

Targets (issue 3): under 1 s for 10k entries and under 10 s for 100k, on 2 cores.
Targets (issue 8): ``cli json`` within 3x the time of ``cli diff`` and under 400 MB at
100k entries (``--check`` exits 1 when missed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

CASE = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from cassette_tui.core.importers.sources import open_cassette
kind, path_a, path_b = sys.argv[1:4]
if not kind.startswith("cli"):  # the command opens its own: its peak is its own
    a = open_cassette(path_a)
    b = open_cassette(path_b)
out = {}
if kind == "difflib":
    import difflib
    keys_a = [a.key(i) for i in range(len(a))]
    keys_b = [b.key(i) for i in range(len(b))]
    sm = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    out["matched"] = sum(block.size for block in sm.get_matching_blocks())
elif kind.startswith("diff"):
    from cassette_tui.core.diff.result import diff_cassettes
    result = diff_cassettes(a, b, align=kind.split()[1])
    out["rows"] = len(result.rows)
    out["first_divergence"] = result.first_divergence
    out["findings"] = len(result.findings)
elif kind.startswith("cli"):
    # the command itself, its output thrown away: `diff` (text) or `diff --json`
    import os
    from cassette_tui.tui.cli import main
    argv = ["diff", path_a, path_b] + (["--json"] if kind == "cli json" else [])
    if kind == "cli all":  # every row that differs, with its drift, as text
        argv += ["--limit", "0"]
    real, sys.stdout = sys.stdout, open(os.devnull, "w")
    try:
        main(argv)
    except SystemExit as exit_:
        out["exit"] = exit_.code
    finally:
        sys.stdout.close()
        sys.stdout = real
out["seconds"] = time.perf_counter() - t0
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def _record(seq: int, tool: str, args: dict, response: dict) -> str:
    from cassette_tui.core.format.digest import digest

    return json.dumps(
        {
            "seq": seq,
            "tool": tool,
            "args": args,
            "args_digest": digest(args),
            "response": response,
            "recorded_at": f"2024-05-14T09:{seq // 60 % 60:02d}:{seq % 60:02d}Z",
            "duration_ms": 20 + seq % 200,
        },
        sort_keys=True,
    )


def generate(path: Path, n: int, run: str) -> None:
    """A run of about ``n`` calls: search, read, with inserted retries (A) or lookups (B)."""
    rnd = random.Random(run)
    seq = 0
    with path.open("w", encoding="utf-8") as fh:
        step = 0
        while seq < n:
            step += 1
            tool = "search_docs" if step % 2 else "read_file"
            args = (
                {"q": f"topic {step // 2}", "top_k": 5}
                if tool == "search_docs"
                else {"path": f"docs/page-{step // 2}.md"}
            )
            if run == "A" and step % 40 == 0:  # a rate-limited attempt retried at once
                seq += 1
                fh.write(_record(seq, tool, args, {"status": 429, "error": "rate_limited"}) + "\n")
            if run == "B" and step % 70 == 0:  # an extra lookup only B makes
                seq += 1
                extra = {"path": f"docs/extra-{step}.md"}
                fh.write(_record(seq, "read_file", extra, {"text": "extra " * 20}) + "\n")
            body = " ".join(
                rnd.choice(("retry", "budget", "backoff", "jitter", "429"))
                for _ in range(rnd.randint(20, 200))
            )
            response = {
                "status": 200,
                "run": run,
                "score": round(rnd.random(), 4),
                "hits": [
                    {"path": f"docs/{step}-{k}.md", "score": round(rnd.random(), 3)}
                    for k in range(5)
                ],
                "text": body,
            }
            seq += 1
            fh.write(_record(seq, tool, args, response) + "\n")


def run_case(kind: str, a: Path, b: Path, site: Path | None = None) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if site is not None:  # the older tree's packages first
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", CASE, kind, str(a), str(b)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--cases", help="comma-separated cases (default: all)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--baseline", type=Path, help="an older tree of the project to run too")
    parser.add_argument("--dir", type=Path, help="keep and reuse the cassettes in this folder")
    args = parser.parse_args()
    ok = True
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    print(f"{'entries':>8}  {'case':<10} {'seconds':>8} {'x load':>7} {'peak MB':>8}  result")
    with tempfile.TemporaryDirectory() as tmp:
        site = None
        if args.baseline is not None:
            site = Path(tmp) / "baseline"
            (site / "cassette_tui").mkdir(parents=True)
            for part in ("core", "tui", "pytest_plugin"):
                (site / "cassette_tui" / part).symlink_to(args.baseline.resolve() / part)
        where = args.dir or Path(tmp)
        for n in args.sizes:
            a, b = where / f"pair{n}_a.jsonl", where / f"pair{n}_b.jsonl"
            if not (a.is_file() and b.is_file()):
                generate(a, n, "A")
                generate(b, n, "B")
            kinds = ["load", "diff seq", "diff key", "cli diff", "cli json"]
            if n <= 10_000:
                kinds.insert(1, "difflib")
            if args.cases:
                kinds = ["load", *(k for k in args.cases.split(",") if k != "load")]
            base = None
            results = {}
            runs = [(kind, None) for kind in kinds]
            if site is not None:
                runs += [(kind, site) for kind in kinds]
            for kind, tree in runs:
                res = run_case(kind, a, b, tree)
                label = kind if tree is None else f"{kind} (baseline)"
                results[label] = res
                base = base or res["seconds"]
                detail = {k: v for k, v in res.items() if k not in ("seconds", "peak_mb")}
                print(
                    f"{n:>8}  {label:<10} {res['seconds']:>8.2f} {res['seconds'] / base:>7.1f} "
                    f"{res['peak_mb']:>8.0f}  {detail or ''}",
                    flush=True,
                )
            mb = (a.stat().st_size + b.stat().st_size) / 1e6
            print(f"{'':>8}  ({mb:.0f} MB of cassettes)")
            for tag in ("", " (baseline)"):
                if f"cli all{tag}" in results and f"cli json{tag}" in results:
                    ratio = (
                        results[f"cli all{tag}"]["seconds"] / results[f"cli json{tag}"]["seconds"]
                    )
                    print(
                        f"{'':>8}  diff --limit 0{tag}: {ratio:.2f}x diff --json (target <= 1.5x)"
                    )
            if "cli diff" in results and "cli json" in results:
                ratio = results["cli json"]["seconds"] / results["cli diff"]["seconds"]
                peak = results["cli json"]["peak_mb"]
                met = ratio <= 3 and peak <= 400
                print(
                    f"{'':>8}  diff --json: {ratio:.1f}x the plain diff (target <= 3x), "
                    f"{peak:.0f} MB (target <= 400 MB): {'met' if met else 'MISSED'}"
                )
                ok = ok and met
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
