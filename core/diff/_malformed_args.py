"""The model's malformed arguments as the cause of a divergence (bugcase 39).

An importer keeps a call whose arguments the model sent as text that is not valid JSON
with ``arguments_error`` (``importers/_openai_chat.parse_arguments``). When the runs part
at such a call, that is the cause: the model's output, not a tool's answer nor a step
before it. ``malformed_cause`` words it for the ``first_divergence`` finding."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..scan.lint import MALFORMED_FIELD
from ._finding import json_short

if TYPE_CHECKING:
    from .model import Row
    from .result import DiffResult


def malformed_cause(
    result: DiffResult, row: Row, evidence: dict[str, Any]
) -> tuple[str, str] | None:
    """``(sentence, action)`` when a side's step at ``row`` has malformed arguments, else
    ``None``; ``evidence["malformed_args"]`` gets ``[{"side", "seq", "error"}]``."""
    found: list[dict[str, Any]] = []
    tools: list[str] = []  # the tool of each malformed call, in order
    sentences: list[str] = []
    for side, c, pos in (("A", result.a, row.a), ("B", result.b, row.b)):
        if pos is None:
            continue
        entry = c.entry_view(pos)
        reason = entry.extra.get(MALFORMED_FIELD) if entry.extra else None
        if not isinstance(reason, str):
            continue
        found.append({"side": side, "seq": entry.seq, "error": reason})
        tools.append(entry.tool)
        then = (
            "no tool answered it"
            if entry.extra.get("unanswered")
            else "the tool answered an error"
            if entry.is_error
            else f"the tool answered {json_short(entry.response, 60)}"
        )
        retry = ""
        if pos + 1 < len(c) and c.tool(pos + 1) == entry.tool:
            retry = f" and {side} retried at seq {c.seq(pos + 1)}"
        sentences.append(
            f"{side} seq {entry.seq}'s arguments could not be parsed ({MALFORMED_FIELD}: "
            f"{reason}); {then}{retry}."
        )
    if not found:
        return None
    evidence["malformed_args"] = found
    first = found[0]
    action = (
        f"The cause is the model's output: its arguments for {tools[0]} at {first['side']} "
        f"seq {first['seq']} are not valid JSON; read that model response (a stray newline, a "
        "truncated string, a trailing comma), not the tool or the steps before it."
    )
    return " " + " ".join(sentences), action
