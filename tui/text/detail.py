"""The detail of one step: both sides' args and response, and the drift per JSON path.

The builders are plain functions that turn ``core`` results into Rich renderables; they run
in a thread worker (parsing an entry and pretty-printing a large response take time) and
never compute a diff themselves: the drift comes from ``DiffResult.drift``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from cassette_tui.core.diff.align import is_error_outcome
from cassette_tui.core.diff.model import Change, DriftItem, Finding, Row, Status
from cassette_tui.core.format.constants import BATCH_FIELD
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.format.jsonpath import parse_path
from cassette_tui.core.format.textspot import first_difference, is_long_pair, spot
from cassette_tui.core.scan.masked_text import MaskedText, masked_first_difference
from cassette_tui.core.scan.masking import mask_found, mask_text
from cassette_tui.core.scan.pair_masking import mask_pieces, pair_secrets
from cassette_tui.core.scan.secret_drift import SecretApart, secret_apart
from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from .kept import KeptByIds
from .marks import CHANGE_MARKS, ERROR, PARALLEL, REPEATED, STATUS_MARKS
from .plural import plural
from .safe import compact, printable, safe, tool_text
from .shown import LONG_TEXT, masked_long_found, shown_lines
from .words import WORD_FIELDS, pair_after, pair_before, single_words

if TYPE_CHECKING:
    from cassette_tui.core.diff.result import DiffResult
    from cassette_tui.core.format.cassette import Cassette


@dataclass(frozen=True)
class Limits:
    """How much of a long value is shown before it is cut (``e`` expands)."""

    lines: int | None = 12
    chars: int | None = 160
    drift_value: int | None = 60
    is_expanded: bool = False
    #: show secrets whole (``v``); masked by default so a shared screen never shows one
    reveal_secrets: bool = False

    @classmethod
    def expanded(cls) -> Limits:
        # Still bounded: drawing costs about 5 ms per KB on the UI thread, so a 1 MB
        # response shown whole froze every key for 5 s. 20k characters a string and 2,000
        # lines a value take a fraction of a second and are more than a screen can show.
        return cls(
            lines=EXPANDED_LINES,
            chars=EXPANDED_CHARS,
            drift_value=EXPANDED_CHARS,
            is_expanded=True,
        )

    @property
    def hint(self) -> str:
        return EXPANDED_HINT if self.is_expanded else CUT_HINT


EXPANDED_LINES = 2_000
EXPANDED_CHARS = 20_000
CUT_HINT = "press e to expand"
EXPANDED_HINT = "cut even when expanded: the file holds the rest"
Styles = Mapping[str, Style]
DETAIL_STYLES = ("detail--old", "detail--new", "detail--error")


def _value(value: Any, limit: int | None) -> str:
    text = compact(value)
    if limit is not None and len(text) > limit:
        return f"{text[: limit - 1]}…"
    return text


def _leaf_key(path: str) -> str | None:
    """The last object key of a drift path (``$.headers.Authorization`` -> ``Authorization``)."""
    try:
        parts = parse_path(path)
    except ValueError:
        return None
    keys = [p for p in parts if isinstance(p, str)]
    return keys[-1] if keys else None


#: the secrets one side's scan found in a pair's drift and the other's did not, to mask
#: wherever they show on either side
Secrets = tuple[str, ...]


def _block(value: Any, limits: Limits, style: str | Style = "", secrets: Secrets = ()) -> Text:
    # a secret is not shown whole until revealed (core.secrets); only the lines shown are
    # masked and printed (a 2 MB response is 40k lines); ``secrets``: those one side of
    # the pair's drift holds and the other's scan missed (``core.scan.pair_masking``)
    lines, cut = shown_lines(
        value, max_lines=limits.lines, max_chars=limits.chars, reveal=limits.reveal_secrets
    )
    text = Text(_pieces("\n".join(lines), secrets), style=style, overflow="fold")
    if cut or (limits.chars is not None and "…(+" in text.plain):
        more = f"… {cut} more lines, " if cut else "… "
        text.append(f"\n{more}{limits.hint}", style="dim italic")
    return text


def _pieces(text: str, secrets: Secrets) -> str:
    """``mask_pieces`` of a text shown, when the pair holds any secret."""
    return mask_pieces(text, secrets) if secrets else text


def _outcome(entry: Entry) -> tuple[str, Any]:
    if entry.is_error:
        return "error", entry.error
    return "response", entry.response


_PART_ORDER = {"args": 0, "response": 1, "error": 2}


def _masked_item(item: DriftItem) -> tuple[DriftItem, list[str], list[str]]:
    """``item`` with its two values masked for display as ``mask_value`` masks them, and
    the secrets masked in A's and in B's. A long string is masked whole
    (``shown.masked_long_found``: one pass of the prefilter over it when it holds no
    secret, a JSON text's secrets found without walking each node): a secret found
    anywhere in it is masked wherever its text shows, the spot around the first
    difference included."""
    key = _leaf_key(item.path)
    a, found_a = _masked(item.a, key)
    b, found_b = _masked(item.b, key)
    return replace(item, a=a, b=b), found_a, found_b


def _masked(value: Any, key: str | None) -> tuple[Any, list[str]]:
    if isinstance(value, str) and len(value) > LONG_TEXT:
        found = masked_long_found(value, key)
        if found is not None:
            return found
    return mask_found(value, key)


def masked_drift(
    items: Sequence[DriftItem] | None, reveal: bool
) -> tuple[list[tuple[DriftItem, DriftItem]], Secrets]:
    """Each drift item as recorded and masked (``_masked_item``; the same item twice when
    ``reveal``), and every secret one side's scan found in any of them and the other's
    did not (``pair_secrets``): the pair's detail masks those wherever they show on
    either side (``core.scan.pair_masking``), so a secret one side's scan misses (a JSON
    text cut short, a token split by a space) is not shown there."""
    if reveal or not items:
        return [(item, item) for item in items or ()], ()
    pairs: list[tuple[DriftItem, DriftItem]] = []
    found_a: list[str] = []
    found_b: list[str] = []
    for item in items:
        masked, in_a, in_b = _masked_item(item)
        pairs.append((item, masked))
        found_a.extend(in_a)
        found_b.extend(in_b)
    return pairs, pair_secrets(found_a, found_b)


def _whole(value: Any) -> Any:
    """A drift value as a string: a ``MaskedText`` built whole (shown whole or cut by
    ``_value``, not around a first difference)."""
    return str(value) if isinstance(value, MaskedText) else value


def _raw_difference(raw: DriftItem) -> int | None:
    """The first difference of a drift's two values as recorded when both are strings,
    kept with them (``_DIFFERS``, apart from the masked pairs'): that of their masked
    texts is worked out from it (``masked_first_difference``), and ``secret_apart`` asks
    it too (two compares of 34.6M characters at 24 MB)."""
    if isinstance(raw.a, str) and isinstance(raw.b, str):
        return _DIFFERS.get((raw.a, raw.b), "recorded", first_difference)
    return None


def _long_difference(a: Any, b: Any, long: int, same: int | None = None) -> int | None:
    """The first difference of two different strings, either one ``long`` characters or
    more (``textspot.is_long_pair``), masked or not (``MaskedText``; ``same``: the first
    difference of the texts as recorded, when known), kept with them (``_DIFFERS``); else
    ``None``."""
    if isinstance(a, str) and isinstance(b, str):
        return _DIFFERS.get((a, b), None, first_difference) if is_long_pair(a, b, long) else None
    if not (isinstance(a, str | MaskedText) and isinstance(b, str | MaskedText)):
        return None
    if max(len(a), len(b)) < long:
        return None
    at = _DIFFERS.get((a, b), None, lambda x, y: masked_first_difference(x, y, same))
    return None if at == len(a) == len(b) else at  # equal as shown: no spot


def _secret_apart(
    raw: DriftItem, masked: DriftItem, raw_at: int | None = None
) -> SecretApart | None:
    """``secret_apart`` of a drift's two strings (``raw``, first differing at ``raw_at``
    when known) and their masks (``masked``), kept with them: the pane, the step screen
    and ``e`` show the same drift, and two long texts holding secrets are scanned again
    to be labelled."""
    if not (isinstance(raw.a, str) and isinstance(raw.b, str)):
        return None
    key = _leaf_key(raw.path)
    return _APART.get(
        (raw.a, raw.b, masked.a, masked.b),
        key,
        lambda a, b, ma, mb: secret_apart(a, b, ma, mb, key, raw_at),
    )


#: ``secret_apart`` of the pairs shown last, by the ids of the four texts
_APART: KeptByIds[SecretApart | None] = KeptByIds(4)


#: the first differences of the long pairs shown last, by the ids of the two texts, kept
#: with them: the pane, the step screen and ``e`` show the drift of the same two masked
#: texts (``masked_long_text`` keeps them), and two masked 24 MB texts (not ASCII:
#: compared a slice at a time) took 13 ms to compare at each view (now 3-5 ms, the texts
#: as recorded: ``masked_first_difference``)
_DIFFERS: KeptByIds[int] = KeptByIds(4)


def drift_lines(
    items: Sequence[DriftItem],
    limits: Limits,
    styles: Styles,
    masked: tuple[list[tuple[DriftItem, DriftItem]], Secrets] | None = None,
) -> Text:
    """One line per drifted path: ``response $.top  "a" -> "b"  (changed)``. ``masked``:
    ``masked_drift(items, limits.reveal_secrets)`` when the caller has it; each secret
    found on either side masked on both."""
    pairs, secrets = masked if masked is not None else masked_drift(items, limits.reveal_secrets)

    def shown(value: Any) -> str:  # a ``MaskedText`` built whole, shown whole or cut
        return _pieces(_value(_whole(value), limits.drift_value), secrets)

    def around(part: str) -> str:  # a side's window around the first difference
        return printable(json.dumps(_pieces(part, secrets), ensure_ascii=False))

    text = Text()
    # a stable order whatever order the engine reports: args first, then by JSON path
    ordered = sorted(pairs, key=lambda d: (_PART_ORDER.get(d[0].part, 9), d[0].path))
    for n, (raw, item) in enumerate(ordered):
        apart = raw_at = None
        if not limits.reveal_secrets:
            if isinstance(item.a, MaskedText) or isinstance(item.b, MaskedText):
                raw_at = _raw_difference(raw)
            apart = _secret_apart(raw, item, raw_at)
        if n:
            text.append("\n")
        if item.change is not Change.VALUE_CHANGED:
            item = replace(item, a=_whole(item.a), b=_whole(item.b))
        text.append(f"{item.part} ", style="dim")
        path = item.path if limits.reveal_secrets else mask_text(item.path)  # a token as a key
        text.append(printable(path), style="bold")
        text.append("  ")
        if item.change in (Change.ADDED, Change.ITEM_ADDED):
            text.append(f"+ {shown(item.b)}", style=styles.get("detail--new", ""))
        elif item.change in (Change.REMOVED, Change.ITEM_REMOVED):
            text.append(f"- {shown(item.a)}", style=styles.get("detail--old", ""))
        elif item.change is Change.REORDERED:
            count = len(item.a) if isinstance(item.a, list) else 0
            text.append(f"same {count} items, another order")
            text.append("  (A's order: ", style="dim")
            text.append(shown(item.a), style=styles.get("detail--old", ""))
            text.append(")", style="dim")
            continue
        elif apart is not None:
            # the first difference is inside a secret: each mask labelled with its hash
            if is_long_pair(apart.a, apart.b, limits.drift_value or 80):
                where = apart.spot(limits.drift_value or 80)
                text.append(f"at character {where.position} (inside a secret): ")
                a_shown, b_shown = around(where.a), around(where.b)
            else:
                a_shown, b_shown = (shown(v) for v in (apart.a, apart.b))
            text.append(a_shown, style=styles.get("detail--old", ""))
            text.append(" -> ")
            text.append(b_shown, style=styles.get("detail--new", ""))
        elif (at := _long_difference(item.a, item.b, limits.drift_value or 80, raw_at)) is not None:
            # strings too long to show whole: both sides around the first differing
            # character (a ``MaskedText`` read there only)
            where = spot(item.a, item.b, limits.drift_value or 80, at)
            text.append(f"at character {where.position}: ")
            text.append(around(where.a), style=styles.get("detail--old", ""))
            text.append(" -> ")
            text.append(around(where.b), style=styles.get("detail--new", ""))
        else:
            text.append(shown(item.a), style=styles.get("detail--old", ""))
            text.append(" -> ")
            text.append(shown(item.b), style=styles.get("detail--new", ""))
        text.append(f"  ({CHANGE_MARKS[item.change].words})", style="dim")
    return text


def _findings_text(findings: Iterable[Any], title: str) -> Text | None:
    found = list(findings)
    if not found:
        return None
    text = Text(title, style="bold")
    for finding in found:
        text.append("\n• ")
        text.append(safe(finding.kind), style="bold")
        text.append(": ")
        text.append(safe(finding.message))
        action = getattr(finding, "action", None)
        if action:
            text.append("\n  → ", style="dim")
            text.append(safe(action), style="italic")
    return text


def row_findings(findings: Iterable[Finding], row: Row) -> list[Finding]:
    """The findings whose evidence names this row's seq on either side."""
    related = []
    for finding in findings:
        if (row.a_seq is not None and row.a_seq in finding.side_seqs("a")) or (
            row.b_seq is not None and row.b_seq in finding.side_seqs("b")
        ):
            related.append(finding)
    return related


