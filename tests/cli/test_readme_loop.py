"""Every command the README's debug-loop sections show runs, with the exit status its
comment states (``# ... exit N``), from a folder laid out like the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import ROOT, SAMPLES

START = "### The loop on the demo agent"
END = "### Normalization rules"


def loop_commands() -> list[tuple[str, int]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index(START) : readme.index(END)]
    commands = []
    fence: str | None = None  # the info string of the open code block
    for line in section.splitlines():
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
            continue
        if fence == "" and line.startswith(".venv/bin/"):
            command, _, comment = line.partition("  # ")
            status = re.search(r"\bexit (\d)", comment)
            assert status, f"README command without its exit status: {line}"
            commands.append((command.strip(), int(status.group(1))))
    return commands


COMMANDS = loop_commands()


def test_the_readme_walks_the_whole_loop() -> None:
    words = " ".join(c for c, _ in COMMANDS)
    for step in ("record", "replay", "gate", "diff", "pin", "--against", "--cassette-gate"):
        assert step in words, step
    assert len(COMMANDS) >= 9


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("readme-loop")
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    shutil.copytree(SAMPLES, root / "sample_cassettes")
    return root


@pytest.mark.parametrize(("command", "status"), COMMANDS, ids=[c[:70] for c, _ in COMMANDS])
def test_readme_loop_command(demo_root: Path, command: str, status: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CASSETTE_", "PYTEST_"))}
    env["NO_COLOR"] = "1"
    done = subprocess.run(
        ["bash", "-c", command], cwd=demo_root, env=env, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == status, f"{command}\n{done.stdout}\n{done.stderr}"
    if " pin " in command:
        assert (demo_root / "fixtures" / "read_file-eec0474a17810727.jsonl").is_file()
    if "gate" in command and "--flaky" in command:
        assert "after the tool layer" in done.stdout
    if "--new-calls" in command:  # the README's worked example of the replay policies
        assert "new calls (answered live, " in done.stdout and "· 1 new ·" in done.stdout
    if "--new-calls record" in command:
        assert (demo_root / "runs" / "new-calls.jsonl").is_file()
    if "--fixture" in command:
        assert "pinned  1 call answered by fixtures/read_file-e65440dfad324368.jsonl" in done.stdout
