"""Pilot tests of the run selector at 80x24: a file of many runs (tau-bench results) opened
without picking one lists its runs by task; enter opens a task's failing trial (A) against
a passing one (B), or one trial alone; space marks any two trials; / filters by task; q on
an opened run comes back. On a hand-made results file (always) and on the real
``gpt-4o-airline.json`` (skipped where ``../shared/real`` is absent). Also: single-file mode
flags HTTP 4xx/5xx responses with the diff engine's rule, and ``open`` routes to the
selector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cassette_tui.tui.commands.open_app as open_app_module
import pytest
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.importers.sources import list_runs, open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.bindings import RUNS
from cassette_tui.tui.commands.open_app import open_app
from cassette_tui.tui.screens.help import HelpScreen, help_plain_text
from cassette_tui.tui.screens.select import (
    RunPairScreen,
    RunRows,
    RunSingleScreen,
    RunSource,
    SelectScreen,
)
from cassette_tui.tui.screens.single import SingleScreen
from click.testing import CliRunner
from support.pilot import screen_text, settle, sync
from textual.pilot import Pilot

SIZE = (80, 24)
MARKUP_TASK = "[bold red]boom[/]"


async def press(pilot: Pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


# -- a hand-made tau-bench results file ----------------------------------------------------
def call(tool: str, args: dict[str, Any], result: Any, cid: str = "c1") -> list[dict[str, Any]]:
    """One tool call and the tool message answering it, as tau-bench logs them."""
    content = result if isinstance(result, str) else json.dumps(result)
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps(args)},
                }
            ],
        },
        {"role": "tool", "tool_call_id": cid, "name": tool, "content": content},
    ]


def run(task: Any, trial: int, reward: float, *calls: list[dict[str, Any]]) -> dict[str, Any]:
    traj: list[dict[str, Any]] = [{"role": "user", "content": "help"}]
    for c in calls:
        traj.extend(c)
    return {"task_id": task, "trial": trial, "reward": reward, "info": {}, "traj": traj}


LOOKUP = call("get_reservation", {"id": "R1"}, {"id": "R1", "status": "booked"})


def hand_made_runs() -> list[dict[str, Any]]:
    return [
        # task 1: pass (2 calls), fail (2 calls, another reservation cancelled), fail (3)
        run(1, 0, 1.0, LOOKUP, call("cancel", {"id": "R1"}, {"ok": True})),
        run(1, 1, 0.0, LOOKUP, call("cancel", {"id": "R9"}, {"ok": True})),
        run(1, 2, 0.0, LOOKUP, LOOKUP, call("cancel", {"id": "R9"}, {"ok": True})),
        # task 2: two failures, no pair; trial 1 was rate limited (HTTP 429)
        run(2, 0, 0.0, LOOKUP),
        run(2, 1, 0.0, call("get_reservation", {"id": "R1"}, {"status": 429, "error": "slow"})),
        # task 3: one trial only
        run(3, 0, 1.0, LOOKUP),
        # task 10: a pair again (for n/N and the filter: "1" matches 1 and 10)
        run(10, 0, 0.0, LOOKUP),
        run(10, 1, 1.0, LOOKUP, LOOKUP),
        # a task id full of markup is shown as it is
        run(MARKUP_TASK, 0, 1.0),
    ]


@pytest.fixture
def runs_file(tmp_path: Path) -> Path:
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(hand_made_runs()))
    return path


def selector(path: Path, task: str | None = None) -> CassetteApp:
    return CassetteApp(run_source=RunSource(path, list_runs(path), "tau-bench", task))


def notes(app: CassetteApp) -> str:
    """The notifications on screen, as text."""
    return "\n".join(str(n.message) for n in app._notifications)


def headings(app: CassetteApp) -> list[str]:
    """The task headings the selector's list shows, top to bottom."""
    lines = screen_text(app).splitlines()[4:-1]
    return [line[1:9].strip() for line in lines if line[1:2].strip() and "trial" in line]