def pair_title(
    row: Row, tool_b: str | None = None, error: bool | None = None, parallel: bool = False
) -> Text:
    """``A seq 4 · B seq 4 · search_docs · ~ response drift``; for two different tools
    (``tool_b``, ``other_call``): ``A seq 3 · B seq 3 · search_direct ≠ search_onestop``.
    ``error``: either entry is an error (``None``: as far as the row's flags tell, which
    leave out a row where both sides are)."""
    mark = STATUS_MARKS[row.status]
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"A seq {row.a_seq if row.a_seq is not None else '-'}", style="bold")
    text.append(" · ")
    text.append(f"B seq {row.b_seq if row.b_seq is not None else '-'}", style="bold")
    text.append(" · ")
    text.append(tool_text(row.tool))
    if row.status is Status.OTHER_CALL and tool_b is not None:
        text.append(" ≠ ")
        text.append(tool_text(tool_b))
    text.append(f" · {mark.glyph} {mark.label.split(':')[0]}")
    for flag, on in (
        (PARALLEL, parallel),
        (REPEATED, row.repeated_a or row.repeated_b),
        (ERROR, (row.error_a or row.error_b) if error is None else error),
    ):
        if on:
            text.append(f" · {flag.glyph} {flag.label.split(':')[0]}")
    return text


