"""``cassette-tui diff A B``: align two runs and say where and why they part (headless).

Human output (Rich, readable at 80 columns and with ``NO_COLOR``: every status has a
mark, colour only repeats it): a summary (both files, counts, the first divergence), the
findings with their first action, then the aligned rows that are not ``same`` with their
drift. Cassette text is printed as data (``rich.text.Text``), never as markup.

Values the secret scan finds are masked in both outputs (``ghp_…(40 chars)``, as ``check``
shows them); ``--reveal`` shows them whole.

``--json`` prints ``DiffResult.to_json()``, streamed: each row is written as soon as its
drift is computed, so memory does not grow with the rows (the schema is in
``docs/json.md``). On a terminal, stderr shows the progress (keys, outcomes, rows,
diagnosis). The per-entry columns (the index, keys, outcomes, the alignment's, the rows)
are kept in unlinked temporary files (``core/format/spill.py``): the peak memory of a
diff of two 1M-entry runs is about 1.25-1.3x that of two 100k-entry runs
(docs/performance.md).

Exit status: 0 the runs are the same, 1 they differ, 2 bad usage or unreadable input (the
error on stderr). Does not import Textual.
"""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import replace
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

import click
import orjson
from cassette_tui.core.diff.model import Change, Status
from cassette_tui.core.diff.refine import numeric_drift
from cassette_tui.core.format.constants import EXIT_BAD_INPUT, EXIT_CLEAN, EXIT_FINDINGS
from cassette_tui.core.format.textspot import is_long_pair, spot
from cassette_tui.core.scan.masking import key_at, mask_found, mask_text, mask_value
from cassette_tui.core.scan.pair_masking import mask_pieces, pair_secrets
from cassette_tui.core.scan.secret_drift import secret_apart
from rich.text import Text

from ..text.marks import CHANGE_MARKS, STATUS_MARKS
from ..text.masked import masked_finding, masked_row
from ..text.plural import plural
from ..text.safe import args_summary, tool_text
from . import _output
from ._options import NonNegativeFinite, config_option, from_option
from ._output import (
    Layout,
    echo_json,
    error_document,
    glyph,
    json_text,
    safe,
    stdout_console,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from cassette_tui.core.diff.model import DriftItem, Row
    from cassette_tui.core.diff.result import DiffResult
    from cassette_tui.core.format.cassette import Cassette
    from cassette_tui.core.format.findings import Finding
    from cassette_tui.core.format.jobs import ProgressSink


# A status's mark (glyph, short name, colour) and a change's sign are the app's
# (tui/text/marks.py), so both read the same way; marks carry the meaning without colour.
MAX_DRIFT_LINES = 6
#: the standard library's C encoder, refusing NaN and infinities (a check, output unused)
_strict_json = json.JSONEncoder(allow_nan=False, check_circular=False, default=str).encode
#: entries (both sides) from which a terminal's stderr shows the diff's progress
PROGRESS_MIN_ENTRIES = 20_000


@click.command("diff")
@click.argument("a", metavar="A", type=str)
@click.argument("b", metavar="B", type=str)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--format",
    "out_format",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text, json (as --json), or markdown: for a pull-request comment or a CI job "
    "summary (secrets masked).",
)
@click.option(
    "--align",
    type=click.Choice(["auto", "seq", "key"]),
    default="auto",
    show_default=True,
    help="Pair row i with row i (seq), or align by call key so inserted retries and "
    "extra lookups show as one-sided steps (key); auto: key when the runs part at an "
    "inserted step, else seq.",
)
@from_option("Read both inputs as this format instead of detecting it.")
@config_option
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=40,
    show_default=True,
    help="Rows listed in the human output (0: all). --json lists every row.",
)
@click.option("--all", "include_same", is_flag=True, help="List `same` rows too.")
@click.option(
    "--reveal",
    is_flag=True,
    help="Show secrets whole (values the secret scan finds are masked by default).",
)
@click.option(
    "--tolerance",
    type=NonNegativeFinite(),
    default=None,
    help="Numbers in responses within this absolute difference count as equal (float "
    "noise in embeddings and scores).",
)
def diff(
    a: str,
    b: str,
    as_json: bool,
    out_format: str,
    align: str,
    fmt: str | None,
    config: str | None,
    limit: int,
    include_same: bool,
    reveal: bool,
    tolerance: float | None,
) -> None:
    """Align cassette A (the failing run) with B (the passing run) and diagnose.

    \b
    A and B are cassette files or any importable recording; FILE#task=31,trial=2
    picks one run of a multi-run file (tau-bench).
    Row marks: MARKS
    Row flags: R repeated key  E error where the other run succeeded
    Drift signs: ~ changed  + added  - removed  T type  # number type only
    Exit status: 0 same, 1 the runs differ, 2 bad usage or unreadable input.
    """
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.format.spill import spilling

    # the per-entry columns in temporary files: memory that does not grow with the rows
    # (core/format/spill.py, issue 31)
    with spilling():
        as_json = as_json or out_format == "json"
        markdown = out_format == "markdown" and not as_json
        reading: list[str | None] = [config]  # the input being read, for --json's error document
        streamed: list[bool] = []  # whether the --json document has begun on stdout
        try:
            cassette_a, cassette_b = _open_pair(a, b, fmt, config, reading)
            _outcome_warnings(cassette_a, cassette_b)
            result = _diff_pair(
                cassette_a, cassette_b, align, tolerance, as_json, include_same, streamed, reveal
            )
        except BrokenPipeError:
            raise  # the reader went away: cli.py ends quietly (141), not bad input
        except (CassetteError, ValueError, OSError) as exc:
            click.echo(f"cassette-tui diff: {safe(exc)}", err=True)
            if as_json and not streamed:
                # a document on stdout in every case: {"error", "file"} (docs/json.md)
                echo_json(error_document(exc, reading[0]))
            sys.exit(EXIT_BAD_INPUT)
        if markdown:
            click.echo(_markdown(result, include_same, reveal, limit), nl=False)
        elif not as_json:
            _print_human(result, a, b, limit, include_same, reveal)
        sys.exit(EXIT_CLEAN if result.is_same else EXIT_FINDINGS)


