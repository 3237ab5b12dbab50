"""The README's examples are run: every ``cassette-tui check|diff|import`` command it shows
exits as a command that worked (0 or 1, never 2 or a traceback), and every block that
starts with ``$ cassette-tui ...`` prints what the block shows (in an 80-column terminal
with NO_COLOR; a line ``...`` stands for any lines left out). Commands run from the
repository root, where the README's relative paths point; what they write goes to a
temporary folder, whose ``runs/`` holds the sample pair as ``fail.jsonl`` and ``fix.jsonl``."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from support.paths import REAL, ROOT, SAMPLES, SCRIPT
from support.terminal import run_in_terminal

README = ROOT / "README.md"
HEADLESS = ("check", "diff", "import")


def blocks() -> list[list[str]]:
    """The README's fenced code blocks, as lists of lines."""
    found, current, inside = [], [], False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            if inside:
                found.append(current)
            current, inside = [], not inside
        elif inside:
            current.append(line)
    return found


def commands() -> list[tuple[str, dict[str, str]]]:
    """``(command line, shell variables of its block)`` for each headless command shown."""
    out = []
    for block in blocks():
        variables = dict(re.findall(r"^([A-Z])=(\S+)$", "\n".join(block), re.MULTILINE))
        for line in block:
            words = line.split()
            if len(words) > 1 and words[0] == "cassette-tui" and words[1] in HEADLESS:
                out.append((line.split("  #")[0].strip(), variables))
    return out


def output_blocks() -> list[list[str]]:
    return [b for b in blocks() if b and b[0].startswith("$ cassette-tui ")]


def matches(expected: list[str], actual: list[str]) -> str | None:
    """``None`` when ``expected`` (with ``...`` lines as gaps) is ``actual``, else why not."""
    pos = 0
    gap = False
    for want in expected:
        if want.strip() == "...":
            gap = True
            continue
        while pos < len(actual) and actual[pos].rstrip() != want.rstrip():
            if not gap:
                return f"expected {want!r}, the output has {actual[pos]!r}"
            pos += 1
        if pos == len(actual):
            return f"{want!r} is not in the output (in this order)"
        pos += 1
        gap = False
    if pos != len(actual) and not gap:
        return f"the output goes on: {actual[pos]!r}"
    return None


def test_the_readme_shows_commands_and_outputs() -> None:
    assert len(commands()) >= 8
    assert output_blocks()


@pytest.mark.parametrize("index", range(len(output_blocks())))
def test_an_output_block_is_what_the_command_prints(index: int) -> None:
    block = output_blocks()[index]
    argv = shlex.split(block[0][2:])
    if any(a.startswith("../shared/real/") for a in argv):
        if not REAL.is_dir():
            pytest.skip(f"real-world data not available: {REAL} is absent")
        argv = [
            str(REAL / a.removeprefix("../shared/real/")) if a.startswith("../shared/real/") else a
            for a in argv
        ]
    status, out = run_in_terminal(
        [SCRIPT, *argv[1:]], columns=80, env={"NO_COLOR": "1", "TERM": "dumb"}, cwd=ROOT
    )
    assert status in (0, 1), out
    problem = matches(block[1:], out.rstrip("\n").splitlines())
    assert problem is None, f"README block {block[0]!r}: {problem}\n--- output:\n{out}"


@pytest.mark.parametrize(("line", "variables"), commands(), ids=[c[0][:60] for c in commands()])
def test_a_readme_command_works(line: str, variables: dict[str, str], tmp_path: Path) -> None:
    for name, value in variables.items():
        if value.startswith("../shared/real"):
            if not REAL.is_dir():
                pytest.skip(f"real-world data not available: {REAL} is absent")
            value = str(REAL / value.removeprefix("../shared/real/"))
        line = line.replace(f"${name}", value)
    # the README's runs/ folder (where the debug loop records) holds the sample pair
    (tmp_path / "runs").mkdir()
    for name in ("fail.jsonl", "fix.jsonl"):
        shutil.copy(SAMPLES / name, tmp_path / "runs" / name)
    argv = [str(SCRIPT), *shlex.split(line)[1:]]
    argv = [
        a.replace("runs/", f"{tmp_path}/runs/", 1) if a.startswith("runs/") else a for a in argv
    ]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, timeout=300, check=False)
    err = proc.stderr.decode()
    assert proc.returncode in (0, 1), f"{line}: exit {proc.returncode}\n{err}"
    assert "Traceback" not in err


def test_the_readme_diffs_pass_the_failing_run_as_a(real: Path) -> None:
    from cassette_tui.core.importers.sources import open_cassette

    pairs = [(line, v) for line, v in commands() if line.split()[1] == "diff" and "#task=" in line]
    assert pairs
    for line, variables in pairs:
        for name, value in variables.items():
            line = line.replace(f"${name}", str(real / value.removeprefix("../shared/real/")))
        a, b = shlex.split(line)[2:4]
        run_a, run_b = (open_cassette(x).metadata["run"] for x in (a, b))
        assert run_a["passed"] is False and run_b["passed"] is True, line
