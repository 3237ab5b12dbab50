"""What a loop job's runs come to: one agent run (``RunResult``) and the runs of a job
(``RunsResult``), as the replay, gate and record jobs return them and the CLI and the app
show them."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..replay.report import ReplayReport

#: the status of a replay run that exited 0 but replayed nothing
NO_REPLAY = "no_replay"
#: why a run is ``no_replay``, for a person
NO_REPLAY_WHY = (
    "the agent exited 0 but replayed nothing: does it wrap its dispatcher with "
    "wrap_dispatcher / read CASSETTE_MODE?"
)

#: how a run's replay went (``RunResult.replay``): ``clean`` (the agent's pass or fail is a
#: result), ``unclean`` (a miss, a call past the last recording, unused recordings under
#: ``--strict``), ``no_tool_call`` (the run reached no tool call: no replay at all),
#: ``infrastructure`` (timed out, killed by a signal from outside, not started, or the runs
#: folder could not be written), ``not_run`` (cancelled)
REPLAY_KINDS = ("clean", "unclean", "no_tool_call", "infrastructure", "not_run")
#: what a timed-out run's words add: the machine may be the cause
TIMEOUT_HINT = "a loaded machine can cause this: try -j 1 or a longer --timeout"
#: signals that end a run from outside the agent (a person, the OOM killer, a limit)
OUTSIDE_SIGNALS = frozenset(
    {signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGXCPU,
     signal.SIGXFSZ}
)  # fmt: skip
#: words on stderr that say a write failed for want of space
DISK_FULL_WORDS = ("No space left on device", "Disk quota exceeded", "[Errno 28]", "[Errno 122]")


def report_replay(
    report: ReplayReport | None, strict: bool = False, new_calls_allowed: bool = False
) -> tuple[str, str]:
    """How a replay went from its report alone: ``("clean", "")``, ``("unclean", why)`` (a
    miss, a call past the last recording, with ``strict`` a recording left unused, unless
    ``new_calls_allowed`` a new call answered live: no offline replay) or
    ``("no_tool_call", why)`` (no report, or one without a call while the cassette has
    entries). The one rule of ``RunResult.replay`` and the pytest plugin's gate."""
    if report is None:
        return "no_tool_call", "no tool call seen (it wrote no replay report)"
    if not report.calls and report.entries != 0:  # an empty cassette needs no call
        return "no_tool_call", "no tool call (its replay report has none)"
    why = []
    misses, exhausted = report.count("miss"), report.count("exhausted")
    if misses:
        why.append(f"{misses} {'miss' if misses == 1 else 'misses'}")
    if exhausted:
        why.append(f"{exhausted} past the last recording")
    new = report.count("new")
    if new and not new_calls_allowed:
        why.append(f"{new} new {'call' if new == 1 else 'calls'} answered live (not offline)")
    if strict and report.unused_seqs:
        why.append(f"{len(report.unused_seqs)} recorded calls unused (--strict)")
    if why:
        return "unclean", ", ".join(why)
    return "clean", ""


