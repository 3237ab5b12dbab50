"""A bad line in the middle of a cassette is found by a worker (the app opens on the fast
index and parses entries later): the app ends as ``diff`` does, exit status 2 and the
error's one line (``file:line: field ...``), never an empty list with an exception's repr."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from cassette_tui.core.format.constants import EXIT_BAD_INPUT
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from support.paths import SCRIPT
from support.pilot import sync

GOOD = b'{"seq":%d,"tool":"t","args":{},"response":%d}\n'

#: kind -> line 3 of the bad file (the fast index accepts it; the full parse does not)
BAD_LINES = {
    "json": b'{"seq":3,"tool":"t","args":{}, "response": }\n',
    "deep": b'{"seq":3,"tool":"t","args":{},"response":' + b"[" * 10_000 + b"]" * 10_000 + b"}\n",
    "utf8": b'{"seq":3,"tool":"t","args":{},"response":"caf\xe9"}\n',
    "bignum": b'{"seq":3,"tool":"t","args":{},"response":' + b"9" * 5000 + b"}\n",
}


def _files(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    bad, good = tmp_path / "badmid.jsonl", tmp_path / "good.jsonl"
    bad.write_bytes(GOOD % (1, 1) + GOOD % (2, 2) + BAD_LINES[kind] + GOOD % (4, 4))
    good.write_bytes(b"".join(GOOD % (i, i) for i in range(1, 5)))
    return bad, good


async def _ends(app: CassetteApp) -> None:
    async with app.run_test(size=(80, 24)):
        for _ in range(200):  # the workers' parse, then the exit (no pilot.pause: it waits
            if app.return_code is not None:  # for a screen that is going away)
                break
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
@pytest.mark.parametrize("mode", ["pair", "single"])
@sync
async def test_a_bad_line_in_the_middle_ends_the_app_with_status_2_and_the_line(
    tmp_path: Path, kind: str, mode: str
) -> None:
    bad, good = _files(tmp_path, kind)
    if mode == "pair":
        app = CassetteApp(open_cassette(bad), open_cassette(good))
    else:
        app = CassetteApp(open_cassette(bad))
    await _ends(app)
    assert app.return_code == EXIT_BAD_INPUT
    assert app.bad_input is not None
    assert app.bad_input.startswith(f"{bad}:3: field 'response': "), app.bad_input
    assert "CassetteFormatError(" not in app.bad_input


@pytest.mark.skipif(not SCRIPT.exists(), reason=f"no console script: {SCRIPT}")
@pytest.mark.parametrize("kind", ["json", "utf8"])
def test_the_command_prints_the_bad_line_like_diff_and_exits_2(tmp_path: Path, kind: str) -> None:
    """``cassette-tui bad good`` in a terminal: the same line and status as ``diff``."""
    from support.terminal import run_in_terminal

    bad, good = _files(tmp_path, kind)
    diff = subprocess.run(
        [SCRIPT, "diff", bad, good], capture_output=True, timeout=60, check=False, text=True
    )
    assert diff.returncode == EXIT_BAD_INPUT
    status, screen = run_in_terminal([SCRIPT, bad, good], env={"TERM": "xterm"})
    assert status == EXIT_BAD_INPUT
    expected = diff.stderr.strip().removeprefix("cassette-tui diff: ")
    assert expected.startswith(f"{bad}:3: field 'response': ")
    # after the app gave the terminal back (the last escape sequences), one plain line
    assert screen.rstrip().endswith(f"cassette-tui: {expected}"), screen[-400:]
    assert "CassetteFormatError(" not in screen


@sync
async def test_a_file_replaced_after_the_load_ends_the_app_with_status_2(tmp_path: Path) -> None:
    """The cassette reads entries by the offsets of the file it loaded: another file put
    in its place before they are read ends the app with the reason, not another file's
    entries shown at the old offsets."""
    _bad, good = _files(tmp_path, "json")
    a = tmp_path / "a.jsonl"
    a.write_bytes(good.read_bytes())
    app = CassetteApp(open_cassette(a), open_cassette(good))
    swapped = tmp_path / "swapped.jsonl"
    swapped.write_bytes(b'{"seq":1,"tool":"t","args":{},"response":"a longer first line"}\n')
    swapped.replace(a)
    await _ends(app)
    assert app.return_code == EXIT_BAD_INPUT
    assert app.bad_input == (
        f"{a}: changed on disk since it was loaded (another file is in its place): load it again"
    ), app.bad_input
