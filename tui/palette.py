"""The command palette (ctrl+p): every action of the current screen and of the app, by
name, with its key. Built from the same binding tables as the keys and the help screen."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.widget import Widget

from . import bindings


def _commands(provider: Provider) -> list[tuple[str, str, Callable[[], object]]]:
    screen = provider.screen
    app = provider.app
    found: list[tuple[str, str, Callable[[], object]]] = []
    seen: set[str] = set()

    def add(binding: Binding, target: Widget | App[Any]) -> None:
        if not binding.id or binding.action in seen:
            return
        if binding.action in ("help",) and target is screen:
            return
        seen.add(binding.action)
        keys = app.get_key_display(binding)  # honours the user's keymap
        run = partial(app.call_later, target.run_action, binding.action)
        found.append((binding.description, f"key: {keys} · id: {binding.id}", run))

    for binding in getattr(type(screen), "BINDINGS", []):
        if isinstance(binding, Binding):
            check = screen.check_action(binding.action, ())
            if check is not False:
                add(binding, screen)
    for binding in bindings.APP:
        add(binding, app)
    return found


class StepActions(Provider):
    """Every key's action on the screen the palette was opened from."""

    async def discover(self) -> Hits:
        for name, help_text, run in _commands(self):
            yield DiscoveryHit(name, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, run in _commands(self):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), run, help=help_text)
