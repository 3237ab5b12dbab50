"""Nesting between 975 and 1000 levels, where the outcome used to depend on how deep the
caller's stack was (975 loaded, 985 raised ``RecursionError``): every depth gives the value
or a format error, in ``load``, ``diff --json``, the importers and the app."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.depth import MAX_DEPTH
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from support.pilot import screen_text, settle, sync

DEPTHS = [975, 980, 985, 990, 995, 1000]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def cassette_file(tmp_path: Path, depth: int) -> Path:
    path = tmp_path / f"deep-{depth}.jsonl"
    first = '{"seq": 1, "tool": "t", "args": {"q": 1}, "response": ' + nested(depth) + "}\n"
    second = json.dumps({"seq": 2, "tool": "t", "args": {"q": 2}, "response": 1}) + "\n"
    path.write_text(first + second, encoding="utf-8")
    return path


def depth_of_list(value: object) -> int:
    depth = 0
    while isinstance(value, list):
        depth += 1
        value = value[0] if value else None
    return depth


@pytest.mark.parametrize("depth", DEPTHS)
def test_load_gives_the_value_or_a_format_error(tmp_path: Path, depth: int) -> None:
    path = cassette_file(tmp_path, depth)
    try:
        cassette = load(path)
        response = cassette[0].response
    except CassetteFormatError as exc:
        assert exc.line == 1 and "nested too deeply" in str(exc)
        return
    assert depth_of_list(response) == depth
    assert diff_cassettes(cassette, load(path)).is_same  # and the diff walks it


@pytest.mark.parametrize("depth", DEPTHS)
def test_diff_json_gives_a_document_or_a_format_error(tmp_path: Path, depth: int) -> None:
    path = cassette_file(tmp_path, depth)
    other = tmp_path / "other.jsonl"
    other.write_text('{"seq": 1, "tool": "t", "args": {"q": 1}, "response": []}\n')
    proc = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", "--json", str(path), str(other)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = proc.stderr.decode()
    assert "Traceback" not in err and "RecursionError" not in err, err[-500:]
    if proc.returncode == 2:
        assert f"deep-{depth}.jsonl:1" in err
    else:
        assert proc.returncode == 1
        assert json.loads(proc.stdout)["rows"]


def importer_inputs(tmp_path: Path, depth: int) -> dict[str, Path]:
    value = nested(depth)
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    call["function"]["arguments"] = '{"q": ' + value + "}"
    chat = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": value},
    ]
    vcr_json = {
        "interactions": [
            {
                "request": {"method": "GET", "uri": "http://x", "body": None, "headers": {}},
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {},
                    "body": {"string": value},
                },
            }
        ],
        "version": 1,
    }
    vcr_yaml = (
        "interactions:\n- request: {method: GET, uri: 'http://x', body: null, headers: {}}\n"
        f"  response: {{status: {{code: 200, message: OK}}, headers: {{}}, body: {{string: '{value}'}}, "
        f"extra: {value}}}\n"
    )
    files = {
        "openai.json": json.dumps(chat),
        "tau.json": json.dumps([{"task_id": 1, "trial": 0, "reward": 1, "info": {}, "traj": chat}]),
        "vcr.json": json.dumps(vcr_json),
        "vcr.yaml": vcr_yaml,
    }
    out = {}
    for name, text in files.items():
        out[name] = tmp_path / name
        out[name].write_text(text, encoding="utf-8")
    return out


@pytest.mark.parametrize("depth", DEPTHS)
def test_importers_give_the_value_or_a_format_error(tmp_path: Path, depth: int) -> None:
    for name, path in importer_inputs(tmp_path, depth).items():
        spec = f"{path}#task=1,trial=0" if name == "tau.json" else str(path)
        with pytest.raises(CassetteFormatError) as info:
            open_cassette(spec)
        assert info.value.path == str(path), name
        assert "deeper than" in str(info.value) or "nesting depth" in str(info.value), name
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "cassette_tui.tui.cli",
                "import",
                spec,
                "-o",
                str(tmp_path / "o.jsonl"),
            ],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 2 and "Traceback" not in proc.stderr.decode(), name


def test_importers_keep_values_within_the_limit(tmp_path: Path) -> None:
    for name, path in importer_inputs(tmp_path, MAX_DEPTH - 5).items():
        spec = f"{path}#task=1,trial=0" if name == "tau.json" else str(path)
        cassette = open_cassette(spec)
        assert len(cassette) == 1, name


@pytest.mark.parametrize("depth", [975, 990, 1000])
@sync
async def test_the_app_shows_the_value_or_the_error(tmp_path: Path, depth: int) -> None:
    path = cassette_file(tmp_path, depth)
    try:
        a, b = load(path), load(path)
    except CassetteFormatError:
        return  # refused before the app, naming the file (tests/cli)
    app = CassetteApp(a, b)
    async with app.run_test(size=(200, 24)) as pilot:
        # the diff reads every outcome: the value, or the app ends as `diff` does (exit
        # status 2 and the file, line and field; tests/tui/test_app_bad_input.py)
        for _ in range(200):
            if app.return_code is not None or not any(w.is_running for w in app.workers):
                break
            await asyncio.sleep(0.05)
        if app.return_code is None:
            await settle(pilot)
        if app.return_code is not None:
            assert app.return_code == 2
            assert app.bad_input is not None
            assert app.bad_input.startswith(f"{path}:1: field 'response'"), app.bad_input
            assert "nested too deeply" in app.bad_input and "RecursionError" not in app.bad_input
            return
        await pilot.press("enter")
        await settle(pilot)
        text = screen_text(app)
        assert "[[[[" in text
        assert "RecursionError" not in text
        await pilot.press("q", "j")
        await settle(pilot)
        assert app.return_code in (None, 0)
