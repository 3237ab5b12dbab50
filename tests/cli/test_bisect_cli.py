"""``cassette-tui bisect`` as a user runs it (issue 28): the answer, the candidates, the
hybrids kept, ``--json``, ``--format markdown`` and the exit statuses."""

from __future__ import annotations

import json
from pathlib import Path

from markdown_it import MarkdownIt
from support.factory import write_cassette
from support.loop import agent_cmd
from support.run import cli

AGENT = Path(__file__).resolve().parents[1] / "support" / "agents" / "bisect_agent.py"


def _pair(folder: Path, steps: int) -> tuple[Path, Path]:
    def run(state: str) -> list[dict]:
        return [{"seq": i, "tool": "check", "args": {"step": i}, "response": {"state": state}}
                for i in range(1, steps + 1)]  # fmt: skip

    return (write_cassette(folder / "fail.jsonl", *run("bad")),
            write_cassette(folder / "pass.jsonl", *run("good")))  # fmt: skip


def test_bisect_text_json_and_markdown(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 8)
    agent = agent_cmd("--steps", "8", "--needs", "2,6", script=AGENT)
    done = cli("bisect", str(fail), str(passing), "--agent", agent, "--runs", "1", "-j", "2",
               "--out", str(tmp_path / "b1"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "2 of 8 differing responses suffice: A seq 2 check $.state, A seq 6 check $.state" in out
    assert "open the minimal hybrid beside B:" in out
    # the first candidate, B as recorded, is named so (not "A's answers at seq none")
    assert "1. none of A's answers (B as recorded): pass" in out
    assert (tmp_path / "b1" / "minimal.jsonl").exists()
    done = cli("bisect", str(fail), str(passing), "--agent", agent, "--runs", "1", "-j", "2",
               "--out", str(tmp_path / "b2"), "--json")  # fmt: skip
    doc = json.loads(done.stdout)
    assert [s["a_seq"] for s in doc["minimal"]] == [2, 6] and doc["exit_status"] == 0
    assert doc["replays"] == len(doc["candidates"]) and doc["candidates"][0]["outcome"] == "pass"
    done = cli("bisect", str(fail), str(passing), "--agent", agent, "--runs", "1", "-j", "2",
               "--out", str(tmp_path / "b3"), "--format", "markdown")  # fmt: skip
    tokens = MarkdownIt("commonmark").enable("table").parse(done.stdout)
    assert any(t.type == "table_open" for t in tokens)
    assert "**2 of 8 differing responses suffice" in done.stdout


def test_bisect_with_no_answer_exits_2_and_says_why(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 3)
    agent = agent_cmd("--steps", "3", "--needs", "9", script=AGENT)
    done = cli("bisect", str(fail), str(passing), "--agent", agent, "--runs", "1",
               "--out", str(tmp_path / "o"))  # fmt: skip
    assert done.returncode == 2
    assert "no answer: with all of A's differing responses the agent should fail" in done.stdout


def test_bisect_without_an_agent_or_with_a_bad_file(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 2)
    done = cli("bisect", str(fail), str(passing), cwd=tmp_path)
    assert done.returncode == 2 and "no agent command" in done.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 1, "tool": "x", "args": {}, "response": 1}\nnot json\n')
    done = cli("bisect", str(bad), str(passing), "--agent", "true", "--out", str(tmp_path / "o"))
    assert done.returncode == 2 and "bad.jsonl:2" in done.stderr


def test_gate_swap_answers_one_step_as_the_other_run_did(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 4)
    agent = agent_cmd("--steps", "4", "--needs", "3", script=AGENT)
    plain = cli("gate", str(fail), "--agent", agent, "--runs", "2", "--json")
    assert json.loads(plain.stdout)["passed"] == 0  # A fails every run
    done = cli("gate", str(fail), "--agent", agent, "--runs", "2", "--json",
               "--swap", f"3={passing}:3")  # fmt: skip
    doc = json.loads(done.stdout)
    assert done.returncode == 0 and doc["passed"] == 2 and doc["verdict"] == "deterministic"
    assert doc["swaps"] == ["seq 3 answered as pass.jsonl seq 3"]
    assert doc["cassette"] == str(fail)
    other = cli("gate", str(fail), "--agent", agent, "--runs", "1", "--swap", f"2={passing}:2")
    assert other.returncode == 0 and "verdict deterministic: 0/1 passed" in other.stdout
    assert "swapped seq 2 answered as pass.jsonl seq 2" in other.stdout
    assert fail.read_text().count('"bad"') == 4  # the cassette itself is untouched


def test_swap_refuses_another_tool_and_a_missing_seq(tmp_path: Path) -> None:
    fail, _ = _pair(tmp_path, 2)
    other = write_cassette(
        tmp_path / "o.jsonl", {"seq": 1, "tool": "read", "args": {}, "response": 1}
    )
    done = cli("gate", str(fail), "--agent", "true", "--swap", f"1={other}:1")
    assert done.returncode == 2 and "calls 'check' but o.jsonl seq 1 calls 'read'" in done.stderr
    done = cli("gate", str(fail), "--agent", "true", "--swap", f"7={other}:1")
    assert done.returncode == 2 and "seq 7 is not in" in done.stderr


def test_replay_swap_answers_one_step_as_the_other_run_did(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 4)
    agent = agent_cmd("--steps", "4", "--needs", "3", script=AGENT)
    assert cli("replay", str(fail), "--agent", agent).returncode == 1
    done = cli("replay", str(fail), "--agent", agent, "--swap", f"3={passing}:3", "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == 0 and doc["passed"] is True
    assert doc["swaps"] == ["seq 3 answered as pass.jsonl seq 3"] and doc["cassette"] == str(fail)


def test_bisect_keeps_each_candidates_runs_under_runs_dir(tmp_path: Path) -> None:
    """``--runs-dir DIR``: each candidate's gate keeps its runs in ``DIR/candidate-NNN``
    (a runs folder must be new or empty: one folder for all made the second gate fail)."""
    fail, passing = _pair(tmp_path, 4)
    agent = agent_cmd("--steps", "4", "--needs", "3", script=AGENT)
    runs_dir = tmp_path / "runs"
    done = cli("bisect", str(fail), str(passing), "--agent", agent, "--runs", "1", "-j", "2",
               "--out", str(tmp_path / "b"), "--runs-dir", str(runs_dir), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [s["a_seq"] for s in doc["minimal"]] == [3]
    kept = sorted(p.name for p in runs_dir.iterdir())
    assert kept == [f"candidate-{n:03d}" for n in range(1, len(doc["candidates"]) + 1)]
    assert all(any((runs_dir / name).iterdir()) for name in kept)


def test_one_differing_response_is_singular(tmp_path: Path) -> None:
    from cassette_tui.core import load
    from cassette_tui.core.diff.result import diff_cassettes
    from cassette_tui.core.why.bisect import BisectResult
    from cassette_tui.core.why.hybrid import differing_steps
    from cassette_tui.tui.commands.bisect import bisect_lines

    a, b = _pair(tmp_path, steps=1)
    steps = differing_steps(diff_cassettes(load(a), load(b)))
    assert len(steps) == 1
    lines = bisect_lines(BisectResult(str(a), str(b), steps, None, problem="x"))
    assert lines[1].startswith("1 differing response;"), lines[1]


def test_swap_json_names_the_cassette_as_without_swap_absolute(tmp_path: Path) -> None:
    """docs/json.md: ``cassette`` is the path spec as given, absolute, for replay and gate;
    with --swap it was the relative path as typed (another document for one field)."""
    _pair(tmp_path, 2)
    agent = agent_cmd("--steps", "2", "--needs", "9", script=AGENT)
    for command in (["replay"], ["gate", "--runs", "1"]):
        plain = json.loads(cli(*command, "fail.jsonl", "--agent", agent, "--json",
                               cwd=tmp_path).stdout)  # fmt: skip
        swapped = json.loads(cli(*command, "fail.jsonl", "--agent", agent, "--json",
                                 "--swap", "1=pass.jsonl:1", cwd=tmp_path).stdout)  # fmt: skip
        assert plain["cassette"] == str(tmp_path / "fail.jsonl")
        assert swapped["cassette"] == plain["cassette"], command


def test_an_agent_that_dies_on_import_is_named_and_no_set_is_claimed(tmp_path: Path) -> None:
    import shlex
    import sys

    fail, passing = _pair(tmp_path, 2)
    agent = shlex.join([sys.executable, "-c", "raise ModuleNotFoundError('No module named x')"])
    done = cli("bisect", str(fail), str(passing), "--agent", agent, "-n", "1")
    assert done.returncode == 2, done.stderr
    assert "ModuleNotFoundError: No module named x" in done.stdout
    assert "the agent made no tool call" in done.stdout
    assert "the set is minimal" not in done.stdout  # there is no set


def test_a_used_hybrids_folder_is_the_file_at_fault_in_json(tmp_path: Path) -> None:
    fail, passing = _pair(tmp_path, 2)
    out = tmp_path / "out"
    out.mkdir()
    (out / "minimal.jsonl").write_text("mine\n")
    done = cli("bisect", str(fail), str(passing), "--agent", "true", "--out", str(out), "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout) == {
        "error": f"{out}: holds a previous bisect's candidates; name another folder",
        "file": str(out),
    }
