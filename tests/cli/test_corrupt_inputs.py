"""Damaged input files are format errors naming the file (exit 2), never a traceback with
the "findings" exit 1: a flipped bit in an inspect ``.eval`` archive, an empty YAML
``!!int``/``!!float`` in a VCR cassette, a repeated key whose line holds invalid UTF-8."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.cli import cli
from click.testing import CliRunner

MESSAGES = [
    {"role": "user", "content": "find the retry budget"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "function": "search", "arguments": {"q": "retry budget " * 4}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "retry-budget.md " * 20},
]  # fmt: skip


def _eval_archive() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "t"}}))
        sample = {"id": 1, "epoch": 1, "messages": MESSAGES}
        archive.writestr("samples/1_epoch_1.json", json.dumps(sample))
    return buf.getvalue()


def _check(path: Path) -> str:
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and f"{path}" in result.output, result.output
    return result.output


def test_every_flipped_bit_of_an_eval_archive_is_a_format_error(tmp_path: Path) -> None:
    data = _eval_archive()
    path = tmp_path / "run.eval"
    path.write_bytes(data)
    assert len(open_cassette(path)) == 1
    seen: set[str] = set()
    for i in range(len(data)):
        for bit in (0, 5):
            damaged = bytearray(data)
            damaged[i] ^= 1 << bit
            path.write_bytes(bytes(damaged))
            try:
                cassette = open_cassette(path)
                for k in range(len(cassette)):
                    cassette[k]
            except CassetteFormatError as exc:
                assert str(exc).startswith(str(path)), exc
                seen.add(str(exc))
    # the ones that used to escape: a bad CRC, a deflate stream that does not inflate
    assert any("a corrupt zip archive" in s and "BadZipFile: Bad CRC-32" in s for s in seen)
    assert any("a corrupt zip archive" in s and "error: Error -3" in s for s in seen)


@pytest.mark.parametrize("flip", ["crc", "deflate"])
def test_a_corrupt_eval_exits_2_naming_the_file(tmp_path: Path, flip: str) -> None:
    data = bytearray(_eval_archive())
    start = data.find(b"samples/1_epoch_1.json") + len("samples/1_epoch_1.json")
    data[start + (30 if flip == "deflate" else 2)] ^= 0x10  # inside the member's data
    path = tmp_path / "run.eval"
    path.write_bytes(bytes(data))
    out = _check(path)
    assert "samples/1_epoch_1.json" in out


@pytest.mark.parametrize("tag", ["!!int", "!!float"])
def test_an_empty_yaml_number_is_a_format_error_with_its_line(tmp_path: Path, tag: str) -> None:
    path = tmp_path / "vcr.yaml"
    path.write_text(
        "interactions:\n"
        f"- request: {{method: GET, uri: 'http://x/', body: {tag} }}\n"
        "  response: {status: {code: 200}, body: {string: ''}}\n"
    )
    out = _check(path)
    assert f"{path}:2: not valid YAML: {tag} cannot be ''" in out


@pytest.mark.parametrize("first", [True, False])
def test_a_repeated_key_on_a_line_with_invalid_utf8_names_the_file(
    tmp_path: Path, first: bool
) -> None:
    line = b'{"seq": 2, "tool": "a", "args": {}, "response": 1, "x": "\xff", "x": 2}\n'
    head = b"" if first else b'{"seq": 1, "tool": "a", "args": {}, "response": 1}\n'
    path = tmp_path / "dup.jsonl"
    path.write_bytes(head + line)
    n = 1 if first else 2
    with pytest.raises(CassetteFormatError) as caught:
        load(path)
    assert str(caught.value).startswith(f"{path}:{n}: not valid UTF-8 at byte ")
    assert f"{path}:{n}: not valid UTF-8" in _check(path)