def row_of(app: CassetteApp, task: str, trial: int | None = None) -> int:
    """The index of the selector row of ``task``'s heading (or of its ``trial``)."""
    model: RunRows = app.screen.model  # type: ignore[attr-defined]
    for index, (group, run) in enumerate(model.lines):
        if group.task == task and (run.trial if run is not None else None) == trial:
            return index
    raise AssertionError(f"no row of task {task} trial {trial}")


async def go_to(pilot: Pilot, task: str, trial: int | None = None) -> None:
    """Move the cursor there by keys (g, then j)."""
    app = pilot.app
    target = row_of(app, task, trial)  # type: ignore[arg-type]
    await press(pilot, "g")
    await press(pilot, *["j"] * target)
    assert app.screen.runs.cursor == target  # type: ignore[attr-defined]


# -- the selector on the hand-made file ---------------------------------------------------
@sync
async def test_lists_runs_by_task_with_trial_outcome_and_calls(runs_file: Path) -> None:
    app = selector(runs_file)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SelectScreen)
        text = screen_text(app)
        lines = text.splitlines()
        assert "runs in runs.json (tau-bench)" in lines[0]
        assert "9 runs · 5 tasks · 4 ✓ pass · 5 ✗ fail · 2 tasks with both" in lines[1]
        # numeric task ids in numeric order, the cursor on the first task
        assert headings(app)[:4] == ["1", "2", "3", "10"]
        assert lines[4].startswith("▶1 ")
        # task 1's default pair: the failing trial with as many calls as the passing one
        assert "3 trials: 1✓ 2✗   enter: A trial 1 ✗ vs B trial 0 ✓" in lines[4]
        trial_rows = lines[5:8]
        assert [row.split()[:4] for row in trial_rows] == [
            ["0", "✓", "pass", "1.00"],
            ["1", "✗", "fail", "0.00"],
            ["2", "✗", "fail", "0.00"],
        ]
        assert [row.split()[4] for row in trial_rows] == ["2", "2", "3"]
        assert "no pass/fail pair" in next(x for x in lines if x.startswith(" 2 "))
        # markup in a task id is data: shown literally, never interpreted
        await press(pilot, "G")
        assert MARKUP_TASK in screen_text(app)


@sync
async def test_enter_on_a_task_opens_its_pair_and_q_comes_back(runs_file: Path) -> None:
    a = open_cassette(f"{runs_file}#task=1,trial=1")
    b = open_cassette(f"{runs_file}#task=1,trial=0")
    expected = diff_cassettes(a, b)
    assert expected.first_divergence == 1
    app = selector(runs_file)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter")
        assert isinstance(app.screen, RunPairScreen)
        assert (
            app.session.a.metadata["run"]["trial"] == 1
            and app.session.b.metadata["run"]["trial"] == 0
        )
        text = screen_text(app)
        assert "A task 1 trial 1 ✗ (2)  B task 1 trial 0 ✓ (2)" in text
        assert "first divergence ≠ row 2: A seq 2, B seq 2 cancel (args drift)" in text
        assert '"R9" -> "R1"' in text  # the drift of the divergent row, in the detail
        assert "q Runs" in text  # the footer says where q goes
        await press(pilot, "q")
        assert isinstance(app.screen, SelectScreen) and app.is_running
        assert app.screen.runs.cursor == 0  # type: ignore[attr-defined]
        # another pair after going back: the diff is of the new runs, not a cached one
        await press(pilot, "n")
        assert screen_text(app).splitlines()[app.screen.runs.cursor + 4].startswith("▶10 ")  # type: ignore[attr-defined]
        await press(pilot, "enter")
        assert isinstance(app.screen, RunPairScreen)
        assert "A task 10 trial 0 ✗ (1)  B task 10 trial 1 ✓ (2)" in screen_text(app)
        assert app.screen.result.b is app.session.b  # type: ignore[attr-defined]
        await press(pilot, "q", "q")
        assert not app.is_running


