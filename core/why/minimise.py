"""``minimise``: the smallest set of a failing cassette's entries on which the agent still
fails the same way, offline, as a cassette for a bug report.

1. The whole cassette is gated N times (network off, as ``gate`` does). Each run's failure
   is read as ``failure.Failure`` (exit status, the exception of its traceback, the miss
   it died of); the commonest one is *the* failure and its count of N the recorded rate.
   A cassette that passes every run, is flaky (some runs pass or fail another way, unless
   flaky failures are accepted), or whose gate measured nothing (no replay, no tool call,
   infrastructure) has nothing to minimise: the result says so, with the gate's exit.
2. The empty cassette is tried (a failure that needs no answer at all), then delta
   debugging (``ddmin``) narrows the entries. The oracle gates a candidate N times:
   ``FAIL`` when the runs fail the same way at the recorded rate (every run, for a
   failure that was deterministic; at least as often, when a flaky one was accepted);
   ``PASS`` when no run does (each passed or failed another way: a run that left the
   recording and died of a removed entry's miss is another failure, unless the recorded
   failure was that miss); else ``UNRESOLVED`` (a flaky candidate, a timeout, a run killed
   from outside), never counted as a pass or a fail. Outcomes are cached by subset.
3. With ``shrink_responses``, each kept response is shrunk the same way: ddmin over the
   keys of each object and the items of each list in it, outer ones first
   (``shrink.py``); a response is only ever replaced by one found failing the same way.
4. The subset found is written atomically (``subset.Subsets``: seqs kept, repeated keys
   kept as prefixes, ``batch`` marks and an MCP sidecar made consistent), never over an
   existing file unless asked. Cancelled, the smallest failing subset found so far is
   written and the result says it is not proven 1-minimal. When nothing could be removed
   (every entry kept, no response part dropped), nothing is written and the exit status
   is 1: the cassette itself is the smallest.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..format.atomic import NotReplaceable, TargetExists, check_new_file, file_kind
from ..format.cassette import Cassette
from ..format.jobs import Cancelled, CancelToken, JobGenerator, Progress
from ..importers.sources import open_cassette, parse_path_spec
from ..keys.config import load_rules
from ..loop.agent import AgentCommand
from ..loop.gate import VERDICT_EXIT, GateResult, gate_job
from ..loop.options import LoopOptions
from .ddmin import FAIL, PASS, UNRESOLVED, Search, ddmin
from .failure import Failure, commonest, run_failure
from .oracle import candidate_options, gate_outcome
from .shrink import Part, PathParts, child_containers, format_path, keeping, parts
from .subset import Subsets, sidecar_for

#: exit statuses, as the gate's: 0 found (or nothing to minimise: every run passes), 1
#: found with unresolved candidates, a flaky cassette, or nothing could be removed (every
#: entry keeps the failure: no smaller cassette exists), 2 no answer
EXIT_FOUND = 0
EXIT_UNSURE = 1
EXIT_NO_ANSWER = 2
#: how many kept entries a summary names before "..."
NAMED = 12


@dataclass
class Candidate:
    """One subset tried: its entry indices (0-based, the closure), the outcome and why,
    and how its N runs went (``same``: failed the same way)."""

    indices: tuple[int, ...]
    seqs: tuple[int, ...]
    outcome: str
    why: str
    runs: int
    same: int
    misses: int = 0
    #: what the candidate changes inside a response (``seq 4 $.results: 2 of 5 parts``
    #: kept of that list); ``""`` for a subset of whole entries
    response: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "seqs": list(self.seqs),
            "entries": len(self.seqs),
            "outcome": self.outcome,
            "why": self.why,
            "runs": self.runs,
            "same": self.same,
            "misses": self.misses,
            "response": self.response or None,
        }


@dataclass
class MinimiseResult:
    """What a minimise found.

    Attributes:
        cassette: the cassette as given; ``entries``: how many it has.
        runs: gate runs per candidate (and for the whole cassette).
        whole: the gate of the whole cassette (``None`` when cancelled before it ended).
        failure: the recorded failure (``None``: the whole cassette never failed).
        failed: runs of the whole cassette that failed that way (the recorded rate is
            ``failed / runs``).
        minimal: the kept entries' indices (the closure; ``None`` when no answer).
        seqs, tools: the kept entries' seqs and tools.
        candidates: every subset gated, in order (the empty cassette first).
        problem: why there is nothing to minimise (``""`` otherwise).
        cancelled: stopped before the end (``minimal`` is the smallest failing subset
            found so far, not proven 1-minimal).
        out: the cassette written (``None``: none); ``sidecar``: its MCP sidecar.
    """

    cassette: str
    entries: int
    runs: int
    whole: GateResult | None = None
    failure: Failure | None = None
    failed: int = 0
    minimal: list[int] | None = None
    seqs: list[int] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    problem: str = ""
    cancelled: bool = False
    out: Path | None = None
    sidecar: Path | None = None
    problem_exit: int = EXIT_NO_ANSWER
    #: the parts dropped from the kept responses (``--shrink-responses``), as
    #: ``seq 4 $.results[2]``, the path in the response as it was when they went
    removed: list[str] = field(default_factory=list)

    @property
    def replays(self) -> int:
        """Agent runs made in all, the whole cassette's gate included."""
        whole = self.whole.runs if self.whole is not None else 0
        return whole + sum(c.runs for c in self.candidates)

    @property
    def unresolved(self) -> int:
        return sum(1 for c in self.candidates if c.outcome == UNRESOLVED)

    @property
    def misses(self) -> int:
        """Calls missed (or past the last recording) in the runs of the subset kept: the
        calls of removed entries that the agent got past (0 for the whole cassette)."""
        if self.minimal is None or len(self.minimal) == self.entries:
            return 0
        kept = tuple(self.minimal)
        return next((c.misses for c in self.candidates if c.indices == kept), 0)

    @property
    def one_minimal(self) -> bool:
        """The search ended: removing any one kept entry (that can be removed: the last
        kept recording of its key) makes the failure go, as far as the outcomes
        resolved."""
        return self.minimal is not None and not self.cancelled

    @property
    def nothing_removed(self) -> bool:
        """Every entry is kept and no response part dropped: the cassette is the smallest
        failing one there is, so no smaller cassette is written and the exit status is 1,
        not "found" (a script that attaches ``NAME.min.jsonl`` learns nothing shrank)."""
        return self.minimal is not None and len(self.minimal) == self.entries and not self.removed

    @property
    def exit_status(self) -> int:
        if self.minimal is None:
            return self.problem_exit
        return EXIT_UNSURE if self.unresolved or self.nothing_removed else EXIT_FOUND

    def summary(self) -> str:
        """``2 of 20 entries keep the failure: seq 4 check, seq 9 check``, or why there is
        nothing to minimise."""
        if self.minimal is None:
            if self.problem:
                return f"nothing to minimise: {self.problem}"
            if self.cancelled:  # stopped during the whole cassette's gate
                return "stopped before the whole cassette's gate ended: no answer yet"
            return "no answer"
        shown = zip(self.seqs[:NAMED], self.tools[:NAMED], strict=True)
        named = ", ".join(f"seq {s} {t}" for s, t in shown)
        if len(self.seqs) > NAMED:
            named += ", ..."
        keeps = "keeps" if len(self.seqs) == 1 else "keep"
        if self.nothing_removed and not self.cancelled:
            every = "the entry keeps" if self.entries == 1 else f"all {self.entries} entries keep"
            if not self.entries:
                return "nothing could be removed: the cassette has no entry"
            return f"nothing could be removed: {every} the failure: {named}"
        if not self.seqs:
            head = f"0 of {self.entries} entries: the agent fails the same way with none"
            return head
        return f"{len(self.seqs)} of {self.entries} entries {keeps} the failure: {named}"

    def to_json(self) -> dict[str, Any]:
        """The ``minimise --json`` document (docs/json.md)."""
        whole = self.whole
        return {
            "cassette": self.cassette,
            "entries": self.entries,
            "runs": self.runs,
            "whole": None if whole is None else {
                "verdict": whole.verdict, "runs": whole.runs, "passed": whole.passed,
                "failed_same_way": self.failed,
            },
            "failure": None if self.failure is None else self.failure.to_json(),
            "minimal": None if self.minimal is None else [
                {"seq": s, "tool": t} for s, t in zip(self.seqs, self.tools, strict=True)
            ],
            "summary": self.summary(),
            "problem": self.problem or None,
            "cancelled": self.cancelled,
            "one_minimal": self.one_minimal,
            "candidates": [c.to_json() for c in self.candidates],
            "replays": self.replays,
            "unresolved": self.unresolved,
            "misses": self.misses,
            "removed": self.removed,
            "out": None if self.out is None else str(self.out),
            "sidecar": None if self.sidecar is None else str(self.sidecar),
            "exit_status": self.exit_status,
        }  # fmt: skip


