"""The help screen fits 80 columns: no binding id is wrapped in the middle."""

from __future__ import annotations

from cassette_tui.core.format.cassette import load
from cassette_tui.tui import bindings
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.help import LINE_WIDTH, help_text
from rich.console import Console
from support.paths import SAMPLES
from support.pilot import settle, sync
from textual.widgets import Static


@sync
async def test_every_binding_id_is_whole_on_one_line_at_80_columns() -> None:
    app = CassetteApp(load(SAMPLES / "fail.jsonl"), load(SAMPLES / "fix.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        body = app.screen.query(Static).last()
        width = body.content_region.width
        assert width >= LINE_WIDTH, width
        text = help_text(app)
    lines = Console(width=width, color_system=None).render_lines(text, pad=False)
    rendered = ["".join(segment.text for segment in line) for line in lines]
    ids = {
        b.id
        for table in (
            bindings.PAIR,
            bindings.SINGLE,
            bindings.STEP,
            bindings.RUNS,
            bindings.APP,
            bindings.HELP,
            bindings.REPLAY,
            bindings.MISS,
            bindings.GATE,
            bindings.NO_AGENT,
        )
        for b in table
        if b.id
    }
    for binding_id in ids:
        assert any(binding_id in line for line in rendered), binding_id
    assert max(len(line.rstrip()) for line in rendered) <= width
    # each id on the line of its keys and description, not wrapped onto a line of its own
    tables = (
        bindings.PAIR,
        bindings.SINGLE,
        bindings.STEP,
        bindings.RUNS,
        bindings.HELP,
        bindings.REPLAY,
        bindings.MISS,
        bindings.GATE,
        bindings.NO_AGENT,
    )
    for binding in (b for table in tables for b in table if b.id):
        first_word = (binding.tooltip or binding.description).split()[0]
        line = next(line for line in rendered if line.rstrip().endswith(binding.id))
        assert first_word in line, f"{binding.id} is not beside its description: {line!r}"
    for line in rendered:
        for word in line.split():
            if "." in word and word.split(".")[0] in (
                "main",
                "app",
                "step",
                "help",
                "runs",
                "single",
                "replay",
                "miss",
                "gate",
                "noagent",
            ):
                assert word.rstrip(",") in ids, f"a cut binding id: {word!r} in {line!r}"
