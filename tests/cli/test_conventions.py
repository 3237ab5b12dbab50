"""Command-line conventions (issue 9): many files in one ``check``, output that is safe on a
terminal, ASCII locales, ``--help`` that lists the marks the output uses, one way of
counting rows."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.importers.sources import open_cassette
from support.factory import entry, write_cassette
from support.paths import SAMPLES, SCRIPT
from support.terminal import run_in_terminal

#: What must never reach a terminal raw: OSC 52 (write the clipboard), clear screen, a
#: C1 CSI, bidi overrides and isolates, the Arabic letter mark, a tag character.
HOSTILE = "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x9b31m\u202e\u2066\u061c\U000e0041"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u061c", "\U000e0041")


def cli(*args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", *map(str, args)],
        check=False,
        capture_output=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", **(env or {})},
        cwd=cwd,
    )


# -- check: many files, folders and globs in one process ------------------------------------


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    folder = tmp_path / "runs"
    (folder / "deep").mkdir(parents=True)
    write_cassette(folder / "clean.jsonl", entry(1))
    write_cassette(folder / "deep" / "repeat.jsonl", entry(1), entry(2))
    write_cassette(folder / "deep" / "bad.jsonl", '{"seq": 1, "tool": "t", "args": {}}')
    (folder / "notes.txt").write_text("not a cassette\n")
    return folder


def test_check_takes_a_folder_and_prints_one_summary(runs: Path) -> None:
    proc = cli("check", runs)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 2, (out, err)  # one unreadable file among them
    assert f"{runs / 'clean.jsonl'}: 1 entry, no findings" in out
    assert f"{runs / 'deep' / 'repeat.jsonl'}: 2 entries, 1 finding" in out
    assert "bad.jsonl:1: field 'response'" in err and str(runs / "deep" / "bad.jsonl") in err
    assert "notes.txt" not in out + err  # a folder contributes its *.jsonl files
    assert out.splitlines()[-1] == (
        "checked 3 files: 1 clean, 1 with findings (1 finding), 1 unreadable"
    )


def test_check_takes_globs_and_files_and_json_is_a_list(runs: Path) -> None:
    proc = cli("check", "--json", f"{runs}/**/*.jsonl", runs / "clean.jsonl")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert isinstance(doc, list)
    assert [Path(d["file"]).name for d in doc] == ["clean.jsonl", "bad.jsonl", "repeat.jsonl"]
    by_name = {Path(d["file"]).name: d for d in doc}
    assert by_name["clean.jsonl"] == {
        "file": str(runs / "clean.jsonl"),
        "entries": 1,
        "findings": [],
    }
    assert [f["kind"] for f in by_name["repeat.jsonl"]["findings"]] == ["repeated_key"]
    assert set(by_name["bad.jsonl"]) == {"file", "error"}
    assert "bad.jsonl:1" in by_name["bad.jsonl"]["error"]


def test_check_json_of_one_file_keeps_the_object_shape(runs: Path) -> None:
    proc = cli("check", "--json", runs / "deep" / "repeat.jsonl")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["file"] == str(runs / "deep" / "repeat.jsonl") and doc["entries"] == 2
    # a glob is a list even when it matches one file: the shape follows the command line
    proc = cli("check", "--json", f"{runs}/deep/rep*.jsonl")
    assert isinstance(json.loads(proc.stdout), list)


def test_check_exit_status_over_many_files(runs: Path) -> None:
    assert cli("check", runs / "clean.jsonl", runs / "clean.jsonl").returncode == 0
    assert cli("check", runs / "clean.jsonl", runs / "deep" / "repeat.jsonl").returncode == 1
    proc = cli("check", f"{runs}/*.nothing")
    assert proc.returncode == 2
    assert f"{runs}/*.nothing: no file matches this pattern" in proc.stderr.decode()


def test_check_summary_counts_add_up_when_an_argument_names_no_file(runs: Path) -> None:
    # a glob that matched nothing and a folder with no *.jsonl are no file: counted apart
    (runs / "empty").mkdir()
    proc = cli("check", runs / "clean.jsonl", runs / "deep" / "bad.jsonl", f"{runs}/*.nothing",
               runs / "empty")  # fmt: skip
    assert proc.returncode == 2
    assert proc.stdout.decode().splitlines()[-1] == (
        "checked 2 files: 1 clean, 0 with findings, 1 unreadable; 2 arguments named no file"
    )


def test_check_shows_progress_on_a_terminal_only(runs: Path) -> None:
    files = [runs / "clean.jsonl", runs / "deep" / "repeat.jsonl"]
    piped = cli("check", *files)
    assert b"\x1b" not in piped.stderr and piped.stderr == b""
    status, screen = run_in_terminal([SCRIPT, "check", *files], env={"TERM": "xterm"})
    assert status == 1
    assert "checked 2 files" in screen
    # the bar hides the cursor while it runs (Rich's live display), then gives it back
    assert "\x1b[?25l" in screen and "\x1b[?25h" in screen


# -- nothing from a file reaches the terminal raw --------------------------------------------


def tau_results(path: Path, task_id: str) -> Path:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "lookup" + HOSTILE, "arguments": json.dumps({"q": HOSTILE})},
    }
    traj = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "lookup", "content": HOSTILE},
    ]
    run = {"task_id": task_id, "trial": 0, "reward": 1.0, "info": {}, "traj": traj}
    path.write_text(json.dumps([run, {**run, "trial": 1}]), encoding="utf-8")
    return path


def assert_no_raw_controls(text: str) -> None:
    for char in RAW:
        assert char not in text, f"{char!r} written raw"


def test_import_list_and_messages_escape_ids_and_file_names(tmp_path: Path) -> None:
    src = tau_results(tmp_path / f"r{HOSTILE}.json", "t" + HOSTILE)
    proc = cli("import", src, "--list")
    assert proc.returncode == 0, proc.stderr
    assert_no_raw_controls(proc.stdout.decode())
    assert "␛]52;c;" in proc.stdout.decode()  # shown, as a visible stand-in
    proc = cli("import", src, "-o", tmp_path / f"out{HOSTILE}")
    assert proc.returncode == 0, proc.stderr
    assert_no_raw_controls(proc.stdout.decode())
    proc = cli("import", src, "-o", tmp_path / f"out{HOSTILE}")  # exists: an error
    assert proc.returncode == 2
    assert_no_raw_controls(proc.stderr.decode())
    assert "exist" in proc.stderr.decode()


def test_check_and_diff_escape_cassette_text_and_names(tmp_path: Path) -> None:
    a = write_cassette(tmp_path / f"a{HOSTILE}.jsonl", entry(1, "t" + HOSTILE, {"k": HOSTILE}))
    b = write_cassette(tmp_path / "b.jsonl", entry(1, "t" + HOSTILE, {"k": "other"}))
    for args in (("check", a), ("diff", a, b), ("diff", b, a, "--align", "key")):
        proc = cli(*args)
        assert proc.returncode in (0, 1), proc.stderr
        assert_no_raw_controls(proc.stdout.decode() + proc.stderr.decode())
    bad = tmp_path / f"bad{HOSTILE}.jsonl"
    bad.write_text('{"seq": 1}\n')
    for args in (("check", bad), ("diff", bad, b), ("import", bad, "--list")):
        proc = cli(*args)
        assert proc.returncode == 2
        assert_no_raw_controls(proc.stderr.decode())
        assert "bad␛]52;c;" in proc.stderr.decode()


def strings(doc: object) -> list[str]:
    """Every string (keys too) in a parsed JSON document."""
    found: list[str] = []
    stack = [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def test_json_escapes_controls_and_keeps_the_strings(tmp_path: Path) -> None:
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "t" + HOSTILE, {"k": HOSTILE}),
        entry(2, "t" + HOSTILE, {"k": HOSTILE}),  # a repeated key: a finding naming the tool
    )
    b = write_cassette(tmp_path / "b.jsonl", entry(1, "t" + HOSTILE, {"k": "é"}))
    src = tau_results(tmp_path / "r.json", "t" + HOSTILE)
    for args in (
        ("diff", a, b, "--json"),
        ("check", a, "--json"),
        ("import", src, "--list", "--json"),
    ):
        proc = cli(*args)
        text = proc.stdout.decode("utf-8")
        assert_no_raw_controls(text)
        assert "\\u001b]52;c;" in text and "\\u202e" in text and "\\u061c" in text
        assert "\\udb40\\udc41" in text  # U+E0041 as JSON writes it (a surrogate pair)
        assert any(HOSTILE in s for s in strings(json.loads(text)))  # the same string
    proc = cli("diff", a, b, "--json")
    assert '"é"' in proc.stdout.decode("utf-8")  # other text stays readable


# -- ASCII locales ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "env",
    [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}],
)
def test_an_ascii_output_gets_ascii_marks_and_no_crash(env: dict[str, str], tmp_path: Path) -> None:
    fail, fix = SAMPLES / "fail.jsonl", SAMPLES / "fix.jsonl"
    named = write_cassette(tmp_path / "café·run.jsonl", entry(1, "tööl"), entry(2, "tööl"))
    for args in (("diff", fail, fix), ("diff", fix, fail, "--align", "key"), ("check", named)):
        proc = cli(*args, env=env)
        assert proc.returncode in (0, 1), proc.stderr
        assert proc.stdout.isascii() and proc.stderr.isascii()
        assert b"Traceback" not in proc.stderr
    # by seq the sample has other-call rows (auto aligns it by key, where it has none)
    out = cli("diff", fail, fix, "--align", "seq", env=env).stdout.decode()
    assert "x 2 other call" in out  # × written as x
    # the name's non-ASCII characters as escapes (which ones depends on the locale's decoding)
    assert "caf\\" in cli("check", named, env=env).stdout.decode()
    help_text = cli("diff", "--help", env=env).stdout.decode()
    assert "* args drift" in help_text and "x other call" in help_text


# -- --help says what the output's marks mean ----------------------------------------------------


def test_diff_help_lists_the_marks_the_output_uses() -> None:
    help_text = cli("diff", "--help").stdout.decode()
    # by seq the sample's rows include other calls (auto aligns it by key: none there)
    out = cli("diff", SAMPLES / "fail.jsonl", SAMPLES / "fix.jsonl", "--align", "seq")
    out = out.stdout.decode()
    marks = re.search(r"Row marks: (.*?)\n\s+Row flags", help_text, re.DOTALL)
    assert marks, help_text
    listed = dict(
        re.findall(
            r"(\S) (same|response drift|args drift|other call|only A|only B)", marks.group(1)
        )
    )
    assert listed == {
        "=": "same",
        "~": "response drift",
        "≠": "args drift",
        "×": "other call",
        "<": "only A",
        ">": "only B",
    }
    for row in out.splitlines():
        if re.match(r"^\S\s+\d+\s+", row):
            assert row[0] in listed, row
    assert "× 2 other call" in out


# -- rows are counted the same way in text and JSON --------------------------------------------


@pytest.mark.parametrize("align", ["seq", "key"])
def test_json_row_numbers_match_the_text_output(align: str) -> None:
    fail, fix = SAMPLES / "fail.jsonl", SAMPLES / "fix.jsonl"
    doc = json.loads(cli("diff", fail, fix, "--json", "--align", align).stdout)
    text = cli("diff", fail, fix, "--align", align).stdout.decode()
    shown = {}
    for row in text.splitlines():
        m = re.match(r"^\S\s+(\d+)\s+(\d+|-)\s+(\d+|-)\s", row)
        if m:
            shown[int(m.group(1))] = (m.group(2), m.group(3))
    assert shown
    for row in doc["rows"]:
        seqs = tuple("-" if s is None else str(s) for s in (row["a_seq"], row["b_seq"]))
        assert shown[row["row"]] == seqs
    first = doc["first_divergence"]
    assert f"first divergence: row {first['row']} " in text
    result = diff_cassettes(open_cassette(fail), open_cassette(fix), align=align)
    assert first["row"] == result.first_divergence + 1
