"""``cassette-tui diff``: exit codes, --json schema, NO_COLOR, 80 columns, data as data."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.cli import cli
from click.testing import CliRunner
from support.paths import SCRIPT
from support.terminal import run_in_terminal

ENV = {"NO_COLOR": "1", "COLUMNS": "80", "TERM": "dumb"}


SGR = re.compile(r"\x1b\[([0-9;]*)m")


def colour_codes(text: str) -> list[str]:
    """The SGR parameters of ``text`` that set a colour (30-49, 90-107)."""
    found = []
    for params in SGR.findall(text):
        for p in params.split(";"):
            if p and (30 <= int(p) <= 49 or 90 <= int(p) <= 107):
                found.append(p)
    return found


def run(*args: str):
    return CliRunner().invoke(cli, ["diff", *map(str, args)], env=ENV)


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_same_runs_exit_0(samples) -> None:
    res = run(samples / "fail.jsonl", samples / "fail.jsonl")
    assert res.exit_code == 0, res.output
    assert "the runs are the same" in res.output


def test_different_runs_exit_1_with_summary_findings_and_rows(samples) -> None:
    res = run(samples / "fail.jsonl", samples / "fix.jsonl", "--align", "key")
    assert res.exit_code == 1, res.output
    out = res.output
    assert "aligned by key: 7 rows" in out
    assert "first divergence: row 2  A seq 2 / B seq -  search_docs  < only A" in out
    assert "stale_response" in out and "downstream_drift" in out and "-> " in out
    assert "~ response $.top" in out
    assert '"docs/retry-budget-2022.md" -> "docs/retry-budget.md"' in out


def test_output_fits_an_80_column_terminal_without_colour(samples) -> None:
    for align in ("seq", "key"):
        status, out = run_in_terminal(
            [SCRIPT, "diff", samples / "fail.jsonl", samples / "fix.jsonl", "--align", align],
            columns=80,
            env={"NO_COLOR": "1", "TERM": "xterm"},
        )
        assert status == 1, out
        assert not colour_codes(out)  # NO_COLOR: bold and dim at most, no colour
        plain = SGR.sub("", out)
        assert max(len(line) for line in plain.splitlines()) <= 80
        for mark in ("~", "<"):  # statuses carry a mark, not only a colour
            assert any(line.startswith(mark) for line in plain.splitlines())


def test_piped_output_is_never_hard_wrapped(samples) -> None:
    """Into a pipe, a finding's sentence stays on one line whatever COLUMNS says: the output
    does not depend on the terminal width the command runs in."""
    outputs = []
    for columns in ("40", "80", "300"):
        res = CliRunner().invoke(
            cli,
            ["diff", str(samples / "fail.jsonl"), str(samples / "fix.jsonl"), "--align", "key"],
            env={**ENV, "COLUMNS": columns},
        )
        assert res.exit_code == 1
        outputs.append(res.output)
    assert outputs[0] == outputs[1] == outputs[2]
    result = diff_cassettes(
        open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl"), align="key"
    )
    lines = outputs[0].splitlines()
    for finding in result.findings:
        assert "    " + finding.message in lines
        assert "    -> " + finding.action in lines


def test_json_schema(samples) -> None:
    res = run(samples / "fail.jsonl", samples / "fix.jsonl", "--json", "--align", "key")
    assert res.exit_code == 1
    doc = json.loads(res.output)
    assert doc["a"] == {"file": str(samples / "fail.jsonl"), "entries": 7, "outcome": None}
    assert doc["b"]["entries"] == 4 and doc["align"] == "key"
    assert doc["first_divergence"] == {
        "row": 2,
        "a_seq": 2,
        "b_seq": None,
        "status": "only_a",
        "tool": "search_docs",
    }
    statuses = {"same", "response_drift", "args_drift", "other_call", "only_a", "only_b"}
    for row in doc["rows"]:
        assert {"a_seq", "b_seq", "status", "tool", "drift"} <= set(row)
        assert row["status"] in statuses - {"same"}
        for item in row["drift"]:
            assert set(item) == {"path", "a", "b", "change", "part", "absent"}
    for f in doc["findings"]:
        assert {"kind", "seqs", "message", "action"} <= set(f)
    assert doc["findings"][0]["kind"] == "first_divergence"
    both = run(samples / "fail.jsonl", samples / "fix.jsonl", "--json", "--all", "--align", "key")
    assert len(json.loads(both.output)["rows"]) == 7


def test_same_runs_json_has_null_divergence(samples) -> None:
    doc = json.loads(run(samples / "fix.jsonl", samples / "fix.jsonl", "--json").output)
    assert doc["first_divergence"] is None and doc["rows"] == [] and doc["findings"] == []


def test_bad_input_exit_2_with_the_format_error(tmp_path, samples) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 1, "tool": "x", "args": {}, "response": 1}\n{"seq": "two"}\n')
    res = CliRunner().invoke(cli, ["diff", str(bad), str(samples / "fix.jsonl")], env=ENV)
    assert res.exit_code == 2
    assert f"{bad}:2" in res.stderr
    missing = run(tmp_path / "nope.jsonl", samples / "fix.jsonl")
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    assert run(samples / "fix.jsonl", samples / "fix.jsonl", "--align", "time").exit_code == 2


def test_markup_in_a_cassette_prints_literally(tmp_path) -> None:
    evil = "[bold red]boom[/] [link=http://x]y[/link] :smile:"
    a = write(
        tmp_path / "a.jsonl", [{"seq": 1, "tool": "t[b]", "args": {"q": evil}, "response": evil}]
    )
    b = write(
        tmp_path / "b.jsonl", [{"seq": 1, "tool": "t[b]", "args": {"q": "x"}, "response": "y"}]
    )
    res = run(a, b)
    assert res.exit_code == 1
    assert "t[b]" in res.output
    assert "[bold red]boom[/]" in res.output


def test_console_script_in_a_subprocess(samples) -> None:
    exe = shutil.which("cassette-tui", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the cassette-tui console script is not installed")
    env = {**os.environ, **ENV}
    proc = subprocess.run(
        [exe, "diff", str(samples / "fail.jsonl"), str(samples / "fix.jsonl"), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["first_divergence"]["a_seq"] == 2
    proc = subprocess.run(
        [exe, "diff", str(samples / "fix.jsonl"), str(samples / "fix.jsonl")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0


def test_diff_command_does_not_import_textual(samples) -> None:
    code = (
        "import sys; from click.testing import CliRunner; from cassette_tui.tui.cli import cli;"
        f"r = CliRunner().invoke(cli, ['diff', {str(samples / 'fail.jsonl')!r}, "
        f"{str(samples / 'fix.jsonl')!r}]); assert r.exit_code == 1, r.output;"
        "assert 'textual' not in sys.modules, 'textual imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
