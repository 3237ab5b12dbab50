"""``bisect``: which of the responses that differ between a failing run (A) and a passing
run (B) make the agent fail, offline.

D is the set of aligned steps whose responses differ (``hybrid.differing_steps``). Each
candidate subset S of D is a hybrid cassette (B, with the responses of S taken from A)
gated N times with the network off (``oracle.gate_outcome``), and delta debugging
(``ddmin``) narrows D to a 1-minimal subset that still makes every run fail. First the
two ends are checked: B's responses alone must pass and all of A's must fail, else the
question has no answer offline and the result says which end did not hold.

Every hybrid cassette tried is kept in the output folder (``candidate-NNN.jsonl``) with
the minimal one (``minimal.jsonl``), so any of them opens beside A or B in the app.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from shlex import quote
from typing import Any

from ..diff.model import STATUS_WORDS, Status
from ..diff.result import DiffResult, diff_job
from ..format.jobs import Cancelled, CancelToken, JobGenerator, Progress
from ..format.plural import plural
from ..importers.sources import open_cassette
from ..loop.agent import AgentCommand
from ..loop.gate import gate_job
from ..loop.options import LoopOptions
from .ddmin import FAIL, PASS, UNRESOLVED, Search, ddmin
from .hybrid import DifferingStep, differing_steps, write_hybrid
from .oracle import MEASURED_NOTHING, candidate_options, gate_outcome

#: exit statuses, as the gate's: 0 found, 1 found with unresolved candidates, 2 no answer
EXIT_FOUND = 0
EXIT_UNSURE = 1
EXIT_NO_ANSWER = 2


class FolderInUse(FileExistsError):
    """The hybrids' folder holds a previous bisect's candidates (``path``: the folder, the
    file at fault a ``--json`` error names)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(f"{folder}: holds a previous bisect's candidates; name another folder")
        self.path = str(folder)


@dataclass
class Candidate:
    """One hybrid tried: the steps taken from A, the outcome, why, and its file."""

    steps: tuple[DifferingStep, ...]
    outcome: str
    why: str
    cassette: Path
    runs: int
    #: the gate's verdict (``deterministic``, ``no_tool_call``, ...)
    verdict: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "a_seqs": [s.a_seq for s in self.steps],
            "outcome": self.outcome,
            "why": self.why,
            "cassette": str(self.cassette),
            "runs": self.runs,
        }


@dataclass
class BisectResult:
    """What a bisect found.

    Attributes:
        failing, passing: the two cassettes as given.
        differing: D, every step whose responses differ.
        minimal: the 1-minimal failure-inducing steps (``None`` when no answer).
        candidates: every hybrid tried, in order (the two ends first).
        problem: why there is no answer (``""`` when there is one).
        cancelled: stopped before the end (``minimal`` is the smallest failing set so far).
        out_dir: where the hybrid cassettes are.
    """

    failing: str
    passing: str
    differing: list[DifferingStep]
    minimal: list[DifferingStep] | None
    candidates: list[Candidate] = field(default_factory=list)
    problem: str = ""
    cancelled: bool = False
    out_dir: Path | None = None

    @property
    def replays(self) -> int:
        """Agent runs made in all."""
        return sum(c.runs for c in self.candidates)

    @property
    def unresolved(self) -> int:
        return sum(1 for c in self.candidates if c.outcome == UNRESOLVED)

    @property
    def exit_status(self) -> int:
        if self.minimal is None:
            return EXIT_NO_ANSWER
        return EXIT_UNSURE if self.unresolved else EXIT_FOUND

    def summary(self) -> str:
        """``2 of 17 differing responses suffice: A seq 3 search_docs $.results[0], A seq
        5 read_file``, or why there is no answer."""
        if self.minimal is None:
            if not self.problem:  # stopped during the first gate: nothing learned yet
                return "stopped before both ends were checked: no answer yet"
            return f"no answer: {self.problem}"
        named = ", ".join(s.label() for s in self.minimal)
        suffice = "suffices" if len(self.minimal) == 1 else "suffice"
        noun = "response" if len(self.differing) == 1 else "responses"
        head = f"{len(self.minimal)} of {len(self.differing)} differing {noun} {suffice}"
        return f"{head}: {named}"

    def to_json(self) -> dict[str, Any]:
        """The ``bisect --json`` document (docs/json.md)."""
        return {
            "failing": self.failing,
            "passing": self.passing,
            "differing": [_step_json(s) for s in self.differing],
            "minimal": None if self.minimal is None else [_step_json(s) for s in self.minimal],
            "summary": self.summary(),
            "problem": self.problem or None,
            "cancelled": self.cancelled,
            "candidates": [c.to_json() for c in self.candidates],
            "replays": self.replays,
            "unresolved": self.unresolved,
            "out_dir": str(self.out_dir) if self.out_dir is not None else None,
            "exit_status": self.exit_status,
        }


def _step_json(s: DifferingStep) -> dict[str, Any]:
    return {"row": s.row + 1, "a_seq": s.a_seq, "b_seq": s.b_seq, "tool": s.tool,
            "paths": list(s.paths)}  # fmt: skip


