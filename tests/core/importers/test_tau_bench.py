"""tau-bench results as cassettes, and the facts of issue 5 on the real gpt-4o airline file.

The real file is read from ../shared/real (never copied); the tests skip where it is absent.
Small hand-made inputs are written into tmp_path by the tests themselves.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers import Imported, RunSelectionError
from cassette_tui.core.importers.detect import import_file
from cassette_tui.core.importers.sources import (
    list_runs,
    open_cassette,
    pair_specs,
    parse_path_spec,
    task_pairs,
)

#: ../shared/real, as in conftest.py (module-scoped fixtures cannot use the ``real`` one)
from support.paths import REAL

TAU = REAL / "tau-bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def tau() -> Imported:
    """The parsed 200-run file, once per module (import_file caches it as well)."""
    if not TAU.is_file():
        pytest.skip(f"real-world data not available: {TAU} is absent")
    return import_file(TAU)


@pytest.fixture(scope="module")
def tau_raw() -> list[dict]:
    if not TAU.is_file():
        pytest.skip(f"real-world data not available: {TAU} is absent")
    return json.loads(TAU.read_text())


def run(task: int, trial: int) -> Cassette:
    return open_cassette(f"{TAU}#task={task},trial={trial}")


# -- hand-made inputs ------------------------------------------------------------------


def _write(tmp_path: Path, runs: list[dict]) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(runs))
    return path


def _call(name: str, args: dict, call_id: str = "call_1") -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


def _result(content: str, call_id: str = "call_1", name: str = "x") -> dict:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def _two_runs(tmp_path: Path) -> Path:
    traj = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "cancel it"},
        _call("get_reservation_details", {"reservation_id": "ABC123"}),
        _result('{"status": "active"}'),
        _call("cancel_reservation", {"reservation_id": "ABC123"}),
        _result("Error: reservation cannot be cancelled"),
    ]
    return _write(
        tmp_path,
        [
            {"task_id": 7, "trial": 0, "reward": 1.0, "info": {"note": "a"}, "traj": traj},
            {"task_id": 7, "trial": 1, "reward": 0.0, "info": {"note": "b"}, "traj": traj[:2]},
        ],
    )


def test_small_file_runs_and_selection(tmp_path: Path) -> None:
    path = _two_runs(tmp_path)
    runs = list_runs(path)
    assert [(r.task, r.trial, r.reward, r.passed, r.calls) for r in runs] == [
        ("7", 0, 1.0, True, 2),
        ("7", 1, 0.0, False, 0),
    ]
    c = open_cassette(path, task=7, trial=0)
    assert [(e.seq, e.tool) for e in c] == [
        (1, "get_reservation_details"),
        (2, "cancel_reservation"),
    ]
    assert c[0].response == {"status": "active"}
    assert c[1].response == {"text": "Error: reservation cannot be cancelled"}
    assert c.metadata["format"] == "tau-bench"
    assert c.metadata["reward"] == 1.0 and c.metadata["passed"] is True
    assert c.metadata["info"] == {"note": "a"}
    assert c[0].extra["run"] == {"task_id": 7, "trial": 0, "reward": 1.0}
    assert str(c.path) == f"{path}#task=7,trial=0"
    # the path the cassette reports opens the same run again
    again = open_cassette(str(c.path))
    assert [e.args for e in again] == [e.args for e in c]
    # a task with one trial needs no trial
    assert len(open_cassette(f"{path}#task=7,trial=1")) == 0


def test_multi_run_without_selector_says_how_to_select(tmp_path: Path) -> None:
    path = _two_runs(tmp_path)
    with pytest.raises(RunSelectionError) as info:
        open_cassette(path)
    err = info.value
    assert "holds 2 runs" in str(err) and "task" in str(err) and "trial" in str(err)
    assert f"{path.name}#task=7,trial=0" in str(err)
    assert len(err.runs) == 2 and err.path == str(path)
    with pytest.raises(RunSelectionError, match="2 trials"):
        open_cassette(path, task=7)
    with pytest.raises(RunSelectionError, match="no trial 5"):
        open_cassette(path, task=7, trial=5)
    with pytest.raises(RunSelectionError, match="no run of task '8'"):
        open_cassette(path, task=8, trial=0)
    with pytest.raises(CassetteFormatError, match="trial=0 but trial=1"):
        open_cassette(f"{path}#task=7,trial=0", trial=1)


def test_bad_run_names_the_field(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"task_id": 1, "trial": "two", "reward": 0, "traj": []}])
    with pytest.raises(CassetteFormatError) as info:
        open_cassette(path, task=1, trial=2)
    assert info.value.field == "[0].trial" and info.value.path == str(path)
    bad_call = {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": ""}}]}
    path = _write(tmp_path, [{"task_id": 1, "trial": 0, "reward": 0, "traj": [bad_call]}])
    with pytest.raises(CassetteFormatError) as info:
        open_cassette(path, task=1, trial=0)
    assert info.value.field == "[0].traj[0].tool_calls[0].function.name"


def test_path_spec_parsing(tmp_path: Path) -> None:
    spec = parse_path_spec("runs.json#task=31,trial=2")
    assert (spec.path, spec.task, spec.trial, spec.fmt) == (Path("runs.json"), "31", 2, None)
    spec = parse_path_spec("runs.json#trial=2,task=31,from=tau")
    assert (spec.task, spec.trial, spec.fmt) == ("31", 2, "tau-bench")
    assert str(spec) == "runs.json#task=31,trial=2,from=tau-bench"
    assert parse_path_spec("notes#1.json").path == Path("notes#1.json")
    odd = tmp_path / "a#task=1"
    odd.write_text("")
    assert parse_path_spec(str(odd)).path == odd  # an existing file wins
    with pytest.raises(CassetteFormatError, match="expected an integer"):
        parse_path_spec("runs.json#task=31,trial=x")
    with pytest.raises(CassetteFormatError, match="unknown format"):
        parse_path_spec("runs.json#from=nope")


# -- the real file (issue 5 facts) -------------------------------------------------------


def test_200_runs_import(tau: Imported) -> None:
    assert tau.fmt == "tau-bench"
    assert len(tau.runs) == 200
    assert len({(r.task, r.trial) for r in tau.runs}) == 200
    assert sum(r.passed for r in tau.runs) == 84
    assert len({r.task for r in tau.runs}) == 50
    total = 0
    for r in tau.runs:
        c = tau.cassette(r.index)
        assert len(c) == r.calls
        total += len(c)
    assert total == 1164  # every tool call in the file, none dropped


def test_18_empty_runs_and_the_four_that_pass(tau: Imported) -> None:
    empty = [r for r in tau.runs if r.calls == 0]
    assert len(empty) == 18
    assert all(len(tau.cassette(r.index)) == 0 for r in empty)
    passing = {(int(r.task), r.trial) for r in empty if r.passed}
    assert passing == {(29, 0), (21, 1), (47, 1), (12, 3)}


def test_26_tasks_have_a_pass_fail_pair(tau: Imported) -> None:
    pairs = task_pairs(tau.runs)
    assert sum(p.has_pair for p in pairs.values()) == 26
    good, bad = pair_specs(TAU, 31)
    assert good.endswith("#task=31,trial=3") and bad.endswith("#task=31,trial=2")


def test_pairing_by_position_not_by_reused_call_id(tau_raw: list[dict], tau: Imported) -> None:
    """49 runs reuse one tool_call_id for different calls; the entries still carry the
    result of the tool message right after each call (its 'name' says which tool)."""
    reusing = 0
    for i, raw in enumerate(tau_raw):
        calls = [c for m in raw["traj"] for c in (m.get("tool_calls") or [])]
        ids = Counter(c["id"] for c in calls)
        reusing += any(n > 1 for n in ids.values())
        answers = [m for m in raw["traj"] if m["role"] == "tool"]
        entries = tau.entries(i)
        assert [e.tool for e in entries] == [m["name"] for m in answers]
        assert [e.extra["tool_call_id"] for e in entries] == [c["id"] for c in calls]
    assert reusing == 49


def test_results_text_and_json(tau: Imported) -> None:
    responses = [e.response for r in tau.runs for e in tau.entries(r.index)]
    texts = [x["text"] for x in responses if isinstance(x, dict) and set(x) == {"text"}]
    assert "" in texts
    assert any(t.startswith("Error: ") for t in texts)
    assert any(t == "329.0" for t in texts)  # a bare number stays text
    assert any(isinstance(x, list) for x in responses)
    assert all(not e.is_error for r in tau.runs for e in tau.entries(r.index))


def test_step_limit_runs_without_reward_info(tau_raw: list[dict], tau: Imported) -> None:
    limited = [i for i, raw in enumerate(tau_raw) if raw["info"].get("reward_info") is None]
    assert len(limited) == 5
    for i in limited:
        c = tau.cassette(i)
        assert c.metadata["reward"] == 0 and c.metadata["passed"] is False
        assert c.metadata["info"]["reward_info"] is None


@pytest.mark.usefixtures("tau")
def test_task_31_facts() -> None:
    good, bad = run(31, 3), run(31, 2)
    assert good.metadata["passed"] and not bad.metadata["passed"]
    assert len(good) == len(bad) == 7
    assert [good.key(i) for i in range(6)] == [bad.key(i) for i in range(6)]
    assert good[6].tool == bad[6].tool == "cancel_reservation"
    assert good[6].args["reservation_id"] != bad[6].args["reservation_id"]


@pytest.mark.usefixtures("tau")
def test_task_41_facts() -> None:
    good, bad = run(41, 3), run(41, 2)
    assert (len(good), len(bad)) == (3, 1)
    assert bad[0].tool == "cancel_reservation"
    assert good[0].tool == "get_reservation_details"
    assert good[0].args["reservation_id"] == bad[0].args["reservation_id"]


@pytest.mark.usefixtures("tau")
def test_task_11_facts() -> None:
    good, bad = run(11, 0), run(11, 2)
    assert (len(good), len(bad)) == (10, 14)
    books = [i for i in range(len(bad)) if bad.tool(i) == "book_reservation"]
    same = [bad.seq(i) for i in books if bad.key(i) == bad.key(books[0])]
    assert same == [4, 6, 9]


@pytest.mark.usefixtures("tau")
def test_task_13_29_5_counts() -> None:
    assert (len(run(13, 2)), len(run(13, 0))) == (9, 14)
    assert (len(run(29, 0)), len(run(29, 1))) == (0, 10)
    assert (len(run(5, 1)), len(run(5, 0))) == (6, 6)


# -- the diff of the six pass/fail pairs (issue 5, "cassette-tui diff prints those facts") ---


def diff_pair(task: int, good: int, bad: int):
    from cassette_tui.core.diff.result import diff_cassettes

    return diff_cassettes(run(task, good), run(task, bad), align="seq")


def first(result) -> tuple[int | None, int | None, str, str]:
    row = result.rows[result.first_divergence]
    return row.a_seq, row.b_seq, row.status.value, row.tool


def kinds(result) -> list[str]:
    return [f.kind for f in result.findings]


@pytest.mark.usefixtures("tau")
def test_diff_task_31() -> None:
    d = diff_pair(31, 3, 2)
    assert [r.status.value for r in d.rows[:6]] == ["same"] * 6
    assert first(d) == (7, 7, "args_drift", "cancel_reservation")
    drift = [(i.part, i.path) for i in d.drift(d.first_divergence)]
    assert ("args", "$.reservation_id") in drift
    assert kinds(d)[0] == "first_divergence"


@pytest.mark.usefixtures("tau")
def test_diff_task_41() -> None:
    d = diff_pair(41, 3, 2)
    assert first(d) == (1, 1, "other_call", "get_reservation_details")
    assert d.b[0].tool == "cancel_reservation"
    assert [r.status.value for r in d.rows] == ["other_call", "only_a", "only_a"]


@pytest.mark.usefixtures("tau")
def test_diff_task_11() -> None:
    d = diff_pair(11, 0, 2)
    assert first(d)[:2] == (3, 3)
    repeats = [f for f in d.findings if f.kind == "repeated_key"]
    books = [f for f in repeats if f.evidence["key"][0] == "book_reservation"]
    assert [(f.seqs["a"], f.seqs["b"]) for f in books] == [([6], [4, 6, 9])]
    assert kinds(d)[0] == "first_divergence"


@pytest.mark.usefixtures("tau")
def test_diff_task_13_repeats_with_counts_not_the_cause() -> None:
    d = diff_pair(13, 2, 0)
    assert first(d)[:2] == (2, 2)
    assert kinds(d)[0] == "first_divergence"
    repeats = [f for f in d.findings if f.kind == "repeated_key"]
    assert repeats, "both runs repeat keys"
    assert any(f.seqs["a"] for f in repeats if len(f.seqs["a"]) > 1)  # the passing run too
    assert any(len(f.seqs["b"]) > 1 for f in repeats)
    for f in repeats:
        assert f.evidence["count_a"] == len(f.seqs["a"])
        assert f.evidence["count_b"] == len(f.seqs["b"])
        assert "not the cause" in f.action


@pytest.mark.usefixtures("tau")
def test_diff_task_29_no_calls_vs_10() -> None:
    d = diff_pair(29, 0, 1)
    assert (len(d.a), len(d.b)) == (0, 10)
    assert [r.status.value for r in d.rows] == ["only_b"] * 10
    assert first(d) == (None, 1, "only_b", "get_user_details")
    finding = d.findings[0]
    assert finding.kind == "first_divergence"
    assert finding.message.startswith("A made no tool call; B made 10 calls.")


@pytest.mark.usefixtures("tau")
def test_diff_task_5() -> None:
    d = diff_pair(5, 1, 0)
    assert (len(d.a), len(d.b)) == (6, 6)
    assert first(d) == (3, 3, "args_drift", "get_reservation_details")
