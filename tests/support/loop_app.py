"""The app on the test agent's cassette (A against itself) with an agent whose runs hang
or pass then hang, writing their pids: for the tests that cancel or leave loop work."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp

from .loop import LOOP_AGENT, agent_cmd, loop_cassette


def hanging_app(tmp_path: Path, *mode: str) -> tuple[CassetteApp, Path]:
    """The app and the folder its agent's runs write their pids into (``pids/``).

    ``mode`` is the test agent's mode and its arguments before the pid folder: ``hang``
    (the default: every run hangs, with a child) or ``pass-then-hang {run}``."""
    piddir = tmp_path / "pids"
    piddir.mkdir()
    a = open_cassette(loop_cassette(tmp_path))
    template = agent_cmd(*(mode or ("hang",)), str(piddir), script=LOOP_AGENT)
    return CassetteApp(a, a, agent=AgentCommand.parse(template)), piddir
