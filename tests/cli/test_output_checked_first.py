"""record, mcp record and the app's R check that the new file can be written before
anything runs: in a read-only folder (a real read-only bind mount, even for root) they
refuse at once, exit 2, naming the folder and why; the agent never starts."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.loop import DEMO_AGENT, agent_cmd
from support.paths import ROOT, SAMPLES, SCRIPT
from support.readonly import read_only, read_only_problem


@pytest.fixture
def ro(tmp_path: Path) -> Path:
    problem = read_only_problem()
    if problem:
        pytest.skip(f"cannot make a read-only folder: {problem}")
    folder = tmp_path / "ro"
    folder.mkdir()
    return folder


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env["NO_COLOR"] = "1"
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120, check=False)  # fmt: skip


def marker_agent(marker: Path) -> str:
    """An agent that leaves ``marker`` when it starts, then runs the demo agent."""
    code = f"open({str(marker)!r}, 'w').close()"
    return shlex.join([sys.executable, "-c", code])


@pytest.mark.parametrize("out", ["ro/new.jsonl", "ro/sub/new.jsonl"])
def test_record_into_a_read_only_folder_refuses_before_the_agent_runs(
    ro: Path, tmp_path: Path, out: str
) -> None:
    marker = tmp_path / "agent-started"
    done = run(read_only(ro, [str(SCRIPT), "record", "--agent", marker_agent(marker), "-o", out]),
               tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"cassette-tui record: {ro}: cannot create ")
    assert "Read-only file system" in done.stderr and "Traceback" not in done.stderr
    assert not marker.exists() and list(ro.iterdir()) == []
    # the same command into a writable folder runs the agent (the check refuses only then)
    done = run([str(SCRIPT), "record", "--agent", agent_cmd(script=DEMO_AGENT), "-o", "ok.jsonl"],
               tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not [p for p in tmp_path.iterdir() if ".write-check" in p.name]  # the probe goes


def test_mcp_record_into_a_read_only_folder_refuses_before_the_server_starts(
    ro: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "server-started"
    server = shlex.split(marker_agent(marker))
    done = run(read_only(ro, [str(SCRIPT), "mcp", "record", "-o", "ro/x.jsonl", "--", *server]),
               tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"{ro}: cannot create x.jsonl in this folder: Read-only file system" in done.stderr
    assert "Traceback" not in done.stderr
    assert not marker.exists() and list(ro.iterdir()) == []


def test_R_in_the_app_says_so_before_asking_to_run(ro: Path, tmp_path: Path) -> None:
    for name in ("fail.jsonl", "fix.jsonl"):
        shutil.copy(SAMPLES / name, ro / name)
    marker = tmp_path / "agent-started"
    script = ROOT / "tests" / "support" / "rerecord_screen.py"
    argv = [sys.executable, str(script), str(ro / "fail.jsonl"), str(ro / "fix.jsonl"),
            marker_agent(marker)]  # fmt: skip
    done = run(read_only(ro, argv), tmp_path)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["state"] == "failed" and shown["workers"] == 0
    text = shown["text"]
    assert "Re-record A: not started" in text and "Read-only file system" in text
    assert "nothing ran" in text and "enter/y: run" not in text
    assert not marker.exists() and sorted(p.name for p in ro.iterdir()) == [
        "fail.jsonl", "fix.jsonl",
    ]  # fmt: skip
