"""Repeats of one key (issue 10, audit G1): a retry storm is one failure over and over; calls
that failed in different ways (Inspect's ``log_tool_call_error``) are ``distinct_errors``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import lint, load
from support.factory import entry, write_cassette


def _kinds(tmp_path: Path, *outcomes: dict) -> tuple[str, str]:
    entries = [entry(i, "bash", {"cmd": "x"}, **o) for i, o in enumerate(outcomes, 1)]
    (finding,) = lint(load(write_cassette(tmp_path / "c.jsonl", *entries)))
    return finding.kind, finding.message


def _err(message: str) -> dict:
    return {"error": {"type": "ToolError", "message": message}}


def test_inspect_log_tool_call_error_is_not_a_retry_storm(real: Path) -> None:
    path = real / "inspect_ai" / "tests" / "log" / "test_eval_log" / "log_tool_call_error.json"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "check", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # still a finding: the key repeats
    assert "retry storm or a loop" not in done.stdout
    assert "repeated_key" not in done.stdout
    assert "distinct_errors" in done.stdout
    # 11 calls, 10 error types (seq 1 and 3 share the parsing error)
    assert "11 of 11 recordings failed, in 10 different ways" in done.stdout


def test_the_same_error_every_time_is_a_retry_storm(tmp_path: Path) -> None:
    kind, message = _kinds(tmp_path, *[_err("429 Too Many Requests")] * 4)
    assert kind == "repeated_key" and "retry storm" in message


def test_mostly_different_errors_are_distinct_errors(tmp_path: Path) -> None:
    errors = ["timeout", "permission denied", "timeout", "no such file", "disk full"]
    kind, message = _kinds(tmp_path, *map(_err, errors))
    assert kind == "distinct_errors"
    assert "5 of 5 recordings failed, in 4 different ways" in message


def test_a_storm_with_one_odd_error_is_still_a_storm(tmp_path: Path) -> None:
    kind, _ = _kinds(tmp_path, *map(_err, ["timeout"] * 4 + ["500 Internal Server Error"]))
    assert kind == "repeated_key"


def test_http_error_responses_count_as_failures(tmp_path: Path) -> None:
    statuses = [{"response": {"status": s, "body": "x"}} for s in (500, 502, 503, 404)]
    kind, message = _kinds(tmp_path, *statuses)
    assert kind == "distinct_errors" and "4 of 4 recordings failed" in message
    same = [{"response": {"status": 429, "body": "slow down"}}] * 3
    assert _kinds(tmp_path, *same)[0] == "repeated_key"


def test_different_answers_that_did_not_fail_stay_a_repeat(tmp_path: Path) -> None:
    answers = [{"response": {"now": t}} for t in (1, 2, 3)]
    assert _kinds(tmp_path, *answers)[0] == "repeated_key"
