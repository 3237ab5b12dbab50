"""A worker's failure is handled once: Textual's ``@on(Failed)`` would also catch every
subclass (``DiffFailed``, ``LintFailed``...), so no screen handles the ``Failed`` base and
one failure posted to its screen gives one notification."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui import messages, screens
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.messages import (
    DetailFailed,
    DiffFailed,
    Failed,
    LintFailed,
    SearchFailed,
)
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.screens.single import SingleScreen
from support.pilot import settle, sync
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


def test_no_screen_handles_the_failed_base_and_every_failure_has_one_handler() -> None:
    failures = [
        cls
        for _, cls in inspect.getmembers(messages, inspect.isclass)
        if issubclass(cls, Failed) and cls is not Failed
    ]
    assert failures, "no failure classes found"
    classes = _screen_classes()
    for cls in classes:
        for klass in cls.__mro__:
            handlers = klass.__dict__.get("_decorated_handlers") or {}
            assert Failed not in handlers, f"{klass.__name__} handles the Failed base"
    for failure in failures:
        for cls in classes:
            handled = [
                method
                for klass in cls.__mro__
                for kind, entries in (klass.__dict__.get("_decorated_handlers") or {}).items()
                if issubclass(failure, kind)
                for method, _ in entries
            ]
            assert len({m.__name__ for m in handled}) <= 1, (cls.__name__, failure.__name__)


def counting(app: CassetteApp) -> list[str]:
    """Every notification the app shows from now on (the text), in order."""
    seen: list[str] = []
    notify = app.notify

    def count(message: str, *args: object, **kwargs: object) -> None:
        seen.append(message)
        notify(message, *args, **kwargs)  # type: ignore[arg-type]

    app.notify = count  # type: ignore[method-assign]
    return seen


@pytest.mark.parametrize(
    "failure",
    [
        DiffFailed("seq", RuntimeError("diff broke")),
        DetailFailed(0, RuntimeError("detail broke")),
        SearchFailed(RuntimeError("search broke")),
    ],
    ids=lambda f: type(f).__name__,
)
@sync
async def test_one_failure_on_the_main_screen_gives_one_notification(
    samples: Path, failure: Failed
) -> None:
    app = CassetteApp(open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PairScreen)
        seen = counting(app)
        app.screen.post_message(failure)
        await settle(pilot)
        assert len(seen) == 1, seen
        assert failure.what in seen[0]


@sync
async def test_a_lint_failure_in_single_mode_gives_one_notification(samples: Path) -> None:
    app = CassetteApp(open_cassette(samples / "fail.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SingleScreen)
        seen = counting(app)
        app.screen.post_message(LintFailed(RuntimeError("lint broke")))
        await settle(pilot)
        assert len(seen) == 1 and "lint" in seen[0], seen
