"""How a run failed, concretely enough to say whether another run failed *the same way*:
the oracle of ``minimise`` (``minimise.py``).

A failure is ``(exit status, error, miss)``:

- the agent's exit status (a signal as a negative number, as ``RunResult.exit_code``);
- ``error``: the exception class a Python traceback on stderr ends with (``AssertionError``,
  ``CassetteMiss``; the last part of a dotted name), ``None`` without a traceback;
- ``miss``: the ``(tool, args digest)`` of the miss the agent died of, ``None`` when it
  did not die of one. A run died of a miss when it had a miss (or a call past the last
  recording) and its traceback ends in ``CassetteMiss`` / ``ReplayExhausted``, or, with no
  traceback to say what it died of (an agent not written in Python, a miss caught and
  turned into an exit status), when its last call was the miss.

Two runs fail the same way when the three are equal. So a run that left the recording (a
miss on an entry minimise removed) and died of it is another failure than an
``AssertionError``, unless the recorded failure was that very miss; an agent that caught
the miss and went on to fail as recorded fails the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..loop.results import RunResult

#: the exceptions a replay raises for a call it cannot serve (``format/errors.py``)
MISS_ERRORS = frozenset({"CassetteMiss", "ReplayExhausted"})
#: the margin of an exception group's sub-tracebacks (``  | `` per level, Python 3.11+)
_GROUP_MARGIN = re.compile(r"^(?: *\| )+")
#: the replay report's outcomes of a call that was not served
MISS_OUTCOMES = frozenset({"miss", "exhausted"})


@dataclass(frozen=True)
class Failure:
    """How one run failed (the module doc).

    Attributes:
        exit_code: the agent's exit status (never 0; negative: the signal).
        error: the exception class its traceback ends with, or ``None``.
        miss: ``(tool, digest)`` of the miss it died of, or ``None``.
    """

    exit_code: int
    error: str | None = None
    miss: tuple[str, str] | None = None

    def describe(self) -> str:
        """``exit 1, AssertionError`` or ``exit 1, CassetteMiss (a miss of read_file)``."""
        words = f"exit {self.exit_code}"
        if self.error:
            words += f", {self.error}"
        if self.miss is not None:
            words += f" (a miss of {self.miss[0]})"
        return words

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "error": self.error,
            "miss": None if self.miss is None else {"tool": self.miss[0], "digest": self.miss[1]},
            "text": self.describe(),
        }


def traceback_error(stderr_tail: str) -> str | None:
    """The exception class of the last Python traceback in ``stderr_tail``: the first
    unindented line after the last ``  File "..."`` frame (the frame's source lines and a
    message's continuation lines are indented), its name before ``:``, the last part of a
    dotted name (``cassette_tui.core.CassetteMiss`` -> ``CassetteMiss``). An exception
    group's margin (``  | ``) is read past, so the innermost exception of its last
    sub-traceback is the one named. Without a frame in the tail (a long message pushed
    it out), the first unindented line is taken. ``None`` when no line looks like one."""
    lines = [_GROUP_MARGIN.sub("", line) for line in stderr_tail.splitlines()]
    frames = [i for i, line in enumerate(lines) if line.startswith('  File "')]
    start = frames[-1] + 1 if frames else 0
    for line in lines[start:]:
        if not line.strip() or line[0].isspace():
            continue
        name = line.split(":", 1)[0].strip()
        if name and all(part.isidentifier() for part in name.split(".")):
            return name.rsplit(".", 1)[-1]
        return None
    return None


def run_failure(run: RunResult) -> Failure | None:
    """How ``run`` failed (the module doc), ``None`` when it passed (exit 0).

    The run must have ended by itself (not ``RunResult.replay`` ``infrastructure``: a
    timeout or a signal from outside says nothing about the agent)."""
    code = run.exit_code
    if code is None or code == 0:
        return None
    error = traceback_error(run.stderr_tail) if run.status == "crashed" else None
    return Failure(code, error, _died_of_miss(run, error))


def _died_of_miss(run: RunResult, error: str | None) -> tuple[str, str] | None:
    report = run.report
    if report is None or not report.count(*MISS_OUTCOMES):
        return None
    calls = report.calls or ()
    missed = [c for c in calls if c.outcome in MISS_OUTCOMES]
    last_miss = (missed[-1].tool, missed[-1].digest) if missed else None
    if last_miss is None and report.misses:
        last_miss = (report.misses[-1].tool, report.misses[-1].digest)
    if error in MISS_ERRORS:
        return last_miss
    if error is None and calls and calls[-1].outcome in MISS_OUTCOMES:
        return last_miss  # nothing says otherwise: it ended at the miss
    return None


def commonest(failures: Sequence[Failure | None]) -> tuple[Failure | None, int]:
    """The failure most runs had (the first seen of equally common ones) and how many
    had it; ``(None, 0)`` when every run passed."""
    counted = Counter(f for f in failures if f is not None)
    if not counted:
        return None, 0
    best = max(counted.values())
    first = next(f for f in failures if f is not None and counted[f] == best)
    return first, best
