"""Issue 26: a token used as a tool name is masked wherever a command names the tool:
``diff --json`` on either side of an other-call row, and ``replay`` (text and ``--json``)
when the agent calls such a tool and misses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.factory import entry, write_cassette
from support.paths import SCRIPT

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"  # fake


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=300, check=False,
        env={**env, "NO_COLOR": "1"}, cwd=cwd,
    )  # fmt: skip


def test_diff_json_masks_a_token_tool_on_either_side(tmp_path: Path) -> None:
    a = write_cassette(tmp_path / "a.jsonl", entry(1, TOKEN, {"q": "x"}, response={"x": 1}))
    b = write_cassette(tmp_path / "b.jsonl", entry(1, "search", {"q": "x"}, response={"x": 1}))
    for first, second in ((a, b), (b, a)):
        done = _run("diff", str(first), str(second), "--json", cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert TOKEN[4:12] not in done.stdout
        row = json.loads(done.stdout)["rows"][0]
        assert "ghp_…(40 chars)" in row["tool"] + row["tool_b"]


def test_replay_masks_a_token_tool_in_its_misses(tmp_path: Path) -> None:
    cassette = write_cassette(
        tmp_path / "c.jsonl", entry(1, "search", {"q": "x"}, response={"x": 1})
    )
    agent = tmp_path / "agent.py"
    agent.write_text(
        "from cassette_tui.core import wrap_dispatcher\n"
        "d = wrap_dispatcher(lambda tool, args: {})\n"
        "d('search', {'q': 'x'})\n"
        f"d({TOKEN!r}, {{'q': 'x'}})\n",
        encoding="utf-8",
    )
    for extra in ((), ("--json",)):
        done = _run(
            "replay", str(cassette), "--agent", f"{sys.executable} {agent}", *extra, cwd=tmp_path
        )
        assert done.returncode == 1, done.stderr
        assert TOKEN[4:12] not in done.stdout + done.stderr, done.stdout
        assert "ghp_…(40 chars)" in done.stdout