@sync
async def test_enter_on_a_trial_opens_it_alone(runs_file: Path) -> None:
    app = selector(runs_file)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await go_to(pilot, "1", 2)
        await press(pilot, "enter")
        assert isinstance(app.screen, RunSingleScreen)
        assert app.session.a.metadata["run"] == {
            "task": "1",
            "trial": 2,
            "reward": 0.0,
            "passed": False,
            "calls": 3,
            "index": 2,
        }
        assert "cassette task 1 trial 2 ✗ (3 entries)" in screen_text(app)
        await press(pilot, "q")
        assert isinstance(app.screen, SelectScreen)
        # a task of one trial opens it alone from its heading too
        await go_to(pilot, "3")
        await press(pilot, "enter")
        assert isinstance(app.screen, RunSingleScreen)
        assert "task 3 trial 0 ✓" in screen_text(app)


@sync
async def test_space_marks_a_and_b_and_enter_opens_them(runs_file: Path) -> None:
    app = selector(runs_file)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # task 2 has no passing trial: enter on it says so and stays
        await go_to(pilot, "2")
        await press(pilot, "enter")
        assert isinstance(app.screen, SelectScreen)
        assert "task 2 has no passing and failing trial" in notes(app)
        await press(pilot, "space")  # on a heading: nothing to mark
        assert app.screen.marks == {}  # type: ignore[attr-defined]
        await press(pilot, "j", "space")
        text = screen_text(app)
        assert "marked: A task 2 trial 0  B —" in text
        row = text.splitlines()[app.screen.runs.cursor + 4]  # type: ignore[attr-defined]
        assert row.split()[-3:] == ["0.00", "1", "A"], row  # reward, calls, mark
        # space again unmarks; escape clears every mark
        await press(pilot, "space")
        assert app.screen.marks == {}  # type: ignore[attr-defined]
        await press(pilot, "space", "escape")
        assert app.screen.marks == {}  # type: ignore[attr-defined]
        # A = task 2 trial 1 (the rate-limited one), B = task 2 trial 0
        await press(pilot, "j", "space", "k", "space")
        assert "marked: A task 2 trial 1  B task 2 trial 0  enter opens them" in screen_text(app)
        await press(pilot, "enter")
        assert isinstance(app.screen, RunPairScreen)
        assert (app.session.a.metadata["run"]["trial"], app.session.b.metadata["run"]["trial"]) == (
            1,
            0,
        )
        text = screen_text(app)
        assert "A task 2 trial 1 ✗ (1)  B task 2 trial 0 ✗ (1)" in text
        assert "~" in text  # same call, another response: the 429
        await press(pilot, "q")
        assert app.screen.marks == {}  # type: ignore[attr-defined]


@sync
async def test_filter_by_task(runs_file: Path) -> None:
    app = selector(runs_file)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", "1")
        lines = screen_text(app).splitlines()
        assert "filter: 1  2 of 5 tasks (escape clears)" in lines[3]
        assert headings(app) == ["1", "10"]
        # typing the whole id puts the cursor on that task; enter keeps the filter
        await press(pilot, "0", "enter")
        lines = screen_text(app).splitlines()
        assert lines[4].startswith("▶10 ") and "1 of 5 tasks" in lines[3]
        # / again selects the filter, so typing replaces it; keys typed into the filter
        # are text, not commands: q does not quit
        await press(pilot, "slash", "q")
        assert app.is_running and "no task matches" in screen_text(app)
        await press(pilot, "escape")  # closes the bar, keeps the filter
        assert app.screen.filter_text == "q"  # type: ignore[attr-defined]
        await press(pilot, "escape")  # clears it
        assert app.screen.filter_text == ""  # type: ignore[attr-defined]
        assert "9 runs" in screen_text(app) and len(app.screen.model) == 14  # type: ignore[attr-defined]


@sync
async def test_n_and_N_walk_the_tasks_with_a_pair(runs_file: Path) -> None:
    app = selector(runs_file)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        model = app.screen.model  # type: ignore[attr-defined]
        await press(pilot, "n")
        assert model.line(app.screen.runs.cursor)[0].task == "10"  # type: ignore[attr-defined]
        await press(pilot, "n")  # none further: the cursor stays
        assert model.line(app.screen.runs.cursor)[0].task == "10"  # type: ignore[attr-defined]
        await press(pilot, "N")
        assert app.screen.runs.cursor == 0  # type: ignore[attr-defined]


