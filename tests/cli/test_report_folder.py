"""CASSETTE_REPORT never creates folders (it made /tmp/x1/x2 and, on a typo,
/nonexistent): a missing folder is an error when the wrapper is created, naming the path;
a runs folder the loop removed is not made again by a late exit hook. Real agents as
subprocesses; the loop's replay and gate still get their reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.loop import DEMO_AGENT, agent_cmd
from support.mcp_session import record_cmd, replay_cmd
from support.paths import SAMPLES, SCRIPT


def agent_env(report: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env.update(CASSETTE_MODE="replay", CASSETTE_PATH=str(SAMPLES / "fix.jsonl"),
               CASSETTE_REPORT=str(report))  # fmt: skip
    return env


@pytest.mark.parametrize("missing", ["x1/x2/r.json", "x1/r.json"])
def test_a_missing_report_folder_is_an_error_at_wrapper_creation(
    tmp_path: Path, missing: str
) -> None:
    report = tmp_path / missing
    done = subprocess.run([sys.executable, str(DEMO_AGENT)], env=agent_env(report),
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 1
    assert "ReportPathError" in done.stderr
    assert (
        f"{report}: cannot write the report there: its folder {report.parent} does not exist"
        in (done.stderr)
    )
    assert list(tmp_path.iterdir()) == []  # no folder made, none left half made


def test_an_existing_folder_gets_the_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    done = subprocess.run([sys.executable, str(DEMO_AGENT)], env=agent_env(report),
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(report.read_text())["used"] == 4


def test_a_removed_folder_is_not_made_again_at_exit(tmp_path: Path) -> None:
    """The loop removes a temporary runs folder when its job ends; an agent process that
    outlived it must not make it again when it exits."""
    folder = tmp_path / "runs"
    folder.mkdir()
    report = folder / "r.json"
    code = (
        "import shutil, sys\n"
        "from cassette_tui.core import wrap_dispatcher\n"
        f"d = wrap_dispatcher(lambda t, a: 1, mode='replay', path={str(SAMPLES / 'fix.jsonl')!r})\n"
        f"shutil.rmtree({str(folder)!r})\n"  # the folder goes while the agent runs
        "d('read_file', {'path': 'docs/retry-budget.md'})\n"
    )
    env = agent_env(report)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not folder.exists()


def test_mcp_replay_refuses_a_report_in_a_missing_folder(tmp_path: Path) -> None:
    report = tmp_path / "no" / "r.json"
    done = subprocess.run(replay_cmd(SAMPLES / "fix.jsonl", "--report", str(report)),
                          input=b"", capture_output=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2
    assert f"its folder {report.parent} does not exist".encode() in done.stderr
    assert not (tmp_path / "no").exists()


def test_mcp_record_refuses_a_report_in_a_missing_folder(tmp_path: Path) -> None:
    report = tmp_path / "no" / "r.json"
    done = subprocess.run(record_cmd(tmp_path / "x.jsonl", [sys.executable, "-c", "pass"],
                                     "--report", str(report)),
                          input=b"", capture_output=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2 and b"does not exist" in done.stderr
    assert list(tmp_path.iterdir()) == []  # refused before anything was made


def test_the_loop_jobs_still_get_their_reports(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    for cmd in (["replay"], ["gate", "-n", "2"]):
        done = subprocess.run(
            [str(SCRIPT), *cmd, str(SAMPLES / "fix.jsonl"), "--agent", agent_cmd(script=DEMO_AGENT),
             "--json"],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        runs = [doc["run"]] if "run" in doc else doc["results"]
        assert all(r["status"] == "passed" and r["hits"] == 4 for r in runs)
