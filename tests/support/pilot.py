"""Pilot helpers: run an async test, wait for workers, read the screen as text."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Coroutine
from typing import Any

from textual.app import App
from textual.pilot import Pilot
from textual.worker import WorkerCancelled


def sync(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test body with ``asyncio.run`` (no async pytest plugin needed)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


async def settle(pilot: Pilot) -> None:
    """Wait until no worker runs: a worker's result can start another (open -> diff ->
    detail)."""
    for _ in range(20):
        await pilot.pause()
        with contextlib.suppress(WorkerCancelled):  # a newer one of its group replaced it
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if not any(w.is_running for w in pilot.app.workers):
            return


def screen_text(app: App) -> str:
    """What the terminal shows, as plain text lines (the compositor's current frame)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def screen_segments(app: App) -> list[str]:
    return [seg.text for strip in app.screen._compositor.render_strips() for seg in strip]


async def wait_until(
    pilot: Pilot, ready: Callable[[], object], what: str, within: float = 60.0
) -> None:
    """Let the app run until ``ready()`` is true (a worker's result landed, a real agent
    process ended), polling; fail after ``within`` seconds with ``what`` and the screen."""
    deadline = asyncio.get_running_loop().time() + within
    while not ready():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"gave up waiting for {what}:\n{screen_text(pilot.app)}")
        await pilot.pause(0.05)
    await pilot.pause()


async def press(pilot: Pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


def notes(app: App) -> str:
    """The notifications (toasts) on screen, as text, one a line."""
    return "\n".join(str(note.message) for note in app._notifications)


def loop_text(app: App) -> str:
    """The whole text of the open loop panel, scrolled or not, words joined by one space:
    its commands name the agent as given, so how far it reaches depends on the length of
    the paths in it (a test must not)."""
    import io

    from rich.console import Console
    from textual.widgets import Static

    content = app.screen.query_one("#loop-text", Static).content
    console = Console(file=io.StringIO(), width=10_000, record=True, color_system=None)
    console.print(content)
    return " ".join(console.export_text().replace("│", " ").split())


def rows_drawn(pane: Any) -> list[str]:
    """The rows a ``DetailPane`` draws at each scroll position, a page at a time, each page
    checked against the rows of its whole detail at its width."""
    height = pane.scrollable_content_region.height
    whole = pane.body_text(pane.virtual_size.width).splitlines()
    rows: list[str] = []
    for top in range(0, int(pane.max_scroll_y) + 1, max(1, height - 1)):
        pane.scroll_to(y=top, animate=False, immediate=True)
        drawn = [pane.render_line(y).text.rstrip() for y in range(height)]
        assert drawn == [line.rstrip() for line in whole[top : top + height]][: len(drawn)]
        rows += drawn
    return rows


async def every_detail_view(
    app: App, pilot: Pilot, check: Callable[[Any, str], None], revealed: str
) -> None:
    """Step 2's detail in every view, ``check(pane, hint)`` asked of each: the pane cut
    (``g j``) and expanded (``e``), the step screen expanded (``enter``) and cut (``e``);
    then ``v`` reveals it there, and ``revealed`` must show."""
    from cassette_tui.tui.screens.step import StepScreen
    from cassette_tui.tui.text.detail import CUT_HINT, EXPANDED_HINT
    from cassette_tui.tui.widgets.detail import DetailPane

    await settle(pilot)
    await press(pilot, "g", "j")  # step 2 in the pane below the rows
    await settle(pilot)
    pane = app.screen.query_one("#detail", DetailPane)
    check(pane, CUT_HINT)
    await press(pilot, "e")
    await settle(pilot)
    check(pane, EXPANDED_HINT)
    await press(pilot, "enter")  # the step screen, expanded as the pane was
    await settle(pilot)
    assert isinstance(app.screen, StepScreen)
    check(app.screen.detail, EXPANDED_HINT)
    await press(pilot, "e")
    await settle(pilot)
    check(app.screen.detail, CUT_HINT)
    await press(pilot, "v")  # revealed on request: the same text, whole
    await settle(pilot)
    assert revealed in app.screen.detail.body_text(100_000)


def long_answer_pair(folder: Any, answer: Callable[[str], Any], tool: str = "read_doc") -> tuple:
    """Two cassettes ``a.jsonl`` and ``b.jsonl`` in ``folder`` (a ``Path``): step 1 the same,
    step 2 a call of ``tool`` answered by ``answer("")`` in A and ``answer(" (changed)")``
    in B, so the runs part at step 2 and its drift shows a spot."""
    import json

    paths = folder / "a.jsonl", folder / "b.jsonl"
    for path, tail in zip(paths, ("", " (changed)"), strict=True):
        records = [
            {"seq": 1, "tool": "list_tools", "args": {}, "response": {"ok": True}},
            {"seq": 2, "tool": tool, "args": {"uri": "doc://big"}, "response": answer(tail)},
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return paths