def _markdown(result: DiffResult, include_same: bool, reveal: bool, limit: int) -> str:
    """The diff as Markdown (``text/markdown.diff_markdown``): the ``--json`` head, the
    first ``limit`` listed rows and the first divergent one, the findings, each masked
    as ``--json`` masks them unless ``reveal``."""
    from cassette_tui.core.format.jobs import run_job

    from ..text.markdown import diff_markdown

    head = result.head_json()
    first = head.get("first_divergence")
    if not reveal and isinstance(first, dict) and isinstance(first.get("tool"), str):
        head["first_divergence"] = {**first, "tool": mask_value(first["tool"])}
    wanted = first.get("row") if isinstance(first, dict) else None
    kept: list[dict[str, Any]] = []

    def keep(row: dict[str, Any]) -> None:
        if len(kept) < (limit or 500) or row.get("row") == wanted:
            kept.append(row if reveal else masked_row(row))

    listed = run_job(result.rows_json_job(keep, include_same=include_same))
    docs = [f.to_diff_json() for f in run_job(result.findings_job())]
    if not reveal:
        docs = [masked_finding(doc) for doc in docs]
    return diff_markdown(head, kept, docs, limit=limit, listed=listed)


def _open_pair(
    a: str, b: str, fmt: str | None, config: str | None, reading: list[str | None]
) -> tuple[Cassette, Cassette]:
    """A and B opened under the config's rules. ``reading[0]`` names the input being read
    (the config, A, B; ``None`` once both are open) when the loader raises."""
    from cassette_tui.core.importers.sources import open_cassette
    from cassette_tui.core.keys.config import load_rules

    rules = load_rules(config)
    reading[0] = a
    cassette_a = open_cassette(a, fmt=fmt, rules=rules)
    cassette_a.spill_columns()  # before B's load (``spill.py``; nothing outside ``spilling``)
    reading[0] = b
    cassette_b = open_cassette(b, fmt=fmt, rules=rules)
    cassette_b.spill_columns()
    reading[0] = None
    return cassette_a, cassette_b


