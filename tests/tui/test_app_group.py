"""Pilot tests of the tree of runs grouped by where they part (issue 28), at 80x24: every
key of the tree screen (move, open and close, the split, mark two runs, open them side by
side, back), the tree opened from the run selector (``t``), and the real tau-bench task 6
(skipped where ``../shared/real`` is absent)."""

from __future__ import annotations

import json
from pathlib import Path

from cassette_tui.core.importers.sources import list_runs, open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.core.why.grouping import group_by_task, runs_of
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.keymap import keymap_problem
from cassette_tui.tui.screens.gate import GateScreen
from cassette_tui.tui.screens.group import GroupPairScreen, GroupScreen, GroupSource, Item
from cassette_tui.tui.screens.select import RunSource, SelectScreen
from support.grouped_runs import write_runs_folder
from support.loop import DEMO_AGENT, agent_cmd
from support.pilot import screen_text, settle, sync, wait_until
from textual.pilot import Pilot

SIZE = (80, 24)


async def press(pilot: Pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


def tree_app(folder: Path) -> CassetteApp:
    groups = group_by_task(runs_of([str(folder)]))
    return CassetteApp(group_source=GroupSource("runs/", groups))


def here(app: CassetteApp) -> Item:
    screen = app.screen
    assert isinstance(screen, GroupScreen)
    item = screen.current()
    assert item is not None
    return item


def where(app: CassetteApp) -> str:
    """What the line under the cursor stands for: ``run-02.jsonl``, ``s3 retry``, ``root``."""
    item = here(app)
    if item.run is not None:
        return Path(item.grouping.runs[item.run].name).name
    first = item.chain[0]
    return f"s{first.depth} {first.key[0]}" if first.key else "root"


def names(app: CassetteApp, marks: dict) -> dict[str, str]:
    screen = app.screen
    assert isinstance(screen, GroupScreen)
    groups = screen.source.groups
    return {side: Path(groups[t].runs[i].name).name for side, (t, i) in marks.items()}


@sync
async def test_the_tree_opens_on_the_node_where_the_runs_part(tmp_path: Path) -> None:
    app = tree_app(write_runs_folder(tmp_path / "runs"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "the runs part at step 3 into 2 branches;" in text
        assert "3 of 3 failures take branch B (retry)" in text
        assert "⑂ parts [6 runs 3✓ 3✗] s1-2 search_docs" in text
        assert "A [3 runs 3✓ 0✗] s3 summarize" in text
        assert "B [3 runs 0✓ 3✗] s3 retry" in text
        item = here(app)
        split = item.grouping.split
        assert split is not None and item.chain[-1] is split.node
        # the detail lists the segment's steps with their args
        assert 's1 search_docs q="retry budget"' in text
        assert 's2 read_file path="docs/a.md"' in text


@sync
async def test_moving_opening_and_closing_nodes(tmp_path: Path) -> None:
    app = tree_app(write_runs_folder(tmp_path / "runs"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert where(app) == "s1 search_docs"
        await press(pilot, "j")
        assert where(app) == "s3 summarize"
        await press(pilot, "down")
        assert where(app) == "s3 retry"
        await press(pilot, "k")
        assert where(app) == "s3 summarize"
        await press(pilot, "up")
        assert where(app) == "s1 search_docs"
        await press(pilot, "g")
        assert where(app) == "root"
        await press(pilot, "G")
        assert where(app) == "s3 retry"
        # right opens the branch, right again goes to its first child, left goes back up
        tree = app.screen.view_tree  # type: ignore[attr-defined]
        node = tree.cursor_node
        assert not node.is_expanded
        await press(pilot, "right")
        assert node.is_expanded and where(app) == "s3 retry"
        await press(pilot, "l")
        assert where(app) == "s4 give_up"
        await press(pilot, "h")
        assert where(app) == "s3 retry"
        await press(pilot, "left")
        assert not node.is_expanded
        await press(pilot, "left")
        assert where(app) == "s1 search_docs"
        # e opens everything under the cursor, again closes it all
        await press(pilot, "g", "e")
        text = screen_text(app)
        for n in range(1, 7):
            assert f"run-{n:02d}.jsonl" in text
        await press(pilot, "G")
        assert where(app) == "run-06.jsonl"
        await press(pilot, "pageup")
        assert where(app) == "root"
        await press(pilot, "pagedown")
        assert where(app) == "run-06.jsonl"
        await press(pilot, "g", "e")
        assert "run-01.jsonl" not in screen_text(app)
        # enter on a node without marks opens or closes it
        await press(pilot, "enter")
        assert tree.cursor_node.is_expanded


@sync
async def test_f_goes_back_to_where_the_runs_part(tmp_path: Path) -> None:
    app = tree_app(write_runs_folder(tmp_path / "runs"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "g", "e", "G")
        assert where(app) == "run-06.jsonl"
        await press(pilot, "f")
        assert where(app) == "s1 search_docs"


@sync
async def test_mark_two_runs_open_them_side_by_side_and_come_back(tmp_path: Path) -> None:
    app = tree_app(write_runs_folder(tmp_path / "runs"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GroupScreen)
        # space on a branch marks one of its runs: for A a failing one
        await press(pilot, "j", "j", "space")
        assert names(app, screen.marks) == {"A": "run-02.jsonl"}
        # for B a passing one
        await press(pilot, "k", "space")
        assert names(app, screen.marks) == {"A": "run-02.jsonl", "B": "run-01.jsonl"}
        assert "marked: A run-02.jsonl ✗  B run-01.jsonl ✓  enter opens them" in screen_text(app)
        await press(pilot, "enter")
        pair = app.screen
        assert isinstance(pair, GroupPairScreen)
        assert pair.session.a is not None and pair.session.b is not None
        assert Path(pair.session.a.path).name == "run-02.jsonl"
        assert Path(pair.session.b.path).name == "run-01.jsonl"
        assert app.session.a is None  # the app's own session is untouched
        text = screen_text(app)
        assert "A run-02.jsonl ✗  B run-01.jsonl ✓" in text
        assert "retry" in text and "summarize" in text
        # escape comes back to the tree, the marks kept; enter opens them again, q back
        await press(pilot, "escape")
        assert app.screen is screen and len(screen.marks) == 2
        await press(pilot, "enter")
        assert isinstance(app.screen, GroupPairScreen)
        await press(pilot, "q")
        assert app.screen is screen


@sync
async def test_space_on_a_run_marks_and_unmarks_it_escape_clears(tmp_path: Path) -> None:
    app = tree_app(write_runs_folder(tmp_path / "runs"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GroupScreen)
        await press(pilot, "g", "e", "G")
        await press(pilot, "space")
        assert names(app, screen.marks) == {"A": "run-06.jsonl"}
        assert "run-06.jsonl  3 calls  A" in screen_text(app)
        await press(pilot, "space")
        assert screen.marks == {}
        await press(pilot, "space", "k", "space", "k", "space")
        assert names(app, screen.marks) == {"A": "run-06.jsonl", "B": "run-02.jsonl"}
        # a third mark is refused, with a word on what to do
        assert any("A and B are marked" in n.message for n in app._notifications)
        await press(pilot, "escape")
        assert screen.marks == {}
        assert "calls  A" not in screen_text(app)
        # escape without marks on the first view stays; q quits
        await press(pilot, "escape")
        assert app.screen is screen
        await press(pilot, "q")
    assert app.return_code == 0


@sync
async def test_d_opens_a_failure_of_the_worst_branch_beside_a_pass(tmp_path: Path) -> None:
    app = tree_app(write_runs_folder(tmp_path / "runs"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "d")
        pair = app.screen
        assert isinstance(pair, GroupPairScreen)
        assert pair.session.a is not None and pair.session.b is not None
        assert Path(pair.session.a.path).name == "run-02.jsonl"
        assert Path(pair.session.b.path).name == "run-01.jsonl"
        await press(pilot, "escape")
        assert isinstance(app.screen, GroupScreen)


def results_file(path: Path) -> Path:
    """A tau-bench results file: task 1's four trials part at step 2."""

    def run(trial: int, reward: float, *tools: str) -> dict:
        traj: list[dict] = [{"role": "user", "content": "change my flight"}]
        for n, tool in enumerate(tools):
            call = {"id": f"c{n}", "type": "function"}
            call["function"] = {"name": tool, "arguments": json.dumps({"n": n})}
            traj.append({"role": "assistant", "content": None, "tool_calls": [call]})
            traj.append({"role": "tool", "tool_call_id": f"c{n}", "content": '{"ok": true}'})
        return {"task_id": 1, "trial": trial, "reward": reward, "info": {}, "traj": traj}

    path.write_text(json.dumps([
        run(0, 1.0, "get_user", "search_direct", "book"),
        run(1, 0.0, "get_user", "search_onestop", "book"),
        run(2, 0.0, "get_user", "search_onestop"),
        run(3, 1.0, "get_user", "search_direct", "book"),
    ]))  # fmt: skip
    return path


@sync
async def test_w_in_the_run_selector_opens_the_tasks_tree(tmp_path: Path) -> None:
    path = results_file(tmp_path / "results.json")
    app = CassetteApp(run_source=RunSource(path, list_runs(path), "tau-bench"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        selector = app.screen
        assert isinstance(selector, SelectScreen)
        await press(pilot, "w")
        assert isinstance(app.screen, GroupScreen)
        text = screen_text(app)
        assert "where runs part results.json · task 1: 4 runs 2✓ 2✗" in text
        assert "2 of 2 failures take branch B (search_onestop)" in text
        await press(pilot, "d")
        pair = app.screen
        assert isinstance(pair, GroupPairScreen)
        assert pair.session.a is not None and pair.session.b is not None
        assert str(pair.session.a.path).endswith("#task=1,trial=1")
        assert str(pair.session.b.path).endswith("#task=1,trial=0")
        await press(pilot, "q")
        assert isinstance(app.screen, GroupScreen)
        # from the selector, q (and escape without marks) go back to it
        await press(pilot, "q")
        assert app.screen is selector
        await press(pilot, "w", "escape")
        assert app.screen is selector


@sync
async def test_the_real_tau_bench_task_6(real: Path) -> None:
    source = real / "tau-bench" / "gpt-4o-airline.json"
    groups = group_by_task(runs_of([str(source)], None, "6"))
    app = CassetteApp(group_source=GroupSource("gpt-4o-airline.json task 6", groups))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "2 of 3 failures take branch A (search_onestop_flight)" in text
        assert "⑂ parts [4 runs 1✓ 3✗] s1-2 get_user_details" in text
        await press(pilot, "d")
        pair = app.screen
        assert isinstance(pair, GroupPairScreen)
        assert "task=6,trial=1 ✗  B task=6,trial=0 ✓" in screen_text(app)


@sync
async def test_every_task_of_a_file_in_one_tree(real: Path) -> None:
    source = real / "tau-bench" / "gpt-4o-airline.json"
    groups = group_by_task(runs_of([str(source)]))
    app = CassetteApp(group_source=GroupSource("gpt-4o-airline.json", groups))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "200 runs of 50 tasks  outcomes split in 26 of 50" in screen_text(app)
        await press(pilot, "j", "j")
        assert here(app).task == "1"
        await press(pilot, "f")
        item = here(app)
        assert item.task == "1" and item.grouping.split is not None
        assert item.chain[-1] is item.grouping.split.node
        assert "2 of 3 failures take branch A (the run ends)" in screen_text(app)


@sync
async def test_w_on_the_gate_screen_groups_the_gates_runs(samples: Path) -> None:
    # the demo agent, flaky with a seed per run: runs 1 and 3 fail, run 2 passes
    agent = AgentCommand.parse(agent_cmd("--flaky", "--seed", "{run}", script=DEMO_AGENT))
    a, b = open_cassette(samples / "fix.jsonl"), open_cassette(samples / "fail.jsonl")
    app = CassetteApp(a, b, agent=agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "t")
        gate = app.screen
        assert isinstance(gate, GateScreen)
        await pilot.press("backspace", "backspace", "3", "enter")
        await wait_until(pilot, lambda: gate.result is not None and not gate.running, "the gate")
        await settle(pilot)
        await press(pilot, "w")
        tree = app.screen
        assert isinstance(tree, GroupScreen)
        text = screen_text(app)
        assert "where runs part the gate of fix.jsonl · 3 runs 1✓ 2✗" in text
        runs = tree.source.groups[None].runs
        assert [(r.name, r.passed) for r in runs] == [
            ("run 1", False), ("run 2", True), ("run 3", False)
        ]  # fmt: skip
        # every run's calls are its call log's: the tree counts them at its root
        logs = [open_cassette(r.call_log) for r in gate.result.results if r.call_log]
        assert [len(r.keys) for r in runs] == [len(log) for log in logs] == [4, 4, 4]
        await press(pilot, "g", "e")
        assert "run 2" in screen_text(app)
        # the pair view over the gate's runs, then back to the tree and to the gate
        await press(pilot, "G", "space", "k", "space")
        await press(pilot, "enter")
        assert isinstance(app.screen, GroupPairScreen)
        await press(pilot, "q", "q")
        assert app.screen is gate


@sync
async def test_the_trees_keys_follow_the_keymap(tmp_path: Path) -> None:
    folder = write_runs_folder(tmp_path / "runs")
    groups = group_by_task(runs_of([str(folder)]))
    keymap = {"group.suggested": "o", "group.mark": "x"}
    assert keymap_problem(keymap) is None
    app = CassetteApp(group_source=GroupSource("runs/", groups), keymap=keymap)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GroupScreen)
        await press(pilot, "x")
        assert len(screen.marks) == 1
        await press(pilot, "o")
        assert isinstance(app.screen, GroupPairScreen)
    # a key the tree already uses for another action is refused, naming the screen
    problem = keymap_problem({"group.mark": "d"})
    assert problem is not None and "group tree" in problem


@sync
async def test_runs_of_unknown_outcome_say_so_not_that_no_branching_separates(
    tmp_path: Path,
) -> None:
    """A folder of cassettes with no RUN.end.json: no run passed or failed, so the tree
    says no run's outcome is known (as ``group`` does), and ``f`` says it too; never
    "no branching separates passes from failures", which reads as a finding."""
    folder = write_runs_folder(tmp_path / "runs")
    for end in folder.glob("*.end.json"):
        end.unlink()
    app = tree_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "no branching separates" not in text
        assert "no run's outcome is known" in text
        await press(pilot, "f")
        assert "no run's outcome is known" in " ".join(str(n.message) for n in app._notifications)
