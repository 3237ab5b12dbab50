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


#: how many of the agent's last lines of stdout, and of stderr, a command shows
TAIL_SHOWN = 10


def output_lines(run: Any, stream: str, count: int = TAIL_SHOWN) -> list[str]:
    """``agent stdout (last lines):`` and the last ``count`` lines the agent wrote to
    ``stream`` (``"stdout"`` or ``"stderr"``: ``RunResult.stdout_tail``, masked when the
    run was read), or nothing when it wrote none. Of a replay, a recording and a
    re-recording alike: that is where an agent says why it failed."""
    tail = getattr(run, f"{stream}_tail", "") or ""
    if not tail.strip():
        return []
    return [f"agent {stream} (last lines):"] + [
        f"  {safe(line)}" for line in tail.splitlines()[-count:]
    ]


def recording_end_line(run: Any, entries: int, cancelled: bool, output: str) -> str | None:
    """What a recording that did not pass kept, in ``cassette-tui record``'s and the
    re-record screen's words: an agent that ended on its own with a failing exit status
    (status ``failed``) ran to its end, so its file is the whole recording: ``recorded 3
    entries; the agent exited 1``; one cut short (crashed, timed out, killed, stopped)
    kept what came before: ``kept: the 3 entries recorded before it failed stay in
    r.jsonl``. ``None`` for a pass, or when nothing was recorded."""
    if not entries or (run.passed and not cancelled):
        return None
    if run.status == "failed" and not cancelled:
        return f"recorded {plural(entries, 'entry')}; the agent exited {run.exit_code}"
    how = "was stopped" if cancelled else "failed"
    return f"kept: the {plural(entries, 'entry')} recorded before it {how} stay in {safe(output)}"