def _diff_pair(
    cassette_a: Cassette,
    cassette_b: Cassette,
    align: str,
    tolerance: float | None,
    as_json: bool,
    include_same: bool,
    streamed: list[bool],
    reveal: bool = False,
) -> DiffResult:
    """The diff of A and B with its findings computed, progress on stderr; with
    ``--json`` the document is streamed to stdout as it is computed (``streamed`` gets
    ``True`` once it has begun)."""
    from cassette_tui.core.diff.result import diff_job
    from cassette_tui.core.format.jobs import run_job

    from ._progress import progress_on_stderr

    # a bar only for work long enough to watch (a flash of it would garble a small diff
    # on a terminal)
    big = len(cassette_a) + len(cassette_b) >= PROGRESS_MIN_ENTRIES
    with progress_on_stderr(None if big else False) as sink:
        # every outcome is read first: a bad response is found before any line is written
        # (stdout never holds half a --json document, nor a report that calls a file with
        # a broken response "the same")
        result = run_job(
            diff_job(cassette_a, cassette_b, align, outcomes=True, tolerance=tolerance),
            sink,
        )
        if as_json:
            _stream_json(result, include_same, sink, streamed, reveal)
        else:
            run_job(result.findings_job(), sink)
    return result


def _stream_json(
    result: DiffResult,
    include_same: bool,
    sink: ProgressSink,
    started: list[bool] | None = None,
    reveal: bool = False,
) -> None:
    """Write ``result.to_json(include_same)`` to stdout as ``echo_json`` would (indented by
    2), each row as soon as its drift is computed: memory does not grow with the rows.
    ``started`` gets ``True`` appended once the first byte is written. Unless ``reveal``,
    every secret in a value is masked (``masked_row``, ``masked_finding``)."""
    from cassette_tui.core.format.jobs import run_job

    out = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None

    def write(text: str) -> None:
        data = text.encode("utf-8", "backslashreplace")
        if out is not None:
            out.write(data)
        else:  # pragma: no cover - a text-only stdout (tests capturing output)
            click.echo(data, nl=False)

    head = result.head_json()
    first_div = head.get("first_divergence")
    if not reveal and isinstance(first_div, dict) and isinstance(first_div.get("tool"), str):
        head["first_divergence"] = {**first_div, "tool": mask_value(first_div["tool"])}
    if started is not None:
        started.append(True)
    write("{\n")
    for key, value in head.items():
        write(f"  {json_text(key)}: {_nested(value, 2)},\n")
    write('  "rows": [')
    first = True

    def emit(row: dict[str, Any]) -> None:
        nonlocal first
        shown = row if reveal else masked_row(row)
        write(("\n" if first else ",\n") + "    " + _row_text(shown))
        first = False

    run_job(result.rows_json_job(emit, include_same=include_same), sink)
    write("]" if first else "\n  ]")
    findings = run_job(result.findings_job(), sink)
    docs = [f.to_diff_json() for f in findings]
    if not reveal:
        docs = [masked_finding(doc) for doc in docs]
    write(f',\n  "findings": {_nested(docs, 2)}\n}}\n')
    if out is not None:
        out.flush()


def _row_text(row: dict[str, Any]) -> str:
    """One row as indented JSON placed 4 deep: orjson's output (the standard library's
    indenting encoder is pure Python, 5-10x slower), else ``json_text`` for what orjson
    cannot write exactly (integers past 64 bits; NaN and infinities, which it writes as
    null). Control, bidi and tag characters are escaped as ``json_text`` does."""
    try:
        data = orjson.dumps(row, option=orjson.OPT_INDENT_2)
    except TypeError:
        return _nested(row, 4)
    if b"null" in data:
        try:  # NaN or an infinity, which orjson wrote as null: the C encoder says
            _strict_json(row)
        except ValueError:
            return _nested(row, 4)
    text = data.decode("utf-8")
    if not text.isascii() or "\x7f" in text:
        text = _output._JSON_UNSAFE.sub(_output._escape, text)
    return text.replace("\n", "\n    ")


def _nested(value: Any, indent: int) -> str:
    """``value`` as indented JSON text placed ``indent`` spaces deep."""
    return json_text(value).replace("\n", "\n" + " " * indent)


def _marks_help() -> str:
    """The row marks as the output writes them (ASCII stand-ins on an ASCII stdout)."""
    items = [f"{glyph(mark.glyph)} {mark.short}" for mark in STATUS_MARKS.values()]
    return "  ".join(items[:4]) + "\n" + " " * len("    Row marks: ") + "  ".join(items[4:])


diff.help = (diff.help or "").replace("MARKS", _marks_help())


# -- human output -------------------------------------------------------------------------


def _wrap(text: str, layout: Layout, indent: str) -> str:
    """``text`` indented; wrapped to the terminal's width only on a terminal."""
    if not layout.wrap:
        return indent + text
    width = layout.width - 1
    return textwrap.fill(
        text,
        width=max(width, 40),
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=False,
    )


