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
