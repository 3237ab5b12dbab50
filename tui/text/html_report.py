"""``cassette-tui report A B -o pair.html``: one self-contained HTML file to attach to a
review: the aligned rows with their marks, the drift of each step, the findings and, when
given, a gate's verdict. It opens from ``file://`` with no network access (no external
asset; a Content-Security-Policy forbids any fetch) and stays usable on a 100k-step pair:
the rows are data in the page, drawn only as they scroll into view.

Secrets: every value is masked as ``diff`` masks it (``text/masked.py``) unless
``reveal``, and then the finished page's text is scanned again: a secret still in it
raises ``SecretInReport`` and nothing is written.

What is cut, to keep the page small: a row's drift to ``DRIFT_ITEMS`` paths (the count of
the rest is kept), each value to ``VALUE_CHARS`` characters, args summaries to 160.
``cassette-tui diff --json`` has everything.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TYPE_CHECKING, Any

import orjson
from cassette_tui.core.diff.model import Status
from cassette_tui.core.format.errors import CassetteError
from cassette_tui.core.scan.masking import mask_value
from cassette_tui.core.scan.secrets import scan_string

from .markdown import seq_text, side_name
from .marks import STATUS_MARKS
from .masked import masked_finding, masked_row
from .plural import plural
from .safe import args_summary

if TYPE_CHECKING:
    from cassette_tui.core.diff.result import DiffResult
    from cassette_tui.core.format.jobs import ProgressSink

DRIFT_ITEMS = 8
VALUE_CHARS = 300
ARGS_CHARS = 160


class SecretInReport(CassetteError, ValueError):
    """The finished report would hold a secret (a value the masking missed, or
    ``reveal``): nothing is written.

    Attributes:
        detector: the secret scan's detector that found it.
        where: what holds it (``"row 12 drift $.headers.auth"``, ``"finding"``).
    """

    def __init__(self, detector: str, where: str) -> None:
        self.detector = detector
        self.where = where
        super().__init__(
            f"the report would hold a secret ({detector}) in {where}; nothing written. "
            "Redact the cassettes first (cassette-tui redact), or check what the scan found "
            "(cassette-tui check --secrets)"
        )


def _value_text(value: Any) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    )
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _compact_row(result: DiffResult, row: dict[str, Any], reveal: bool) -> list[Any]:
    """``[row, a_seq, b_seq, status, tool, tool_b, args_a, args_b, drift, more]``: one
    row for the page (``drift``: ``[path, a, b, change, absent]`` items)."""
    aligned = result.rows[row["row"] - 1]

    def args_of(cassette: Any, index: int | None) -> str:
        if index is None:
            return ""
        args = cassette.entry_view(index).args
        return args_summary(args if reveal else mask_value(args), ARGS_CHARS)

    drift = row.get("drift") or []
    items = [
        [
            str(d.get("path")),
            _value_text(d.get("a")),
            _value_text(d.get("b")),
            str(d.get("change", "")).replace("_", " "),
            d.get("absent"),
        ]
        for d in drift[:DRIFT_ITEMS]
    ]
    return [
        row["row"],
        row.get("a_seq"),
        row.get("b_seq"),
        row.get("status"),
        row.get("tool"),
        row.get("tool_b"),
        args_of(result.a, aligned.a),
        args_of(result.b, aligned.b),
        items,
        max(0, len(drift) - DRIFT_ITEMS),
    ]


def report_payload(
    result: DiffResult,
    *,
    reveal: bool = False,
    gate: dict[str, Any] | None = None,
    sink: ProgressSink | None = None,
) -> dict[str, Any]:
    """The page's data: ``title``, ``summary``, ``first`` (0-based row index or ``None``),
    ``first_text``, ``gate`` (one line, or ``None``), ``marks`` (status -> ``[glyph,
    words]``), ``rows`` (every aligned row, ``_compact_row``), ``findings``
    (``{"kind", "message", "action"}``). ``gate``: a ``gate --json`` document."""
    from cassette_tui.core.format.jobs import run_job

    head = result.head_json()
    rows: list[list[Any]] = []

    def keep(row: dict[str, Any]) -> None:
        rows.append(_compact_row(result, row if reveal else masked_row(row), reveal))

    run_job(result.rows_json_job(keep, include_same=True), sink)
    findings = [f.to_diff_json() for f in run_job(result.findings_job(), sink)]
    if not reveal:
        findings = [masked_finding(doc) for doc in findings]
    a, b = head.get("a") or {}, head.get("b") or {}
    name_a, name_b = side_name(a), side_name(b)
    counts = ", ".join(
        f"{n} {STATUS_MARKS[Status(k)].words}" for k, n in (head.get("counts") or {}).items() if n
    )
    first = head.get("first_divergence")
    first_text = "the runs are the same"
    if isinstance(first, dict):
        tool = first.get("tool")
        tool = tool if reveal or not isinstance(tool, str) else mask_value(tool)
        first_text = (
            f"first divergence ▶ row {first.get('row')}: A seq {seq_text(first.get('a_seq'))}, "
            f"B seq {seq_text(first.get('b_seq'))} {tool} "
            f"({STATUS_MARKS[Status(first.get('status'))].words})"
        )
    return {
        "title": f"cassette-tui: A {name_a} vs B {name_b}",
        "summary": f"A {name_a} ({plural(a.get('entries') or 0, 'call')}) · B {name_b} "
        f"({plural(b.get('entries') or 0, 'call')}) · aligned by {head.get('align')} · "
        f"{len(rows)} rows: {counts}",
        "first": first["row"] - 1 if isinstance(first, dict) else None,
        "first_text": first_text,
        "gate": _gate_line(gate),
        "marks": {s.value: [m.glyph, m.words] for s, m in STATUS_MARKS.items()},
        "rows": rows,
        "findings": [
            {"kind": f.get("kind"), "message": f.get("message", ""), "action": f.get("action")}
            for f in findings
        ],
    }


def _gate_line(gate: dict[str, Any] | None) -> str | None:
    if not gate:
        return None
    verdict = gate.get("verdict")
    line = (
        f"gate: {verdict}: {gate.get('passed')}/{gate.get('clean', gate.get('runs'))} passed"
        f" · network off ({gate.get('isolation')})"
    )
    divergence = gate.get("divergence")
    if isinstance(divergence, dict) and divergence.get("message"):
        line += f" · {divergence['message']}"
    return line


def check_no_secret(payload: dict[str, Any]) -> None:
    """Scan every string of ``payload`` (as the page will hold it) with the secret scan.

    Raises:
        SecretInReport: one is found (the first, with where it is).
    """
    for where, text in _strings(payload, "report"):
        for _secret, detector, _kind in scan_string(text, None):
            raise SecretInReport(str(detector), where)


def _strings(value: Any, where: str) -> Any:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        if where == "report.rows":
            for row in value:
                yield from _strings(row, f"row {row[0]}")
        else:
            for v in value:
                yield from _strings(v, where)


def report_html(payload: dict[str, Any]) -> bytes:
    """The self-contained page (UTF-8) with ``payload`` inside: the data in a
    ``<script type="application/json">`` (``<`` escaped so no value can close it)."""
    template = resources.files("cassette_tui.tui.text").joinpath("report.html").read_text("utf-8")
    data = orjson.dumps(payload).replace(b"<", b"\\u003c").replace(b">", b"\\u003e")
    data = data.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    title = _html_escape(payload["title"])
    page = template.replace("__TITLE__", title)
    before, after = page.split("__DATA__", 1)
    return before.encode("utf-8") + data + after.encode("utf-8")


def _html_escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)