def default_out(cassette: str | Path) -> Path:
    """Where the result goes by default: beside the cassette, ``NAME.min.jsonl``
    (``runs/fail.jsonl`` -> ``runs/fail.min.jsonl``); a run picked from another tool's
    file names its task and trial (``airline.json#task=6,trial=1`` ->
    ``airline.task-6.trial-1.min.jsonl``)."""
    spec = parse_path_spec(cassette)
    picked = "".join(
        f".{word}-{value}"
        for word, value in (("task", spec.task), ("trial", spec.trial))
        if value is not None
    )
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in picked)
    return spec.path.with_name(f"{spec.path.stem}{safe}.min.jsonl")


def check_out(cassette: str | Path, out: Path, force: bool, has_sidecar: bool) -> None:
    """Before any replay: ``out`` (and its sidecar) may be written.

    Raises:
        ValueError: ``out`` is the cassette being minimised.
        TargetExists: ``out`` (or its sidecar) exists and ``force`` is false.
        NotReplaceable, FolderNotWritable: as ``write_atomic`` / ``check_new_file``.
    """
    targets = [out, *([sidecar_for(out)] if has_sidecar else [])]
    if out.absolute() == Path(cassette).absolute() or (
        out.exists() and Path(cassette).exists() and out.samefile(cassette)
    ):
        raise ValueError(f"{out}: is the cassette being minimised; name another file with -o")
    for target in targets:
        kind = file_kind(target)
        if kind is not None and kind != "regular file":
            raise NotReplaceable(target, kind)  # found now, not after every replay
        if kind is not None and not force:
            raise TargetExists(target)
        check_new_file(target)


