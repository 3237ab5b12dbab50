"""Grouping many runs by where they part (issue 28): the prefix tree over call keys, the
first split of outcomes, per task for a multi-run file, a gate's runs folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.why.grouping import (
    GroupedRun,
    group,
    group_by_task,
    runs_of,
    suggested_pair,
)
from hypothesis import given
from hypothesis import strategies as st
from support.factory import write_cassette
from support.run import cli


def _run(name: str, tools: str, passed: bool | None) -> GroupedRun:
    return GroupedRun(name, [(t, "sha256:" + t) for t in tools], passed)


def test_the_first_split_names_the_branch_failures_take() -> None:
    runs = [_run(f"p{i}", "abcd", True) for i in range(3)]
    runs += [_run(f"f{i}", "abxy", False) for i in range(9)]
    runs += [_run("g", "abz", True)]
    split = group(runs).split
    assert split is not None and split.step == 3
    assert split.message() == (
        "the runs part at step 3 into 3 branches; 9 of 9 failures take branch A (x)"
    )
    assert [len(b.runs) for b in split.branches] == [9, 3, 1]


def test_no_split_when_every_branch_has_the_same_outcome() -> None:
    runs = [_run("a", "ab", True), _run("b", "ac", True)]
    assert group(runs).split is None


def test_a_run_that_ends_early_is_a_branch() -> None:
    runs = [_run("a", "a", False), _run("b", "ab", True)]
    split = group(runs).split
    assert split is not None and split.step == 2
    assert any(b.key is None and b.failed == 1 for b in split.branches)


@given(st.lists(st.tuples(st.text("abc", max_size=6), st.booleans()), min_size=1, max_size=30))
def test_the_tree_counts_every_run_once_per_level(rows: list[tuple[str, bool]]) -> None:
    runs = [_run(str(i), tools, passed) for i, (tools, passed) in enumerate(rows)]
    grouping = group(runs)
    root = grouping.root
    assert len(root.runs) == len(runs)

    def check(node) -> int:
        ended = len(node.ended)
        below = sum(len(c.runs) for c in node.children.values())
        assert ended + below == len(node.runs)
        return sum(check(c) for c in node.children.values()) + ended

    assert check(root) == len(runs)
    if grouping.split is not None:
        assert sum(len(b.runs) for b in grouping.split.branches) <= len(runs)


def test_tau_bench_trials_grouped_per_task(real: Path) -> None:
    source = real / "tau-bench" / "gpt-4o-airline.json"
    runs = runs_of([str(source)])
    groups = group_by_task(runs)
    assert len(runs) == 200 and len(groups) == 50
    six = groups["6"]
    assert six.split is not None and six.split.step == 3
    assert "2 of 3 failures take branch A (search_onestop_flight)" in six.split.message()
    doc = json.loads(json.dumps(six.to_json()))
    assert doc["split"]["branches"][0]["tool"] == "search_onestop_flight"


def test_a_gate_runs_folder_and_the_cli(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    for n, (tools, code) in enumerate([("ab", 0), ("ab", 0), ("ac", 1)], 1):
        write_cassette(folder / f"run-{n:02d}.jsonl",
                       *[{"seq": i, "tool": t, "args": {}, "response": 1} for i, t in enumerate(tools, 1)])  # fmt: skip
        (folder / f"run-{n:02d}.end.json").write_text(json.dumps({"exit": code}))
    done = cli("group", str(folder))
    assert done.returncode == 0, done.stderr
    assert "3 runs (2 passed, 1 failed)" in done.stdout
    assert (
        "the runs part at step 2 into 2 branches; 1 of 1 failures take branch B (c)" in done.stdout
    )
    assert "open a failure of branch B beside a pass: cassette-tui" in done.stdout
    doc = json.loads(cli("group", str(folder), "--json").stdout)
    assert doc["tasks"][0]["split"]["step"] == 2
    tree = cli("group", str(folder), "--tree").stdout
    assert "step 1: a  [3 runs: 2✓ 1✗]" in tree


def test_group_of_nothing_or_a_bad_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    done = cli("group", str(empty))
    assert done.returncode == 2 and "no run to group" in done.stderr


def test_the_split_keeps_its_node_and_a_pair_to_open() -> None:
    runs = [_run("p", "abc", True), _run("f1", "abx", False), _run("f2", "abx", False)]
    grouping = group(runs)
    split = grouping.split
    assert split is not None and split.node is not None
    assert split.node.depth == 2 and set(split.node.children) == {
        ("c", "sha256:c"),
        ("x", "sha256:x"),
    }
    assert suggested_pair(grouping) == (1, 0)


def test_a_pair_from_the_failures_branch_when_no_other_branch_passed() -> None:
    # branch A (b) holds the pass and two failures, branch B (c) one failure: the failure
    # comes from A, where most failures are, and the pass too, the only one
    runs = [_run("p", "ab", True), _run("f1", "ab", False), _run("f2", "ac", False)]
    runs.append(_run("f3", "ab", False))
    grouping = group(runs)
    assert grouping.split is not None
    assert suggested_pair(grouping) == (1, 0)
    assert suggested_pair(group([_run("a", "ab", False), _run("b", "ac", False)])) is None


def test_path_specs_and_task_pick_runs(real: Path) -> None:
    source = str(real / "tau-bench" / "gpt-4o-airline.json")
    by_spec = runs_of([f"{source}#task=6"])
    assert [r.name for r in by_spec] == [f"{source}#task=6,trial={n}" for n in range(4)]
    assert [r.name for r in runs_of([source], None, "6")] == [r.name for r in by_spec]
    one = runs_of([f"{source}#task=6,trial=2"])
    assert len(one) == 1 and one[0].task == "6" and one[0].cassette is not None
    assert all(r.cassette is not None and len(r.cassette) == len(r.keys) for r in by_spec)


def test_a_folders_runs_name_no_task(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    write_cassette(folder / "a.jsonl", {"seq": 1, "tool": "t", "args": {}, "response": 1})
    assert len(runs_of([str(folder)])) == 1
    with pytest.raises(CassetteFormatError, match="no run to group for task 1"):
        runs_of([str(folder)], None, "1")


@pytest.mark.parametrize(
    ("end", "why"),
    [
        ('{"exit": "0"}', "field 'exit': \"0\" is not a number"),
        ("garbage{", "not valid JSON"),
        ("[0]", "not a JSON object"),
        ('{"exit": true}', "field 'exit': true is not a number"),
    ],
)
def test_a_bad_end_file_is_an_error_naming_it_never_a_silent_outcome(
    tmp_path: Path, end: str, why: str
) -> None:
    """How a run ended comes from its RUN.end.json: ``{"exit": "0"}`` used to count as a
    failure and a file that is not JSON as unknown, both silently; now either is an error
    naming the file and the field. ``{"exit": null}`` (a run killed by a signal) stays
    unknown."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("a", "b"):
        write_cassette(folder / f"{name}.jsonl", {"seq": 1, "tool": "t", "args": {}, "response": 1})
    (folder / "a.end.json").write_text('{"exit": null, "signal": 9}')
    (folder / "b.end.json").write_text(end)
    with pytest.raises(CassetteFormatError) as raised:
        runs_of([str(folder)])
    assert raised.value.path == str(folder / "b.end.json") and why in str(raised.value)
    (folder / "b.end.json").write_text('{"exit": 0}')
    runs = runs_of([str(folder)])
    assert [r.passed for r in runs] == [None, True]
    done = cli("group", str(folder))
    assert (
        done.returncode == 0 and "2 runs (1 passed, 0 failed, 1 of unknown outcome)" in done.stdout
    )


