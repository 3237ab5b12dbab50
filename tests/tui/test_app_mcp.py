"""The app on a cassette recorded by ``cassette-tui mcp record``: an MCP ``isError`` result
is marked ``!`` like a recorded error, and its detail says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from support.factory import entry, write_cassette
from support.pilot import press, screen_text, settle, sync

SIZE = (80, 24)


def _result(text: str, is_error: bool) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


@sync
async def test_an_is_error_result_is_marked_as_an_error(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "mcp.jsonl",
        entry(1, "git_status", {"repo_path": "."}, response=_result("clean", False)),
        entry(2, "git_add", {"files": ["x"]}, response=_result("no such file: x", True)),
        entry(3, "git_log", {"repo_path": "."}, response=_result("first note", False)),
    )
    app = CassetteApp(open_cassette(path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lines = screen_text(app).splitlines()
        marks = {}
        for line in lines:
            cells = line[1:].split(maxsplit=1)  # past the cursor column: "2 !git_add ..."
            if len(cells) == 2 and cells[0].isdigit() and "git_" in cells[1][:12]:
                marks[int(cells[0])] = cells[1].startswith("!")
        assert marks == {1: False, 2: True, 3: False}
        await press(pilot, "j", "enter")  # the step view of the isError call
        assert "isError" in screen_text(app)
        await press(pilot, "q")


@sync
async def test_a_changed_tool_contract_is_in_the_failed_calls_detail(real: Path) -> None:
    """Bugcase 48: the row of a call that fails after the server changed the tool's
    schema shows the ``contract_change`` finding and blames it, not a transient failure."""
    case = real / "bugcases" / "48_mcp_tool_contract_changed"
    if not case.is_dir():
        pytest.skip(f"bugcase absent: {case}")
    app = CassetteApp(
        open_cassette(case / "fail.jsonl"), open_cassette(case / "pass.jsonl"), align="seq"
    )
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(pilot)
        await press(pilot, "enter")  # the step view of row 1
        await settle(pilot)
        text = " ".join(screen_text(app).split())
        assert "contract_change" in text
        assert "inputSchema changed at $.properties.query.pattern" in text
        await press(pilot, "q")
