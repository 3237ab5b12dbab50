"""The ``first_divergence`` finding: the first row that is not ``same``, with both sides'
steps (see ``diagnose.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..format.plural import plural
from ._finding import finding, json_short, row_seqs, step
from ._malformed_args import malformed_cause
from .model import STATUS_WORDS, Row, Status
from .refine import batch_of, float_noise_row

if TYPE_CHECKING:
    from ..format.findings import Finding
    from .result import DiffResult


def first_divergence(result: DiffResult) -> Finding:
    """Where the runs part, what differs there, and the first thing to look at."""
    assert result.first_divergence is not None
    index = result.first_divergence
    row = result.rows[index]
    evidence: dict[str, Any] = {"row": index + 1, "status": row.status.value}
    message = _parting(result, index, row, evidence)
    message += _float_noise(result, row, evidence)
    message += _parallel_order(result, row, evidence)
    message = _empty_side(result, evidence) + message
    if row.status in (Status.ONLY_A, Status.ONLY_B):
        note, action = _one_sided(result, row, evidence)
        message += note
    else:
        action = _two_sided_action(row)
    cause = malformed_cause(result, row, evidence)
    if cause is not None:  # the model's own output, named before any other reason
        message += cause[0]
        action = cause[1]
    return finding("first_divergence", row_seqs(row), message, action, evidence)


def _parting(result: DiffResult, index: int, row: Row, evidence: dict[str, Any]) -> str:
    """``The runs part at row N: ...`` with the differing paths (both keys and the paths
    go into ``evidence``); two different tools are shown as both calls were made."""
    a, b = result.a, result.b
    where = f"row {index + 1}: {step(a, row.a, 'A')} vs {step(b, row.b, 'B')}"
    paths: list[str] = []
    calls = ""
    if row.a is not None and row.b is not None:
        evidence["key_a"] = list(a.key(row.a))
        evidence["key_b"] = list(b.key(row.b))
        drift = result.drift(index)
        paths = [f"{d.part} {d.path}" for d in drift[:6]]
        evidence["paths"] = paths
        if row.status is Status.OTHER_CALL:
            # two different tools: both calls as made, never one's args against the other's
            args_a, args_b = a.entry_view(row.a).args, b.entry_view(row.b).args
            calls = (
                f": A called {a.tool(row.a)} {json_short(args_a)}, "
                f"B called {b.tool(row.b)} {json_short(args_b)}"
            )
    message = f"The runs part at {where} ({STATUS_WORDS[row.status]}){calls}"
    return message + (f"; differing: {', '.join(paths)}." if paths else ".")


def _float_noise(result: DiffResult, row: Row, evidence: dict[str, Any]) -> str:
    """The sentence saying the row differs only by float noise, or ``""``."""
    if not float_noise_row(result.a, result.b, row):
        return ""
    evidence["float_noise"] = True
    return (
        " Only float noise: the numbers differ by at most 2^-23 of their size "
        "(float32 rounding, another summation order), not a stale recording."
    )


def _parallel_order(result: DiffResult, row: Row, evidence: dict[str, Any]) -> str:
    """The sentence saying the row pairs parallel calls the runs issued in another order
    (both sides carry the recorder's ``batch`` mark, at other seqs), or ``""``."""
    if row.a is None or row.b is None or row.a_seq == row.b_seq:
        return ""
    if batch_of(result.a, row.a) is None or batch_of(result.b, row.b) is None:
        return ""
    evidence["parallel_order"] = True
    return (
        f" A seq {row.a_seq} and B seq {row.b_seq} are the same parallel call: the runs "
        "issued their parallel calls in another order, paired here by call."
    )


def _empty_side(result: DiffResult, evidence: dict[str, Any]) -> str:
    """When exactly one run made no tool call at all, the sentence saying so (it leads the
    message), else ``""``."""
    a, b = result.a, result.b
    empty = [(name, other) for name, c, other in (("A", a, b), ("B", b, a)) if not len(c)]
    if len(empty) != 1:
        return ""
    name, other = empty[0]
    other_name = "B" if name == "A" else "A"
    evidence["empty_side"] = name
    return f"{name} made no tool call; {other_name} made {plural(len(other), 'call')}. "


def _two_sided_action(row: Row) -> str:
    if row.status is Status.RESPONSE_DRIFT:
        return (
            f"Compare the two responses of {row.tool} at A seq {row.a_seq} and B seq "
            f"{row.b_seq}: the agent asked the same thing and was answered differently."
        )
    if row.status is Status.ARGS_DRIFT:
        return (
            f"Find where the agent built the args of {row.tool} at A seq {row.a_seq}: "
            "look at the earlier responses it read and at volatile values in the args."
        )
    return (
        "The agent chose another tool here: read what both runs saw just before this "
        "step (the previous responses, the prompt) to see why it decided differently."
    )


def _one_sided(result: DiffResult, row: Row, evidence: dict[str, Any]) -> tuple[str, str]:
    """``(note, action)`` for a step only one run made: the note (``""`` or a sentence
    after a space) says whether it repeats its neighbour's call."""
    side = "A" if row.status is Status.ONLY_A else "B"
    c, pos = (result.a, row.a) if side == "A" else (result.b, row.b)
    assert pos is not None
    context = _one_sided_context(result, side, pos)
    if context:
        evidence.update({k: v for k, v in context.items() if k != "text"})
        return " " + context["text"], (
            f"{side} seq {c.seq(pos)} is an extra attempt of the same call: check the "
            "agent's retry policy (a cap, backoff, Retry-After) for this tool."
        )
    other_side = "B" if side == "A" else "A"
    return "", (
        f"{side} made a call {other_side} did not ({side} seq {c.seq(pos)}): check the "
        "response before it for the reason (an error, a retry, an extra lookup)."
    )


def _one_sided_context(result: DiffResult, side: str, pos: int) -> dict[str, Any]:
    """For a step only one run made: does it repeat its neighbour's key (a retry), and
    does the repeated call match the other run? ``{}`` when it does not."""
    c = result.a if side == "A" else result.b
    errors = (result.outcomes()[0] if side == "A" else result.outcomes()[1]).errors
    key = c.key(pos)
    if not any(0 <= near < len(c) and c.key(near) == key for near in (pos + 1, pos - 1)):
        return {}
    # entry -> its row (8 bytes an entry, not a dict of every row)
    row_of = result.rows_of_entries(side.lower())
    for near in (pos + 1, pos - 1):
        if not 0 <= near < len(c) or c.key(near) != key:
            continue
        state = "an error" if errors[pos] else "a success"
        text = f"Its key equals {side} seq {c.seq(near)}'s (a repeated call; this one got {state})"
        paired = result.rows[row_of[near]]
        other_seq = None
        if paired is not None and paired.a is not None and paired.b is not None:
            other_seq = paired.b_seq if side == "A" else paired.a_seq
            other = "B" if side == "A" else "A"
            text += f", and {side} seq {c.seq(near)} pairs with {other} seq {other_seq}"
            text += f" ({paired.status.value.replace('_', ' ')})"
        return {
            "text": text + ".",
            "repeat_of_seq": c.seq(near),
            "repeat_error": errors[pos],
            "repeat_pairs_with": other_seq,
        }
    return {}