@sync
async def test_start_on_a_task(runs_file: Path) -> None:
    # --task 1: the pair opens at once, the selector is behind it
    app = selector(runs_file, task="1")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RunPairScreen)
        assert "A task 1 trial 1 ✗" in screen_text(app)
        await press(pilot, "q")
        assert isinstance(app.screen, SelectScreen)
    # --task 2 has no pair: the selector, on task 2, says so
    app = selector(runs_file, task="2")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SelectScreen)
        assert screen_text(app).splitlines()[4 + app.screen.runs.cursor].startswith("▶2 ")  # type: ignore[attr-defined]
        assert "task 2 has no passing and failing trial" in notes(app)


@sync
async def test_help_and_palette_list_the_selector_keys(runs_file: Path) -> None:
    app = selector(runs_file)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_text = help_plain_text(app)
        for binding in RUNS:
            assert binding.id in help_text, binding.id
        assert "Back to the run selector" in help_text
        await press(pilot, "q", "ctrl+p")
        for key in "mark":
            await pilot.press(key)
        await settle(pilot)
        assert "runs.mark" in screen_text(app)
        await press(pilot, "escape")
        # the palette runs the selector's actions: open task 1's pair
        await press(pilot, "ctrl+p")
        for key in "open":
            await pilot.press(key)
        await settle(pilot)
        assert "runs.open" in screen_text(app)
        await press(pilot, "enter")
        assert isinstance(app.screen, RunPairScreen)


@sync
async def test_thousands_of_runs_render_only_the_visible_rows(tmp_path: Path) -> None:
    path = tmp_path / "many.json"
    path.write_text(
        json.dumps([run(task, trial, float(trial % 2)) for task in range(1500) for trial in (0, 1)])
    )
    app = selector(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        model = app.screen.model  # type: ignore[attr-defined]
        assert len(model) == 4500
        rendered: list[int] = []
        original = model.render

        def counting(index: int, width: int, styles: Any) -> Any:
            rendered.append(index)
            return original(index, width, styles)

        model.render = counting
        app.screen.runs.set_model(model, 0)  # type: ignore[attr-defined]
        await press(pilot, "G")
        assert app.screen.runs.cursor == 4499  # type: ignore[attr-defined]
        assert rendered and len(set(rendered)) <= 2 * SIZE[1], len(set(rendered))
        assert "3000 runs · 1500 tasks" in screen_text(app)


# -- single-file mode: HTTP error responses are errors, as the diff engine says -----------
@sync
async def test_single_mode_flags_http_error_responses(tmp_path: Path) -> None:
    from cassette_tui.core.diff.align import is_error_outcome

    lines = [
        {"seq": 1, "tool": "http_get", "args": {"u": 1}, "response": {"status": 200}},
        {"seq": 2, "tool": "http_get", "args": {"u": 2}, "response": {"status": 503}},
        {"seq": 3, "tool": "http_get", "args": {"u": 3}, "response": {"status_code": "429"}},
        {"seq": 4, "tool": "http_get", "args": {"u": 4}, "error": {"type": "E", "message": "x"}},
        {"seq": 5, "tool": "http_get", "args": {"u": 5}, "response": {"status": 399}},
    ]
    path = tmp_path / "http.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    cassette = open_cassette(path)
    expected = [is_error_outcome(e.is_error, e.response) for e in cassette]
    assert expected == [False, True, True, True, False]
    app = CassetteApp(cassette)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SingleScreen)
        rows = [line for line in screen_text(app).splitlines() if line[1:6].strip().isdigit()]
        assert [row[7] == "!" for row in rows] == expected, rows
        # n walks the errors (the lint may add findings of its own; errors are among them)
        seen = set()
        for _ in range(len(lines)):
            await press(pilot, "n")
            seen.add(app.screen.steps.cursor)  # type: ignore[attr-defined]
        assert {1, 2, 3} <= seen and 4 not in seen
        await press(pilot, "g", "j")
        assert "seq 2 · http_get · line 2 · sha256:" in screen_text(app)
        assert "· ! error" in screen_text(app)