@dataclass
class RunResult:
    """One agent run.

    Attributes:
        run: 1-based run number.
        status: ``passed`` (exit 0), ``failed`` (another exit status), ``crashed`` (ended
            by a signal, or a Python traceback on stderr), ``timeout``, ``cancelled``,
            ``not_started``, or (replays only) ``no_replay``: the agent exited 0 but
            replayed nothing (no replay report, or one with no call while the cassette has
            entries), a mis-wired agent, never a pass.
        exit_code: the exit status (negative: the signal), ``None`` when it never ran.
        duration_s: wall time, seconds.
        isolation: ``"netns"``, ``"guard"``, ``"guard (not loaded)"`` when the guard never
            loaded (the agent is not a Python that honours ``PYTHONPATH``: the network was
            not off), ``"guard (partial)"`` when the guard loaded but the run started
            programs it does not cover (``uncovered``), or ``"none (live)"`` for a
            recording.
        report: the replay report the agent wrote (a recording's: the recorder's, with no
            calls), or ``None`` (it wrote none).
        call_log: the call-log cassette (``call_log.py``), or ``None`` without a report.
        blocked: what the guard refused: ``[{"what", "address", "pid"}]``.
        uncovered: programs the run started that ran without the guard (not Python,
            Python with ``-I``/``-E``/``-S``, an environment without the guard's
            variables): ``[{"argv": [str], "why": str, "pid": the starting process}]``.
        stdout_dropped, stderr_dropped: bytes the agent wrote past the cap of the run's
            files (``options.OUTPUT_CAP``): its output was cut.
        left_behind: processes the agent left running when it ended (daemons, children),
            killed with the run.
        stdout, stderr: the files holding the agent's output.
        stdout_tail, stderr_tail: its last lines of stdout and of stderr (``TAIL_LINES``,
            secrets masked): where an agent says why it failed.
        error: why it could not start, or why its report could not be read.
        write_error: the runs folder could not be written for this run (the call log:
            disk full, a write error), ``""`` when it could.
    """

    run: int
    status: str
    exit_code: int | None
    duration_s: float
    isolation: str
    report: ReplayReport | None = None
    call_log: Path | None = None
    blocked: list[dict[str, Any]] = field(default_factory=list)
    stdout: Path | None = None
    stderr: Path | None = None
    stderr_tail: str = ""
    error: str = ""
    stdout_tail: str = ""
    uncovered: list[dict[str, Any]] = field(default_factory=list)
    stdout_dropped: int = 0
    stderr_dropped: int = 0
    left_behind: int = 0
    write_error: str = ""
    #: the cassette the run's report says it replayed, when that is not the one served
    #: (the agent pointed ``CASSETTE_PATH`` elsewhere): never a clean replay of this one
    other_cassette: str | None = None
    #: the run was asked to answer new calls live (``LoopOptions.new_calls``): they do not
    #: make its replay unclean
    new_calls_allowed: bool = False

    def replay(self, strict: bool = False) -> tuple[str, str]:
        """How this run's replay went: ``(kind, why)``, ``kind`` one of ``REPLAY_KINDS``,
        ``why`` the reason for a person (``""`` for ``clean``). A clean replay made at least
        one call (none needed when the report says the cassette is empty), had no miss and
        no call past the last recording and, with ``strict``, left no recording unused; the
        agent's exit status then is its result. An agent that catches a miss and exits 0
        is ``unclean``, as ``replay`` says (exit 1)."""
        if self.status == "cancelled":
            return "not_run", "cancelled"
        outside = self._outside()
        if outside:
            return "infrastructure", outside
        if self.other_cassette is not None:
            return "unclean", f"replayed another cassette ({self.other_cassette})"
        return report_replay(self.report, strict, self.new_calls_allowed)

    def _outside(self) -> str:
        """Why the run's end was not the agent's doing (infrastructure), or ``""``."""
        if self.status == "not_started":
            return f"not started: {self.error}" if self.error else "not started"
        if self.status == "timeout":
            return f"timed out after {self.duration_s:.0f} s ({TIMEOUT_HINT})"
        code = self.exit_code
        if code is not None and code < 0 and -code in OUTSIDE_SIGNALS:
            return f"killed by {signal.Signals(-code).name}"
        if self.write_error:
            return f"the runs folder could not be written: {self.write_error}"
        if any(words in self.stderr_tail for words in DISK_FULL_WORDS):
            return "a write failed for want of disk space (No space left on device)"
        return ""

    @property
    def no_replay(self) -> bool:
        """The agent exited 0 without replaying anything (see ``status``)."""
        return self.status == NO_REPLAY

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def completed(self) -> bool:
        """The run ran to an end of its own or its timeout (not cancelled, not unstarted)."""
        return self.status not in ("cancelled", "not_started")

    @property
    def calls(self) -> int | None:
        """How many calls the agent made, ``None`` without a report (or calls in it)."""
        calls = self.report.calls if self.report is not None else None
        return len(calls) if calls is not None else None

    @property
    def hits(self) -> int:
        """Calls served from the cassette (a recorded error served counts too)."""
        return self.report.hits if self.report is not None else 0

    @property
    def misses(self) -> int:
        """Calls whose key was never recorded."""
        return self.report.count("miss") if self.report is not None else 0

    @property
    def exhausted(self) -> int:
        """Calls past the last recording of their key."""
        return self.report.count("exhausted") if self.report is not None else 0

    @property
    def new_calls(self) -> int:
        """Calls answered live under a new-calls policy (outcome ``new``)."""
        return self.report.count("new") if self.report is not None else 0

    @property
    def pinned(self) -> int:
        """Calls a pinned fixture answered (outcome ``pinned``)."""
        return self.report.count("pinned") if self.report is not None else 0

    @property
    def repeated_calls(self) -> int:
        """Calls of a key beyond its first call (summed over the report's ``repeats``)."""
        return self.report.repeated_calls if self.report is not None else 0

    @property
    def unused_seqs(self) -> list[int]:
        return list(self.report.unused_seqs) if self.report is not None else []

    def to_json(self, strict: bool = False) -> dict[str, Any]:
        """``{"run", "status", "passed", "exit_code", "duration_s", "isolation", "calls",
        "hits", "misses", "exhausted", "new_calls", "pinned", "repeated_calls", "unused_seqs",
        "blocked",
        "call_log", "report", "stdout", "stderr", "stdout_tail", "stderr_tail", "error",
        "uncovered",
        "output_dropped": {"stdout", "stderr"} (bytes), "left_behind", "replay",
        "replay_why"}`` (paths as strings or null; ``replay`` and ``replay_why``:
        ``replay(strict)``)."""
        kind, why = self.replay(strict)

        def path(p: Path | None) -> str | None:
            return str(p) if p is not None else None

        return {
            "run": self.run,
            "status": self.status,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "duration_s": round(self.duration_s, 4),
            "isolation": self.isolation,
            "calls": self.calls,
            "hits": self.hits,
            "misses": self.misses,
            "exhausted": self.exhausted,
            "new_calls": self.new_calls,
            "pinned": self.pinned,
            "repeated_calls": self.repeated_calls,
            "unused_seqs": self.unused_seqs,
            "blocked": self.blocked,
            "call_log": path(self.call_log),
            "report": path(self.stdout.with_name(f"run-{self.run:02d}.report.json"))
            if self.stdout is not None and self.report is not None
            else None,
            "stdout": path(self.stdout),
            "stderr": path(self.stderr),
            "stdout_tail": self.stdout_tail,
            "stderr_tail": self.stderr_tail,
            "error": self.error,
            "uncovered": self.uncovered,
            "output_dropped": {"stdout": self.stdout_dropped, "stderr": self.stderr_dropped},
            "left_behind": self.left_behind,
            "replay": kind,
            "replay_why": why,
        }


