"""Hostile input found by breakage testing: every case here once gave a traceback, a wrong
answer or a garbled terminal. Inputs are generated into ``tmp_path``; nothing is committed.

The CLI cases run the real command in a subprocess (``python -m cassette_tui.tui.cli``), so
the bytes written to the terminal are the ones a user gets.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import CassetteFormatError, load, save
from cassette_tui.core.format.cassette import dump_line
from cassette_tui.core.format.digest import digest
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.replay.recorder import Recorder
from cassette_tui.core.scan.lint import binary_text_reason, lint


def run_cli(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", *map(str, args)],
        check=False,
        capture_output=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "80", **(env or {})},
    )


def line(seq: int, tool: str = "search_docs", args: object = None, **fields: object) -> str:
    record: dict[str, object] = {"seq": seq, "tool": tool, "args": args or {"q": "x"}}
    record.update(fields)
    if "response" not in record and "error" not in record:
        record["response"] = {"hits": 1}
    return json.dumps(record)


def write(path: Path, *lines: str, end: str = "\n") -> Path:
    path.write_text("".join(item + end for item in lines), encoding="utf-8")
    return path


def assert_clean_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err


# -- deeply nested JSON: RecursionError -----------------------------------------------------

DEEP = "[" * 5000 + "]" * 5000


def test_deeply_nested_args_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"seq":1,"tool":"t","args":' + DEEP + ',"response":1}\n')
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    assert info.value.line == 1
    assert "nested too deeply" in str(info.value)
    assert_clean_error(run_cli("check", path), "deep.jsonl:1", "nested too deeply")


def test_deeply_nested_response_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text(line(1) + "\n" + '{"seq":2,"tool":"t","args":{},"response":' + DEEP + "}\n")
    cassette = load(path)  # responses are parsed on demand
    with pytest.raises(CassetteFormatError) as info:
        cassette[1]
    assert (info.value.line, info.value.field) == (2, "response")
    assert_clean_error(run_cli("check", path), "deep.jsonl:2", "'response'", "nested too deeply")
    good = write(tmp_path / "good.jsonl", line(1), line(2, "t", {}))
    assert_clean_error(run_cli("diff", path, good), "deep.jsonl:2", "nested too deeply")


# -- a bad response after the first line: traceback in diff ------------------------------


@pytest.mark.parametrize("as_json", [False, True])
def test_diff_with_a_bad_response_later_exits_2(tmp_path: Path, as_json: bool) -> None:
    good = write(tmp_path / "good.jsonl", line(1), line(2, args={"q": "y"}))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + '{"seq":3,"tool":"t","args":{},"response":[1,}\n')
    proc = run_cli("diff", bad, good, *(["--json"] if as_json else []))
    assert_clean_error(proc, "bad.jsonl:3", "'response'")


# -- the first line's response is broken: "not a known format" ----------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'{"seq":1,"tool":"t","args":{},"response":[1,2,}\n', "not valid JSON"),
        (b'{"seq":1,"tool":"t","args":{},"response":"\xff"}\n', "not valid UTF-8"),
    ],
)
def test_bad_response_on_the_first_line_names_line_and_field(
    tmp_path: Path, raw: bytes, reason: str
) -> None:
    path = tmp_path / "one.jsonl"
    path.write_bytes(raw)
    proc = run_cli("check", path)
    assert_clean_error(proc, "one.jsonl:1", "field 'response'", reason)
    assert "not a known format" not in proc.stderr.decode()


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (b'"tool":"t\xff"', "tool"),
        (b'"tool":"t","args":{"k\xff":1}', "args"),
        (b'"tool":"t","note":"caf\xe9"', "note"),
    ],
)
@pytest.mark.parametrize("first", [True, False])
def test_bad_utf8_names_its_field(tmp_path: Path, bad: bytes, field: str, first: bool) -> None:
    """Invalid UTF-8 anywhere in a line names the top-level field it is in, as every
    other bad line does (a byte offset alone left the user to find it)."""
    line = b'{"seq":2,' + bad + (b"" if b'"args"' in bad else b',"args":{}') + b',"response":1}\n'
    head = b"" if first else b'{"seq":1,"tool":"t","args":{},"response":1}\n'
    path = tmp_path / "bad.jsonl"
    path.write_bytes(head + line)
    proc = run_cli("check", path)
    assert_clean_error(
        proc, f"bad.jsonl:{1 if first else 2}", f"field '{field}'", "not valid UTF-8"
    )


@pytest.mark.parametrize("field", ["args", "response", "extra"])
def test_too_deep_names_its_field(tmp_path: Path, field: str) -> None:
    """JSON nested past the 600 levels names the top-level field it is in (a key that
    looks like JSON, quotes and brackets in strings, do not mislead the count)."""
    deep = "[" * 700 + "]" * 700
    fields = {"args": '{"k\\"[{": "]]"}', "response": '{"a": "[[{"}', "extra": "1"}
    fields[field] = deep
    body = ", ".join(f'"{name}": {value}' for name, value in fields.items())
    path = tmp_path / "deep.jsonl"
    path.write_text('{"seq": 1, "tool": "t", ' + body + "}\n")
    proc = run_cli("check", path)
    assert_clean_error(proc, "deep.jsonl:1", f"field '{field}'", "nested too deeply")


# -- args_digest after the response was never read: no stale_digest ----------------------


def test_stored_digest_after_the_response_is_checked(tmp_path: Path) -> None:
    # key order as json.dumps(record) without sort_keys writes it: response, then args_digest
    stale = '{"seq": 1, "tool": "t", "args": {"q": "x"}, "response": {"ok": 1}, '
    stale += '"args_digest": "sha256:0000000000000000"}'
    path = write(tmp_path / "stale.jsonl", stale)
    cassette = load(path)
    assert cassette.stored_digest(0) == "sha256:0000000000000000"
    assert [f.kind for f in lint(cassette)] == ["stale_digest"]
    proc = run_cli("check", path, "--json")
    assert proc.returncode == 1
    assert [f["kind"] for f in json.loads(proc.stdout)["findings"]] == ["stale_digest"]


# -- a UTF-8 byte order mark ---------------------------------------------------------------


def test_a_utf8_bom_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    body = (line(1) + "\n" + line(2, args={"q": "y"}) + "\n").encode()
    path.write_bytes(b"\xef\xbb\xbf" + body)
    cassette = load(path)
    assert [e.seq for e in cassette] == [1, 2]
    assert cassette.raw_line(0) == body.splitlines(keepends=True)[0]
    proc = run_cli("check", path)
    assert proc.returncode == 0, proc.stderr
    assert b"2 entries" in proc.stdout


# -- lone surrogates ("\ud800" is valid JSON text) ----------------------------------------

SURROGATE_LINE = '{"seq":1,"tool":"t\\ud800","args":{"p":"/tmp/x\\ud800"},"response":"\\udfff"}'


def test_save_and_record_round_trip_lone_surrogates(tmp_path: Path) -> None:
    src = write(tmp_path / "s.jsonl", SURROGATE_LINE)
    cassette = load(src)
    out = save(cassette, tmp_path / "out.jsonl")
    again = load(out)
    assert again[0].args == {"p": "/tmp/x\ud800"}
    assert again[0].response == "\udfff"
    assert again.digest(0) == cassette.digest(0) == digest({"p": "/tmp/x\ud800"})
    assert dump_line(Entry(1, "t", {"name": "\udcff.txt"}, "ok")).decode("utf-8")

    with Recorder(tmp_path / "rec.jsonl") as rec:
        dispatch = rec.wrap(lambda tool, args: {"listing": ["bad-\udcff.txt"]})
        dispatch("ls", {"dir": "\udcff"})
    entry = load(tmp_path / "rec.jsonl")[0]
    assert entry.args == {"dir": "\udcff"}
    assert entry.response == {"listing": ["bad-\udcff.txt"]}


@pytest.mark.parametrize("as_json", [False, True])
def test_cli_prints_lone_surrogates_without_crashing(tmp_path: Path, as_json: bool) -> None:
    a = write(tmp_path / "a.jsonl", SURROGATE_LINE)
    b = write(tmp_path / "b.jsonl", SURROGATE_LINE.replace('x\\ud800"', 'y\\ud800"'))
    flag = ["--json"] if as_json else []
    for proc in (run_cli("check", a, *flag), run_cli("diff", a, b, *flag)):
        assert proc.returncode == 1, proc.stderr
        assert b"Traceback" not in proc.stderr
        text = proc.stdout.decode("utf-8")  # valid UTF-8
        if as_json:
            json.loads(text)
        assert "\\ud800" in text


# -- terminal control sequences in cassette text -------------------------------------------


def test_escape_sequences_never_reach_the_terminal(tmp_path: Path) -> None:
    tool = "[bold red]x[/]\x1b[2J\x1b]0;PWNED\x07"
    a = write(
        tmp_path / "a.jsonl",
        json.dumps({"seq": 1, "tool": tool, "args": {"\x1b[31m": 1}, "response": "a"}),
    )
    b = write(
        tmp_path / "b.jsonl",
        json.dumps({"seq": 1, "tool": tool, "args": {"\x1b[31m": 2}, "response": "b"}),
    )
    for env in ({}, {"NO_COLOR": "1"}, {"COLUMNS": "40"}, {"COLUMNS": "200", "LC_ALL": "C"}):
        proc = run_cli("diff", a, b, env=env)
        assert proc.returncode == 1, proc.stderr
        out = proc.stdout.decode("utf-8")
        assert "\x1b" not in out and "\x07" not in out
        assert "[bold red]x[/]" in out  # markup shown literally
    c = write(
        tmp_path / "c.jsonl",
        json.dumps({"seq": 1, "tool": tool, "args": {"p": "/tmp/x"}, "response": 1}),
    )
    proc = run_cli("check", c)
    assert proc.returncode == 1
    out = proc.stdout.decode("utf-8")
    assert "\x1b" not in out and "[bold red]x[/]" in out


# -- lint speed: the control-character count ran per character in Python ---------------


def test_binary_text_reason_is_unchanged() -> None:
    # (its speed is a benchmark matter, not a test's: no timing here)
    assert binary_text_reason("plain text\twith\nlayout\r\f") is None
    assert binary_text_reason("\x01\x02\x03ab") == "3 control characters in 5"
    assert binary_text_reason("\x85" * 2 + "a" * 10) == "2 control characters in 12"
    assert binary_text_reason("\x7f" + "a" * 20) is None  # 1 in 21: under 10%
    assert binary_text_reason("lorem ipsum " * 100_000) is None


# -- numbers past Python's int_max_str_digits: json.loads raises a plain ValueError -------


@pytest.mark.parametrize("command", ["check", "diff"])
def test_a_5000_digit_number_names_file_line_and_field(tmp_path: Path, command: str) -> None:
    bad = write(tmp_path / "big.jsonl", line(1), line(2, response="RESPONSE"))
    bad.write_text(bad.read_text().replace('"RESPONSE"', "1" * 5000), encoding="utf-8")
    args = ("check", bad) if command == "check" else ("diff", bad, bad)
    proc = run_cli(*args)
    assert_clean_error(proc, "big.jsonl:2", "'response'", "4300 digits")


LONG = "7" * 5000


@pytest.mark.parametrize("where", [1, 2])
@pytest.mark.parametrize("field", ["args", "response", "recorded_at", "seq"])
def test_a_too_long_integer_names_its_field_on_any_line(
    tmp_path: Path, field: str, where: int
) -> None:
    # the field that holds it, on line 1 as on line 2 (line 1 once said "not a known
    # format", line 2 "field 'response'" whatever the field), and the format's rule, not
    # Python's advice (sys.set_int_max_str_digits)
    fields = {"args": {"n": "LONG"}, "response": {"n": "LONG"}, "recorded_at": "LONG"}
    lines = [line(1), line(2)]
    if field == "seq":
        lines[where - 1] = line(1).replace('"seq": 1', '"seq": "LONG"')
    else:
        lines[where - 1] = line(where, **{field: fields[field]})
    bad = write(tmp_path / "big.jsonl", *(text.replace('"LONG"', LONG) for text in lines))
    proc = run_cli("check", bad)
    assert_clean_error(
        proc, f"big.jsonl:{where}", f"field '{field}'", "5000 digits", "at most 4300 digits"
    )
    assert "set_int_max_str_digits" not in proc.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize("where", [1, 2])
def test_diff_names_a_too_long_integer_in_args(tmp_path: Path, where: int) -> None:
    lines = [line(1), line(2)]
    lines[where - 1] = line(where, args={"n": "LONG"}).replace('"LONG"', LONG)
    bad = write(tmp_path / "big.jsonl", *lines)
    good = write(tmp_path / "good.jsonl", line(1), line(2))
    proc = run_cli("diff", good, bad)
    assert_clean_error(proc, f"big.jsonl:{where}", "field 'args'", "at most 4300 digits")
