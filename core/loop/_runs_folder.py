"""The runs folder: where every file of a job's runs goes::

    run-01.stdout  run-01.stderr      the agent's output
    run-01.report.json                the replay report the agent wrote
    run-01.report.json.journal        every call of every process of the run, as served
    run-01.jsonl                      its call log as a cassette (``call_log.py``)
    run-01.guard.log                  what the network guard refused (guard isolation)
    run-01.end.json                   how it ended (``_reaper.py``: output cut, processes killed)

It is ``runs_dir`` when the caller names one (``--runs-dir``): it is kept, files and all.
Without it the job makes a temporary folder (``tempfile.mkdtemp``,
``cassette-<stage>-<stem>-*``) and removes it when it ends, however it ends (its result, an
error, a cancel, or the generator closed), after reading what it needs (the reports, the
call logs the gate compares); the result then names no file (``runs_dir`` and each run's
``stdout``, ``stderr`` and ``call_log`` are ``None``). ``keep`` overrides either way:
``keep=True`` keeps a temporary folder, ``keep=False`` removes the files a job wrote in a
named folder (the folder too when that leaves it empty; nothing else in it is touched). A
recording's cassette is never in the runs folder.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

from .results import RunResult, RunsResult


def make_runs_dir(runs_dir: str | Path | None, prefix: str) -> Path:
    """``runs_dir`` created (it must not hold run files already: never overwritten), or a
    new folder in the system's temporary folder (``tempfile.mkdtemp(prefix=prefix)``).

    Raises:
        FileExistsError: ``runs_dir`` already holds ``run-*`` files.
    """
    if runs_dir is None:
        return Path(tempfile.mkdtemp(prefix=prefix))
    folder = Path(runs_dir)
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.glob("run-*")):
        raise FileExistsError(
            f"{folder}: holds the files of earlier runs; choose an empty folder (never overwritten)"
        )
    return folder


class RunsFolder:
    """The folder of one job's run files (see the module doc), made by ``open``.

    Attributes:
        path: the folder, ``None`` until ``open``.
        made: the job makes it (``runs_dir`` was ``None``).
        kept: it outlives the job (a named ``runs_dir``, or ``keep=True``).
    """

    def __init__(self, runs_dir: str | Path | None = None, keep: bool | None = None) -> None:
        self.runs_dir = runs_dir
        self.made = runs_dir is None
        self.kept = (not self.made) if keep is None else keep
        self.path: Path | None = None

    def open(self, prefix: str) -> Path:
        """The folder, made on the first call (``make_runs_dir``; ``prefix`` names a
        temporary one). Raises ``FileExistsError`` as ``make_runs_dir``."""
        if self.path is None:
            self.path = make_runs_dir(self.runs_dir, prefix)
        return self.path

    def forget(self, runs_result: RunsResult | None, runs: list[RunResult]) -> None:
        """For a folder that goes when the job ends: ``runs_result`` and ``runs`` name none
        of its files."""
        if self.kept:
            return
        if runs_result is not None:
            runs_result.runs_dir = None
        for run in runs:
            run.stdout = run.stderr = run.call_log = None

    def remove(self) -> None:
        """Remove what goes when the job ends: a folder the job made, whole; in a named
        folder, the ``run-*`` files the job wrote (no other file was there: see
        ``make_runs_dir``), then the folder if that left it empty. Never raises."""
        path = self.path
        if self.kept or path is None:
            return
        if self.made:
            shutil.rmtree(path, ignore_errors=True)
            return
        for item in path.glob("run-*"):
            with contextlib.suppress(OSError):
                if not item.is_dir() or item.is_symlink():
                    item.unlink()
        with contextlib.suppress(OSError):
            path.rmdir()  # only when empty: anything else in it stays
