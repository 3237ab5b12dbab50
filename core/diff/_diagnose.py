"""Diagnosis of a diff: name where two runs part and the likely mismatch (issue 3).

``diagnose(result)`` turns a ``DiffResult`` into ``Finding``s, each with its evidence (seqs,
keys, paths, values) and a first action. The kinds (``KINDS``), in the order they are
reported, each made by one module of this folder (``_first_divergence.py``, ...):

``contract_change``
    The MCP server's contract (``serverInfo``, each tool's description, schemas and
    annotations, from the ``mcp record`` sidecars beside the cassettes) differs between
    the runs (``_contract.py``); a failed call of a changed tool is blamed on it.
``first_divergence``
    The first row that is not ``same``, with both sides' steps.
``error_response``
    A call whose outcome is an error (an ``error`` entry or an HTTP 4xx/5xx status) where
    the other run's aligned call succeeded: a rate limit or an outage, not the agent.
``args_miss``
    Args drift whose differing values look volatile (``volatile.value_kind``: UUIDs,
    timestamps, request ids, absolute or temp paths): the article's "miss on arguments"
    signature. Proposes the preset normalization rule that makes the args match and says
    whether it would merge other recorded calls with different responses
    (``rule_check.over_normalization``).
``downstream_drift``
    A drifted argument value that an earlier response of the same run returned, where
    that earlier step differs between the runs (an answer both runs got alike is not a
    cause: the agent chose): the earlier step is the likelier cause. Each side names one
    source seq, the step that fed that side's value.
``stale_response``
    The same key answered differently by the two recordings: the article's "replay passes
    but live fails" signature; re-record and diff. A row whose responses differ only by
    float noise (``refine.float_noise_row``: numbers within 2**-23 of each other, relative)
    is not one: it stays shown with its drift, and when it is the first divergence that
    finding says it is only noise. At most ``refine.MAX_NOISE_ROWS`` rows are checked.
``repeated_key``
    A key called more than once within a run, with counts and seqs on both sides;
    consecutive repeats are named a retry storm, a repeating cycle of keys a loop.
    Passing runs repeat calls too, so these report counts, never blame.

Costs are bounded for 100k-entry cassettes (each limit is a constant of the module that
applies it): at most ``MAX_EXAMINED`` args-drift rows are opened, at most ``MAX_EXAMPLES``
response-drift rows per tool are deepdiffed, the upstream search traces ``MAX_TRACED``
args-drift rows ``LOOKBACK`` entries back (at most ``MAX_DOWNSTREAM`` findings), and the
repeated-key findings are the ``MAX_REPEATED`` keys whose counts differ most between the
runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..format.jobs import CancelToken, JobGenerator, Progress, run_job
from ..format.spill import give_back
from ._args_misses import args_drift_rows, args_misses
from ._contract import contract_finding
from ._downstream import downstream
from ._error_responses import error_responses
from ._first_divergence import first_divergence
from ._repeated_keys import repeated_keys
from ._stale_responses import stale_responses

if TYPE_CHECKING:
    from ..format.findings import Finding
    from .result import DiffResult

#: the kinds of finding, in the order they are reported
KINDS = (
    "contract_change",
    "first_divergence",
    "error_response",
    "args_miss",
    "downstream_drift",
    "stale_response",
    "repeated_key",
)


def diagnose(result: DiffResult) -> list[Finding]:
    """The findings of ``result`` (see the module docstring), ``[]`` when the runs are the
    same. Pure: reads the cassettes and the cached drift, changes nothing."""
    return run_job(diagnose_job(result))


def diagnose_job(
    result: DiffResult, cancel: CancelToken | None = None
) -> JobGenerator[list[Finding]]:
    """``diagnose`` as a job: yields ``Progress(stage="diagnose", unit="checks")`` before
    each of its six checks; raises ``Cancelled`` when ``cancel`` is set between them."""
    if result.is_same:
        return []

    def check(done: int, message: str) -> Progress:
        if cancel is not None:
            cancel.raise_if_cancelled()
        # what the last check freed (a column of 8 bytes an entry) back to the system
        # while spilling, or the next check's peak counts it (issue 31)
        give_back()
        return Progress("diagnose", done, 6, "checks", message)

    findings: list[Finding] = []
    yield check(0, "first divergence")
    contract = contract_finding(result)
    if contract is not None:
        findings.append(contract)
    findings.append(first_divergence(result))
    findings.extend(error_responses(result))
    yield check(1, "args drift")
    examined = args_drift_rows(result)
    yield check(2, "args misses")
    findings.extend(args_misses(result, examined))
    yield check(3, "downstream drift")
    findings.extend(downstream(result, examined))
    yield check(4, "stale responses")
    findings.extend(stale_responses(result))
    yield check(5, "repeated keys")
    findings.extend(repeated_keys(result))
    yield Progress("diagnose", 6, 6, "checks")
    return findings
