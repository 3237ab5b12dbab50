"""A worker's failure is handled once: every failure is one message, ``WorkerFailed``,
with one handler (on the screens' base), so one failure posted to its screen gives one
notification, and what the worker asked to show is shown there too."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui import messages, screens
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.messages import WorkerFailed
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.screens.single import SingleScreen
from support.pilot import settle, sync
from textual.message import Message
from textual.screen import Screen

SIZE = (80, 24)


def _screen_classes() -> list[type[Screen]]:
    found = []
    for info in pkgutil.iter_modules(screens.__path__):
        module = importlib.import_module(f"{screens.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Screen) and cls.__module__ == module.__name__:
                found.append(cls)
    return found


def test_one_failure_message_and_every_screen_has_at_most_one_handler_of_it() -> None:
    failures = [
        cls
        for _, cls in inspect.getmembers(messages, inspect.isclass)
        if issubclass(cls, Message) and cls.__name__.endswith("Failed")
    ]
    assert failures == [WorkerFailed]
    for cls in _screen_classes():
        handled = {
            method.__name__
            for klass in cls.__mro__
            for kind, entries in (klass.__dict__.get("_decorated_handlers") or {}).items()
            if issubclass(WorkerFailed, kind)
            for method, _ in entries
        }
        assert len(handled) <= 1, (cls.__name__, handled)


def counting(app: CassetteApp) -> list[str]:
    """Every notification the app shows from now on (the text), in order."""
    seen: list[str] = []
    notify = app.notify

    def count(message: str, *args: object, **kwargs: object) -> None:
        seen.append(message)
        notify(message, *args, **kwargs)  # type: ignore[arg-type]

    app.notify = count  # type: ignore[method-assign]
    return seen


#: a failure of each of the main screen's workers, as the worker posts it
PAIR_FAILURES: dict[str, Callable[[PairScreen], WorkerFailed]] = {
    "diff": lambda s: WorkerFailed("diff by seq", RuntimeError("diff broke"), s.show_diff_failure),
    "detail": lambda s: WorkerFailed(
        "detail", RuntimeError("detail broke"), lambda f: s.show_detail_failure(0, f)
    ),
    "search": lambda s: WorkerFailed("search", RuntimeError("search broke")),
}


@pytest.mark.parametrize("worker", list(PAIR_FAILURES))
@sync
async def test_one_failure_on_the_main_screen_gives_one_notification(
    samples: Path, worker: str
) -> None:
    app = CassetteApp(open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PairScreen)
        seen = counting(app)
        failure = PAIR_FAILURES[worker](app.screen)
        app.screen.post_message(failure)
        await settle(pilot)
        assert len(seen) == 1, seen
        assert failure.what in seen[0]


@sync
async def test_a_lint_failure_in_single_mode_gives_one_notification(samples: Path) -> None:
    app = CassetteApp(open_cassette(samples / "fail.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SingleScreen)
        seen = counting(app)
        screen.post_message(
            WorkerFailed("lint", RuntimeError("lint broke"), screen.show_lint_failure)
        )
        await settle(pilot)
        assert len(seen) == 1 and "lint" in seen[0], seen
        assert screen.findings == []  # shown where it was awaited: no findings to go to