def minimise_job(
    cassette: str | Path,
    agent: AgentCommand,
    options: LoopOptions | None = None,
    *,
    runs: int = 5,
    out: Path | None = None,
    force: bool = False,
    allow_flaky: bool = False,
    shrink_responses: bool = False,
    token: CancelToken | None = None,
) -> JobGenerator[MinimiseResult]:
    """Minimise ``cassette`` against ``agent`` (the module doc), ``runs`` offline replays
    per candidate, writing the result to ``out`` (default ``default_out``; ``force``
    replaces an existing file). ``allow_flaky``: minimise a failure that the whole
    cassette shows in some runs only (a candidate then keeps it when it fails the same way
    at least as often). ``shrink_responses``: then drop what the failure does not need
    from inside the kept responses (object keys, list items), by the same oracle.

    Yields the gates' progress and ``Progress(stage="minimise", unit="candidates")`` after
    each candidate. Cancelled (``token``): the result so far, ``cancelled`` set.

    Raises:
        CassetteFormatError: the cassette cannot be read.
        ValueError: ``out`` is the cassette itself; ``runs`` < 1.
        FileExistsError: ``out`` exists (without ``force``), or is not a regular file.
    """
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    options = options or LoopOptions()
    recording = open_cassette(str(cassette), rules=load_rules(options.config))
    subsets = Subsets(recording)
    target = out if out is not None else default_out(cassette)
    check_out(cassette, target, force, subsets.sidecar() is not None)
    result = MinimiseResult(str(cassette), len(recording), runs)

    whole = yield from gate_job(
        cassette, agent, candidate_options(options, "whole"), runs=runs, token=token
    )
    if whole.cancelled:
        result.cancelled = True
        return result
    result.whole = whole
    if not _judge_whole(result, whole, allow_flaky):
        return result
    assert result.failure is not None
    rate = result.failed / whole.runs

    everything = list(range(len(recording)))
    known = {(frozenset(everything), _responses_key({})): FAIL}
    shrunk: dict[int, Any] = {}  # the responses shrunk so far, by entry index

    with _candidates_folder(options) as scratch:

        def gate_candidate(
            closed: frozenset[int], responses: dict[int, Any], what: str
        ) -> JobGenerator[str]:
            """The oracle: ``closed`` with ``responses`` gated, cached by both."""
            key = (closed, _responses_key(responses))
            if key in known:
                return known[key]
            n = len(result.candidates) + 1
            path = subsets.write(
                closed, Path(scratch) / f"candidate-{n:03d}.jsonl", responses=responses
            )
            gate = yield from gate_job(
                path,
                agent,
                candidate_options(options, f"candidate-{n:03d}"),
                runs=runs,
                token=token,
            )
            if gate.cancelled:
                raise Cancelled("minimise cancelled")
            assert result.failure is not None
            outcome, why, same = judge(gate, result.failure, rate)
            ordered = tuple(sorted(closed))
            seqs = tuple(recording.seq(i) for i in ordered)
            misses = gate.total("misses") + gate.total("exhausted")
            result.candidates.append(
                Candidate(ordered, seqs, outcome, why, gate.runs, same, misses, what)
            )
            known[key] = outcome
            yield Progress(
                "minimise", n, None, "candidates",
                f"{outcome} with {len(closed)} of {len(recording)} entries"
                f"{'; ' + what if what else ''}; {result.replays} replays",
            )  # fmt: skip
            return outcome

        def test(subset: Sequence[int]) -> JobGenerator[str]:
            return (yield from gate_candidate(subsets.closure(subset), {}, ""))

        search: Search[int] = Search()
        search.minimal = everything
        try:
            if (yield from test([])) == FAIL:
                search.minimal, search.done = [], True
            else:
                yield from ddmin(everything, test, search)
            if shrink_responses:
                kept = subsets.closure(search.minimal)
                for i in sorted(kept):
                    yield from _shrink_response(i, kept, recording, shrunk, result, gate_candidate)
        except Cancelled:
            result.cancelled = True
    result.minimal = sorted(subsets.closure(search.minimal))
    result.seqs = [recording.seq(i) for i in result.minimal]
    result.tools = [recording.tool(i) for i in result.minimal]
    if result.nothing_removed:  # a copy of the cassette is no smaller cassette
        return result
    result.out = subsets.write(result.minimal, target, overwrite=force, responses=shrunk)
    if subsets.sidecar() is not None:
        result.sidecar = sidecar_for(target)
    return result


