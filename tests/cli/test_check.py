"""``cassette-tui check`` via click's CliRunner and via the installed console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.keys.config import load_rules
from cassette_tui.core.scan.lint import lint
from cassette_tui.tui.commands.check import check
from click.testing import CliRunner
from support.cases import storm_file
from support.factory import entry, write_cassette

CLEAN = '{"seq":1,"tool":"search_docs","args":{"q":"retry budget"},"response":{"hits":3}}\n'
FINDINGS = (
    '{"seq":1,"tool":"get","args":{"id":"6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11"},'
    '"args_digest":"sha256:0000000000000000","response":"[bold]not markup[/bold]"}\n'
    '{"seq":2,"tool":"poll","args":{"j":1},"response":"running"}\n'
    '{"seq":3,"tool":"poll","args":{"j":1},"response":"done"}\n'
    '{"seq":3,"tool":"dl","args":{},"response":{"text":"\\u001f\\b\\u0000garbled"}}\n'
)


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.delenv("CASSETTE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)  # no project config around
    return CliRunner()


def write(tmp_path: Path, text: str, name: str = "c.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_clean_cassette_exits_0(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(check, [str(write(tmp_path, CLEAN))])
    assert result.exit_code == 0, result.output
    assert "1 entry, no findings" in " ".join(result.output.split())


def test_findings_exit_1_with_json_fields(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, FINDINGS)
    result = runner.invoke(check, [str(path), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["file"] == str(path) and data["entries"] == 4
    assert "dropped_lines" not in data
    for f in data["findings"]:
        assert {"kind", "seq", "path", "message"} <= f.keys()
    kinds = [(f["kind"], f["seq"]) for f in data["findings"]]
    assert ("stale_digest", 1) in kinds
    assert ("volatile_arg", 1) in kinds
    assert ("repeated_key", 2) in kinds
    assert ("seq_order", 3) in kinds
    assert ("binary_as_text", 3) in kinds
    (rep,) = [f for f in data["findings"] if f["kind"] == "repeated_key"]
    assert rep["seqs"] == [2, 3]


def test_human_output_prints_cassette_text_literally(runner: CliRunner, tmp_path: Path) -> None:
    line = '{"seq":1,"tool":"[bold]agent[/bold]","args":{"p":"/home/ana/x.txt"},"response":1}\n'
    path = write(tmp_path, line)
    result = runner.invoke(check, [str(path)], env={"NO_COLOR": "1"})
    assert result.exit_code == 1
    assert "[bold]agent[/bold] arg $.p" in result.output
    assert "\x1b[" not in result.output


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "no such file"),
        ('{"seq":1,"tool":"t","args":{}}\n', "field 'response'"),
        ('{"seq":"1","tool":"t","args":{},"response":1}\n', "field 'seq'"),
        ("not json\n", "not"),
    ],
)
def test_unreadable_input_exits_2_naming_the_problem(
    runner: CliRunner, tmp_path: Path, content: str | None, reason: str
) -> None:
    path = tmp_path / "bad.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = runner.invoke(check, [str(path)])
    assert result.exit_code == 2
    assert reason in result.output
    assert str(path) in result.output


def test_lenient_reports_dropped_lines(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_bytes(CLEAN.encode() + b'{"seq":2,"tool":"t","ar')
    assert runner.invoke(check, [str(path)]).exit_code == 2
    result = runner.invoke(check, [str(path), "--lenient", "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["entries"] == 1 and data["dropped_lines"] == 1
    assert data["findings"][0]["kind"] == "dropped_lines"
    assert "cut mid-write" in data["findings"][0]["message"]


def test_config_rules_silence_the_volatile_arg(runner: CliRunner, tmp_path: Path) -> None:
    path = write(
        tmp_path, '{"seq":1,"tool":"t","args":{"at":"2024-05-15T15:00:03Z"},"response":1}\n'
    )
    assert runner.invoke(check, [str(path)]).exit_code == 1
    cfg = write(tmp_path, '[normalize]\npresets = ["timestamp"]\n', "rules.toml")
    result = runner.invoke(check, [str(path), "--config", str(cfg)])
    assert result.exit_code == 0, result.output


def console_script() -> str:
    script = Path(sys.executable).parent / "cassette-tui"
    found = str(script) if script.exists() else shutil.which("cassette-tui")
    if not found:
        pytest.skip("the cassette-tui console script is not installed")
    return found


def test_installed_console_script_exit_codes(tmp_path: Path) -> None:
    exe = console_script()
    env = {k: v for k, v in os.environ.items() if k != "CASSETTE_CONFIG"}
    clean, dirty = write(tmp_path, CLEAN, "clean.jsonl"), write(tmp_path, FINDINGS, "dirty.jsonl")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [exe, "check", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            check=False,
        )

    assert run(str(clean)).returncode == 0
    dirty_run = run(str(dirty), "--json")
    assert dirty_run.returncode == 1
    assert json.loads(dirty_run.stdout)["entries"] == 4
    missing = run(str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2
    assert "no such file" in missing.stderr


# -- the user's rules against the data ------------------------------------------------------------
def test_check_reports_over_normalization_and_rules_matching_nothing(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "search", {"q": "refund", "n": 1}, response={"top": "a"}),
        entry(2, "search", {"q": "shipping", "n": 1}, response={"top": "b"}),
        entry(3, "search", {"q": "x", "n": 5}, response={"top": "c"}),
        entry(4, "search", {"q": "x", "n": 6}, response={"top": "c"}),
    )
    config = tmp_path / "cassette.toml"
    config.write_text('[normalize]\ndrop = ["q", "n", "serch:id"]\n', encoding="utf-8")
    rules = load_rules(config)
    kinds = {(f.kind, f.seqs) for f in lint(load(path, rules=rules))}
    assert ("over_normalization", (1, 2, 3, 4)) in kinds
    assert not any(k == "repeated_key" for k, _ in kinds)
    unused = [f for f in lint(load(path, rules=rules)) if f.kind == "unused_rule"]
    assert [f.evidence["rule"] for f in unused] == ["drop serch:id"]
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "check", "--config", str(config), str(path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "over_normalization" in done.stdout and "unused_rule" in done.stdout


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


def test_check_reads_the_storm_as_a_retry_storm(tmp_path: Path) -> None:
    path = storm_file(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "check", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "repeated_key" in done.stdout and "retry storm" in done.stdout
    assert "distinct_errors" not in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "check", str(path), "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    kinds = [f["kind"] for f in json.loads(done.stdout)["findings"]]
    assert kinds == ["repeated_key"]
