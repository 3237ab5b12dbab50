"""The words around a call, as the app shows them (``core/format/context.py`` reads them).

- ``outcome_line``: the header's line with how each run ended
  (``A ✗ reward 0 · step limit reached (30 steps)   B ✓ reward 1``).
- ``pair_before``, ``pair_after`` / ``single_words``: the detail's "before this call" block
  (the message the call answered, the assistant's text and reasoning) and, on a run's last
  call, how the run ended after it (its outcome and final answer). Long text is cut at
  ``Limits.chars`` with the expand hint (``e``); secrets are masked unless revealed (``v``).

Ignored values (``ContextWarning``) are said in the block, dim, naming line and field.
No Textual import: the builders run in the detail's thread worker.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import TYPE_CHECKING, Any

from cassette_tui.core.format.context import (
    CONTEXT_FIELD,
    OUTCOME_FIELD,
    Answered,
    CallContext,
    ContextWarning,
    RunOutcome,
    call_context,
    run_outcome,
)
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.scan.masking import mask_value
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from .safe import printable, printable_block

if TYPE_CHECKING:
    from cassette_tui.core.diff.model import Row
    from cassette_tui.core.diff.result import DiffResult
    from cassette_tui.core.format.cassette import Cassette

    from .detail import Limits

#: the entry fields shown as words, not among "other fields"
WORD_FIELDS = (CONTEXT_FIELD, OUTCOME_FIELD)
#: lines of one text shown before it is cut (``e`` expands)
TEXT_LINES = 4


def outcome_line(a: Any, b: Any | None) -> Text | None:
    """``A ✗ reward 0 · step limit reached (30 steps)   B ✓ reward 1``, or ``None`` when
    neither cassette says how its run ended (a side that does not say shows ``-``)."""
    sides = [("A", a)] + ([("B", b)] if b is not None else [])
    summaries = [(name, *_summary_of(cassette)) for name, cassette in sides]
    if not any(summary for _, summary, _ in summaries):
        return None
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    for n, (name, summary, went_wrong) in enumerate(summaries):
        if n:
            text.append("   ")
        if b is not None:
            text.append(f"{name} ", style="bold")
        elif n == 0:
            text.append("outcome ", style="bold")
        if summary:
            style = "bold" if went_wrong else ""
            text.append(printable(summary), style=style)
        else:
            text.append("-", style="dim")
    return text


#: cassette -> its outcome summary and whether the run went wrong (failed or hit its
#: limit): the header is redrawn on every progress step of a diff
_SUMMARIES: weakref.WeakKeyDictionary[Any, tuple[str, bool]] = weakref.WeakKeyDictionary()


def _summary_of(cassette: Cassette) -> tuple[str, bool]:
    try:
        return _SUMMARIES[cassette]
    except (KeyError, TypeError):
        pass
    try:
        outcome, _ = run_outcome(cassette)
    except Exception:  # noqa: BLE001 - an unreadable last line is the loader's to report
        outcome = None
    summary = ("", False) if outcome is None else (outcome.summary(), outcome.went_wrong)
    with contextlib.suppress(TypeError):  # not weakly referable: asked again next time
        _SUMMARIES[cassette] = summary
    return summary


def _cut(text: str, limits: Limits) -> tuple[str, bool]:
    """``text`` cut to ``limits.chars`` characters and ``TEXT_LINES`` lines (unless expanded)."""
    chars = limits.chars
    lines_max = None if limits.is_expanded else TEXT_LINES
    cut = False
    if chars is not None and len(text) > chars:
        text, cut = text[:chars].rstrip() + "…", True
    if lines_max is not None:
        lines = text.splitlines()
        if len(lines) > lines_max:
            text, cut = "\n".join(lines[:lines_max]) + "…", True
    return text, cut


def _said(text: Text, label: str, said: str, limits: Limits, style: str = "") -> bool:
    if not limits.reveal_secrets:
        said = mask_value(said)
    shown, cut = _cut(said, limits)
    text.append(f"{label}: ", style="dim")
    text.append(printable_block(shown), style=style)
    text.append("\n")
    return cut


def _tool_of(cassette: Cassette, seq: int) -> str | None:
    index = cassette.index_of_seq(seq) if cassette is not None else None
    return cassette.tool(index) if index is not None else None


def _answered(text: Text, answered: Answered, cassette: Cassette, limits: Limits) -> bool:
    if answered.role == "tool":
        names = []
        for seq in answered.seqs:
            tool = _tool_of(cassette, seq)
            names.append(f"seq {seq}" + (f" {tool}" if tool else ""))
        what = ", ".join(names) if names else "a tool result"
        text.append("answering: ", style="dim")
        text.append(printable(f"the result of {what}"))
        text.append("\n")
        return False
    if answered.text is None:
        text.append("answering: ", style="dim")
        text.append(printable(f"the {answered.role} message"))
        text.append("\n")
        return False
    return _said(text, f"answering {answered.role}", answered.text, limits)


def context_text(
    context: CallContext | None, cassette: Cassette, limits: Limits, warnings: list[ContextWarning]
) -> Text:
    """The words before one call: the message it answered, the assistant's text, its
    reasoning; ``-`` when the entry has none."""
    text = Text(overflow="fold", end="")
    cut = False
    if context is not None:
        if context.answered is not None:
            cut |= _answered(text, context.answered, cassette, limits)
        if context.reasoning is not None:
            cut |= _said(text, "reasoning", context.reasoning, limits, "italic")
        if context.assistant is not None:
            cut |= _said(text, "assistant", context.assistant, limits, "bold")
    else:
        text.append("-\n", style="dim")
    if cut:
        text.append(f"… {limits.hint}\n", style="dim italic")
    _warn(text, warnings)
    text.rstrip()
    return text


def _warn(text: Text, warnings: list[ContextWarning]) -> None:
    for warning in warnings:
        where = f"line {warning.line}: " if warning.line is not None else ""
        text.append(printable(f"ignored: {where}{warning.field}: {warning.message}"), style="dim")
        text.append("\n")


def outcome_text(outcome: RunOutcome, limits: Limits, warnings: list[ContextWarning]) -> Text:
    """How a run ended, after its last call: the summary, and the final answer or the
    lack of one."""
    text = Text(overflow="fold", end="")
    summary = outcome.summary()
    if summary:
        text.append(printable(summary), style="bold")
        text.append("\n")
    if outcome.final_answer is not None:
        cut = _said(text, "final answer", outcome.final_answer, limits)
        if cut:
            text.append(f"… {limits.hint}\n", style="dim italic")
    elif outcome.steps is not None:
        text.append("no final answer: the run ended after a call\n", style="dim")
    if outcome.limit_reached and outcome.evidence:
        text.append(printable(f"how we know: {outcome.evidence}"), style="dim")
        text.append("\n")
    _warn(text, warnings)
    text.rstrip()
    return text


def _entry_words(entry: Entry | None, cassette: Cassette, limits: Limits) -> Text | None:
    if entry is None:
        return None
    path = getattr(cassette, "path", None)
    context, warnings = call_context(entry, path)
    if context is None and not warnings:
        return None
    return context_text(context, cassette, limits, warnings)


def _run_end(
    entry: Entry | None, index: int | None, cassette: Cassette, limits: Limits
) -> Text | None:
    """How the run ended, when ``entry`` is the cassette's last call."""
    if entry is None or index is None or cassette is None or index != len(cassette) - 1:
        return None
    outcome, warnings = run_outcome(cassette, entry)  # the last entry, parsed already
    if outcome is None:
        return None
    return outcome_text(outcome, limits, warnings)


