"""``cassette-tui replay`` policies through the console script: checking a fix that makes a
new call against the failing recording (``--new-calls``), a pinned fixture over a base
cassette (``--fixture``), unused recordings under ``--strict``, and the agent's output
tail in the result."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from cassette_tui.core import load
from support.factory import entry, write_cassette
from support.loop import DEMO_AGENT, agent_cmd, loop_cassette
from support.paths import SAMPLES, SCRIPT

FAIL = SAMPLES / "fail.jsonl"
FIXED = agent_cmd("--fixed", script=DEMO_AGENT)  # the fix reads the current policy: a new call


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300,
        check=False,
    )  # fmt: skip


def test_a_fix_with_a_new_call_misses_under_the_default_policy() -> None:
    done = cli("replay", str(FAIL), "--agent", FIXED)
    assert done.returncode == 1
    assert "misses (never served live):" in done.stdout
    assert 'read_file sha256:e65440dfad324368 {"path": "docs/retry-budget.md"}' in done.stdout


def test_new_calls_report_answers_live_and_names_the_call(tmp_path: Path) -> None:
    done = cli("replay", str(FAIL), "--agent", FIXED, "--new-calls", "report", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "network: ON: new calls go to the live tools (--new-calls)" in out
    assert "· 1 new ·" in out and "0 misses" in out
    assert "new calls (answered live, not written: --new-calls report):" in out
    assert '  read_file sha256:e65440dfad324368 {"path": "docs/retry-budget.md"}' in out
    assert "nearest: seq 6" in out  # why it is new: the path differs from the recorded one
    assert list(tmp_path.iterdir()) == [] and list(SAMPLES.glob("*.new-*")) == []


def test_new_calls_record_writes_them_to_a_new_cassette(tmp_path: Path) -> None:
    done = cli(
        "replay", str(FAIL), "--agent", FIXED, "--new-calls", "record", "--new-path", "new.jsonl",
        "--json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["clean"] and doc["new_calls"] == "record" and doc["new_cassette"] == "new.jsonl"
    assert doc["isolation"] == "none (new calls live)"
    assert doc["run"]["new_calls"] == 1 and doc["run"]["misses"] == 0
    report = doc["replay_report"]
    assert [c["outcome"] for c in report["calls"]].count("new") == 1
    assert report["new_calls"][0]["args"] == {"path": "docs/retry-budget.md"}
    (new,) = load(tmp_path / "new.jsonl")
    assert new.tool == "read_file" and "10%" in new.response["text"]
    # the new file is never replaced: a second run to the same path is refused up front
    again = cli(
        "replay", str(FAIL), "--agent", FIXED, "--new-calls", "record", "--new-path", "new.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    assert again.returncode == 2 and "exists" in again.stderr


def test_new_calls_record_default_file_is_beside_the_cassette(tmp_path: Path) -> None:
    base = tmp_path / "fail.jsonl"
    base.write_bytes(FAIL.read_bytes())
    done = cli("replay", str(base), "--agent", FIXED, "--new-calls", "record")
    assert done.returncode == 0, done.stderr
    (made,) = tmp_path.glob("fail.new-*Z.jsonl")
    assert f"recorded to {made}" in done.stdout
    assert [e.tool for e in load(made)] == ["read_file"]


def test_new_path_without_record_is_bad_usage() -> None:
    done = cli("replay", str(FAIL), "--agent", FIXED, "--new-path", "x.jsonl")
    assert done.returncode == 2 and "--new-calls record only" in done.stderr
    done = cli(
        "replay", str(FAIL), "--agent", FIXED, "--new-calls", "report", "--isolation", "guard"
    )
    assert done.returncode == 2 and "--isolation does not apply" in done.stderr


def test_a_fixture_overlays_the_base_cassette(tmp_path: Path) -> None:
    # the stale document's answer, pinned to the current policy: the failing run passes
    pin = write_cassette(
        tmp_path / "read_file-pin.jsonl",
        entry(
            1, "read_file", {"path": "docs/retry-budget-2022.md"},
            response={"bytes": 10, "text": "Retry budget: at most 10% more requests."},
        ),
    )  # fmt: skip
    done = cli("replay", str(FAIL), "--agent", agent_cmd(script=DEMO_AGENT), "--fixture", str(pin))
    assert done.returncode == 0, done.stdout
    assert "network: off (" in done.stdout  # a fixture keeps the replay offline
    assert "· 1 pinned ·" in done.stdout
    assert f"pinned  1 call answered by {pin}" in done.stdout
    assert "unused entries: seq 6" in done.stdout  # the base's own answer, never served
    # the one-entry fixture alone misses on the agent's first other call
    alone = cli("replay", str(pin), "--agent", agent_cmd(script=DEMO_AGENT))
    assert alone.returncode == 1 and "search_docs" in alone.stdout


def test_strict_fails_a_replay_that_left_recordings_unused(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    done = cli("replay", str(cassette), "--agent", agent_cmd("pass"))
    assert done.returncode == 0 and "unused entries: seq 3, 4" in done.stdout
    strict = cli("replay", str(cassette), "--agent", agent_cmd("pass"), "--strict", "--json")
    assert strict.returncode == 1
    doc = json.loads(strict.stdout)
    assert doc["strict"] and not doc["clean"] and doc["passed"]
    assert doc["run"]["replay"] == "unclean" and "unused (--strict)" in doc["run"]["replay_why"]
    text = cli("replay", str(cassette), "--agent", agent_cmd("pass"), "--strict")
    assert "unused entries: seq 3, 4 (--strict: the replay fails)" in text.stdout


def test_the_result_shows_the_agents_last_stdout_and_stderr() -> None:
    done = cli("replay", str(FAIL), "--agent", agent_cmd(script=DEMO_AGENT))
    assert done.returncode == 1
    out = done.stdout
    assert "agent stdout (last lines):" in out
    # the demo agent prints its (stale) answer: where it says why it failed
    assert "  Retry budget: retry each failed request up to 10 times" in out
    doc = json.loads(
        cli("replay", str(FAIL), "--agent", agent_cmd(script=DEMO_AGENT), "--json").stdout
    )
    assert "up to 10 times" in doc["run"]["stdout_tail"]
    assert doc["run"]["stderr_tail"] == ""


def test_record_with_a_fixture_holds_its_answer_live(tmp_path: Path) -> None:
    pin = write_cassette(
        tmp_path / "pin.jsonl",
        # the flaky answer held fixed: the policy read answers the stale text
        entry(
            1, "read_file", {"path": "docs/retry-budget.md"}, response={"text": "up to 10 times"}
        ),
    )
    done = cli(
        "record", "--agent", agent_cmd(script=DEMO_AGENT), "-o", "r.jsonl", "--fixture", str(pin),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1  # the pinned answer holds no 10%: the agent fails
    recorded = load(tmp_path / "r.jsonl")
    texts = [e.response.get("text") for e in recorded if e.tool == "read_file"]
    assert texts[0] == "up to 10 times" and texts[1].startswith("Back off")  # the rest live
    # it ran to its end: the whole recording, not "kept ... before it failed"
    assert f"recorded {len(recorded)} entries; the agent exited 1" in done.stdout
    assert "kept:" not in done.stdout
    assert "agent stdout (last lines):" in done.stdout and "up to 10 times Back" in done.stdout


def test_gate_with_a_fixture_holds_the_flaky_answer_in_every_run(tmp_path: Path) -> None:
    # fork: a random draw picks which fetch to call; pinning fetch y to "good" makes
    # every path pass: the gate is deterministic
    cassette = loop_cassette(tmp_path)
    pin = write_cassette(
        tmp_path / "fetch-pin.jsonl", entry(1, "fetch", {"path": "y"}, response={"text": "good"})
    )
    done = cli(
        "gate", str(cassette), "--agent", agent_cmd("fork"), "--runs", "6", "-j", "2",
        "--fixture", str(pin), "--json",
    )  # fmt: skip
    doc = json.loads(done.stdout)
    assert done.returncode == 0, doc["verdict"]
    assert doc["verdict"] == "deterministic" and doc["passed"] == 6
    for r in doc["results"]:  # y is answered by the pin: its recording is never served
        assert 4 in r["unused_seqs"]
        assert r["pinned"] == (1 if 3 in r["unused_seqs"] else 0)  # drew y, not x


GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake


def test_the_output_tail_is_masked(tmp_path: Path) -> None:
    agent = tmp_path / "leaky_agent.py"
    agent.write_text(
        "import sys\n"
        "from cassette_tui.core import wrap_dispatcher\n"
        "dispatch = wrap_dispatcher(lambda tool, args: None)\n"
        "dispatch('lookup', {'key': 'a'})\n"
        f"print('token in use: {GHP}')\n"
        f"print('auth failed for {GHP}', file=sys.stderr)\n"
        "sys.exit(1)\n",
        encoding="utf-8",
    )
    cassette = loop_cassette(tmp_path)
    command = agent_cmd(script=agent)
    text = cli("replay", str(cassette), "--agent", command)
    assert text.returncode == 1
    assert "agent stdout (last lines):" in text.stdout and "token in use: " in text.stdout
    assert "agent stderr (last lines):" in text.stdout and "auth failed for " in text.stdout
    doc = cli("replay", str(cassette), "--agent", command, "--json")
    record = cli("record", "--agent", command, "-o", "r.jsonl", cwd=tmp_path)
    for out in (text.stdout, doc.stdout, record.stdout):
        assert GHP not in out
    assert "token in use: " in json.loads(doc.stdout)["run"]["stdout_tail"]


def test_an_unreadable_fixture_is_bad_input_before_any_agent_runs(tmp_path: Path) -> None:
    # a fixture saved as UTF-16 (PowerShell) made every run's agent crash on it: exit 1,
    # the reason only in the agent's traceback
    pin = tmp_path / "pin.jsonl"
    pin.write_bytes(FAIL.read_text(encoding="utf-8").encode("utf-16"))
    for command in (["replay", str(FAIL)], ["gate", str(FAIL), "--runs", "1"]):
        done = cli(*command, "--agent", agent_cmd(script=DEMO_AGENT), "--fixture", str(pin))
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"{pin}:1: the file is UTF-16 LE" in done.stderr
        assert "Traceback" not in done.stdout + done.stderr
        assert "result" not in done.stdout  # no agent ran
