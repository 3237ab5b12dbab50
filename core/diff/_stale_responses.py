"""The ``stale_response`` findings: the same key answered differently by the two
recordings, one finding per tool (see ``diagnose.py``)."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from ..format.plural import plural
from ..format.spill import drop_pages
from ._finding import MAX_SEQS, finding, side_seqs
from ._run_keys import SCAN_STEP, CompactKey, RunKeys
from .model import Change, Row, Status
from .refine import MAX_NOISE_ROWS, float_noise_row

if TYPE_CHECKING:
    from ..format.findings import Finding
    from .result import DiffResult

MAX_EXAMPLES = 3  # response-drift rows deepdiffed per tool for stale_response


def stale_responses(result: DiffResult) -> list[Finding]:
    return [
        _tool_finding(result, tool, rows, count)
        for tool, (count, rows) in _drift_by_tool(result).items()
    ]


#: the rows of one tool a finding lists (its examples and its seqs); the rest are counted
_KEPT = max(MAX_EXAMPLES, MAX_SEQS)


def _drift_by_tool(result: DiffResult) -> dict[str, tuple[int, list[tuple[int, Row]]]]:
    """The response-drift rows without an error, by tool, in order: how many, and the
    first ``_KEPT`` of them (what the finding shows: memory does not grow with the
    rows); rows whose responses differ only by float noise left out (at most
    ``MAX_NOISE_ROWS`` rows are tested)."""
    by_tool: dict[str, tuple[int, list[tuple[int, Row]]]] = {}
    checked = 0
    for i, row in enumerate(result.rows):
        if row.status is Status.RESPONSE_DRIFT and not (row.error_a or row.error_b):
            if checked < MAX_NOISE_ROWS:
                # float noise alone is no stale recording (shown, with its numbers line)
                checked += 1
                if float_noise_row(result.a, result.b, row):
                    continue
            count, kept = by_tool.get(row.tool, (0, []))
            if count < _KEPT:
                kept.append((i, row))
            by_tool[row.tool] = (count + 1, kept)
    return by_tool


def _tool_finding(
    result: DiffResult, tool: str, rows: list[tuple[int, Row]], count: int
) -> Finding:
    """The finding of one tool's ``count`` response-drift rows (``rows``: the first of
    them), with the drift of the first ``MAX_EXAMPLES`` of them as examples."""
    examples: list[dict[str, Any]] = []
    paths: list[str] = []
    number_type: list[str] = []
    for index, row in rows[:MAX_EXAMPLES]:
        drift = result.drift(index)
        examples.append(
            {
                "row": index + 1,
                "a_seq": row.a_seq,
                "b_seq": row.b_seq,
                "paths": [d.path for d in drift][:MAX_SEQS],
            }
        )
        for d in drift:
            if d.path not in paths:
                paths.append(d.path)
            if d.change is Change.NUMBER_TYPE and d.path not in number_type:
                number_type.append(d.path)
    first = rows[0][1]
    changed = ", ".join(paths[:5]) + (", ..." if len(paths) > 5 else "")
    message = (
        f"{tool} was answered differently for the same key at {plural(count, 'step')}, "
        f"first A seq {first.a_seq} / B seq {first.b_seq} ({changed or 'outcome'})."
    )
    if number_type:
        message += f" Number type only (1 vs 1.0) at {', '.join(number_type[:3])}."
    varying = _varying_within_a_run(result, tool)
    evidence: dict[str, Any] = {
        "tool": tool, "steps": count, "examples": examples, "number_type": number_type,
        "nondeterministic": bool(varying),
    }  # fmt: skip
    if varying:
        side, seqs = varying
        evidence["varying"] = {"side": side, "seqs": seqs}
        message += (
            f" Within run {side.upper()} alone the same args got different answers too "
            f"(seqs {', '.join(map(str, seqs))}): a nondeterministic tool."
        )
        action = (
            "A nondeterministic tool, not a stale recording: re-recording rolls the dice "
            "again. Hold its answer fixed while you debug (pin it as a fixture), make the "
            "agent robust to the answers it can give, or normalize the paths that vary."
        )
    else:
        action = (
            "The recording is stale for this call: re-record it and diff the old "
            "cassette against the new one."
        )
    return finding("stale_response", side_seqs([r for _, r in rows]), message, action, evidence)


def _varying_within_a_run(result: DiffResult, tool: str) -> tuple[str, list[int]] | None:
    """``(side, seqs)`` of a key of ``tool`` that one run made several times with
    different successful answers (the first such key found, A first: the key whose first
    successful call comes first), or ``None``."""
    keys = RunKeys(result.a, result.b)
    for side, c, outcomes, repeated in (
        ("a", result.a, result.outcomes()[0], result.repeated()[0]),
        ("b", result.b, result.outcomes()[1], result.repeated()[1]),
    ):
        key_of, errors = keys.of(side), outcomes.errors
        # only a key held more than once can vary; per key its first successful call's
        # fingerprint, not a list for every entry (issue 31)
        first: dict[CompactKey, int] = {}
        varying: CompactKey | None = None
        varying_at = len(c)
        for start in range(0, len(c), SCAN_STEP):
            stop = min(len(c), start + SCAN_STEP)
            for i in itertools.compress(range(start, stop), repeated[start:stop]):
                if c.tool(i) != tool or errors[i]:
                    continue
                k = key_of(i)
                at = first.get(k)
                if at is None:
                    first[k] = i
                elif at < varying_at and c.fingerprint(i) != c.fingerprint(at):
                    varying, varying_at = k, at
            keys.drop(side)  # the pages read, let go (issue 31)
            drop_pages(errors)
        if varying is not None:
            del first
            seqs = [
                c.seq(i)
                for i in itertools.compress(range(len(c)), repeated)
                if c.tool(i) == tool and not errors[i] and key_of(i) == varying
            ]
            return side, seqs[:MAX_SEQS]
    return None
