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
from support.cases import SUM_A, SUM_B, noise_and_real_pair
from support.factory import entry, write_cassette
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


def test_diff_cli_tolerance_and_numbers_line(tmp_path: Path) -> None:
    pa = write_cassette(tmp_path / "a.jsonl", entry(1, "m", {"r": 1}, response={"score": 0.91}))
    pb = write_cassette(
        tmp_path / "b.jsonl", entry(1, "m", {"r": 1}, response={"score": 0.9100004})
    )

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cassette_tui.tui.cli", "diff", *extra, str(pa), str(pb)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    strict = run()
    assert strict.returncode == 1 and "numbers: 1 differ, largest |Δ| 4e-07" in strict.stdout
    assert run("--tolerance", "1e-6").returncode == 0


def test_diff_cli_exit_0_for_reordered_calls(real: Path) -> None:
    folder = real / "bugcases" / "29_parallel_calls_reordered"
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", "--json",
         folder / "a.jsonl", folder / "b.jsonl"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    doc = json.loads(done.stdout)
    assert doc["first_divergence"] is None
    assert {r["status"] for r in doc["rows"]} == {"moved"}


def test_case_31_long_value_shows_where_it_differs(real: Path) -> None:
    folder = real / "bugcases" / "31_long_value_differs_late"
    for columns in ("60", "80", "200"):
        done = subprocess.run(
            [sys.executable, "-m", "cassette_tui.tui.cli", "diff",
             folder / "a.jsonl", folder / "b.jsonl"],
            capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "COLUMNS": columns},
        )  # fmt: skip
        flat = " ".join(done.stdout.split())
        assert "at character 192:" in flat
        assert "24 hours" in flat and "48 hours" in flat


def test_diff_text_shows_the_two_calls(tmp_path: Path) -> None:
    pa = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "get_user", {"id": "u1"}),
        entry(2, "search_direct", {"origin": "ATL", "dest": "ORD"}, response=[{"f": 1}]),
    )
    pb = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "get_user", {"id": "u1"}),
        entry(2, "search_onestop", {"origin": "ATL", "dest": "PHL"}, response=[[{"f": 2}]]),
    )
    out = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", "--align", "seq", str(pa), str(pb)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[1:4] == ["2", "2", "2"])
    assert "other call" in lines[at]
    assert lines[at + 1].split() == ["A", "search_direct", 'origin="ATL"', 'dest="ORD"']
    assert lines[at + 2].split() == ["B", "search_onestop", 'origin="ATL"', 'dest="PHL"']
    assert "~ tool $" not in out.stdout and "args $.dest" not in out.stdout


def test_diff_cli_defaults_to_auto_and_align_forces(tmp_path: Path) -> None:
    pa = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "get", {"id": "x"}),
        entry(2, "get", {"id": "y"}),
        entry(3, "pay", {"id": "y"}),
    )
    pb = write_cassette(
        tmp_path / "b.jsonl", entry(1, "get", {"id": "y"}), entry(2, "pay", {"id": "y"})
    )

    def run(*extra: str) -> dict:
        out = subprocess.run(
            [sys.executable, "-m", "cassette_tui.tui.cli", "diff", "--json", *extra, str(pa), str(pb)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert out.returncode == 1, out.stderr
        return json.loads(out.stdout)

    auto = run()
    assert auto["align"] == "key" and "A makes 1 extra call" in auto["align_reason"]
    assert auto["first_divergence"]["status"] == "only_a"
    forced = run("--align", "seq")
    assert forced["align"] == "seq" and forced["align_reason"] is None
    assert forced["first_divergence"]["status"] == "args_drift"


def test_diff_cli_names_the_real_change_and_shows_the_noise(tmp_path: Path) -> None:
    pa = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "m", {"r": 1}, response={"score": SUM_A}),
        entry(2, "s", {"q": 1}, response={"top": "a"}),
    )
    pb = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "m", {"r": 1}, response={"score": SUM_B}),
        entry(2, "s", {"q": 1}, response={"top": "b"}),
    )
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", str(pa), str(pb)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "first divergence: row 2" in done.stdout  # the real change, not the noise
    assert "numbers: 1 differ" in done.stdout  # the noise row stays shown with its drift


def test_diff_cli_raises_no_stale_response_for_noise(tmp_path: Path) -> None:
    pa, pb = noise_and_real_pair(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", str(pa), str(pb), "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    stale = {
        f["evidence"]["tool"]: f["seqs"] for f in doc["findings"] if f["kind"] == "stale_response"
    }
    assert stale == {"search": {"a": [2], "b": [2]}, "embed": {"a": [4], "b": [4]}}
    assert doc["rows"][0]["numbers"]["count"] == 2  # the noise row, shown with its numbers
    text = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", str(pa), str(pb)],
        capture_output=True, text=True, timeout=120, check=False,
    ).stdout  # fmt: skip
    assert "first divergence: row 2" in text and "numbers: 2 differ" in text


def test_diff_command_on_path_specs(real: Path) -> None:
    tau = real / "tau-bench" / "gpt-4o-airline.json"
    r = CliRunner().invoke(
        cli, ["diff", f"{tau}#task=31,trial=3", f"{tau}#task=31,trial=2", "--json"]
    )
    assert r.exit_code == 1, r.output  # findings
    out = json.loads(r.output)
    assert out["first_divergence"]["a_seq"] == out["first_divergence"]["b_seq"] == 7
    assert (out["a"]["entries"], out["b"]["entries"]) == (7, 7)
    assert out["a"]["file"].endswith("#task=31,trial=3")