def pair_detail(
    result: DiffResult,
    row_index: int,
    drift: Sequence[DriftItem] | None,
    limits: Limits,
    styles: Styles,
    findings: Sequence[Finding] = (),
) -> RenderableType:
    """The detail of aligned row ``row_index`` of a ``DiffResult``, with the ``findings``
    (the result's diagnosis) that name this row."""
    row: Row = result.rows[row_index]
    # the entries as held, not copies (a copy of a 2 MB response took seconds); nothing
    # here changes them: masking and cutting build new values
    a = result.a.entry_view(row.a) if row.a is not None else None
    b = result.b.entry_view(row.b) if row.b is not None else None
    other_call = row.status is Status.OTHER_CALL and a is not None and b is not None
    error = any(is_error_outcome(e.is_error, e.response) for e in (a, b) if e is not None)
    # a call that ran beside others (the recorder's batch): the runs may have issued it
    # in another order, so its seqs may differ
    parallel = any(type(e.extra.get(BATCH_FIELD)) is int for e in (a, b) if e is not None)
    parts: list[RenderableType] = [
        pair_title(row, b.tool if b is not None else None, error, parallel)
    ]
    # the words before the call first: why the agent chose (core/format/context.py)
    parts.extend(pair_before(result, row, a, b, limits))
    # the drift masked once: its lines, and the secrets either side's scan found in it,
    # masked wherever they show on both sides (the table below too)
    masked = masked_drift(drift, limits.reveal_secrets)
    parts.extend(_drift_section(drift, masked, a, b, other_call, limits, styles))
    parts.append(_sides_table(a, b, other_call, limits, styles, masked[1]))
    parts.extend(pair_after(result, row, a, b, limits))
    related = _findings_text(row_findings(findings, row), "findings about this step")
    if related is not None:
        parts.append(related)
    return Group(*parts)


