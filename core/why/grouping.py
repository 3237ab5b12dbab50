"""Group many runs of one task by where they part: a prefix tree over the runs' call keys,
each node with its runs' pass and fail counts, and the first step where outcomes split
("the runs part at step 7 into 3 branches; 9 of 9 failures take branch B").

Runs come from a multi-run file (tau-bench's trials: every run, or one task's with
``task=`` or the path spec ``FILE#task=6``; ``FILE#task=6,trial=2`` is one run), a folder
of cassettes or a gate's runs folder (``run-NN.jsonl`` call logs, passed when
``run-NN.end.json`` says exit 0), or single cassettes. A cassette's outcome is
its ``run_outcome`` (``passed``), or unknown. Keys are ``(tool, args digest)`` under the
project's normalization rules, so two runs that asked the same thing share a node.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.cassette import Cassette, load
from ..format.context import run_outcome
from ..format.errors import CassetteFormatError
from ..importers.sources import (
    detect_format,
    is_multi_run,
    list_runs,
    open_cassette,
    resolve_spec,
)
from ..keys.normalize import NormalizationRules

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..format.digest import KeyRules
    from ..loop.results import RunResult

Key = tuple[str, str]


@dataclass
class GroupedRun:
    """One run: its name (a path or path spec), its call keys in order, and whether it
    passed (``None``: the source does not say). ``cassette``: the run as opened (kept so
    that a viewer shows a step's args or opens the run without reading it again)."""

    name: str
    keys: list[Key]
    passed: bool | None
    task: str | None = None
    cassette: Cassette | None = field(default=None, repr=False, compare=False)


@dataclass
class Node:
    """A prefix of call keys shared by ``runs`` (indices into the runs list).

    Attributes:
        key: the last call of the prefix (``None`` at the root).
        depth: the prefix's length: the node's call is step ``depth``.
        runs: the runs that made this prefix; ``ended``: those whose run ends here.
        children: the next call, by key, in order of first appearance.
    """

    key: Key | None
    depth: int
    runs: list[int] = field(default_factory=list)
    ended: list[int] = field(default_factory=list)
    children: dict[Key, Node] = field(default_factory=dict)

    def counts(self, runs: list[GroupedRun]) -> tuple[int, int, int]:
        """``(passed, failed, unknown)`` among this node's runs."""
        outcomes = [runs[i].passed for i in self.runs]
        return outcomes.count(True), outcomes.count(False), outcomes.count(None)


@dataclass
class Branch:
    """One way on from a split: a next call (``key``) or the end of the run (``None``)."""

    label: str
    key: Key | None
    runs: list[int]
    passed: int
    failed: int
    unknown: int


@dataclass
class Split:
    """The first step where outcomes split: ``step`` (1-based: the call after the shared
    prefix), the branches, the most runs first, the failures among them, and ``node``: the
    shared prefix's last node (the root when the runs part at step 1)."""

    step: int
    branches: list[Branch]
    failures: int
    node: Node | None = field(default=None, repr=False, compare=False)

    def message(self) -> str:
        """``the runs part at step 7 into 3 branches; 9 of 9 failures take branch B
        (read_file)``."""
        worst = max(self.branches, key=lambda b: (b.failed, -b.passed))
        tail = f"{worst.failed} of {self.failures} failures take branch {worst.label}"
        if self.failures == 0:
            tail = "no run failed"
        return f"the runs part at step {self.step} into {len(self.branches)} branches; {tail}"


@dataclass
class Grouping:
    runs: list[GroupedRun]
    root: Node
    split: Split | None

    def to_json(self) -> dict[str, Any]:
        """The ``group --json`` document (docs/json.md)."""
        return {
            "runs": [{"name": r.name, "passed": r.passed, "calls": len(r.keys)} for r in self.runs],
            "split": None if self.split is None else {
                "step": self.split.step,
                "message": self.split.message(),
                "failures": self.split.failures,
                "branches": [
                    {"label": b.label, "tool": b.key[0] if b.key else None,
                     "digest": b.key[1] if b.key else None,
                     "runs": [self.runs[i].name for i in b.runs],
                     "passed": b.passed, "failed": b.failed, "unknown": b.unknown}
                    for b in self.split.branches
                ],
            },
            "tree": _node_json(self.root, self.runs),
        }  # fmt: skip


def suggested_pair(grouping: Grouping) -> tuple[int, int] | None:
    """Two runs to open side by side at the split, as indices into ``grouping.runs``:
    ``(failing, passing)``, the failure from the branch most failures take and the pass
    from another branch (where they part is then the split), else from the same branch
    (they part later); ``None`` without a split, a failure or a pass."""
    split = grouping.split
    if split is None:
        return None
    runs = grouping.runs
    worst = max(split.branches, key=lambda b: (b.failed, -b.passed))
    failing = next((i for i in worst.runs if runs[i].passed is False), None)
    others = [i for b in split.branches if b is not worst for i in b.runs]
    passing = next((i for i in [*others, *worst.runs] if runs[i].passed is True), None)
    if failing is None or passing is None:
        return None
    return failing, passing


def _node_json(node: Node, runs: list[GroupedRun], limit: int = 200) -> dict[str, Any]:
    passed, failed, unknown = node.counts(runs)
    out: dict[str, Any] = {
        "tool": node.key[0] if node.key else None,
        "digest": node.key[1] if node.key else None,
        "step": node.depth,
        "runs": len(node.runs),
        "passed": passed,
        "failed": failed,
        "unknown": unknown,
        "ended": len(node.ended),
    }
    # a chain of one child is flattened into the list of its steps: deep trees stay flat
    out["children"] = [_node_json(c, runs, limit) for c in list(node.children.values())[:limit]]
    return out


def build_tree(runs: list[GroupedRun]) -> Node:
    """The prefix tree of ``runs``' call keys."""
    root = Node(None, 0, list(range(len(runs))))
    for i, run in enumerate(runs):
        node = root
        for key in run.keys:
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = Node(key, node.depth + 1)
            child.runs.append(i)
            node = child
        node.ended.append(i)
    return root


def _branches(node: Node, runs: list[GroupedRun]) -> list[Branch]:
    out = []
    for key, child in node.children.items():
        p, f, u = child.counts(runs)
        out.append(Branch("", key, child.runs, p, f, u))
    if node.ended:
        outcomes = [runs[i].passed for i in node.ended]
        out.append(Branch("", None, node.ended, outcomes.count(True), outcomes.count(False),
                          outcomes.count(None)))  # fmt: skip
    out.sort(key=lambda b: -len(b.runs))
    for n, b in enumerate(out):
        name = chr(ord("A") + n) if n < 26 else f"#{n + 1}"
        b.label = f"{name} ({b.key[0] if b.key else 'the run ends'})"
    return out


def first_split(root: Node, runs: list[GroupedRun]) -> Split | None:
    """The shallowest node whose branches differ in outcome (a branch's pass rate is not
    another's), breadth first; ``None`` when no branching separates outcomes."""
    level = [root]
    while level:
        for node in level:
            branches = _branches(node, runs)
            if len(branches) < 2:
                continue
            rates = {
                round(b.passed / (b.passed + b.failed), 6) for b in branches if b.passed + b.failed
            }
            if len(rates) > 1:
                return Split(node.depth + 1, branches, sum(b.failed for b in branches), node)
        level = [c for node in level for c in node.children.values()]
    return None


def group(runs: list[GroupedRun]) -> Grouping:
    """The tree and the first split of ``runs`` (runs of one task)."""
    root = build_tree(runs)
    return Grouping(runs, root, first_split(root, runs))


def group_by_task(runs: list[GroupedRun]) -> dict[str | None, Grouping]:
    """One ``Grouping`` per task (``None``: runs that name no task), tasks in the order
    ``multi_run.task_order`` gives: runs of different tasks never share a tree."""
    from ..format.multi_run import task_order

    tasks: dict[str | None, list[GroupedRun]] = {}
    for run in runs:
        tasks.setdefault(run.task, []).append(run)
    order = sorted(
        tasks, key=lambda t: (t is not None, task_order(t) if t is not None else (0, 0, ""))
    )
    return {t: group(tasks[t]) for t in order}


def runs_of(
    sources: list[str], rules: NormalizationRules | None = None, task: str | None = None
) -> list[GroupedRun]:
    """Every run in ``sources`` (multi-run files, path specs ``FILE#task=6`` or
    ``FILE#task=6,trial=2``, folders, gate runs folders, cassettes), each with its cassette.
    ``task``: only that task's runs (a run of a folder or a cassette names no task).

    Raises:
        CassetteFormatError: a source cannot be read, a spec's task contradicts ``task``,
            or no run is left to group.
    """
    out: list[GroupedRun] = []
    for source in sources:
        spec = resolve_spec(source, None, task, None)
        if spec.path.is_dir():  # its runs name no task: none of them is ``task``'s
            out.extend(_folder_runs(spec.path, rules) if spec.task is None else [])
        elif spec.trial is None and is_multi_run(spec.path, fmt=spec.fmt):
            # the format once: detecting it per run reads the file's first line each time,
            # all of a one-line JSON file (200 runs took 3 s instead of 0.3 s)
            fmt = detect_format(spec.path, fmt=spec.fmt)
            for info in list_runs(spec.path, fmt=fmt):
                if spec.task is not None and info.task != spec.task:
                    continue
                name = f"{spec.path}{info.spec_suffix()}"
                cassette = open_cassette(name, fmt=fmt, rules=rules)
                out.append(GroupedRun(name, _keys(cassette), info.passed, info.task, cassette))
        elif task is None or spec.trial is not None:  # one run: a cassette, FILE#task=6,trial=2
            cassette = open_cassette(source, task=task, rules=rules)
            passed = _passed(cassette)
            if passed is None and spec.task is None and spec.trial is None:
                passed = _ended(spec.path)  # RUN.end.json, as for a folder's runs
            out.append(GroupedRun(source, _keys(cassette), passed, spec.task, cassette))
        # else: a single-run file names no task, so it holds none of ``task``'s runs
    if not out:
        where = Path(sources[0]) if sources else Path(".")
        why = "no run to group" + (f" for task {task}" if task else "")
        if task is None and where.is_dir():
            why += " (a folder's runs are its *.jsonl cassettes but *.min.jsonl, *.live.jsonl)"
        raise CassetteFormatError(where, None, None, why)
    return out


def gate_runs(results: Iterable[RunResult], rules: KeyRules | None = None) -> list[GroupedRun]:
    """The runs of a gate (``GateResult.results``) that left a call log, named ``run N``,
    their call logs loaded under ``rules``: passed when the agent exited 0 (``passed``),
    failed when it exited otherwise, crashed or timed out, unknown else (the gate's own
    words: ``loop/results.py``).

    Raises:
        CassetteFormatError: a call log cannot be read.
    """
    out = []
    for r in results:
        if r.call_log is None:
            continue
        log = load(r.call_log, rules=rules)
        passed = True if r.status == "passed" else False if r.status in _FAILED else None
        out.append(GroupedRun(f"run {r.run}", _keys(log), passed, None, log))
    return out


#: the statuses of a gate's run that count as a failure
_FAILED = frozenset({"failed", "crashed", "timeout"})


#: what the why tools write beside a recording, which is no run of the agent: minimise's
#: subset (``RUN.min.jsonl``) and verify's live answers (``RUN.live.jsonl``)
NOT_RUNS = (".min.jsonl", ".live.jsonl")


def _folder_runs(folder: Path, rules: NormalizationRules | None) -> list[GroupedRun]:
    runs = []
    for path in sorted(folder.glob("*.jsonl")):
        if path.name.endswith(NOT_RUNS):
            continue
        cassette = load(path, rules=rules)
        passed = _passed(cassette)
        if passed is None:
            passed = _ended(path)
        runs.append(GroupedRun(str(path), _keys(cassette), passed, None, cassette))
    return runs


def _ended(cassette: Path) -> bool | None:
    """Whether the run recorded at ``cassette`` passed, as ``RUN.end.json`` beside it says
    (``record``'s, a gate runs folder's ``run-NN.end.json``): ``None`` without one."""
    end = cassette.with_suffix(".end.json")
    if not end.is_file():
        return None
    code = _end_exit(end)
    return None if code is None else code == 0


def _end_exit(end: Path) -> int | None:
    """The exit status ``RUN.end.json`` / ``run-NN.end.json`` records (``loop/record.py``,
    ``loop/_reaper.py``): ``None`` when it says none (a run killed by a signal).

    Raises:
        CassetteFormatError: the file cannot be read, is not a JSON object, or its
            ``exit`` is not an integer or null (``"0"`` would read as a failure).
    """
    try:
        doc = json.loads(end.read_bytes())
    except OSError as exc:
        raise CassetteFormatError(end, None, None, f"cannot be read: {exc.strerror}") from exc
    except ValueError as exc:
        raise CassetteFormatError(
            end, None, None, f"not valid JSON ({exc}): how the run ended is unknown; fix or "
            "remove it"
        ) from exc  # fmt: skip
    if not isinstance(doc, dict):
        raise CassetteFormatError(end, None, None, 'not a JSON object: expected {"exit": N}')
    code = doc.get("exit")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        raise CassetteFormatError(
            end, None, "exit",
            f"{json.dumps(code)} is not a number: the agent's exit status, as in "
            '{"exit": 1}',
        )  # fmt: skip
    return code


def _keys(cassette: Cassette) -> list[Key]:
    return [cassette.key(i) for i in range(len(cassette))]


def _passed(cassette: Cassette) -> bool | None:
    meta = cassette.metadata.get("run") if isinstance(cassette.metadata, dict) else None
    if isinstance(meta, dict) and isinstance(meta.get("passed"), bool):
        return meta["passed"]
    outcome, _ = run_outcome(cassette)
    return outcome.passed if outcome is not None else None
