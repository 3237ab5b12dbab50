"""SVG snapshot of the tree of runs grouped by where they part (issue 28) at 80x24
(pytest-textual-snapshot): six runs of a gate's runs folder, every node open, a failing
run marked A from its branch. Regenerate after an intended change with ``--snapshot-update`` and review
the SVG in ``tests/tui/__snapshots__``."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.why.grouping import group_by_task, runs_of
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.group import GroupSource
from support.grouped_runs import write_runs_folder
from support.pilot import settle
from textual.pilot import Pilot

SIZE = (80, 24)


async def open_all_and_mark(pilot: Pilot) -> None:
    await settle(pilot)
    # every node open; the cursor back on the split (the detail shows its steps, not a
    # run's path, which depends on where the test runs); space on branch B marks its
    # first failing run as A
    for key in ("g", "e", "f", "j", "j", "j", "j", "j", "space", "f"):
        await pilot.press(key)
        await settle(pilot)


def test_the_tree_of_runs(snap_compare, tmp_path: Path) -> None:
    folder = write_runs_folder(tmp_path / "runs")
    app = CassetteApp(
        group_source=GroupSource("runs/", group_by_task(runs_of([str(folder)]))),
        theme="ansi-dark",
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=open_all_and_mark)
