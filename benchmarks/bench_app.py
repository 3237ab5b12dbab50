"""Time to first screen and per-keypress latency of the app, headless (``App.run_test``).

Usage: ``.venv/bin/python benchmarks/bench_app.py [--sizes 1000,10000,100000]``

For each size it writes two cassettes of that many steps into a temporary directory (B
differs from A in about one response in fifty, has one extra retry and one args change)
and measures, in the same process:

* baseline: opening both files and ``diff_cassettes`` by seq, without any UI;
* first screen: from opening the files to the step list drawn with its rows and painted
  (what ``cassette-tui A B`` does before a person sees the first divergence); the
  repaint is run at once, as for the key presses below. The diagnosis and the detail of
  the selected row are still being computed in workers then (see "ready");
* first idle: the same, then ``pilot.pause()``, which waits until the process is idle
  but at most 1 s; with the workers busy it is the first screen + ~1 s (the figure this
  benchmark reported as "first screen" before);
* per key: wall time from sending a key event to the screen having acted on it (polled
  with ``asyncio.sleep(0)``, no fixed sleeps) and repainted (the screen's compositor
  update, run at once instead of at the next frame tick), for j, k, n, N, G, g, pagedown,
  pageup, enter, q;
* realign: ``a`` (alignment by key) until the new rows are shown (a worker).

Figures are quoted in milliseconds and as ratios to the baseline of the same run, so they
compare across machines. Targets (issue 4): first screen within 1.5 s at 100k,
a key press under 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cassette_tui.core.diff import diff_cassettes
from cassette_tui.core.sources import open_cassette
from cassette_tui.tui.app import CassetteApp

KEYS = ["j", "j", "k", "n", "N", "pagedown", "pageup", "G", "g", "n", "enter", "q"]


def write_pair(directory: Path, n: int) -> tuple[Path, Path]:
    """Two cassettes of ``n`` steps with realistic (~1 KB) responses and some drift."""
    a_path, b_path = directory / f"a{n}.jsonl", directory / f"b{n}.jsonl"
    body = "lorem ipsum dolor sit amet " * 30
    with a_path.open("w") as a, b_path.open("w") as b:
        seq_b = 0
        for i in range(1, n + 1):
            tool = ("search_docs", "read_file", "http_get")[i % 3]
            args = (
                {"q": f"query {i % 997}", "top_k": 5}
                if tool == "search_docs"
                else {"path": f"docs/page-{i % 1231}.md"}
            )
            resp = {"status": 200, "hits": i % 7, "text": body, "top": f"doc-{i % 13}.md"}
            rec = {"seq": i, "tool": tool, "args": args, "response": resp}
            a.write(json.dumps(rec) + "\n")
            if i == n // 2:  # an extra retry on B's side
                seq_b += 1
                b.write(json.dumps(dict(rec, seq=seq_b, response={"status": 429})) + "\n")
            seq_b += 1
            rb = dict(rec, seq=seq_b)
            if i % 50 == 0:
                rb["response"] = dict(resp, top="other.md")
            if i == n // 3:
                rb["args"] = dict(args, extra=True)
            b.write(json.dumps(rb) + "\n")
    return a_path, b_path


def baseline(a_path: Path, b_path: Path) -> float:
    start = time.perf_counter()
    a, b = open_cassette(a_path), open_cassette(b_path)
    result = diff_cassettes(a, b)
    assert result.rows
    return time.perf_counter() - start


def _state(app: CassetteApp) -> tuple[object, int]:
    screen = app.screen
    steps = getattr(screen, "steps", None)
    return screen, steps.cursor if steps is not None else -1


async def timed_key(app: CassetteApp, key: str) -> float:
    """Seconds from sending ``key`` until its effect is on screen."""
    from textual import events

    before = _state(app)
    start = time.perf_counter()
    app._driver.send_message(events.Key(key, key if len(key) == 1 else None))  # type: ignore[union-attr]
    deadline = start + 5
    while _state(app) == before and time.perf_counter() < deadline:
        await asyncio.sleep(0)
    await asyncio.sleep(0)  # let the watchers queue their refreshes
    app.screen._on_timer_update()  # the repaint the next frame tick would do
    return time.perf_counter() - start


async def measure_app(a_path: Path, b_path: Path) -> dict[str, object]:
    start = time.perf_counter()
    a, b = open_cassette(a_path), open_cassette(b_path)
    app = CassetteApp(a, b)
    out: dict[str, object] = {}
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        while not len(screen.model):  # rows arrive from the diff worker
            await asyncio.sleep(0.001)
        await asyncio.sleep(0)  # let the watchers queue their refreshes
        screen._on_timer_update()  # the repaint the next frame tick would do
        out["first_screen"] = time.perf_counter() - start
        await pilot.pause()  # until the process is idle, at most 1 s
        out["first_idle"] = time.perf_counter() - start
        await app.workers.wait_for_complete()
        await pilot.pause()
        out["ready"] = time.perf_counter() - start  # diagnosis and detail done too

        per_key: dict[str, list[float]] = {}
        for _ in range(5):
            for key in KEYS:
                per_key.setdefault(key, []).append(await timed_key(app, key))
            await app.workers.wait_for_complete()
            await pilot.pause()
        out["keys"] = per_key

        t = time.perf_counter()
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await pilot.pause()
        out["realign"] = time.perf_counter() - t
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"python {sys.version.split()[0]}; times in ms; ratio = time / baseline")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            a_path, b_path = write_pair(Path(tmp), n)
            base = baseline(a_path, b_path)
            res = asyncio.run(measure_app(a_path, b_path))
            first, ready = res["first_screen"], res["ready"]
            idle: float = res["first_idle"]  # type: ignore[assignment]
            keys: dict[str, list[float]] = res["keys"]  # type: ignore[assignment]
            all_keys = [t for ts in keys.values() for t in ts]
            mb = (a_path.stat().st_size + b_path.stat().st_size) / 1e6
            print(f"\n{n:,} steps per side ({mb:.0f} MB for both files)")
            print(f"  baseline (open both + diff, no UI)  {base * 1000:8.0f}")
            print(
                f"  first screen (rows drawn)           {first * 1000:8.0f}   x{first / base:.2f}"
            )
            print(f"  first idle (pilot.pause, <= 1 s)    {idle * 1000:8.0f}   x{idle / base:.2f}")
            print(
                f"  ready (diagnosis + detail shown)    {ready * 1000:8.0f}   x{ready / base:.2f}"
            )
            print(f"  realign by key (worker)             {res['realign'] * 1000:8.0f}")
            print(
                f"  key press: median {statistics.median(all_keys) * 1000:.1f}, "
                f"max {max(all_keys) * 1000:.1f} over {len(all_keys)} presses "
                f"(max x{max(all_keys) / base:.3f} of baseline)"
            )
            for key, ts in keys.items():
                print(f"    {key:<10} max {max(ts) * 1000:6.1f}")


if __name__ == "__main__":
    main()
