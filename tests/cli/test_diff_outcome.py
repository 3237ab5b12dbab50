"""``cassette-tui diff`` shows how each run ended (issue 10: the words around the calls):
the outcome under each file in the text output, ``a.outcome``/``b.outcome`` in ``--json``,
and a warning naming file, line and field for a bad ``run_outcome``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.paths import SCRIPT

ENV = {"NO_COLOR": "1", "COLUMNS": "80", "TERM": "dumb", "PATH": "/usr/bin:/bin"}


def diff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "diff", *args],
        check=False,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )


def test_task_2_step_limit_is_in_the_text_and_the_json(real: Path) -> None:
    tau = real / "tau-bench" / "gpt-4o-airline.json"
    a, b = f"{tau}#task=2,trial=1", f"{tau}#task=2,trial=2"
    text = diff(a, b)
    assert text.returncode == 1, text.stderr
    lines = text.stdout.splitlines()
    assert lines[1] == "   outcome: ✗ reward 0 · step limit reached (30 steps)"
    assert lines[3] == "   outcome: ✓ reward 1"
    assert lines[4].startswith("   final answer: \"I'm glad I could assist you")
    doc = json.loads(diff(a, b, "--json").stdout)
    assert doc["a"]["outcome"]["limit_reached"] is True
    assert doc["a"]["outcome"]["steps"] == 30
    assert doc["a"]["outcome"]["final_answer"] is None
    assert doc["b"]["outcome"]["passed"] is True and doc["b"]["outcome"]["limit_reached"] is False
    assert doc["a"]["entries"] == 27 and doc["a"]["file"] == a  # the documented fields stay


def test_a_bad_outcome_is_a_warning_and_changes_nothing_else(tmp_path: Path) -> None:
    good = {"seq": 1, "tool": "t", "args": {"q": 1}, "response": {"r": 1}}
    bad = {**good, "run_outcome": {"reward": "high", "limit_reached": True, "steps": 3}}
    pa, pb = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    pa.write_text(json.dumps(bad) + "\n")
    pb.write_text(json.dumps(good) + "\n")
    out = diff(str(pa), str(pb))
    assert out.returncode == 0, out.stderr  # the runs make the same calls: same
    assert out.stderr == (
        f"cassette-tui diff: warning: {pa}:1: field run_outcome.reward: expected a number, "
        "got text 'high'; ignored (context only)\n"
    )
    assert "   outcome: step limit reached (3 steps)" in out.stdout.splitlines()
    doc = json.loads(diff(str(pa), str(pb), "--json").stdout)
    assert doc["a"]["outcome"]["reward"] is None and doc["b"]["outcome"] is None


def _tau(tmp_path: Path) -> Path:
    call = {"id": "c0", "type": "function", "function": {"name": "get", "arguments": "{}"}}
    cut = [
        {"role": "user", "content": "help"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c0", "content": "{}"},
    ]
    talk = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."}]
    runs = [
        {"task_id": 1, "trial": 0, "reward": 0.0, "info": {"reward_info": None}, "traj": cut},
        {"task_id": 1, "trial": 1, "reward": 1.0, "info": {"reward_info": {}}, "traj": talk},
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(runs))
    return path


def test_import_says_the_limit_and_keeps_every_outcome(tmp_path: Path) -> None:
    from cassette_tui.tui.cli import cli
    from click.testing import CliRunner

    src = _tau(tmp_path)
    one = tmp_path / "cut.jsonl"
    r = CliRunner().invoke(cli, ["import", f"{src}#task=1,trial=0", "-o", str(one)])
    assert r.exit_code == 0, r.output
    assert r.output.rstrip().endswith(
        "reward 0.0 (fail), step limit reached (1 step); results paired with their calls by id"
    )
    # the written file alone still says so, to diff and to --json
    assert '"limit_reached":true' in one.read_text()
    r = CliRunner().invoke(cli, ["import", str(src), "-o", str(tmp_path / "all"), "--json"])
    assert r.exit_code == 0, r.output
    written = json.loads(r.output)["written"]
    # the run with no call has an empty file: its outcome is kept in the index
    assert [w["entries"] for w in written] == [1, 0]
    assert written[1]["outcome"]["final_answer"] == "Hello."
    index = json.loads((tmp_path / "all" / "runs.json").read_text())
    assert index["runs"][0]["outcome"]["limit_reached"] is True