def test_the_why_tools_outputs_beside_the_runs_are_not_runs(tmp_path: Path) -> None:
    """minimise writes RUN.min.jsonl and verify RUN.live.jsonl beside the recording: in a
    folder of one's recordings those are not runs of the agent (a subset, the tools'
    live answers), so group leaves them out instead of counting them as runs of unknown
    outcome."""
    folder = tmp_path / "runs"
    folder.mkdir()
    one = {"seq": 1, "tool": "t", "args": {}, "response": 1}
    for name, code in (("fail", 1), ("fix", 0)):
        write_cassette(folder / f"{name}.jsonl", one)
        (folder / f"{name}.end.json").write_text(json.dumps({"exit": code}))
    write_cassette(folder / "fail.min.jsonl", one)
    write_cassette(folder / "fail.live.jsonl", {**one, "verified_seq": 1})
    runs = runs_of([str(folder)])
    assert sorted(Path(r.name).name for r in runs) == ["fail.jsonl", "fix.jsonl"]
    assert [r.passed for r in runs] == [False, True]


def test_cassettes_named_one_by_one_read_their_end_files_as_a_folder_does(
    tmp_path: Path,
) -> None:
    """``group fail.jsonl fix.jsonl``: each cassette's RUN.end.json counts as it does for
    ``group FOLDER`` (it was read for a folder only: 2 runs of unknown outcome)."""
    one = {"seq": 1, "tool": "t", "args": {}, "response": 1}
    paths = []
    for name, code in (("fail", 1), ("fix", 0)):
        paths.append(str(write_cassette(tmp_path / f"{name}.jsonl", one)))
        (tmp_path / f"{name}.end.json").write_text(json.dumps({"exit": code}))
    assert [r.passed for r in runs_of(paths)] == [False, True]
    assert [r.passed for r in runs_of([str(tmp_path)])] == [False, True]
