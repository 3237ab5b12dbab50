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
