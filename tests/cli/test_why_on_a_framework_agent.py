"""The why tools on a real framework agent (pydantic-ai, offline) whose search answer
steers its later calls: the user's scenario of a ranking that changed between runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.adapter_loop import run_cli
from support.loop import agent_cmd
from support.run import cli

pytest.importorskip("pydantic_ai")

AGENT = Path(__file__).resolve().parents[1] / "support" / "agents" / "pydantic_ai_search_agent.py"


def _record(folder: Path, name: str, rank: str) -> Path:
    out = folder / name
    done = run_cli("record", "--agent", agent_cmd(script=AGENT), "-o", str(out),
                   env={"SEARCH_RANK": rank}, cwd=folder)  # fmt: skip
    assert done.returncode == (1 if rank == "bad" else 0), done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("runs")
    return _record(folder, "fail.jsonl", "bad"), _record(folder, "pass.jsonl", "good")


def test_swap_of_the_search_answer_passes_when_it_steers_the_next_calls(
    pair: tuple[Path, Path],
) -> None:
    # B's search answer makes the agent read another doc: a call A never made. The swapped
    # cassette must still answer it (from B), else the swap is always "unresolved".
    fail, passing = pair
    done = cli("gate", str(fail), "--agent", agent_cmd(script=AGENT), "--runs", "2", "--json",
               "--swap", f"1={passing}:1")  # fmt: skip
    doc = json.loads(done.stdout)
    assert doc["verdict"] == "deterministic" and doc["passed"] == 2, done.stdout
    assert done.returncode == 0


def test_bisect_names_the_search_answer_and_opens_the_hybrid_as_a(pair: tuple[Path, Path]) -> None:
    fail, passing = pair
    out = fail.parent / "bisect"
    done = cli("bisect", str(fail), str(passing), "--agent", agent_cmd(script=AGENT),
               "--runs", "1", "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1 differing response suffices: A seq 1 search_docs" in done.stdout
    assert "1 differing response; 2 candidates, 2 replays" in done.stdout, done.stdout
    # the app's A is the failing run: the minimal hybrid fails, so it is A, the passing run B
    line = next(x for x in done.stdout.splitlines() if x.startswith("open the minimal hybrid"))
    assert line.endswith(f"{out / 'minimal.jsonl'} {passing}"), line


LC_AGENT = AGENT.with_name("langchain_search_agent.py")


def test_verify_a_langchain_cassette_against_its_live_tools(tmp_path: Path) -> None:
    # the recorded responses are ToolMessage dicts: live_dispatcher answers alike, so only
    # the search whose ranking changed is stale, the read of the same doc is fresh
    pytest.importorskip("langchain")
    fail = tmp_path / "fail.jsonl"
    done = run_cli("record", "--agent", agent_cmd(script=LC_AGENT), "-o", str(fail),
                   env={"SEARCH_RANK": "bad"}, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    done = run_cli("verify", str(fail), "--dispatcher", "langchain_search_agent:verify_dispatch",
                   "--path", str(LC_AGENT.parent), "--allow", "search_docs", "--allow",
                   "read_doc", "--json", env={"SEARCH_RANK": "good"}, cwd=tmp_path)  # fmt: skip
    doc = json.loads(done.stdout)
    verdicts = {e["seq"]: e["status"] for e in doc["entries"]}
    assert verdicts == {1: "stale", 2: "fresh", 3: "not_reissued"}, done.stdout
    assert done.returncode == 1


def test_group_knows_which_recorded_runs_failed(tmp_path: Path) -> None:
    # `record` knows how the agent ended: group over a folder of recordings counts it
    runs = tmp_path / "runs"
    runs.mkdir()
    for i, rank in enumerate(["bad", "good", "bad"], 1):
        _record(runs, f"run-{i}.jsonl", rank)
    done = cli("group", str(runs), "--json")
    doc = json.loads(done.stdout)
    (task,) = doc["tasks"]
    passed = {Path(r["name"]).name: r["passed"] for r in task["runs"]}
    assert passed == {"run-1.jsonl": False, "run-2.jsonl": True, "run-3.jsonl": False}, doc
    text = cli("group", str(runs)).stdout
    assert "3 runs (1 passed, 2 failed)" in text and "the runs part at step 2" in text, text


def test_group_says_when_no_outcome_is_known(tmp_path: Path) -> None:
    for i, state in enumerate(["a", "b"], 1):
        (tmp_path / f"r{i}.jsonl").write_text(
            json.dumps({"seq": 1, "tool": "t", "args": {}, "response": state}) + "\n"
        )
    text = cli("group", str(tmp_path)).stdout
    assert "2 runs (0 passed, 0 failed, 2 of unknown outcome)" in text, text
    assert "no run's outcome is known" in text, text
