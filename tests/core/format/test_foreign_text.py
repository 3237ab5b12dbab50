"""A file in another encoding or with foreign lines is named by its cause (bugcases 36:
git merge-conflict markers, 37: Windows encodings), in the engine and the CLI."""

from __future__ import annotations

import codecs
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import CassetteFormatError, load
from cassette_tui.core.format.foreign_text import (
    encoding_problem,
    foreign_line,
    is_conflict_marker,
    legacy_encoding_hint,
)
from cassette_tui.core.importers.detect import sniff
from hypothesis import given
from hypothesis import strategies as st
from support.factory import entry, write_cassette

LINES = [
    {"seq": 1, "tool": "lookup", "args": {"id": 1}, "response": {"name": "Zoë Martín"}},
    {"seq": 2, "tool": "lookup", "args": {"id": 2}, "response": {"name": "Ana"}},
]


def _jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", *args],
        capture_output=True,
        text=True,
        env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize(
    ("encoding", "name"),
    [("utf-16", "UTF-16 LE"), ("utf-32", "UTF-32 LE"), ("utf-16-be", None)],
)
def test_utf16_and_utf32_are_named_with_the_way_to_mend_them(
    tmp_path: Path, encoding: str, name: str | None
) -> None:
    p = tmp_path / "run.jsonl"
    data = _jsonl(LINES).encode(encoding)
    if encoding == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
        name = "UTF-16 BE"
    p.write_bytes(data)
    with pytest.raises(CassetteFormatError) as err:
        load(p)
    assert err.value.line == 1
    assert f"the file is {name} (byte order mark" in err.value.reason
    assert "save it again as UTF-8" in err.value.reason
    with pytest.raises(CassetteFormatError, match=name):
        sniff(p)  # detection names the encoding instead of "not a known format"


def test_utf16_without_a_byte_order_mark_is_named(tmp_path: Path) -> None:
    p = tmp_path / "run.jsonl"
    p.write_bytes(_jsonl(LINES).encode("utf-16-le"))
    with pytest.raises(CassetteFormatError, match="UTF-16 LE \\(no byte order mark"):
        load(p)


@pytest.mark.parametrize("digest_last", [False, True])
def test_windows_1252_is_named_whatever_the_key_order(tmp_path: Path, digest_last: bool) -> None:
    records = [dict(r) for r in LINES]
    if digest_last:  # args_digest after the response: the header cut cannot be used
        for r in records:
            r["args_digest"] = "sha256:0000000000000000"
    p = tmp_path / "run.jsonl"
    p.write_bytes(_jsonl(records).encode("cp1252"))
    assert sniff(p) == "cassette"
    with pytest.raises(CassetteFormatError) as err:
        [e.response for e in load(p)]  # the response is read (and checked) when used
    assert err.value.line == 1
    assert "not valid UTF-8 at byte" in err.value.reason
    assert "(0xEB, 'ë' in Windows-1252)" in err.value.reason
    assert "iconv -f CP1252 -t UTF-8" in err.value.reason


def test_crlf_reads_as_lf(tmp_path: Path) -> None:
    lf, crlf = tmp_path / "lf.jsonl", tmp_path / "crlf.jsonl"
    lf.write_text(_jsonl(LINES), encoding="utf-8")
    crlf.write_bytes(_jsonl(LINES).replace("\n", "\r\n").encode())
    assert [e.response for e in load(crlf)] == [e.response for e in load(lf)]


def test_binary_garbage_gets_no_windows_1252_hint() -> None:
    assert legacy_encoding_hint(b'{"seq": 1, "x": "\xff\xfe\x00\x81"}\n') == ""
    assert legacy_encoding_hint(b'{"seq": 1}\n') == ""  # UTF-8 already


def test_conflict_markers_name_both_versions_and_lenient_refuses(tmp_path: Path) -> None:
    one = json.dumps({"seq": 1, "tool": "policy", "args": {}, "response": "ok"})
    ours = json.dumps({"seq": 2, "tool": "refund", "args": {}, "response": "30 days"})
    theirs = json.dumps({"seq": 2, "tool": "refund", "args": {}, "response": "14 days"})
    three = json.dumps({"seq": 3, "tool": "done", "args": {}, "response": None})
    p = tmp_path / "conflicted.jsonl"
    p.write_text(
        "\n".join([one, "<<<<<<< HEAD", ours, "=======", theirs, ">>>>>>> rerecord", three]) + "\n"
    )
    for lenient in (False, True):
        with pytest.raises(CassetteFormatError) as err:
            load(p, lenient=lenient)
        assert err.value.line == 2
        assert err.value.reason.startswith(
            "git merge conflict marker (`<<<<<<< HEAD`): the file holds two versions of "
            "seq 2 (lines 3 and 5); resolve it (keep one side, or re-record)"
        )
        assert ".gitattributes" in err.value.reason