@dataclass
class RunsResult:
    """What the runs of one job have in common, and the runs themselves.

    Attributes:
        cassette: the cassette replayed (or recorded).
        agent: the agent command as written.
        requested: runs asked for.
        results: one per run that started or was due, in run order.
        isolation: the isolation in force (``Isolation.name``), ``"none (live)"`` when
            recording.
        isolation_detail: how it was set up, for a person.
        runs_dir: the folder holding every run's files, or ``None``: the job's temporary
            folder, removed when it ended (see ``_runs_folder.py``).
        cancelled: the job was cancelled; ``results`` holds what finished before.
        source_format: ``"cassette"``, or the format of an imported run (``cassette`` is
            then its path spec; the agent read it written as a cassette, ``served.py``).
        not_covered: what the isolation in force does not cut off, one phrase each
            (``_isolation.Isolation.not_covered``).
        jobs: how many runs ran at once, ``None`` when not said.
        options: the ``LoopOptions`` the runs ran with (the new-calls policy, where the
            new calls went, the fixtures), ``None`` when not said.
    """

    cassette: Path
    agent: str
    requested: int
    results: list[RunResult]
    isolation: str
    isolation_detail: str
    runs_dir: Path | None
    cancelled: bool = False
    source_format: str = "cassette"
    not_covered: tuple[str, ...] = ()
    jobs: int | None = None
    options: Any = None

    @property
    def completed(self) -> list[RunResult]:
        return [r for r in self.results if r.completed]

    @property
    def passed(self) -> int:
        """How many of the completed runs passed."""
        return sum(r.passed for r in self.completed)
