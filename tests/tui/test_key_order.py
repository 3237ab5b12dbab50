"""Keys that arrive in one burst (over SSH, a fast typist) edit the app's text inputs in
the order they were typed.

Pilot's ``press`` waits for the app to go idle after each key, which hides the bug, so
these tests post several ``Key`` (and ``Paste``) events to the app at once, as the
terminal driver does with a burst, and only then let the app run. In Textual 8.2 an
``Input`` types a printable key as soon as it gets it, while a key handled by a binding
(backspace, arrows, ctrl+w) runs only after it has bubbled back to the App, behind the
keys that followed it; ``TextInput`` (``tui/widgets/text_input.py``) runs the binding at
once. ``tests/e2e/test_keys_tmux.py`` checks the same in a real terminal.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.gate import GateScreen, RunsInput
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.widgets.text_input import TextInput
from support.loop import DEMO_AGENT, agent_cmd
from support.pilot import press, settle, sync
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Input

SIZE = (80, 24)


def burst(app: App, *keys: str | events.Paste) -> None:
    """Post ``keys`` to the app in one go, as the driver posts keys read in one chunk: no
    waiting in between. A ``Paste`` is posted as it is."""
    for key in keys:
        if isinstance(key, events.Paste):
            app.post_message(key)
        else:
            app.post_message(events.Key(key, key if len(key) == 1 else None))


class OneInput(App[None]):
    def __init__(self, kind: type[Input]) -> None:
        super().__init__()
        self.kind = kind

    def compose(self) -> ComposeResult:
        yield self.kind(value="abc", select_on_focus=False)


async def typed(kind: type[Input], *keys: str | events.Paste) -> str:
    app = OneInput(kind)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        field = app.query_one(kind)
        assert field.has_focus and field.cursor_position == 3
        burst(app, *keys)
        await pilot.pause()
        await pilot.pause()
        return field.value


BURSTS = [
    (("backspace", "x"), "abx"),
    (("backspace", "backspace", "x"), "ax"),
    (("left", "left", "x", "home", "y", "end", "ctrl+w", "z"), "z"),
    (("home", "delete", "x", "end", "backspace", "y"), "xby"),
    # a paste after editing keys lands where they left the cursor
    (("backspace", "backspace", events.Paste("xy")), "axy"),
    (("home", events.Paste("xy"), "delete"), "xybc"),
]


@pytest.mark.parametrize(("keys", "expected"), BURSTS)
@sync
async def test_a_burst_edits_a_text_input_in_the_order_typed(
    keys: tuple[str | events.Paste, ...], expected: str
) -> None:
    assert await typed(TextInput, *keys) == expected


@sync
async def test_textuals_input_applies_a_bound_key_after_the_keys_behind_it() -> None:
    """The cause, in Textual's own Input: backspace then x gives abc (x typed, then the
    backspace deletes it). If this fails, Textual keeps the order itself and TextInput can
    go back to being an Input."""
    assert await typed(Input, "backspace", "x") == "abc"
    assert await typed(Input, "backspace", "backspace", events.Paste("xy")) == "abc"


def demo() -> AgentCommand:
    return AgentCommand.parse(agent_cmd(script=DEMO_AGENT))


async def open_gate(pilot) -> GateScreen:
    await settle(pilot)
    await press(pilot, "t")
    screen = pilot.app.screen
    assert isinstance(screen, GateScreen)
    assert screen.runs_input.value == "20" and screen.runs_input.has_focus
    return screen


@sync
async def test_the_gates_n_takes_a_burst_in_order(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=demo())
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_gate(pilot)
        burst(app, "backspace", "backspace", "5")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(screen.runs_input, RunsInput)
        assert screen.runs_input.value == "5"
        # digits only: a letter with no binding on the gate is not typed
        burst(app, "z", "home", "1")
        await pilot.pause()
        await pilot.pause()
        assert screen.runs_input.value == "15"


@sync
async def test_a_remapped_screen_key_in_a_burst_runs_in_order(samples: Path) -> None:
    """The user's keymap: "x" leaves the gate (gate.back); the backspace typed before it
    is applied first, and the key after it reaches the main screen, not the input."""
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=demo(), keymap={"gate.back": "x"})
    async with app.run_test(size=SIZE) as pilot:
        field = (await open_gate(pilot)).runs_input
        burst(app, "backspace", "x")
        await settle(pilot)
        assert field.value == "2"
        assert isinstance(app.screen, PairScreen)


@sync
async def test_the_search_bar_takes_a_burst_in_order(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        # "/" is a priority binding: it opens the bar before the keys behind it
        burst(app, "slash", "a", "b", "c", "backspace", "d", "left", "left", "backspace", "X")
        await pilot.pause()
        await pilot.pause()
        bar = screen.query_one("#search", TextInput)
        assert bar.has_focus and bar.value == "Xbd"