def _drift_section(
    drift: Sequence[DriftItem] | None,
    masked: tuple[list[tuple[DriftItem, DriftItem]], Secrets],
    a: Entry | None,
    b: Entry | None,
    other_call: bool,
    limits: Limits,
    styles: Styles,
) -> list[RenderableType]:
    """The drift of a row, A -> B: its title and lines, "computing drift…" while it is
    ``None``, "no drift" for two equal steps, nothing for a step on one side only."""
    if other_call:
        # two different tools: the two calls side by side below, never a drift of one
        # tool's args against the other's
        return [Text("two different calls at this step, side by side", style="bold")]
    if drift is None:
        return [Text("computing drift…", style="dim italic")]
    if drift:
        title = Text(f"drift ({plural(len(drift), 'path')}, A -> B)", style="bold underline")
        return [title, drift_lines(drift, limits, styles, masked)]
    if a is not None and b is not None:
        return [Text("no drift: same args, same response", style="dim")]
    return []


def _sides_table(
    a: Entry | None,
    b: Entry | None,
    other_call: bool,
    limits: Limits,
    styles: Styles,
    secrets: Secrets = (),
) -> Table:
    """A and B side by side: each side's args, then its response (or error); ``·`` for the
    side without a step. ``secrets``: those of the drift, masked on both sides."""
    table = Table(box=None, expand=True, show_header=True, padding=(0, 1, 0, 0))

    def head(side: str, entry: Entry | None) -> Text:
        if entry is None:
            return Text(f"{side} (no step)", style="bold")
        if other_call:
            return Text(f"{side} {tool_text(entry.tool, limits.reveal_secrets)} args", style="bold")
        return Text(f"{side} args", style="bold")

    table.add_column(head("A", a), ratio=1)
    table.add_column(head("B", b), ratio=1)
    table.add_row(
        _block(a.args, limits, secrets=secrets) if a else Text("·", style="dim"),
        _block(b.args, limits, secrets=secrets) if b else Text("·", style="dim"),
    )
    a_kind, a_value = _outcome(a) if a else ("response", None)
    b_kind, b_value = _outcome(b) if b else ("response", None)
    table.add_row(Text(f"A {a_kind}", style="bold"), Text(f"B {b_kind}", style="bold"))
    error = styles.get("detail--error", "")
    table.add_row(
        _block(a_value, limits, error if a_kind == "error" else "", secrets)
        if a
        else Text("·", style="dim"),
        _block(b_value, limits, error if b_kind == "error" else "", secrets)
        if b
        else Text("·", style="dim"),
    )
    return table


