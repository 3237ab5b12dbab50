"""SVG snapshots of the app at 80x24 on the sample pair (pytest-textual-snapshot).

Regenerate after an intended change with ``pytest tests/test_app_snapshots.py
--snapshot-update`` and review the SVGs in ``tests/__snapshots__``. Keys are pressed in
``run_before`` so that every worker (diff, drift, lint) has finished before the picture.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import list_runs, open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.select import RunSource
from support.paths import SAMPLES
from support.pilot import settle
from textual.pilot import Pilot

SIZE = (80, 24)


def pair_app(align: str = "seq") -> CassetteApp:
    return CassetteApp(
        open_cassette(SAMPLES / "fail.jsonl"),
        open_cassette(SAMPLES / "fix.jsonl"),
        align=align,
        theme="ansi-dark",
    )


def keys(*pressed: str):
    """A ``run_before`` that waits for the workers, presses ``pressed`` one by one, and
    waits again after each."""

    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        await settle(pilot)
        for key in pressed:
            await pilot.press(key)
            await settle(pilot)
        for widget in app.screen.query("Input"):
            widget.cursor_blink = False  # type: ignore[attr-defined]

    return run_before


class TestPairScreen:
    def test_main_screen(self, snap_compare) -> None:
        assert snap_compare(pair_app(), terminal_size=SIZE, run_before=keys())

    def test_main_screen_by_key(self, snap_compare) -> None:
        assert snap_compare(pair_app("key"), terminal_size=SIZE, run_before=keys())

    def test_detail_pane_focused_and_scrolled(self, snap_compare) -> None:
        assert snap_compare(pair_app(), terminal_size=SIZE, run_before=keys("tab", "pagedown"))

    def test_step_full_screen(self, snap_compare) -> None:
        assert snap_compare(pair_app(), terminal_size=SIZE, run_before=keys("enter"))

    def test_search_bar(self, snap_compare) -> None:
        assert snap_compare(pair_app(), terminal_size=SIZE, run_before=keys("slash", "r", "e"))


class TestHelpScreen:
    def test_help(self, snap_compare) -> None:
        assert snap_compare(pair_app(), terminal_size=SIZE, run_before=keys("question_mark"))


class TestSingleFile:
    @pytest.mark.parametrize("name", ["fail.jsonl", "fix.jsonl"])
    def test_single_file(self, snap_compare, name: str) -> None:
        app = CassetteApp(open_cassette(SAMPLES / name), theme="ansi-dark")
        assert snap_compare(app, terminal_size=SIZE, run_before=keys())


def tau_bench_runs() -> list[dict]:
    """A small tau-bench results file: three tasks, passes and failures."""

    def run(task: int, trial: int, reward: float, *ids: str) -> dict:
        traj: list[dict] = [{"role": "user", "content": "cancel my trip"}]
        for n, rid in enumerate(ids):
            call = {"id": f"c{n}", "type": "function"}
            call["function"] = {"name": "cancel", "arguments": json.dumps({"id": rid})}
            traj.append({"role": "assistant", "content": None, "tool_calls": [call]})
            traj.append({"role": "tool", "tool_call_id": f"c{n}", "content": '{"ok": true}'})
        return {"task_id": task, "trial": trial, "reward": reward, "info": {}, "traj": traj}

    return [
        run(1, 0, 1.0, "R1", "R2"),
        run(1, 1, 0.0, "R1", "R9"),
        run(2, 0, 0.0, "R3"),
        run(2, 1, 0.0),
        run(3, 0, 1.0, "R4"),
        run(3, 1, 0.0, "R4", "R4", "R4"),
    ]


class TestRunSelector:
    def test_selector(self, snap_compare, tmp_path: Path) -> None:
        path = tmp_path / "results.json"
        path.write_text(json.dumps(tau_bench_runs()))
        app = CassetteApp(run_source=RunSource(path, list_runs(path), "tau-bench"))
        # a trial marked A, the cursor on task 3's heading
        assert snap_compare(app, terminal_size=SIZE, run_before=keys("j", "j", "space", "n"))