def _responses_key(responses: dict[int, Any]) -> str:
    return json.dumps(sorted(responses.items()), sort_keys=True, default=str)


#: the oracle as the response pass calls it: entries kept, responses shrunk, what changed
GateCandidate = Callable[[frozenset[int], dict[int, Any], str], JobGenerator[str]]


def _shrink_response(
    i: int,
    kept: frozenset[int],
    recording: Cassette,
    shrunk: dict[int, Any],
    result: MinimiseResult,
    gate_candidate: GateCandidate,
) -> JobGenerator[None]:
    """Shrink the response of entry ``i`` (kept with ``kept``) in ``shrunk``: ddmin over
    the parts of each object and list in it, the outer ones first; ``shrunk[i]`` is only
    ever a response the oracle found failing the same way."""
    entry = recording[i]
    if entry.error is not None or not isinstance(entry.response, dict | list):
        return
    work: list[PathParts] = [()]
    while work:
        path = work.pop(0)
        base = shrunk.get(i, entry.response)
        items = parts(base, path)
        if items:
            where = f"seq {entry.seq} {format_path(path)}"
            test = _parts_test(i, kept, shrunk, base, path, where, len(items), gate_candidate)
            search: Search[Part] = Search()
            search.minimal = items
            if (yield from test([])) == FAIL:
                search.minimal = []
            else:
                yield from ddmin(items, test, search)
            if len(search.minimal) < len(items):
                shrunk[i] = keeping(base, path, search.minimal)
                left = set(search.minimal)
                result.removed.extend(
                    f"seq {entry.seq} {format_path((*path, p))}" for p in items if p not in left
                )
        work.extend(child_containers(shrunk.get(i, entry.response), path))