# -- cassette-tui A routes a file of many runs to the selector ----------------------------
@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[CassetteApp]:
    """The apps ``open`` would run (their ``run`` is replaced: no terminal here)."""
    apps: list[CassetteApp] = []
    monkeypatch.setattr(CassetteApp, "run", lambda self, *a, **k: apps.append(self))
    monkeypatch.setattr(open_app_module, "terminal_problem", lambda: None)
    return apps


def test_open_routes_a_multi_run_file(runs_file: Path, started: list[CassetteApp]) -> None:
    runner = CliRunner()
    result = runner.invoke(open_app, [str(runs_file)])
    assert result.exit_code == 0, result.output
    (app,) = started
    assert app.session.a is None and app.session.run_source is not None
    assert app.session.run_source.path == runs_file and app.session.run_source.task is None
    assert len(app.session.run_source.runs) == 9 and app.session.run_source.fmt == "tau-bench"
    # --task (or the path spec's task) starts on that task
    for args in ([str(runs_file), "--task", "1"], [f"{runs_file}#task=1"]):
        result = runner.invoke(open_app, args)
        assert result.exit_code == 0, result.output
        assert started[-1].session.run_source.task == "1"  # type: ignore[union-attr]
    # --task with --trial opens that run alone, as the path spec does
    result = runner.invoke(open_app, [str(runs_file), "--task", "1", "--trial", "2"])
    assert result.exit_code == 0, result.output
    assert started[-1].session.run_source is None and started[-1].session.b is None
    assert started[-1].session.a.metadata["run"]["trial"] == 2  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task", "99"], "has no run of task '99'"),
        (["--task", "1", "--trial", "7"], "trial"),
        (["--trial", "1"], "without a task"),
    ],
)
def test_open_rejects_a_bad_selection(
    runs_file: Path, started: list[CassetteApp], args: list[str], message: str
) -> None:
    result = CliRunner().invoke(open_app, [str(runs_file), *args])
    assert result.exit_code == 2 and message in result.output, result.output
    assert not started


def test_open_task_takes_one_file(runs_file: Path, started: list[CassetteApp]) -> None:
    result = CliRunner().invoke(open_app, [str(runs_file), str(runs_file), "--task", "1"])
    assert result.exit_code == 2 and "path specs" in result.output
    # two files of many runs without selectors: the error says how to pick
    result = CliRunner().invoke(open_app, [str(runs_file), str(runs_file)])
    assert result.exit_code == 2 and "task" in result.output
    assert not started


# -- the real tau-bench file --------------------------------------------------------------
@pytest.fixture
def airline(real: Path) -> Path:
    path = real / "tau-bench" / "gpt-4o-airline.json"
    if not path.is_file():
        pytest.skip(f"real-world data not available: {path} is absent")
    return path


@sync
async def test_real_file_task_31(airline: Path) -> None:
    app = selector(airline)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "200 runs · 50 tasks · 84 ✓ pass · 116 ✗ fail · 26 tasks with both" in text
        await press(pilot, "slash", "3", "1", "enter")
        lines = screen_text(app).splitlines()
        assert lines[4].startswith("▶31 ")
        assert "4 trials: 2✓ 2✗   enter: A trial 2 ✗ vs B trial 3 ✓" in lines[4]
        await press(pilot, "enter")
        assert isinstance(app.screen, RunPairScreen)
        text = screen_text(app)
        assert "A task 31 trial 2 ✗ (7)  B task 31 trial 3 ✓ (7)" in text
        assert "first divergence ≠ row 7: A seq 7, B seq 7 cancel_reservation" in text
        assert 'args $.reservation_id  "D1EW9B" -> "9HBUV8"' in text
        await press(pilot, "q")
        assert isinstance(app.screen, SelectScreen)


@sync
async def test_real_file_empty_passing_run_against_a_failing_one(airline: Path) -> None:
    # task 29: trial 0 passed without a tool call; the pair still opens, B is empty
    app = selector(airline, task="29")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RunPairScreen)
        assert len(app.session.b) == 0 and app.session.b.metadata["run"]["passed"] is True  # type: ignore[arg-type,union-attr]
        assert app.session.a.metadata["run"]["passed"] is False  # type: ignore[union-attr]
        assert "B task 29 trial 0 ✓ (empty: no calls)" in screen_text(app)
