"""One agent run in a line, as the loop's commands and screens both say it."""

from __future__ import annotations

import shlex
from typing import Any

from cassette_tui.core.format.plural import plural
from cassette_tui.core.loop.options import OUTPUT_CAP

from .safe import safe


def short_command(template: str) -> str:
    """The agent command for a one-line header: the program's file name instead of its
    path (``/…/.venv/bin/python agent.py`` -> ``python agent.py``), the arguments as
    written, so the script stays in view. ``template`` itself when it cannot be split."""
    try:
        argv = shlex.split(template)
    except ValueError:
        return template
    if not argv or "/" not in argv[0]:
        return template
    return shlex.join([argv[0].rstrip("/").rsplit("/", 1)[-1] or argv[0], *argv[1:]])


def run_line(run: Any) -> str:
    """``passed (exit 0) in 0.21 s``, ``timeout after 5.0 s``, ``crashed (signal 9)``...
    of a ``core.loop.RunResult``."""
    if run.status == "timeout":
        return f"timeout after {run.duration_s:.1f} s (process group killed)"
    if run.status in ("cancelled", "not_started"):
        return f"{run.status}{': ' + safe(run.error) if run.error else ''}"
    code = run.exit_code
    how = f"signal {-code}" if code is not None and code < 0 else f"exit {code}"
    return f"{run.status} ({how}) in {run.duration_s:.2f} s"


def cut_lines(run: Any) -> list[str]:
    """What was cut or killed at the run's end: ``stdout cut: 1.2 GB past the 64 MiB
    kept``, ``3 processes it left running were killed``."""
    lines: list[str] = []
    for name, dropped in (("stdout", run.stdout_dropped), ("stderr", run.stderr_dropped)):
        if dropped:
            lines.append(f"{name} cut: {_bytes(dropped)} past the {_bytes(OUTPUT_CAP)} kept")
    if run.left_behind:
        many = plural(run.left_behind, "process", "processes")
        lines.append(f"{many} it left running (daemons, children) killed at its end")
    return lines


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


#: what the loop's commands say of the run files of a job that removed them at its end
NOT_KEPT = (
    "removed when the job ended (--runs-dir DIR keeps each run's output, report and call log)"
)


def files_text(runs_dir: Any) -> str:
    """Where a job's run files are (``RunsResult.runs_dir``), or that they were removed."""
    return safe(runs_dir) if runs_dir is not None else NOT_KEPT