def _parts_test(
    i: int,
    kept: frozenset[int],
    shrunk: dict[int, Any],
    base: Any,
    path: PathParts,
    where: str,
    total: int,
    gate_candidate: GateCandidate,
) -> Callable[[Sequence[Part]], JobGenerator[str]]:
    """ddmin's test over the parts of the container at ``path`` in entry ``i``'s
    response ``base``: the kept entries with that container cut to the parts given."""

    def test(sub: Sequence[Part]) -> JobGenerator[str]:
        candidate = {**shrunk, i: keeping(base, path, sub)}
        return (yield from gate_candidate(kept, candidate, f"{where}: {len(sub)} of {total} parts"))

    return test


@contextmanager
def _candidates_folder(options: LoopOptions) -> Iterator[str]:
    """Where the candidate cassettes are written: ``candidates/`` in ``--runs-dir`` (kept
    with their runs), else a temporary folder removed at the end."""
    if options.runs_dir is not None:
        folder = Path(options.runs_dir) / "candidates"
        folder.mkdir(parents=True, exist_ok=True)
        yield str(folder)
        return
    with tempfile.TemporaryDirectory(prefix="cassette-minimise-") as scratch:
        yield scratch


def _judge_whole(result: MinimiseResult, whole: GateResult, allow_flaky: bool) -> bool:
    """Whether the whole cassette's gate gives a failure to minimise; if not, sets
    ``problem`` and the exit status the gate would have."""
    verdict = whole.verdict
    if verdict in ("no_replay", "no_tool_call", "incomplete"):
        _, why = gate_outcome(whole)  # with what the agent died of, when it did
        result.problem = f"the gate of the whole cassette measured nothing ({why})"
        result.problem_exit = VERDICT_EXIT[verdict]
        return False
    outside = [(r, why) for r, kind, why in whole.replays() if kind == "infrastructure"]
    if outside:
        run, why = outside[0]
        result.problem = f"the gate of the whole cassette was disturbed: run {run.run}: {why}"
        result.problem_exit = EXIT_NO_ANSWER
        return False
    done = [r for r, _, _ in whole.replays()]
    failure, count = commonest([run_failure(r) for r in done])
    result.failure, result.failed = failure, count
    if failure is None:
        result.problem = (
            f"the agent passes every run of the whole cassette ({len(done)}/{len(done)})"
        )
        result.problem_exit = EXIT_FOUND
        return False
    if count < len(done) and not allow_flaky:
        result.problem = (
            f"flaky: the whole cassette fails ({failure.describe()}) in {count} of "
            f"{len(done)} runs only (more --runs, or --allow-flaky to "
            "minimise at that rate)"
        )
        result.problem_exit = EXIT_UNSURE
        return False
    return True


def judge(gate: GateResult, failure: Failure, rate: float) -> tuple[str, str, int]:
    """``(outcome, why, same)`` of a candidate's gate: ``same`` runs failed as ``failure``;
    ``FAIL`` when ``same / runs >= rate`` (every run for a deterministic failure),
    ``PASS`` when none did, else ``UNRESOLVED``; a run ended from outside (a timeout, a
    signal) makes it ``UNRESOLVED`` whatever the others did."""
    replays = gate.replays()
    for run, kind, why in replays:
        if kind == "infrastructure":
            return UNRESOLVED, f"infrastructure: run {run.run}: {why}", 0
    got = [run_failure(r) for r, _, _ in replays]
    same = sum(1 for f in got if f == failure)
    total = len(got)
    if total and same / total >= rate:
        return FAIL, f"fails the same way in {same}/{total} runs", same
    if same:
        return UNRESOLVED, f"flaky: fails the same way in {same}/{total} runs", same
    passed = sum(1 for f in got if f is None)
    others = sorted({f.describe() for f in got if f is not None})
    words = []
    if passed:
        words.append(f"passes {passed}/{total}")
    if others:
        words.append("fails another way: " + "; ".join(others))
    return PASS, ", ".join(words), 0
