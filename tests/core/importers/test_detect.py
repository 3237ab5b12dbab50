"""Format detection from the content, forcing a format, and the error for unknown files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers import FORMATS, canonical_format
from cassette_tui.core.importers.detect import sniff
from cassette_tui.core.importers.sources import detect_format, open_cassette

CASSETTE_LINE = '{"seq":1,"tool":"search_docs","args":{"q":"retry budget"},"response":{"hits":3}}\n'


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_cassette_stays_the_lazy_load(tmp_path: Path) -> None:
    path = write(tmp_path, "run.json", CASSETTE_LINE * 3)  # the name does not matter
    assert sniff(path) == "cassette" and detect_format(path) == "cassette"
    c = open_cassette(path)
    assert isinstance(c, Cassette) and len(c) == 3
    assert c._entries is None  # file-backed: the index, not an in-memory import


def test_empty_file_is_an_empty_cassette(tmp_path: Path) -> None:
    assert len(open_cassette(write(tmp_path, "empty.jsonl", "\n\n"))) == 0


def test_bad_cassette_line_keeps_the_loader_error(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.jsonl", CASSETTE_LINE + '{"seq":2,"tool":"x"}\n')
    with pytest.raises(CassetteFormatError) as info:
        open_cassette(path)
    assert (info.value.line, info.value.field) == (2, "args")


def test_broken_first_line_names_line_and_formats_tried(tmp_path: Path) -> None:
    path = write(tmp_path, "cut.jsonl", '{"seq":1,"tool":"x","ar\n' + CASSETTE_LINE)
    with pytest.raises(CassetteFormatError) as info:
        open_cassette(path)
    assert info.value.line == 1
    assert "read as a cassette" in str(info.value) and "vcr" in str(info.value)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("a.txt", json.dumps([{"task_id": 1, "trial": 0, "reward": 1, "traj": []}]), "tau-bench"),
        ("b.txt", json.dumps([{"role": "user", "content": "hi"}]), "openai"),
        ("c.txt", json.dumps({"messages": [{"role": "user", "content": "hi"}]}), "openai"),
        (
            "d.txt",
            '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n',
            "openai",
        ),
        ("e.txt", json.dumps({"version": 2, "eval": {}, "samples": [{"messages": []}]}), "inspect"),
        ("f.txt", "interactions: []\nversion: 1\n", "vcr"),
        ("g.txt", json.dumps({"interactions": [], "version": 1}), "vcr"),
    ],
)
def test_detects_from_content(tmp_path: Path, name: str, text: str, expected: str) -> None:
    assert detect_format(write(tmp_path, name, text)) == expected


def test_unknown_file_lists_every_format_tried(tmp_path: Path) -> None:
    path = write(tmp_path, "notes.md", "# notes\n\nnothing to see\n")
    with pytest.raises(CassetteFormatError) as info:
        open_cassette(path)
    message = str(info.value)
    assert info.value.path == str(path)
    for fmt in FORMATS:
        assert fmt in message
    assert "interactions" in message and "--from" in message


def test_unknown_json_says_why_each_json_format_failed(tmp_path: Path) -> None:
    path = write(tmp_path, "x.json", json.dumps({"hello": "world"}))
    with pytest.raises(CassetteFormatError) as info:
        open_cassette(path)
    message = str(info.value)
    assert "tau-bench: not a JSON list of runs" in message
    assert "'messages'" in message and "'eval'" in message and "interactions" in message


def test_forced_format(tmp_path: Path) -> None:
    chat = write(tmp_path, "x.json", json.dumps([{"role": "user", "content": "hi"}]))
    with pytest.raises(CassetteFormatError, match="not a JSON list of runs|first item"):
        open_cassette(chat, fmt="tau-bench")
    assert len(open_cassette(f"{chat}#from=openai")) == 0
    with pytest.raises(CassetteFormatError, match="unknown format 'nope'"):
        open_cassette(chat, fmt="nope")
    cassette = write(tmp_path, "c.jsonl", CASSETTE_LINE)
    assert len(open_cassette(cassette, fmt="jsonl")) == 1


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(CassetteFormatError, match="no such file"):
        open_cassette(tmp_path / "nope.json")
    with pytest.raises(CassetteFormatError, match="is a directory"):
        open_cassette(tmp_path)


def test_aliases() -> None:
    assert canonical_format("TAU_BENCH") == "tau-bench"
    assert canonical_format("inspect_ai") == "inspect"
    with pytest.raises(ValueError, match="known formats"):
        canonical_format("har")


def test_real_files_detected(real: Path) -> None:
    expected = {
        "tau-bench/gpt-4o-airline.json": "tau-bench",
        "inspect_ai/tests/log/test_eval_log/log_formats.eval": "inspect",
        "inspect_ai/tests/log/test_eval_log/log_tool_call_error.json": "inspect",
        "bugcases/07_retry_after_error/fail.jsonl": "cassette",
    }
    for rel, fmt in expected.items():
        if (real / rel).is_file():
            assert detect_format(real / rel) == fmt, rel
    for path in (real / "vcr").rglob("*.yaml"):
        assert detect_format(path) == "vcr"
