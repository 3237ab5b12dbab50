"""Runs: one home for what a multi-run file holds and how its runs are grouped.

A tau-bench results file or an inspect_ai log holds many runs of many tasks; a cassette or
a chat log holds one. ``RunInfo`` describes one run (task, trial, reward, call count,
position); ``task_order`` is THE order of tasks everywhere (numeric ids in numeric order,
negative ones included, then the others by text); ``task_pairs`` splits each task's trials
into passing and failing ones for "diff a failing run against a passing one";
``group_runs`` gives the selector's view: every task in ``task_order`` with its trials and
its default (failing, passing) pair. ``spec_suffix`` writes the path-spec selector that
opens a run (``FILE#task=31,trial=2``; see ``sources.parse_path_spec``).

This module reads no file and imports no importer: the importers fill ``RunInfo``s and the
app, the CLI and ``sources`` group them here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import CassetteFormatError

#: A reward at or above this counts as a pass (tau-bench scores 0.0 or 1.0).
PASS_REWARD = 1.0 - 1e-6


def spec_suffix(task: str | None, trial: int | None, fmt: str | None = None) -> str:
    """The path-spec selector for these values (``core.sources``): ``"#task=31,trial=2"``,
    ``"#from=vcr"``, ... in the order task, trial, from; ``""`` when all are ``None``."""
    keys = [
        f"{name}={value}"
        for name, value in (("task", task), ("trial", trial), ("from", fmt))
        if value is not None
    ]
    return "#" + ",".join(keys) if keys else ""


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-." else "-" for c in text) or "-"


@dataclass(frozen=True)
class RunInfo:
    """One run in an importable file.

    Attributes:
        task: the task id as text (tau-bench ``task_id``, inspect sample id), or ``None``
            for a file that holds a single run.
        trial: the trial number (tau-bench ``trial``, inspect ``epoch``), or ``None``.
        reward: the run's score as a float (tau-bench ``reward``; inspect: the first
            score, ``C``/``I`` read as 1.0/0.0), or ``None`` when the file has none.
        calls: the number of tool calls, i.e. the entries the run's cassette will hold.
        index: position of the run in the file (0-based).
    """

    task: str | None
    trial: int | None
    reward: float | None
    calls: int
    index: int = 0

    @property
    def passed(self) -> bool | None:
        """``True`` for reward >= 1 (tau-bench's pass rule), ``None`` without a reward."""
        if self.reward is None:
            return None
        return self.reward >= PASS_REWARD

    @property
    def label(self) -> str:
        """A file-name-safe name: ``task-31_trial-2`` (or ``run-<index>``)."""
        if self.task is None and self.trial is None:
            return f"run-{self.index}"
        parts = []
        if self.task is not None:
            parts.append("task-" + _safe(self.task))
        if self.trial is not None:
            parts.append(f"trial-{self.trial}")
        return "_".join(parts)

    def spec_suffix(self) -> str:
        """The path-spec suffix that selects this run: ``#task=31,trial=2`` (or ``""``)."""
        return spec_suffix(self.task, self.trial)

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "trial": self.trial,
            "reward": self.reward,
            "passed": self.passed,
            "calls": self.calls,
            "index": self.index,
        }


class RunSelectionError(CassetteFormatError):
    """A file holds several runs and the selector (task, trial) does not pick exactly one.

    Attributes (besides those of ``CassetteFormatError``):
        runs: every run in the file (``RunInfo``), so a caller can offer a selector.
        fmt: the file's format.
    """

    def __init__(self, path: str | Path, reason: str, runs: list[RunInfo], fmt: str) -> None:
        self.runs = runs
        self.fmt = fmt
        super().__init__(path, None, None, reason)


def task_order(task: str) -> tuple[int, int, str]:
    """The sort key of a task id: integers (``"7"``, ``"31"``, ``"-1"``) in numeric order
    first, then every other id by its text."""
    digits = task.removeprefix("-")
    if digits.isdigit() and digits.isascii():
        return (0, int(task), "")
    return (1, 0, task)


def trial_order(run: RunInfo) -> tuple[bool, int, int]:
    """The sort key of a task's trials: by trial number (none last), then file position."""
    return (run.trial is None, run.trial or 0, run.index)


@dataclass(frozen=True)
class TaskPair:
    """The trials of one task split by outcome, for "diff a failing run against a passing
    one".

    Attributes:
        task: the task id as text.
        passing: the passing runs, by trial.
        failing: the failing runs, by trial.
    """

    task: str
    passing: list[RunInfo] = field(default_factory=list)
    failing: list[RunInfo] = field(default_factory=list)

    @property
    def has_pair(self) -> bool:
        return bool(self.passing and self.failing)

    def default(self) -> tuple[RunInfo, RunInfo] | None:
        """``(passing, failing)``: the pair whose call counts are closest (the most
        comparable runs; ties go to the lowest trials), or ``None`` without a pair."""
        if not self.has_pair:
            return None
        return min(
            ((p, f) for p in self.passing for f in self.failing),
            key=lambda pf: (abs(pf[0].calls - pf[1].calls), pf[0].trial or 0, pf[1].trial or 0),
        )


def task_pairs(runs: Iterable[RunInfo]) -> dict[str, TaskPair]:
    """Group runs by task into ``TaskPair``s, tasks in ``task_order``. Runs without a task
    or a reward are left out."""
    out: dict[str, TaskPair] = {}
    for run in runs:
        if run.task is None or run.passed is None:
            continue
        pair = out.setdefault(run.task, TaskPair(run.task))
        (pair.passing if run.passed else pair.failing).append(run)
    for pair in out.values():
        pair.passing.sort(key=trial_order)
        pair.failing.sort(key=trial_order)
    return {task: out[task] for task in sorted(out, key=task_order)}


@dataclass(frozen=True)
class TaskGroup:
    """The trials of one task, and the pair a selector opens.

    Attributes:
        task: the task id as text (``""`` for runs without one).
        runs: the task's runs by trial.
        pair: ``(failing, passing)`` from ``TaskPair.default()`` (A and B), or ``None``
            when the task lacks a passing or a failing trial.
    """

    task: str
    runs: tuple[RunInfo, ...]
    pair: tuple[RunInfo, RunInfo] | None

    @property
    def passed(self) -> int:
        return sum(1 for run in self.runs if run.passed is True)

    @property
    def failed(self) -> int:
        return sum(1 for run in self.runs if run.passed is False)


def group_runs(runs: Iterable[RunInfo]) -> list[TaskGroup]:
    """The runs grouped by task in ``task_order``, trials in ``trial_order``, each task
    with its default (failing, passing) pair."""
    runs = list(runs)
    by_task: dict[str, list[RunInfo]] = {}
    for run in runs:
        by_task.setdefault(run.task if run.task is not None else "", []).append(run)
    pairs = task_pairs(runs)
    groups = []
    for task in sorted(by_task, key=task_order):
        trials = sorted(by_task[task], key=trial_order)
        pair = pairs.get(task)
        chosen = pair.default() if pair is not None else None
        groups.append(TaskGroup(task, tuple(trials), (chosen[1], chosen[0]) if chosen else None))
    return groups
