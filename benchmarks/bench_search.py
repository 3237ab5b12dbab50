"""The app's search (``/``) for a row near the end of a large cassette, against ``grep``
and ``less`` on the same file in the same run.

Usage: ``.venv/bin/python benchmarks/bench_search.py --file BIG.jsonl [--row-by-row]``

The files: ``python ../shared/bench/gen_cassette.py --out /tmp/DIR --sizes
100000,1000000 --seed 1`` (outside the repository). The term is the ``q`` of a
``search_docs`` call near the end of the file whose first occurrence in the file (``grep
-n -m1 -i -F``) is in the last 1% of its lines. Times, each the fastest of ``--repeat``:

* ``grep -n -m1 -i -F TERM FILE``: the floor, a C program reading to the first match;
* ``less``: ``LESS= less -p TERM FILE`` in a tmux pane, until the pane shows the match
  (what issue 31 compares with: 45-54 s at 1M);
* ``search``: what the app's search worker runs (``tui/text/search.RowSearch.find`` from
  the first row, over the single-file screen's rows), with the file opened before;
* ``--row-by-row``: the same search looking at every row in turn, as the app did before
  (162-171 s at 1M);
* ``--term sha256``: a term of the fields not searched (each line's args digest) that
  row by row parsed every entry to reject; grep and less are not run then.

Issue 31's target: the search within 1x of ``less`` at 1M.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from cassette_tui.core.format.jobs import CancelToken
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.text import search
from cassette_tui.tui.text.rows import SingleRows
from cassette_tui.tui.text.search import RowSearch


def pick_term(path: Path) -> tuple[str, int]:
    """A ``q`` near the end whose first occurrence is in the last 1% of the lines, and
    that line's number (1-based)."""
    lines = int(
        subprocess.run(
            ["wc", "-l", str(path)], capture_output=True, text=True, check=True
        ).stdout.split()[0]
    )
    size = path.stat().st_size
    with path.open("rb") as file:
        file.seek(max(0, size - 4_000_000))
        tail = file.read().split(b"\n")[1:]
    for raw in reversed(tail[:-50]):
        if not raw.strip():
            continue
        record = json.loads(raw)
        q = record.get("args", {}).get("q") if isinstance(record.get("args"), dict) else None
        if not isinstance(q, str) or '"' in q or "\\" in q or not q.isascii():
            continue
        grep = subprocess.run(
            ["grep", "-n", "-m1", "-i", "-F", q.lower(), str(path)],
            capture_output=True,
            check=False,
        )
        first = int(grep.stdout.split(b":", 1)[0])
        if first >= lines * 0.99:
            return q.lower(), first
    raise SystemExit("no term near the end found")


def time_grep(path: Path, term: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        ["grep", "-n", "-m1", "-i", "-F", term, str(path)], capture_output=True, check=True
    )
    return time.perf_counter() - start


def time_less(path: Path, term: str, timeout: float) -> float | None:
    """Seconds until ``less -p TERM`` in a tmux pane shows the matching line."""
    if shutil.which("tmux") is None or shutil.which("less") is None:
        return None
    session = f"bench-search-{os.getpid()}"
    env = {**os.environ, "LESS": ""}
    start = time.perf_counter()
    subprocess.run(
        [
            "tmux",
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "200",
            "-y",
            "50",
            f"less -p '{term}' '{path}'",
        ],
        env=env,
        check=True,
    )
    try:
        while time.perf_counter() - start < timeout:
            pane = subprocess.run(
                ["tmux", "capture-pane", "-p", "-t", session],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
            if term in pane.lower():
                return time.perf_counter() - start
            time.sleep(0.05)
        return None
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def time_search(path: Path, term: str, row_by_row: bool) -> tuple[float, int | None]:
    cassette = open_cassette(path)
    model = SingleRows(cassette, {})
    finder = RowSearch(model, term)
    if row_by_row:  # no files read: every row in turn, as before
        finder._candidate_rows = lambda *_: None  # type: ignore[method-assign]
    start = time.perf_counter()
    hit = finder.find(0, 1, CancelToken(), include_current=True)
    elapsed = time.perf_counter() - start
    return elapsed, None if hit is None else cassette.line(hit[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--row-by-row", action="store_true", help="also the old search")
    parser.add_argument(
        "--term", help="search this instead (grep and less not run: their match differs)"
    )
    args = parser.parse_args()
    term, line = (args.term.lower(), None) if args.term else pick_term(args.file)
    print(
        f"{args.file.name}: {args.file.stat().st_size / 1e6:.0f} MB; term {term!r}, "
        f"first on line {line}; search.NEAR_ROWS={search.NEAR_ROWS}"
    )
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        if not args.term:
            best["grep"] = min(best.get("grep", 1e9), time_grep(args.file, term))
            less = time_less(args.file, term, timeout=600)
            if less is not None:
                best["less"] = min(best.get("less", 1e9), less)
        took, found = time_search(args.file, term, False)
        assert args.term or found == line, (found, line)
        best["search"] = min(best.get("search", 1e9), took)
    if args.row_by_row:
        took, found = time_search(args.file, term, True)
        assert args.term or found == line, (found, line)
        best["row by row (before)"] = took
    base, floor = best.get("less"), best.get("grep")
    print(f"{'case':<22}{'s':>9}{'x less':>9}{'x grep':>9}")
    for case, t in best.items():
        x_less = f"{t / base:9.2f}" if base else f"{'-':>9}"
        x_grep = f"{t / floor:9.2f}" if floor else f"{'-':>9}"
        print(f"{case:<22}{t:9.2f}{x_less}{x_grep}")
    if base is None:
        print("less: not measured (tmux or less missing, or no match shown in time)")


if __name__ == "__main__":
    sys.exit(main())
