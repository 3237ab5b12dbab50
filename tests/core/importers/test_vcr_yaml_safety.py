"""The VCR importer never shows a traceback: odd tags, recursive aliases, deep nesting and
alias bombs are format errors naming the file and the line, and alias expansion is bounded
(a 500-byte "billion laughs" file took 21 s and 560 MB)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.importers.vcr import MAX_DEPTH

ONE = (
    "interactions:\n"
    "- request: {{method: GET, uri: 'http://x', body: null, headers: {{}}}}\n"
    "  response: {{status: {{code: 200, message: OK}}, headers: {{}}, body: {{string: {}}}}}\n"
    "version: 1\n"
)

LAUGHS = (
    "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
    + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "interactions:\n"
    "- request: {method: GET, uri: 'http://x', body: null, headers: {}}\n"
    "  response: {status: {code: 200, message: OK}, headers: {}, body: {string: *i}}\n"
)

RECURSIVE = (
    "interactions: &a\n"
    "- request: {method: GET, uri: 'http://x', body: *a, headers: {}}\n"
    "  response: {status: {code: 200, message: OK}, headers: {}, body: {string: x}}\n"
)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


CASES = {
    "bool maybe": (ONE.format("!!bool maybe"), 3, "!!bool cannot be 'maybe'"),
    "timestamp x": (ONE.format("!!timestamp 'x'"), 3, "!!timestamp cannot be 'x'"),
    "set": (ONE.format("!!set {a, b}"), 3, "!!set"),
    "set of mixed types": (ONE.format("!!set {1, a}"), 3, "!!set"),
    "int zz": (ONE.format("!!int 'zz'"), 3, "!!int cannot be 'zz'"),
    "python object": (ONE.format("!!python/object:os.system x"), 3, "python/object"),
    "recursive alias": (RECURSIVE, 1, "recursive alias"),
    "deep 990": (ONE.format(nested(990)), 3, f"deeper than {MAX_DEPTH} levels"),
    "deep 5000": (ONE.format(nested(5000)), 3, "nesting depth"),
    "billion laughs": (LAUGHS, None, "aliases expand"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_odd_yaml_is_a_format_error_with_file_and_line(tmp_path: Path, name: str) -> None:
    text, line, reason = CASES[name]
    path = tmp_path / "odd.yaml"
    path.write_text(text, encoding="utf-8")
    for fmt in (None, "vcr"):
        with pytest.raises(CassetteFormatError) as info:
            open_cassette(path, fmt=fmt)
        assert info.value.path == str(path)
        assert info.value.line == line
        assert reason in str(info.value)


def test_the_cli_shows_no_traceback(tmp_path: Path) -> None:
    for i, (text, _line, reason) in enumerate(CASES.values()):
        path = tmp_path / f"odd-{i}.yaml"
        path.write_text(text, encoding="utf-8")
        for args in (["check", path], ["import", path, "-o", tmp_path / f"out-{i}.jsonl"]):
            proc = subprocess.run(
                [sys.executable, "-m", "cassette_tui.tui.cli", *map(str, args)],
                capture_output=True,
                timeout=60,
                check=False,
            )
            err = proc.stderr.decode()
            assert proc.returncode == 2 and "Traceback" not in err, err
            assert f"odd-{i}.yaml" in err and reason in err


@pytest.mark.parametrize("depth", [MAX_DEPTH - 10, 975, 985, 1000])
def test_every_depth_gives_the_value_or_a_format_error(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(ONE.format(nested(depth)), encoding="utf-8")
    try:
        cassette = open_cassette(path)
    except CassetteFormatError as exc:
        assert depth > MAX_DEPTH - 10
        assert "deeper than" in str(exc) or "nesting depth" in str(exc)
        return
    body = cassette[0].response["body"]
    for _ in range(depth - 1):
        (body,) = body
    assert body == []


def test_ordinary_aliases_still_work(tmp_path: Path) -> None:
    text = (
        "h: &h {Content-Type: [application/json]}\n"
        "interactions:\n"
        "- request: {method: GET, uri: 'http://x', body: null, headers: *h}\n"
        "  response: {status: {code: 200, message: OK}, headers: *h, body: {string: '{}'}}\n"
        "- request: {method: GET, uri: 'http://y', body: null, headers: *h}\n"
        "  response: {status: {code: 200, message: OK}, headers: *h, body: {string: '{}'}}\n"
    )
    path = tmp_path / "aliases.yaml"
    path.write_text(text, encoding="utf-8")
    cassette = open_cassette(path)
    assert len(cassette) == 2
    assert cassette[1].response["headers"] == {"Content-Type": ["application/json"]}
