"""A job's progress in words: ``3/12 files``, or ``0 rows`` when the total is not known."""

from __future__ import annotations

from cassette_tui.core.format.jobs import Progress


def progress_count(progress: Progress) -> str:
    """``"3/12 files"`` (done/total and the unit); with no total (``None``: not known in
    advance), the count alone: ``"0 rows"``. Never a Python ``None`` on screen."""
    done = f"{progress.done}" if progress.total is None else f"{progress.done}/{progress.total}"
    return f"{done} {progress.unit}" if progress.unit else done


def reading_line(progress: Progress) -> str:
    """``"reading A: 412,000 / ~1,000,000 lines"``: a file read whole, the lines so far
    against the total the bytes read so far give (``~``: an estimate, until the end)."""
    done = f"{progress.done:,}"
    if progress.total is not None:
        about = "" if progress.done >= progress.total else "~"
        done += f" / {about}{progress.total:,}"
    return f"{progress.stage}: {done} {progress.unit or 'lines'}"