def single_detail(
    cassette: Cassette, index: int, findings: Sequence[Finding], limits: Limits, styles: Styles
) -> RenderableType:
    """The detail of entry ``index`` of one cassette, with its lint findings."""
    entry: Entry = cassette.entry_view(index)  # read only: no copy of a large entry
    kind, value = _outcome(entry)
    title = Text(no_wrap=True, overflow="ellipsis")
    title.append(f"seq {entry.seq}", style="bold")
    title.append(f" · {tool_text(entry.tool, limits.reveal_secrets)} · line {entry.line or '-'} · ")
    title.append(printable(cassette.digest(index)), style="dim")
    if is_error_outcome(entry.is_error, entry.response):
        title.append(f" · {ERROR.glyph} {ERROR.label.split(':')[0]}", style="bold")
    parts: list[RenderableType] = [title]
    related = _findings_text(findings, "findings")
    if related is not None:
        parts.append(related)
    # the words (core/format/context.py)
    before, after = single_words(cassette, index, entry, limits)
    parts.extend(before)
    parts.append(Text("args", style="bold underline"))
    parts.append(_block(entry.args, limits))
    parts.append(Text(kind, style="bold underline"))
    parts.append(_block(value, limits, styles.get("detail--error", "") if kind == "error" else ""))
    parts.extend(after)
    other = {k: v for k, v in entry.extra.items() if k not in WORD_FIELDS}
    if other:
        parts.append(Text("other fields", style="bold underline"))
        parts.append(_block(other, limits, "dim"))
    return Group(*parts)