def pair_before(
    result: DiffResult, row: Row, a: Entry | None, b: Entry | None, limits: Limits
) -> list[RenderableType]:
    """The detail's "said before this call" block for one aligned row (A | B), when
    either side has words."""
    before = (_entry_words(a, result.a, limits), _entry_words(b, result.b, limits))
    return [_two("said before this call", before)] if any(before) else []


def pair_after(
    result: DiffResult, row: Row, a: Entry | None, b: Entry | None, limits: Limits
) -> list[RenderableType]:
    """The detail's "after this call, the run ended" block (A | B), when the row holds
    either side's last call and that side says how its run ended."""
    after = (_run_end(a, row.a, result.a, limits), _run_end(b, row.b, result.b, limits))
    return [_two("after this call, the run ended", after)] if any(after) else []


def _two(title: str, cells: tuple[Text | None, Text | None]) -> Table:
    table = Table(box=None, expand=True, show_header=True, padding=(0, 1, 0, 0))
    table.add_column(Text(f"A {title}", style="bold"), ratio=1)
    table.add_column(Text(f"B {title}", style="bold"), ratio=1)
    table.add_row(*(cell if cell is not None else Text("·", style="dim") for cell in cells))
    return table


def single_words(
    cassette: Cassette, index: int, entry: Entry, limits: Limits
) -> tuple[list[RenderableType], list[RenderableType]]:
    """The single-file detail's blocks ``(before, after)``: the words before entry
    ``index``'s call, and how the run ended when it is the last."""
    before: list[RenderableType] = []
    after: list[RenderableType] = []
    said = _entry_words(entry, cassette, limits)
    if said is not None:
        before = [Text("said before this call", style="bold underline"), said]
    end = _run_end(entry, index, cassette, limits)
    if end is not None:
        after = [Text("after this call, the run ended", style="bold underline"), end]
    return before, after