def bisect_job(
    failing: str | Path,
    passing: str | Path,
    agent: AgentCommand,
    out_dir: Path,
    options: LoopOptions | None = None,
    *,
    runs: int = 5,
    align: str = "key",
    token: CancelToken | None = None,
) -> JobGenerator[BisectResult]:
    """Bisect the responses that differ between ``failing`` and ``passing`` with ``agent``
    (``runs`` offline replays per candidate), writing each hybrid into ``out_dir`` (made;
    it must not hold a previous bisect's files). ``align``: how the two runs' steps are
    paired (``key`` by default: the same call, wherever each run made it, so a step the
    failing run inserted does not shift every later pair).

    Yields the gates' progress and ``Progress(stage="bisect", unit="candidates")`` before
    each candidate (``item``: the tuple of its ``DifferingStep``) and after it (``item``:
    its ``Candidate``). Cancelled (``token``): the result so far, ``cancelled`` set.

    Raises:
        CassetteFormatError: a cassette cannot be read.
        FileExistsError: ``out_dir`` holds a ``candidate-*.jsonl`` or ``minimal.jsonl``
            already.
    """
    options = options or LoopOptions()
    a, b = open_cassette(str(failing)), open_cassette(str(passing))
    diff = yield from diff_job(a, b, align)
    steps = differing_steps(diff)
    if not steps:  # no hybrid to write: no folder made beside the user's file
        result = BisectResult(str(failing), str(passing), steps, None)
        result.problem = _no_differing_response(diff, str(failing), str(passing))
        return result
    out_dir.mkdir(parents=True, exist_ok=True)
    # checked before any replay: found after them, a minimal.jsonl there failed the whole
    # bisect at its last step
    if any(out_dir.glob("candidate-*.jsonl")) or (out_dir / "minimal.jsonl").exists():
        raise FolderInUse(out_dir)
    result = BisectResult(str(failing), str(passing), steps, None, out_dir=out_dir)

    def test(subset: Sequence[DifferingStep]) -> JobGenerator[str]:
        n = len(result.candidates) + 1
        path = write_hybrid(out_dir / f"candidate-{n:03d}.jsonl", a, b, subset)
        # the candidate about to be gated (its steps as ``item``), so a screen can say it
        yield Progress("bisect", n - 1, None, "candidates", f"trying {len(subset)} from A",
                       item=tuple(subset))  # fmt: skip
        gate = yield from gate_job(path, agent, candidate_options(options, path.stem),
                                   runs=runs, token=token)  # fmt: skip
        if gate.cancelled:
            raise Cancelled("bisect cancelled")
        outcome, why = gate_outcome(gate)
        candidate = Candidate(tuple(subset), outcome, why, path, gate.runs, gate.verdict)
        result.candidates.append(candidate)
        yield Progress("bisect", n, None, "candidates", f"{outcome} with {len(subset)} from A",
                       item=candidate)  # fmt: skip
        return outcome

    search: Search[DifferingStep] = Search()
    try:
        low = yield from test([])
        if low != PASS:
            result.problem = _end_problem("B's own responses", "pass", result.candidates[-1])
            return result
        high = yield from test(steps)
        if high != FAIL:
            result.problem = _end_problem("all of A's differing responses", "fail",
                                          result.candidates[-1])  # fmt: skip
            return result
        search.tested += [(frozenset(), PASS), (frozenset(steps), FAIL)]
        yield from ddmin(steps, test, search)
    except Cancelled:
        result.cancelled = True
    if search.minimal:
        result.minimal = list(search.minimal)
        write_hybrid(out_dir / "minimal.jsonl", a, b, result.minimal)
    return result


def _no_differing_response(diff: DiffResult, failing: str, passing: str) -> str:
    """Why there is nothing to bisect, and what to run instead: the runs made the same
    calls with the same answers, or they part on their calls (a call only one run made,
    other args), which no swap of responses can reach."""
    if diff.first_divergence is None:
        return (
            f"the two runs made the same calls with the same responses ({len(diff.rows)} "
            "steps): nothing in the recordings tells them apart (nothing to bisect); "
            f"see whether the agent fails on its own: cassette-tui gate {quote(failing)}"
        )
    row = diff.rows[diff.first_divergence]
    where = (
        f"A seq {row.a_seq}" if row.b_seq is None
        else f"B seq {row.b_seq}" if row.a_seq is None
        else f"A seq {row.a_seq} / B seq {row.b_seq}"
    )  # fmt: skip
    parted = ", ".join(
        f"{n} {_PARTED[status]}" for status, n in diff.counts.items() if n and status in _PARTED
    )
    made = "no call" if len(diff.a) == 0 else plural(len(diff.a), "call")
    return (
        "no response differs: the runs part on their calls, not on their responses "
        f"(A made {made}, B {len(diff.b)}: {parted}; first at row "
        f"{diff.first_divergence + 1}: {where} {row.tool}, {STATUS_WORDS[row.status]}). "
        "bisect swaps A's responses into B's run, so it has nothing to try: on the same "
        "answers the agent made other calls (its model, prompt or code), or the failing "
        f"run stopped early; see where: cassette-tui diff {quote(failing)} {quote(passing)}"
    )


#: how a row that parts two runs on their calls is counted
_PARTED = {
    Status.ARGS_DRIFT: "with other args",
    Status.OTHER_CALL: "another tool",
    Status.ONLY_A: "only in A",
    Status.ONLY_B: "only in B",
}


def _end_problem(what: str, expected: str, candidate: Candidate) -> str:
    got = candidate.outcome if not candidate.why else f"{candidate.outcome} ({candidate.why})"
    if candidate.verdict in MEASURED_NOTHING:  # the agent's setup, not the responses
        return (
            f"the agent made no tool call with {what} ({candidate.why}): the gate measured "
            "nothing, so the question has no answer yet; check that the agent runs: "
            f"cassette-tui gate {quote(str(candidate.cassette))}"
        )
    return (
        f"with {what} the agent should {expected} every run, but the gate says {got}: "
        f"the difference in responses does not explain the outcome offline "
        f"({candidate.cassette.name})"
    )
