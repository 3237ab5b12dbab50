"""Run the installed ``cassette-tui`` as a user would: a subprocess with ``NO_COLOR`` and
no ``CASSETTE_*`` variables from the test's own environment."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .paths import SCRIPT


def cli(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``cassette-tui ARGS`` run to its end: exit status, stdout and stderr as text."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd, env=env,
        timeout=timeout, check=False,
    )  # fmt: skip


def run_module_agent(
    folder: Path, module: str, mode: str, cassette: Path
) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE`` in ``folder`` with ``CASSETTE_MODE=mode`` and
    ``CASSETTE_PATH=cassette`` (an agent run as a module: its classes live in ``__main__``)."""
    import sys

    env = {"CASSETTE_MODE": mode, "CASSETTE_PATH": str(cassette), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", module], cwd=folder, env=env, capture_output=True,
        text=True, timeout=30, check=False,
    )  # fmt: skip
