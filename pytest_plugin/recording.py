"""Record modes, in pytest-recording's names, and what becomes of a test's recording.

========  ==============================================================================
mode      what a marked test does
========  ==============================================================================
none      replay only: the cassette must exist (default)
once      record a missing cassette live, replay an existing one
new_epi-  replay the cassette; a call it did not record runs live, and the cassette plus
sodes     the new calls are written to ``NAME.new-episodes.jsonl`` beside it (the
          cassette is never changed in place); a missing cassette is recorded as ``once``
all       record every marked test live; the new recording replaces the cassette
========  ==============================================================================

A recording is staged: the test's calls go to a hidden file beside the cassette
(``.NAME.recording-PID-N``), one line per call, and nothing is at the cassette's path
until the test is over. Then, by the test's outcome (its setup and call passed):

- passed: ``all`` replaces the cassette, ``once`` puts the new one in place (when another
  test made it meanwhile, the new one is kept beside as ``NAME.recorded-TIME.jsonl``),
  ``new_episodes`` writes ``NAME.new-episodes.jsonl`` (replacing an earlier one: it is
  this plugin's output, not the user's cassette);
- failed: the recording never replaces the cassette, and under ``once`` it is not put in
  place either (the next ``once`` run records again): it is kept beside as
  ``NAME.failed-TIME.jsonl``, a name no test looks up, unless it has no call.

Every such outcome is a line of the "cassette recordings" section of the summary. Only
the test's own process is staged: a program the test starts reads ``CASSETTE_PATH`` and
records there itself, as any agent does (under ``once``, its recording stands).
Wrappers in the test that record to the cassette (``cassette.wrap``, and code that calls
``wrap_dispatcher()`` itself) join the staged recording (``recorder_registry``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from cassette_tui.core.format.atomic import check_replaceable
from cassette_tui.core.replay import recorder_registry
from cassette_tui.core.replay.new_episodes import NewEpisodes, new_episodes_path
from cassette_tui.core.replay.recorder import Recorder
from cassette_tui.core.replay.wrap import open_recorder

RECORD_MODES = ("none", "once", "new_episodes", "all")
#: the user property that carries a recording's outcome line to the controller
NOTE_PROPERTY = "cassette_recording"

_staging_ids = itertools.count(1)


def kept_beside(path: Path, why: str) -> Path:
    """A free name beside ``path`` for a recording that does not take its place:
    ``NAME.WHY-YYYYMMDDTHHMMSSZ.jsonl`` (``-2``, ``-3``... when taken)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    suffix = path.suffix or ".jsonl"
    for n in itertools.count(1):
        extra = f"-{n}" if n > 1 else ""
        candidate = path.with_name(f"{path.stem}.{why}-{stamp}{extra}{suffix}")
        if not candidate.exists():
            return candidate
    raise AssertionError("unreachable")


