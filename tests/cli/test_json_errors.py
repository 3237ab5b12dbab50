"""``--json`` always prints a JSON document on stdout, also when the input cannot be read
(exit status 2 kept): ``check FILE --json`` gives ``{"file", "error"}``, ``diff A B --json``
gives ``{"error", "file"}``; the one line on stderr stays."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.paths import SAMPLES, SCRIPT

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason=f"no console script: {SCRIPT}")

BAD_MIDDLE = (
    '{"seq":1,"tool":"t","args":{},"response":1}\n'
    '{"seq":2,"tool":"t","args":{},"response":2}\n'
    '{"seq":3,"tool":"t","args":{}, "response": }\n'
)


def _run(*args: str | Path) -> tuple[int, object, str]:
    proc = subprocess.run(
        [SCRIPT, *args], stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False
    )
    return proc.returncode, json.loads(proc.stdout), proc.stderr.decode()


@pytest.fixture(params=["bad_middle", "missing", "first_line"])
def bad(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / "bad.jsonl"
    if request.param == "bad_middle":
        path.write_text(BAD_MIDDLE)
    elif request.param == "first_line":
        path.write_text('{"seq": 1, "tool": "t", "args": {}}\n')
    return path


def test_check_one_unreadable_file_prints_file_and_error(bad: Path) -> None:
    status, doc, err = _run("check", bad, "--json")
    assert status == 2
    assert isinstance(doc, dict) and set(doc) == {"file", "error"}
    assert doc["file"] == str(bad)
    assert doc["error"].startswith(str(bad)) and doc["error"] in err


@pytest.mark.parametrize("side", ["a", "b"])
def test_diff_with_an_unreadable_input_prints_error_and_file(bad: Path, side: str) -> None:
    good = SAMPLES / "fix.jsonl"
    status, doc, err = _run("diff", *((bad, good) if side == "a" else (good, bad)), "--json")
    assert status == 2
    assert isinstance(doc, dict) and set(doc) == {"error", "file"}
    assert doc["file"] == str(bad)
    assert doc["error"].startswith(str(bad)) and doc["error"] in err


def test_diff_with_a_bad_config_names_the_config(tmp_path: Path) -> None:
    config = tmp_path / "cassette.toml"
    config.write_text("[normalize\n")
    status, doc, _ = _run(
        "diff", SAMPLES / "fail.jsonl", SAMPLES / "fix.jsonl", "--json", "--config", config
    )
    assert status == 2
    assert isinstance(doc, dict) and set(doc) == {"error", "file"}
    assert str(config) in doc["error"]


def _run_raw(*args: str | Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [SCRIPT, *args], stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=False
    )


def test_check_glob_with_no_match_is_an_entry_of_the_list(tmp_path: Path) -> None:
    pattern = str(tmp_path / "nomatch" / "*.jsonl")
    status, doc, err = _run("check", pattern, "--json")
    assert status == 2
    assert doc == [{"file": pattern, "error": f"{pattern}: no file matches this pattern"}]
    assert "no file matches this pattern" in err


def test_check_list_keeps_the_command_line_order(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    pattern = str(tmp_path / "nomatch-*.jsonl")
    good = SAMPLES / "fix.jsonl"
    status, doc, _ = _run("check", pattern, good, empty, "--json")
    assert status == 2
    assert isinstance(doc, list)
    assert [d["file"] for d in doc] == [pattern, str(good), str(empty)]
    assert "error" in doc[0] and "findings" in doc[1] and "no *.jsonl file" in doc[2]["error"]


def _loop_commands(missing: Path, tmp_path: Path) -> list[list[str | Path]]:
    agent = "true"  # never started: the cassette is read first
    return [
        ["replay", missing, "--agent", agent],
        ["gate", missing, "--agent", agent, "--runs", "1"],
        ["pin", missing, "--seq", "1", "--out", tmp_path / "fixtures"],
        ["record", "-o", tmp_path / "new.jsonl", "--against", missing, "--agent", agent],
        ["redact", missing, "-o", tmp_path / "redacted.jsonl"],
        ["import", missing, "-o", tmp_path / "imported.jsonl"],
        ["import", "--list", missing],
    ]


@pytest.mark.parametrize("index", range(7))
def test_every_json_command_prints_a_document_for_a_missing_input(
    tmp_path: Path, index: int
) -> None:
    missing = tmp_path / "nope.jsonl"
    args = _loop_commands(missing, tmp_path)[index]
    status, doc, err = _run(*args, "--json")
    assert status == 2, err
    assert doc == {"error": f"{missing}: no such file", "file": str(missing)}
    assert f"{missing}: no such file" in err


def test_a_failure_without_a_file_has_a_null_file(tmp_path: Path) -> None:
    # no agent configured anywhere (an empty folder, an empty config): not a file's fault
    config = tmp_path / "cassette.toml"
    config.write_text("")
    done = subprocess.run(
        [SCRIPT, "replay", SAMPLES / "fix.jsonl", "--json", "--config", config],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    doc = json.loads(done.stdout)
    assert doc["file"] is None and "no agent command" in doc["error"]


def test_without_json_stdout_stays_empty(tmp_path: Path) -> None:
    done = _run_raw("replay", tmp_path / "nope.jsonl", "--agent", "true")
    assert done.returncode == 2 and done.stdout == b""


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400", "-1"])
def test_diff_refuses_a_tolerance_that_is_not_a_finite_number_at_least_0(value: str) -> None:
    done = _run_raw("diff", SAMPLES / "fail.jsonl", SAMPLES / "fix.jsonl", f"--tolerance={value}")
    assert done.returncode == 2
    assert b"Invalid value for '--tolerance'" in done.stderr
    assert done.stdout == b""


def test_diff_takes_a_finite_tolerance() -> None:
    done = _run_raw("diff", SAMPLES / "fail.jsonl", SAMPLES / "fix.jsonl", "--tolerance=0.5")
    assert done.returncode == 1, done.stderr
