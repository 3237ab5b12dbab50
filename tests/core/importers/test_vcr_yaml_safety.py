"""The VCR importer never shows a traceback: odd tags, recursive aliases, deep nesting and
alias bombs are format errors naming the file and the line, and alias expansion is bounded
(a 500-byte "billion laughs" file took 21 s and 560 MB). The command's side is in
tests/cli/test_import_cli.py; the cases are in support/odd_yaml.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers._vcr import MAX_DEPTH
from cassette_tui.core.importers.sources import open_cassette
from support.odd_yaml import CASES, ONE, nested


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
