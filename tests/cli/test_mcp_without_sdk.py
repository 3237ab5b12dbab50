"""The plain install leaves the MCP SDK out (it is the ``mcp`` extra): there, ``cassette-tui
mcp record`` and ``mcp replay`` say in one line how to install it and exit 2, before
anything is read, written or started. The SDK is hidden from a fresh interpreter by a
``None`` in ``sys.modules`` for each of its modules (what Python does for a package that is
absent is to raise the same ImportError)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import SAMPLES

HINT = "the MCP SDK is not installed: pip install 'cassette-tui[mcp]'"

#: runs the CLI with the SDK's modules blocked; argv follows the code
WITHOUT_SDK = (
    "import sys\n"
    "for name in ('mcp', 'mcp_types', 'anyio'):\n"
    "    sys.modules[name] = None\n"
    "from cassette_tui.tui.cli import main\n"
    "sys.argv = ['cassette-tui', *sys.argv[1:]]\n"
    "main()\n"
)


def _without_sdk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_SDK, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["mcp", "replay", str(SAMPLES / "fail.jsonl")],
        ["mcp", "record", "-o", "run.jsonl", "--", sys.executable, "-c", "pass"],
    ],
    ids=["replay", "record"],
)
def test_mcp_without_the_sdk_says_how_to_install_it(tmp_path: Path, args: list[str]) -> None:
    done = _without_sdk(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr == f"cassette-tui mcp {args[1]}: {HINT}\n"
    assert list(tmp_path.iterdir()) == []  # nothing recorded, no report


def test_the_rest_of_the_cli_runs_without_the_sdk(tmp_path: Path) -> None:
    """The headless commands and ``mcp --help`` never need the SDK."""
    done = _without_sdk("check", str(SAMPLES / "fix.jsonl"), cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    helped = _without_sdk("mcp", "--help", cwd=tmp_path)
    assert helped.returncode == 0 and "record" in helped.stdout, helped.stderr


@pytest.mark.parametrize("live", [["--mcp", "server --stdio"], ["--url", "http://127.0.0.1:9/mcp"]])
def test_verify_against_mcp_without_the_sdk_says_how_to_install_it(
    tmp_path: Path, live: list[str]
) -> None:
    done = _without_sdk("verify", str(SAMPLES / "fail.jsonl"), *live, "-o", "live.jsonl",
                        cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"cassette-tui verify: {live[0]}: {HINT}\n"
    assert list(tmp_path.iterdir()) == []


def test_verify_against_a_dispatcher_needs_no_sdk(tmp_path: Path) -> None:
    done = _without_sdk("verify", str(SAMPLES / "fail.jsonl"), "--dispatcher",
                        "agent:live_dispatch", "--path", str(SAMPLES), "--allow", "read_file",
                        "-o", "live.jsonl", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "verdict: every re-issued entry is fresh (2 fresh)" in done.stdout
    assert (tmp_path / "live.jsonl").is_file()
