"""The header: both files, their entry counts, the first divergence and the findings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassette_tui.core.scan.lint import EMPTY_MESSAGE
from rich.text import Text

from .marks import STATUS_MARKS
from .plural import plural
from .safe import printable, safe, tool_text
from .words import outcome_line

if TYPE_CHECKING:
    from cassette_tui.core.diff.result import DiffResult
    from cassette_tui.core.format.cassette import Cassette
    from cassette_tui.core.format.findings import Finding


def file_label(cassette: Cassette) -> str:
    """A cassette's file name (or what the importer called the run), printable. A run of a
    file of many runs is named by task and trial, with its outcome: ``task 31 trial 2 ✗``
    (the file's name would not leave room for both sides at 80 columns)."""
    metadata = getattr(cassette, "metadata", None) or {}
    run = metadata.get("run")
    if isinstance(run, dict) and run.get("task") is not None:
        label = f"task {run['task']}"
        if run.get("trial") is not None:
            label += f" trial {run['trial']}"
        passed = run.get("passed")
        if passed is not None:
            label += " ✓" if passed else " ✗"
        return printable(label)
    name = metadata.get("name")
    if not name:
        name = Path(cassette.path).name if cassette.path is not None else "<memory>"
    return safe(name)


def _kinds(findings: Iterable[Any]) -> str:
    counts = Counter(str(f.kind) for f in findings)
    return ", ".join(
        f"{n} {kind.replace('_', ' ')}" if n > 1 else kind.replace("_", " ")
        for kind, n in counts.items()
    )


def _size(text: Text, cassette: Cassette) -> None:
    """`` (12)`` after a file's name, or that it is empty (``lint``'s ``empty``)."""
    if len(cassette):
        text.append(f" ({len(cassette)})")
    else:
        text.append(" (empty: no calls)", style="bold")


def _status_counts(counts: Mapping[Any, int]) -> str:
    parts = []
    for status, mark in STATUS_MARKS.items():
        n = counts.get(status, counts.get(status.value, 0))
        if n:
            parts.append(f"{n}{mark.glyph}")
    return " ".join(parts)


def pair_summary(
    result: DiffResult,
    *,
    with_findings: bool = True,
    findings_error: str | None = None,
    note: str | None = None,
    first_lines: bool | tuple[bool, bool] = False,
) -> Text:
    """Three lines for the header of the pair screen (four when a run says how it ended:
    its outcome is the second). ``with_findings`` runs the
    diagnosis (``result.findings``, computed on first use): call it from a worker.
    ``note``: what is still being computed, in place of "diagnosing…". ``first_lines``:
    the result is of the files' first lines only (they are being read): the sizes say
    "first", and no divergence among them is not "no divergence"; a pair of flags says
    it per side (a small file beside a large one is read whole)."""
    cut = (first_lines, first_lines) if isinstance(first_lines, bool) else first_lines
    first_lines = any(cut)
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    for (side, cassette), head in zip((("A ", result.a), ("  B ", result.b)), cut, strict=True):
        text.append(side, style="bold")
        text.append(file_label(cassette))
        if head:
            text.append(f" (first {len(cassette):,})")
        else:
            _size(text, cassette)
    auto = " (auto)" if getattr(result, "align_reason", None) else ""
    text.append(f"  by {result.align}{auto}", style="dim")
    text.append("\n")
    _outcomes(text, result.a, result.b)
    first = result.first_divergence
    if first is None and first_lines:
        text.append(f"= no divergence in the first {plural(len(result.rows), 'row')} so far")
    elif first is None:
        text.append("= no divergence: the runs make the same calls with the same responses")
    else:
        row = result.rows[first]
        mark = STATUS_MARKS[row.status]
        text.append("first divergence ", style="bold")
        text.append(f"{mark.glyph} row {first + 1}: ")
        text.append(f"A seq {row.a_seq if row.a_seq is not None else '-'}, ")
        text.append(f"B seq {row.b_seq if row.b_seq is not None else '-'} ")
        text.append(tool_text(row.tool))
        text.append(f" ({mark.words})", style="dim")
    text.append("\n")
    text.append(f"{plural(len(result.rows), 'row')} ", style="bold")
    text.append(_status_counts(result.counts))
    if findings_error is not None:
        text.append(" · ")
        text.append(printable(findings_error), style="bold")
    elif note is not None:
        text.append(f" · {note}", style="dim italic")
    elif not with_findings:
        text.append(" · diagnosing…", style="dim italic")
    elif result.findings:
        text.append(" · findings: ", style="bold")
        text.append(printable(_kinds(result.findings)))
    return text


def single_summary(
    cassette: Cassette,
    findings: list[Finding] | None,
    error: str | None = None,
    *,
    progress: str | None = None,
) -> Text:
    """Header lines for one cassette alone (``error``: why the lint could not finish;
    ``progress``: how far it is, ``linting: 41,000 / 100,000 entries · escape stops``)."""
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    text.append("cassette ", style="bold")
    text.append(file_label(cassette))
    if len(cassette):
        text.append(f" ({plural(len(cassette), 'entry')})")
    else:
        text.append(f"  empty: {EMPTY_MESSAGE}", style="bold")
    if cassette.report.dropped_lines:
        text.append(f"  {cassette.report.dropped_lines} bad lines dropped", style="bold")
    text.append("\n")
    _outcomes(text, cassette, None)
    if error is not None:
        text.append(printable(error), style="bold")
    elif findings is None:
        text.append(printable(progress) if progress else "linting…", style="dim italic")
    elif not findings:
        text.append("no lint findings")
    else:
        text.append(f"{plural(len(findings), 'finding')}: ", style="bold")
        text.append(printable(_kinds(findings)))
    return text


def loading_summary(a: Any, b: Any | None, what: str) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    text.append("A ", style="bold")
    text.append(file_label(a))
    _size(text, a)
    if b is not None:
        text.append("  B ", style="bold")
        text.append(file_label(b))
        _size(text, b)
    text.append("\n")
    _outcomes(text, a, b)
    text.append(what, style="dim italic")
    return text


def _outcomes(text: Text, a: Any, b: Any | None) -> None:
    """The line with how each run ended (``A ✗ reward 0 · step limit reached (30 steps)``),
    when a cassette says (core/format/context.py); nothing otherwise, so a recording of your own
    agent keeps its three lines."""
    line = outcome_line(a, b)
    if line is not None:
        text.append_text(line)
        text.append("\n")
