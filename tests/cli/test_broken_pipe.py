"""A reader that stops early (``| head -1``, a closed pipe): every command ends quietly
with status 141 (128 + SIGPIPE, what a shell reports for ``yes | head -1``'s ``yes``),
never 1, which means "findings", and never a traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from support.paths import SAMPLES, SCRIPT

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason=f"no console script: {SCRIPT}")

EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def _runs_file(tmp_path: Path) -> Path:
    """A tau-bench results file of 300 runs: ``import --list`` prints a line per run."""
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}
        ],
    }
    answer = {"role": "tool", "tool_call_id": "c", "name": "t", "content": "{}"}
    runs = [
        {"task_id": task, "trial": 0, "reward": 1.0, "info": {}, "traj": [call, answer]}
        for task in range(300)
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(runs))
    return path


def _into_closed_pipe(*args: str | Path) -> subprocess.CompletedProcess[bytes]:
    """Run the command with stdout on a pipe whose reading end is already closed."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [SCRIPT, *args],
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("import", "RUNS", "--list"), id="import-list"),
        pytest.param(("import", "RUNS", "--list", "--json"), id="import-list-json"),
        pytest.param(("diff", SAMPLES / "fail.jsonl", SAMPLES / "fix.jsonl"), id="diff"),
        pytest.param(("diff", SAMPLES / "fail.jsonl", SAMPLES / "fix.jsonl", "--json"), id="json"),
        pytest.param(("check", SAMPLES / "fail.jsonl"), id="check"),
        pytest.param(("--help",), id="help"),
    ],
)
def test_a_closed_pipe_ends_the_command_quietly_with_141(tmp_path: Path, args: tuple) -> None:
    runs = _runs_file(tmp_path)
    argv = [runs if a == "RUNS" else a for a in args]
    proc = _into_closed_pipe(*argv)
    assert proc.returncode == EXIT_BROKEN_PIPE, proc.stderr.decode()
    assert proc.stderr == b""


def test_head_1_reads_the_first_line_and_the_status_is_never_findings(tmp_path: Path) -> None:
    """The README's ``| head -1``: whether the pipe closes before the last write or after
    depends on timing, so the status is 0 or 141, and never 1."""
    runs = _runs_file(tmp_path)
    proc = subprocess.run(
        [
            "bash",
            "-c",
            'set -o pipefail; "$0" import "$1" --list | head -1; echo "status=$?"',
            SCRIPT,
            runs,
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )
    first, status = proc.stdout.decode().splitlines()
    assert first.strip()
    assert status in ("status=0", f"status={EXIT_BROKEN_PIPE}")
    assert b"Traceback" not in proc.stderr and b"BrokenPipe" not in proc.stderr
