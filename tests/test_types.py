"""mypy sees core, tui and the pytest plugin as one program (``[tool.mypy]`` in
pyproject.toml: ``.typecheck/cassette_tui`` links the real folders under their installed
names): inside tui a core type is that type, not ``Any``, so a wrong type across the
boundary fails the check, and the project itself passes it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: tui-side code with two wrong types across the boundary: a str where a core function
#: expects a ``Cassette``, and a str where a tui class's core-typed parameter does
PROBE = textwrap.dedent(
    """\
    from cassette_tui.core.scan.lint import lint
    from cassette_tui.tui.session import Session


    def lint_by_name(name: str) -> int:
        return len(lint(name))


    def session_of(name: str) -> Session:
        return Session(name)
    """
)


def _cache_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """mypy's incremental cache, kept between runs in pytest's cache folder (a cold check
    of the program and its libraries costs about 40 s of CPU, a warm one about 1.5 s; mypy
    rechecks whatever changed); in ``tmp_path`` when the cache plugin is off."""
    cache = getattr(request.config, "cache", None)
    return tmp_path / "cache" if cache is None else cache.mkdir("mypy")


def test_mypy_sees_across_core_and_tui_and_the_project_passes(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    # one run: the project and the probe module, from another folder (the config finds
    # .typecheck/ from its own place, not the working directory)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(_cache_dir(request, tmp_path)),
            "--no-error-summary",
            "--hide-error-context",
            "-p",
            "cassette_tui",
            "-m",
            "probe",
        ],
        check=False,
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode == 1, done.stdout + done.stderr
    outside = [line for line in lines if not line.startswith("probe.py:")]
    assert not outside, "mypy finds errors in the project:\n" + "\n".join(outside)
    expected = [
        (
            'probe.py:6: error: Argument 1 to "lint" has incompatible type "str"; '
            'expected "Cassette"  [arg-type]'
        ),
        (
            'probe.py:10: error: Argument 1 to "Session" has incompatible type "str"; '
            'expected "Cassette | None"  [arg-type]'
        ),
    ]
    assert lines == expected, done.stdout
