"""Time to show the detail of a step with a large response, by the shape of the response.

Usage: ``.venv/bin/python benchmarks/bench_detail.py [--lines 40000] [--rounds 3] [--clock cpu]``
(``--lines 400000``: a 24 MB answer, to see the time stay flat: the pane shows 2,000 lines
of it at most)

Issue 31: a 2.1 MB, 40k-line MCP answer took 24-42 s before the detail appeared, 75-106x
a flat string of the same size. For each shape below it writes a pair of cassettes in a
temporary folder (two steps; step 2's answer is about 2.1 MB and differs at its end), opens
them in the app (``App.run_test``, 120x40), and times, from the key press to the detail
painted:

* ``first``: ``j`` onto step 2, its detail in the lower pane, its long strings masked
  afresh (the app opens on step 2 and masks them: a step met first pays this);
* ``pane``: the same again, the masks kept;
* ``step``: then ``enter``, the step screen;
* ``pane e`` / ``step e``: then ``e`` (expanded: 2,000 lines, 20k characters a string).

"Painted": the frame the next tick would draw, drawn at once (the pane's layout request
passed to the screen, the screen laid out and drawn), so the time holds the drawing.

The shapes, all the same size: ``flat`` (one string, no newline: the baseline), ``lines``
(one string of 40k lines, as an MCP text answer), ``list`` (a list of 40k strings),
``objects`` (a list of 40k small objects), ``json text`` (40k objects as JSON inside a
string), ``json secret`` (the same with an API key in the first, middle and last objects:
the secret scan cannot call the whole text free), ``lines secret`` (``lines`` with a
password named by an assignment near the end, its value in the first line: the whole text
is scanned, since a secret found anywhere in a string is masked wherever it occurs),
``urls`` (40k lines each with a URL, what the secret library's URL patterns are slowest
on: the prefilter calls them free), ``user urls`` (40k URLs with a user name, on one line:
``//`` and ``@`` make the prefilter's answer a maybe, and the library's npm pattern
backtracks over the line from each ``//``: 73 s for 3.3 MB; RE2's URL patterns clear
them, ``plain_text_secrets``), ``flat secret`` (``flat`` with a password named by an
assignment 60% of the way in, its value at the start: pieces of the text scanned, not
the whole). Each time is the fastest of
``--rounds`` and is printed with its ratio to the flat string's time for the same view,
measured in the same run. Target: every shape within 2x of the flat string and under
0.3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp

LINE = "line {i}: the quick brown fox jumps over the lazy dog, ok"
URL = "see https://example.com/docs/page/{i}?q=fox&n={i} ok"
USER_URL = "https://reader{i}@example.com/docs/page/{i}"
#: found only by the assignment that names it, far past the part shown
PLAIN = "hunter2xyz"
VIEWS = ("first", "pane", "step", "pane e", "step e")
#: what a view's time is read on: the wall clock, or (``--clock cpu``) the CPU time of
#: the process, all its threads (the app's workers) included: steadier on a shared machine
CLOCK = time.perf_counter


def answer(shape: str, n: int, tail: str = "") -> Any:
    """An MCP ``tools/call`` result of ``n`` lines in ``shape``, ``tail`` at the end of its
    last line (inside the JSON of a JSON text: B's text is JSON too, as a changed answer
    is)."""
    lines = [LINE.format(i=i) for i in range(n)]
    lines[-1] += tail
    if shape == "flat":
        text: Any = " ".join(lines)
    elif shape == "lines":
        text = "\n".join(lines)
    elif shape == "lines secret":  # a password named near the end, its value shown first
        lines[0] = f"logged in with {PLAIN} at 09:00"
        lines[-2] = f"config: password = '{PLAIN}'"
        text = "\n".join(lines)
    elif shape == "urls":  # what detect-secrets' URL patterns are slowest on
        text = "\n".join(URL.format(i=i) for i in range(n)) + tail
    elif shape == "user urls":  # one line of URLs with user names: // and @
        text = " ".join(USER_URL.format(i=i) for i in range(n)) + tail
    elif shape == "flat secret":  # one line, the password named 60% of the way in
        lines[0] = f"logged in with {PLAIN} at 09:00"
        lines[n * 3 // 5] = f"config: password = '{PLAIN}'"
        text = " ".join(lines)
    elif shape == "list":
        return {"content": lines, "isError": False}
    elif shape == "objects":
        return {"content": [{"type": "text", "text": line} for line in lines], "isError": False}
    else:  # json text
        nodes: list[dict[str, Any]] = [{"n": i, "text": line} for i, line in enumerate(lines)]
        if shape == "json secret":  # three keys named so, far apart; the first one shown
            for at in (0, n // 2, n - 1):
                nodes[at]["api_key"] = f"sk-proj-{'aB3_dE-9' * 5}{at}"
        text = json.dumps(nodes)
    return {"content": [{"type": "text", "text": text}], "isError": False}


def write_pair(directory: Path, shape: str, n: int) -> tuple[Path, Path]:
    paths = directory / f"{shape}-a.jsonl", directory / f"{shape}-b.jsonl"
    for path, tail in zip(paths, ("", " (changed)"), strict=True):
        big = answer(shape, n, tail)
        records = [
            {"seq": 1, "tool": "list_tools", "args": {}, "response": {"ok": True}},
            {"seq": 2, "tool": "read_doc", "args": {"uri": "doc://big"}, "response": big},
        ]
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return paths


async def _idle(app: CassetteApp) -> None:
    from textual.worker import WorkerState

    busy = (WorkerState.PENDING, WorkerState.RUNNING)
    while any(worker.state in busy for worker in app.workers):
        await asyncio.sleep(0.002)


def _body(app: CassetteApp) -> object:
    """What the detail pane of the screen on top shows now."""
    from cassette_tui.tui.widgets.detail import DetailPane

    panes = app.screen.query(DetailPane)
    if not panes:
        return None
    pane = panes.first()
    if hasattr(pane, "renderable"):
        return pane.renderable
    from textual.widgets import Static  # the pane before the line-based one (3e7d0b1)

    bodies = pane.query(Static)  # none while the step screen composes
    return bodies.first().content if bodies else None


async def _shown(app: CassetteApp, before: object, start: float) -> float:
    """Seconds from ``start`` until the detail pane on top shows a built detail (a
    ``Group``, not the placeholder) other than ``before``, painted."""
    from cassette_tui.tui.widgets.detail import DetailPane
    from rich.console import Group

    while True:
        body = _body(app)
        if isinstance(body, Group) and body is not before:
            break
        await asyncio.sleep(0.002)
    # the frame the next tick would paint, now: the pane's layout and repaint requests
    # reach the screen (they wait for the pane's idle otherwise, and a bare
    # ``_on_timer_update`` would paint the old layout), then the screen's layout and paint
    pane = app.screen.query(DetailPane).first()
    for widget in (pane, *pane.walk_children()):
        widget._check_refresh()
    screen = app.screen
    screen._layout_required = screen._repaint_required = True
    screen._on_timer_update()
    return CLOCK() - start


def _forget_masks() -> None:
    """Drop the long texts the app keeps masked (``shown._TEXTS``), the line counts of the
    large values (``shown._COUNTS``) and the first differences of two long texts
    (``detail._DIFFERS``) it keeps, and the pieces and parts of the texts kept
    (``plain_text_secrets._SEEN``, ``json_list_secrets._SEEN``) and the places of the
    secrets in the texts masked last (``masking._SEEN``), where the code has
    them."""
    import importlib

    for module, name in (("cassette_tui.tui.text.shown", "_TEXTS"),
                         ("cassette_tui.tui.text.shown", "_COUNTS"),
                         ("cassette_tui.tui.text.detail", "_DIFFERS"),
                         ("cassette_tui.core.scan.plain_text_secrets", "_SEEN"),
                         ("cassette_tui.core.scan.json_list_secrets", "_SEEN"),
                         ("cassette_tui.core.scan.masking", "_SEEN")):  # fmt: skip
        try:
            kept = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if kept is not None:
            kept.clear()


async def measure(a_path: Path, b_path: Path) -> dict[str, float]:
    from textual import events

    app = CassetteApp(open_cassette(a_path), open_cassette(b_path))
    out: dict[str, float] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        while not len(app.screen.model):
            await asyncio.sleep(0.001)
        await _idle(app)
        await pilot.pause()
        await pilot.press("g")  # the first row (the app opens on the first divergence)
        await _idle(app)
        await pilot.pause()
        # j: step 2 in the pane, its long texts masked afresh ("first": the app opened on
        # step 2 and masked them already; a step met first pays it); k, j: again, as
        # kept; e: expanded; e: cut again (not timed); enter: the step screen; e: expanded
        for view, key in (("first", "j"), ("", "k"), ("pane", "j"), ("pane e", "e"), ("", "e"),
                          ("step", "enter"), ("step e", "e")):  # fmt: skip
            if view == "first":
                _forget_masks()
            before = _body(app)
            start = CLOCK()
            app.post_message(events.Key(key, key if len(key) == 1 else None))
            shown = await _shown(app, before, start)
            if view:
                out[view] = shown
            await pilot.pause()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=40_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument(
        "--shapes",
        default="flat,lines,lines secret,flat secret,urls,user urls,list,objects,json text,"
        "json secret",
    )
    args = parser.parse_args()
    shapes = args.shapes.split(",")
    if shapes[0] != "flat":
        shapes.insert(0, "flat")
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"python {sys.version.split()[0]}; {args.clock} seconds (fastest of {args.rounds}); "
          "x flat")  # fmt: skip
    best: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        pairs = {shape: write_pair(Path(tmp), shape, args.lines) for shape in shapes}
        size = pairs["flat"][0].stat().st_size / 1e6
        print(f"each answer about {size:.1f} MB, {args.lines} lines")
        # warm-up: the first detail imports the secret scan's plugins once
        asyncio.run(measure(*pairs["flat"]))
        for _ in range(args.rounds):
            for shape in shapes:  # in turn, so a slow minute hits every shape alike
                times = asyncio.run(measure(*pairs[shape]))
                for view, t in times.items():
                    kept = best.setdefault(shape, {})
                    kept[view] = min(kept.get(view, t), t)
    print(f"{'shape':<12}" + "".join(f"{view:>16}" for view in VIEWS))
    for shape in shapes:
        cells = [f"{best[shape][v]:7.3f} x{best[shape][v] / best['flat'][v]:5.2f}" for v in VIEWS]
        print(f"{shape:<12}" + "".join(f"{c:>16}" for c in cells))


if __name__ == "__main__":
    main()