def test_a_diff3_conflict_with_different_seqs_lists_each_side(tmp_path: Path) -> None:
    a = json.dumps({"seq": 2, "tool": "t", "args": {}, "response": 1})
    b = json.dumps({"seq": 3, "tool": "t", "args": {}, "response": 2})
    p = tmp_path / "c.jsonl"
    p.write_text("\n".join(["<<<<<<< ours", a, "||||||| base", "=======", b, ">>>>>>> theirs"]))
    with pytest.raises(CassetteFormatError) as err:
        load(p)
    assert "side 1: 1 line(s), seq 2; side 2: 0 line(s), no entry; side 3: 1 line(s), seq 3" in (
        err.value.reason
    )


def test_a_conflict_on_the_first_line_is_named_by_every_command(tmp_path: Path) -> None:
    # the whole file conflicted: `<<<<<<< HEAD` is line 1, so format detection saw no
    # cassette and said "not a known format" instead of naming the conflict
    ours = json.dumps({"seq": 1, "tool": "refund", "args": {}, "response": "30 days"})
    theirs = json.dumps({"seq": 1, "tool": "refund", "args": {}, "response": "14 days"})
    p = tmp_path / "conflicted.jsonl"
    p.write_text("\n".join(["<<<<<<< HEAD", ours, "=======", theirs, ">>>>>>> rerecord"]) + "\n")
    assert sniff(p) == "cassette"
    other = tmp_path / "other.jsonl"
    write_cassette(other, entry(1, "refund", {}, response="30 days"))
    for args in (["check", str(p)], ["diff", str(p), str(other)]):
        done = _cli(*args)
        assert done.returncode == 2, done.stderr
        assert f"{p}:1: git merge conflict marker (`<<<<<<< HEAD`)" in done.stderr
        assert "not a known format" not in done.stderr


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("version https://git-lfs.github.com/spec/v1", "a Git LFS pointer"),
        ("diff --git a/run.jsonl b/run.jsonl", "a diff"),
        ("<!DOCTYPE html>", "an HTML page"),
    ],
)
def test_foreign_lines_say_what_they_are(tmp_path: Path, line: str, what: str) -> None:
    p = tmp_path / "run.jsonl"
    write_cassette(p, entry(1))
    p.write_text(p.read_text() + line + "\nmore\n")
    with pytest.raises(CassetteFormatError) as err:
        load(p)
    assert err.value.line == 2
    assert err.value.reason.startswith(what)


@given(st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=4))
def test_json_lines_are_never_taken_for_markers_or_other_encodings(record: dict) -> None:
    raw = (json.dumps(record, ensure_ascii=False) + "\n").encode()
    assert not is_conflict_marker(raw)
    assert foreign_line(raw) is None
    assert encoding_problem(raw[:64]) is None
    assert legacy_encoding_hint(raw) == ""


@pytest.mark.parametrize(
    "raw",
    [b"<<<<<<< HEAD\n", b"<<<<<<<\n", b"=======\r\n", b">>>>>>> branch\n", b"||||||| base\n"],
)
def test_marker_lines(raw: bytes) -> None:
    assert is_conflict_marker(raw)


@pytest.mark.parametrize("raw", [b"========\n", b"<<<<<<<<\n", b"======= x\n", b"<<<<<<<x\n"])
def test_near_markers_are_not_markers(raw: bytes) -> None:
    assert not is_conflict_marker(raw)


def test_bugcase_36_conflict_markers(real: Path) -> None:
    case = real / "bugcases" / "36_git_merge_conflict_markers"
    for args in (["check"], ["check", "--lenient"]):
        out = _cli(*args, str(case / "conflicted.jsonl"))
        assert out.returncode == 2
        assert "conflicted.jsonl:2: git merge conflict marker (`<<<<<<< HEAD`)" in out.stderr
        assert "two versions of seq 2 (lines 3 and 5)" in out.stderr
    out = _cli("diff", str(case / "conflicted.jsonl"), str(case / "resolved.jsonl"))
    assert out.returncode == 2
    assert "git merge conflict marker" in out.stderr


def test_bugcase_37_windows_encodings(real: Path) -> None:
    case = real / "bugcases" / "37_windows_file_encodings"
    assert _cli("check", str(case / "run.crlf.jsonl")).returncode == 0
    same = _cli("diff", str(case / "run.lf.jsonl"), str(case / "run.crlf.jsonl"))
    assert same.returncode == 0 and "the runs are the same" in same.stdout
    for args in (["check"], ["check", "--from", "cassette"]):
        out = _cli(*args, str(case / "run.utf16.jsonl"))
        assert out.returncode == 2
        assert "run.utf16.jsonl:1: the file is UTF-16 LE (byte order mark FF FE)" in out.stderr
        assert "not a known format" not in out.stderr
    for name in ("run.cp1252.jsonl", "run.cp1252.digest-last.jsonl"):
        for command in (["check"], ["diff", str(case / "run.lf.jsonl")]):
            out = _cli(*command, str(case / name))
            assert out.returncode == 2
            assert f"{name}:1: " in out.stderr
            assert "looks like Windows-1252 or Latin-1" in out.stderr