def _value(value: Any, width: int) -> str:
    text = safe(json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= width else text[: max(width - 3, 1)] + "..."


def _pack(groups: list[Text], width: int, sep: str = "   ") -> list[Text]:
    """Join groups with ``sep`` into lines of at most ``width`` cells, never splitting one."""
    lines: list[Text] = []
    line = Text()
    for group in groups:
        if line.cell_len and line.cell_len + len(sep) + group.cell_len > width:
            lines.append(line)
            line = Text()
        if line.cell_len:
            line.append(sep)
        line.append_text(group)
    if line.cell_len:
        lines.append(line)
    return lines


def _summary(result: DiffResult, name_a: str, name_b: str, layout: Layout) -> list[Text]:
    lines = []
    for side, name, c in (("A", name_a, result.a), ("B", name_b, result.b)):
        line = Text(f"{side}  ", style="bold")
        line.append(safe(name))
        n = len(c)
        line.append(f"  ({plural(n, 'entry')})", style="dim")
        lines.append(line)
        lines.extend(_outcome_lines(c, layout))
    groups = [Text(f"aligned by {result.align}: {plural(len(result.rows), 'row')}")]
    for status, n in result.counts.items():
        if n:
            mark = STATUS_MARKS[status]
            groups.append(Text(f"{glyph(mark.glyph)} {n} {mark.short}", style=mark.colour))
    lines.extend(_pack(groups, layout.width) if layout.wrap else [Text("   ").join(groups)])
    if result.align_reason:
        reason = f"(auto: {result.align_reason})"
        lines.append(Text(_wrap(safe(reason), layout, "  "), style="dim"))
    if result.first_divergence is None:
        lines.append(Text("= the runs are the same", style="bold green"))
    else:
        row = result.rows[result.first_divergence]
        mark = STATUS_MARKS[row.status]
        line = Text("first divergence: ", style="bold")
        line.append(f"row {result.first_divergence + 1}  ")
        line.append(f"A seq {row.a_seq if row.a_seq is not None else '-'} / ")
        line.append(f"B seq {row.b_seq if row.b_seq is not None else '-'}  ")
        line.append(f"{safe(tool_text(row.tool))}  ")
        line.append(f"{glyph(mark.glyph)} {mark.short}", style=mark.colour)
        lines.append(line)
    return lines


def _outcome_lines(cassette: Any, layout: Layout) -> list[Text]:
    """How the run ended (core/format/context.py), under its file's line: ``outcome: ✗ reward 0 ·
    step limit reached (30 steps)`` and the final answer on one line; none when the
    cassette does not say."""
    from cassette_tui.core.format.context import run_outcome

    outcome, _ = run_outcome(cassette)
    if outcome is None:
        return []
    lines = []
    summary = outcome.summary()
    if summary:
        line = Text("   outcome: ", style="dim")
        line.append(safe(summary), style="bold")
        lines.append(line)
    if outcome.final_answer is not None:
        answer = " ".join(outcome.final_answer.split())
        width = layout.width - 20 if layout.wrap else 200
        line = Text("   final answer: ", style="dim")
        line.append(_value(answer, max(width, 20)))
        lines.append(line)
    return lines


def _outcome_warnings(*cassettes: Any) -> None:
    """Words that were ignored (a bad ``context`` or ``run_outcome`` value): one line each
    on stderr, naming the file, line and field."""
    from cassette_tui.core.format.context import run_outcome

    for cassette in cassettes:
        for warning in run_outcome(cassette)[1]:
            click.echo(f"cassette-tui diff: warning: {safe(str(warning))}", err=True)


def _row_line(index: int, row: Row, width: int = 5) -> Text:
    """One row of the list: its mark, number, seqs, flags, status and tool; the numbers
    right-aligned in ``width`` characters (``_column_width``; a wider seq pushes the rest
    right)."""
    mark = STATUS_MARKS[row.status]
    line = Text(f"{glyph(mark.glyph)} ", style=mark.colour)
    a_seq = row.a_seq if row.a_seq is not None else "-"
    b_seq = row.b_seq if row.b_seq is not None else "-"
    line.append(f"{index + 1:>{width}}  {a_seq:>{width}}  {b_seq:>{width}}  ")
    flags = ("R" if row.repeated_a or row.repeated_b else ".") + (
        "E" if row.error_a or row.error_b else "."
    )
    line.append(flags, style="bold")
    line.append(f"  {mark.short:<15} ", style=mark.colour)
    line.append(safe(tool_text(row.tool)))
    return line


ROW_HEADER = "    row  A seq  B seq  RE  status          tool"


def _column_width(rows: int) -> int:
    """The width of the row list's number columns: 5, or the digits of the last row's
    number (100,000 rows and more)."""
    return max(5, len(str(rows)))


def _row_header(width: int) -> str:
    """``ROW_HEADER`` with its three number columns ``width`` wide."""
    pad = " " * (width - 5)
    return f"  {pad}  row  {pad}A seq  {pad}B seq  RE  status          tool"


def _drift_lines(items: list[DriftItem], layout: Layout, reveal: bool = False) -> list[Text]:
    """One line per item: the sign, the part and the JSON path, then ``A-value ->
    B-value`` (each cut to half the width). On a terminal, two lines when the values do not
    fit beside the path. Secrets masked unless ``reveal``."""
    width = layout.width
    lines = []
    shown_items = items[:MAX_DRIFT_LINES]
    masked, secrets = _masked_items(shown_items, reveal)
    for raw, item in zip(shown_items, masked, strict=True):
        apart = None
        if not reveal and isinstance(raw.a, str) and isinstance(raw.b, str):
            # a first difference inside a secret: each mask labelled with its hash
            apart = secret_apart(raw.a, raw.b, item.a, item.b, key_at(raw.path))
        change = item.change
        head = f"      {CHANGE_MARKS[change].sign} {item.part} {safe(item.path)}"
        if change in (Change.ADDED, Change.ITEM_ADDED):
            values = [f"+ {_value(item.b, width - 28)} (absent in A)"]
        elif change in (Change.REMOVED, Change.ITEM_REMOVED):
            values = [f"- {_value(item.a, width - 28)} (absent in B)"]
        elif change is Change.REORDERED:
            count = len(item.a) if isinstance(item.a, list) else 0
            values = [f"same {count} items, another order"]
        elif apart is not None and is_long_pair(apart.a, apart.b, (width - 18) // 2):
            # long: both sides from its mask on, at the position in the values
            where = apart.spot(max((width - 40) // 2, 12))
            values = [where.describe(right=" -> ", note=" (inside a secret)")]
        elif apart is not None:
            half = (width - 18) // 2
            values = [f"{_value(apart.a, half)} -> {_value(apart.b, half)}"]
        elif is_long_pair(item.a, item.b, (width - 18) // 2):
            # too long to show whole: both sides around the first differing character
            where = spot(item.a, item.b, max((width - 40) // 2, 12))
            values = [where.describe(right=" -> ")]
        else:
            half = (width - 18) // 2
            values = [f"{_value(item.a, half)} -> {_value(item.b, half)}"]
            if change is Change.NUMBER_TYPE:
                values.append(f"({CHANGE_MARKS[change].words})")
        tail = " ".join(values)
        if secrets:  # a secret either side's scan found, wherever it shows on both
            tail = mask_pieces(tail, secrets)
        if len(head) + 2 + len(tail) <= width or not layout.wrap:
            line = Text(head, style="dim")
            line.append("  " + tail)
            lines.append(line)
        else:
            head_text = Text(head, style="dim")
            head_text.truncate(width, overflow="ellipsis")
            lines.append(head_text)
            value_text = Text("          " + tail)
            value_text.truncate(width, overflow="ellipsis")
            lines.append(value_text)
    if len(items) > MAX_DRIFT_LINES:
        lines.append(Text(f"      ... {len(items) - MAX_DRIFT_LINES} more", style="dim"))
    return lines


def _masked_items(items: list[DriftItem], reveal: bool) -> tuple[list[DriftItem], tuple[str, ...]]:
    """Each item with its values masked (``masking.mask_found`` under its path's last key)
    and its path (an args key that is a token), and the secrets one side's scan found in
    any of them and the other's did not (``pair_masking.pair_secrets``); the items
    themselves when ``reveal``."""
    if reveal:
        return items, ()
    masked: list[DriftItem] = []
    found_a: list[str] = []
    found_b: list[str] = []
    for item in items:
        key = key_at(item.path)
        a, in_a = mask_found(item.a, key)
        b, in_b = mask_found(item.b, key)
        masked.append(replace(item, a=a, b=b, path=mask_text(item.path)))
        found_a.extend(in_a)
        found_b.extend(in_b)
    return masked, pair_secrets(found_a, found_b)


def _call_lines(result: DiffResult, row: Row, layout: Layout, reveal: bool = False) -> list[Text]:
    """Two different tools at one step: each side's call on its own line (``A tool
    args``), not a drift of one tool's args against the other's; secrets masked unless
    ``reveal``."""
    calls = result.calls(row)
    lines = []
    for side in ("a", "b"):
        call = calls[side]
        if call is None:
            continue
        line = Text(f"      {side.upper()} ", style="bold")
        line.append(safe(tool_text(call["tool"], reveal)), style="bold")
        args = call["args"] if reveal else mask_value(call["args"])
        line.append("  " + args_summary(args, limit=max(layout.width - 12, 40)))
        if layout.wrap:
            line.truncate(layout.width, overflow="ellipsis")
        lines.append(line)
    return lines


def _print_human(
    result: DiffResult,
    name_a: str,
    name_b: str,
    limit: int,
    include_same: bool,
    reveal: bool = False,
) -> None:
    console, layout = stdout_console()
    lines = chain(
        _summary(result, name_a, name_b, layout),
        _findings_lines(result.findings, layout, reveal),
        _rows_lines(result, limit, include_same, layout, reveal),
    )
    if console.is_terminal or console.color_system is not None:
        for line in lines:
            console.print(line)
        return
    # Not a terminal and no colour: Rich would print each line as its plain text, at about
    # 60 us a line; written in batches instead (``--limit 0`` at 100k rows: 4x the time of
    # ``--json`` before). A line's text is already made safe (``text.safe``).
    write = console.file.write
    for batch in iter(lambda: list(islice(lines, 2048)), []):
        write("".join(f"{line.plain}\n" for line in batch))
    console.file.flush()


def _findings_lines(
    findings: list[Finding], layout: Layout, reveal: bool = False
) -> Iterator[Text]:
    """The findings, each with its seqs on both sides, its message and its first action
    (a blank line before them); nothing when there are none."""
    if not findings:
        return
    yield Text("")
    yield Text(f"Findings ({len(findings)})", style="bold")
    for n, f in enumerate(findings, 1):
        head = Text(f"{n:>2}. ", style="bold")
        head.append(safe(f.kind), style="bold yellow")
        seqs = "  ".join(
            f"{side.upper()} {', '.join(map(str, f.side_seqs(side))) or '-'}" for side in ("a", "b")
        )
        head.append(f"  {seqs}", style="dim")
        if layout.wrap:
            head.truncate(layout.width, overflow="ellipsis")
        yield head
        message = f.message if reveal else mask_text(f.message)
        yield Text(_wrap(safe(message), layout, "    "))
        yield Text(_wrap(safe(f"-> {f.action}"), layout, "    "), style="green")


def _rows_lines(
    result: DiffResult, limit: int, include_same: bool, layout: Layout, reveal: bool = False
) -> Iterator[Text]:
    """The rows that differ (all with ``include_same``), at most ``limit`` (0: all), each
    with its drift (or the calls of an ``other_call`` row), a blank line before them;
    nothing when no row is shown."""
    # the rows one at a time, each drift not kept: memory does not grow with the rows
    rows = result.rows
    total = len(rows) if include_same else len(rows) - result.counts[Status.SAME]
    if not total:
        return
    yield Text("")
    yield Text("Rows" + ("" if include_same else " that differ"), style="bold")
    width = _column_width(len(rows))
    yield Text(_row_header(width), style="dim")
    shown = (
        (i, row) for i, row in enumerate(rows) if include_same or row.status is not Status.SAME
    )
    cut = list(islice(shown, limit)) if limit else shown
    printed = 0
    for index, row in cut:
        printed += 1
        yield _row_line(index, row, width)
        if row.status is Status.OTHER_CALL:
            lines = _call_lines(result, row, layout, reveal)
        else:
            drift = result.drift(index, keep=False)
            lines = _drift_lines(drift, layout, reveal)
            numbers = numeric_drift(drift)
            if numbers is not None:
                lines.append(
                    Text(
                        f"      numbers: {numbers['count']} differ, largest |Δ| "
                        f"{numbers['max_abs_delta']:.6g}",
                        style="dim",
                    )
                )
        yield from lines
    if printed < total:
        yield Text(
            f"... {total - printed} more rows (--limit 0 shows all; --json lists "
            "them with their drift)",
            style="dim",
        )
