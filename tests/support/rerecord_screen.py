"""``python rerecord_screen.py A B AGENT``: open the app on A and B with AGENT, press R, and
print what the re-record screen shows as JSON (``{"state", "target", "text"}``); then
escape. Run as a subprocess by tests that need the app in another mount namespace (a
read-only folder, ``readonly.py``)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.rerecord import RerecordScreen

from support.pilot import press, screen_text, settle


async def main(a: str, b: str, agent: str) -> dict[str, object]:
    app = CassetteApp(open_cassette(a), open_cassette(b), agent=AgentCommand.parse(agent))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen)
        out = {
            "state": screen.state,
            "target": str(screen.target),
            "text": " ".join(screen_text(app).replace("│", " ").split()),
            "workers": len([w for w in app.workers if w.group == "rerecord"]),
        }
        await press(pilot, "escape")
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:4]))))