def shown(path: Path) -> str:
    """``path`` as the summary shows it: relative to the current folder when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def _move_new(source: Path, target: Path) -> bool:
    """Move the finished file ``source`` to ``target`` unless a file is there (a hard
    link, so one made meanwhile is not clobbered). True when moved."""
    try:
        os.link(source, target)
    except FileExistsError:
        return False
    os.unlink(source)
    return True


def _keep(source: Path, path: Path, why: str) -> Path:
    while True:
        target = kept_beside(path, why)
        if _move_new(source, target):
            return target


@dataclass
class StagedRecording:
    """The staged recording of one test (see the module doc).

    Attributes:
        path: the test's cassette.
        record: the record mode (``once``, ``new_episodes``, ``all``).
        recording: the ``Recorder`` (staged) or ``NewEpisodes`` wrappers join.
    """

    path: Path
    record: str
    recording: Recorder | NewEpisodes

    @classmethod
    def start(cls, path: Path, record: str, repeat: str) -> StagedRecording:
        """Open the test's recording and register it for ``path``.

        Raises:
            FileExistsError: a recording of ``path`` is open in this process already.
            CassetteFormatError: the cassette (new_episodes) or the config cannot be read.
        """
        recording: Recorder | NewEpisodes
        if record == "new_episodes" and path.is_file():
            out = new_episodes_path(path)
            recording = NewEpisodes.open(path, out, overwrite=True, repeat=repeat)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            staging = path.with_name(f".{path.name}.recording-{os.getpid()}-{next(_staging_ids)}")
            with contextlib.suppress(FileNotFoundError):
                staging.unlink()  # a left-over of a process with the same pid
            recording = open_recorder(staging)
        try:
            recorder_registry.register(path, recording)
        except FileExistsError:
            recording.close()
            if isinstance(recording, Recorder):
                recording.path.unlink(missing_ok=True)  # nothing recorded: no staging file
            raise
        return cls(path, record, recording)

    def finish(self, passed: bool) -> str | None:
        """Close the recording and put it where the outcome says; the summary's line
        (``None``: nothing to say)."""
        recorder_registry.unregister(self.path, self.recording)
        if isinstance(self.recording, NewEpisodes):
            return self._finish_new_episodes(passed)
        recorder = self.recording
        recorder.close()
        staging = recorder.path
        if not staging.exists():  # stopped before its first call: nothing to keep
            return f"not recorded: {shown(self.path)} (the recording stopped before its first call)"
        calls = f"{recorder.entries} call(s)"
        if not passed:
            if recorder.entries == 0:
                staging.unlink()
                return f"not recorded: {shown(self.path)} (the test failed before any tool call)"
            kept = _keep(staging, self.path, "failed")
            what = "replace" if self.path.exists() else "become"
            return (
                f"KEPT BESIDE {shown(kept)}: the test failed, so its recording ({calls}) did not "
                f"{what} {shown(self.path)}"
            )
        if recorder.entries == 0 and self.path.exists() and self.record != "all":
            # no call in this process, and a program the test started recorded the
            # cassette itself (the environment names it): that recording stands
            staging.unlink()
            return None
        if self.record == "all":
            check_replaceable(self.path)  # a symlink, FIFO or device is never replaced
            os.replace(staging, self.path)
            return f"recorded {shown(self.path)} ({calls})"
        if _move_new(staging, self.path):
            return f"recorded {shown(self.path)} ({calls})"
        kept = _keep(staging, self.path, "recorded")
        return (
            f"KEPT BESIDE {shown(kept)}: {shown(self.path)} was recorded meanwhile by "
            f"another test; this recording ({calls}) is beside it"
        )

    def _finish_new_episodes(self, passed: bool) -> str | None:
        episodes = cast(NewEpisodes, self.recording)
        new = episodes.new_calls
        if not passed and new:
            kept = episodes.close(kept_beside(self.path, "failed"))
            assert kept is not None  # it had new calls
            return (
                f"KEPT BESIDE {shown(kept)}: the test failed; its {new} new call(s) and the "
                f"cassette are there, {shown(self.path)} is unchanged"
            )
        written = episodes.close()
        if written is None:
            return None
        first = episodes.last_recorded_seq + 1
        seqs = f"{first}" if new == 1 else f"{first}-{first + new - 1}"
        return (
            f"NEW CALLS {shown(written)}: {shown(self.path)} plus {new} call(s) recorded live "
            f"(seq {seqs}); {shown(self.path)} is unchanged: move the new file over it to "
            "keep them"
        )


def note(item: pytest.Item, line: str) -> None:
    """Add ``line`` to the summary's "cassette recordings" section (it travels with the
    test's report, so pytest-xdist brings it to the controller)."""
    item.user_properties.append((NOTE_PROPERTY, json.dumps({"test": item.nodeid, "line": line})))


class RecordingNotes:
    """Collects the recording lines from the test reports and prints them at the end."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        for name, value in report.user_properties:
            if name == NOTE_PROPERTY:
                noted: dict[str, Any] = json.loads(cast(str, value))
                self.lines.append(f"{noted['test']}: {noted['line']}")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.lines:
            return
        terminalreporter.section("cassette recordings")
        for line in self.lines:
            terminalreporter.write_line(line)
