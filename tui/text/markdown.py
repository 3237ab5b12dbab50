"""Findings as Markdown for a pull-request comment or a CI job summary (``diff --format
markdown``, ``gate --format markdown``): GitHub-flavoured Markdown that a CommonMark
parser with the table extension reads (GitHub comments, GitLab notes, ``$GITHUB_STEP_SUMMARY``).

Built from the same documents as ``--json`` (``DiffResult``'s head, rows and findings after
the secret masking of ``diff``; a gate's report lines), so the words match the terminal's.
Every value from a cassette goes in a code span whose fence is longer than any run of
backticks inside it, with ``|`` escaped and line ends shown as ``⏎``, so a value can
neither end its table cell nor start markup. Long values are cut (``…``). The whole
comment stays under ``MAX_CHARS`` (GitHub refuses a comment over 65,536 characters): rows
past the limit are counted, not listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from cassette_tui.core.diff.model import Status
from cassette_tui.core.scan.masking import mask_text, mask_value

from .marks import STATUS_MARKS
from .plural import plural

if TYPE_CHECKING:
    from cassette_tui.core.loop.gate import GateResult
    from cassette_tui.core.why.bisect import BisectResult

#: below GitHub's 65,536-character limit for a comment, with room for a caller's own words
MAX_CHARS = 60_000
#: a value shown in a cell is cut to this many characters
VALUE_CHARS = 120
#: drift items shown for the first divergent step
DRIFT_ITEMS = 12

_BACKTICKS = re.compile(r"`+")
_MARKUP = re.compile(r"([\\`*\[\]<>|~&])")
_EDGE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def _status_words(status: Any) -> str:
    """A row status in the app's words (``marks.STATUS_MARKS``): ``only in A``."""
    try:
        return STATUS_MARKS[Status(status)].words
    except ValueError:
        return str(status)


def code(value: Any, limit: int = VALUE_CHARS) -> str:
    """``value`` (a string as it is, anything else as compact JSON) as an inline code span
    fit for a table cell: cut to ``limit`` characters, line ends as ``⏎``, ``|`` escaped,
    fenced by more backticks than it holds."""
    if isinstance(value, str):
        text = value
    else:
        import json

        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    text = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    # GFM reads an escaped pipe as a pipe even inside a code span in a table cell
    text = text.replace("|", "\\|")
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def plain(text: str) -> str:
    """Free text (a finding's message, an action) as Markdown: masked for secrets, with
    the characters that start markup escaped, line ends as spaces."""
    text = mask_text(text).replace("\r", " ").replace("\n", " ")
    text = _MARKUP.sub(r"\\\1", text)
    # an underscore inside a word is no emphasis in CommonMark: only those at an edge
    return _EDGE_UNDERSCORE.sub(r"\\_", text)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out.extend("| " + " | ".join(cells) + " |" for cells in rows)
    return out


def diff_markdown(
    head: dict[str, Any],
    rows: Sequence[dict[str, Any]],
    findings: Sequence[dict[str, Any]],
    *,
    limit: int = 40,
    listed: int | None = None,
) -> str:
    """A diff as Markdown: the two runs, the counts, where they part, the drift of the
    first divergent step, the findings with their first action, then up to ``limit``
    rows that are not ``same``.

    Args:
        head: ``DiffResult.head_json()`` (``a``, ``b``, ``align``, ``counts``,
            ``first_divergence``, ...), its tool already masked.
        rows: ``--json`` rows (``rows_json_job``), already masked (``masked_row``).
        findings: ``Finding.to_diff_json()`` documents, already masked.
        limit: rows listed at most (0: as many as fit under ``MAX_CHARS``).
        listed: how many rows the diff lists in all (``rows`` may hold only the first
            ones); default ``len(rows)``.
    """
    a, b = head.get("a") or {}, head.get("b") or {}
    counts = head.get("counts") or {}
    first = head.get("first_divergence")
    same = first is None
    lines = [
        f"### cassette-tui diff: {code(side_name(a))} vs {code(side_name(b))}",
        "",
        f"**{'the runs are the same' if same else 'the runs differ'}**: "
        f"A {plural(a.get('entries') or 0, 'call')}, B {plural(b.get('entries') or 0, 'call')}, "
        f"aligned by {head.get('align')}"
        + (f" ({plain(head['align_reason'])})" if head.get("align_reason") else ""),
        "",
    ]
    shown = [f"{n} {_status_words(k)}" for k, n in counts.items() if n]
    if shown:
        lines += ["rows: " + " · ".join(shown), ""]
    if first is not None:
        lines += [
            f"**Where the runs part:** row {first.get('row')}: "
            f"A seq {seq_text(first.get('a_seq'))}, B seq {seq_text(first.get('b_seq'))}, "
            f"{code(first.get('tool'))} ({_status_words(first.get('status'))})",
            "",
        ]
        first_row = next((r for r in rows if r.get("row") == first.get("row")), None)
        if first_row is not None:
            lines += _drift_table(first_row)
    if findings:
        lines += ["#### Findings", ""]
        for f in findings:
            lines.append(f"- **{plain(str(f.get('kind')))}**: {plain(str(f.get('message', '')))}")
            if f.get("action"):
                lines.append(f"  - {plain(str(f['action']))}")
        lines.append("")
    differing = [r for r in rows if r.get("status") != "same"]
    if differing:
        cap = len(differing) if limit == 0 else min(limit, len(differing))
        body: list[list[str]] = []
        used = sum(len(x) + 1 for x in lines)
        for r in differing[:cap]:
            status = str(r.get("status"))
            cells = [
                str(r.get("row")),
                seq_text(r.get("a_seq")),
                seq_text(r.get("b_seq")),
                code(r.get("tool")),
                _status_words(status),
                _drift_summary(r),
            ]
            used += sum(len(c) + 3 for c in cells) + 2
            if used >= MAX_CHARS:
                break
            body.append(cells)
        lines += ["#### Rows that differ", ""]
        lines += _table(["row", "A seq", "B seq", "tool", "status", "what differs"], body)
        same_listed = len(rows) - len(differing)
        total = (listed if listed is not None else len(rows)) - same_listed
        if len(body) < total:
            more = plural(total - len(body), "more row")
            lines += ["", f"… and {more} (`--json` lists all)"]
        lines.append("")
    lines.append("<sub>cassette-tui diff · secrets masked</sub>")
    return "\n".join(lines) + "\n"


def side_name(side: dict[str, Any]) -> str:
    """The file name of a ``--json`` side (``{"file": ...}``), or ``(in memory)``."""
    from pathlib import PurePath

    file = side.get("file")
    return PurePath(file).name if isinstance(file, str) else "(in memory)"


def seq_text(seq: Any) -> str:
    """A seq as a report shows it: ``–`` on the side that has none."""
    return "–" if seq is None else str(seq)


def _drift_table(row: dict[str, Any]) -> list[str]:
    drift = row.get("drift") or []
    calls = row.get("calls")
    if isinstance(calls, dict):
        body = [
            [side.upper(), code((c or {}).get("tool")), code((c or {}).get("args"))]
            for side, c in calls.items()
        ]
        return [*_table(["side", "tool", "args"], body), ""]
    if not drift:
        return []
    body = [
        [
            code(d.get("path")),
            _side(d, "a"),
            _side(d, "b"),
            str(d.get("change", "")).replace("_", " "),
        ]
        for d in drift[:DRIFT_ITEMS]
    ]
    out = ["Drift of that step (A → B):", "", *_table(["path", "A", "B", "change"], body)]
    if len(drift) > DRIFT_ITEMS:
        out += ["", f"… and {plural(len(drift) - DRIFT_ITEMS, 'more path')}"]
    return [*out, ""]


def _side(item: dict[str, Any], side: str) -> str:
    return "*(absent)*" if item.get("absent") == side else code(item.get(side))


def _drift_summary(row: dict[str, Any]) -> str:
    drift = row.get("drift") or []
    if not drift:
        return ""
    paths = ", ".join(code(d.get("path"), 40) for d in drift[:3])
    more = f" +{len(drift) - 3}" if len(drift) > 3 else ""
    return paths + more


def gate_markdown(result: GateResult, name: str) -> str:
    """A gate as Markdown: the verdict first (what a reviewer needs: "deterministic: 0/20
    passed, network off"), the gate's own report lines (the words of ``cassette-tui
    gate``), then the runs that were not clean or did not pass, at most 50."""
    from .gate import gate_lines, isolation_lines, verdict_line

    verdict = result.verdict
    mark = "✅" if verdict == "deterministic" else ("❌" if verdict == "flaky" else "⚠️")
    network = "; ".join(isolation_lines(result))
    lines = [
        f"### cassette-tui gate: {code(name)}",
        "",
        f"{mark} **{plain(verdict_line(result).removeprefix('verdict '))}** · {plain(network)}",
        "",
    ]
    if verdict == "deterministic":
        lines += [
            "Replay is deterministic: every offline replay of this cassette "
            f"{'passed' if result.passed else 'failed'} the same way, so the cassette "
            "reproduces the run; what varies live is the tools' answers, not the agent.",
            "",
        ]
    for line in gate_lines(result, name):
        if line.kind in ("title", "verdict", "files", "isolation"):
            continue
        lines.append(f"- {plain(line.text.strip())}")
    lines.append("")
    runs = [r for r in result.results if r.completed]
    odd = [r for r in runs if not r.passed or r.replay(result.strict)[0] != "clean"][:50]
    if odd:
        body = []
        for r in odd:
            kind, why = r.replay(result.strict)
            exit_code = "–" if r.exit_code is None else str(r.exit_code)
            body.append(
                [
                    str(r.run),
                    r.status,
                    exit_code,
                    kind + (f": {plain(why)}" if why else ""),
                    str(r.calls),
                ]
            )
        lines += ["#### Runs", "", *_table(["run", "status", "exit", "replay", "calls"], body), ""]
    lines.append("<sub>cassette-tui gate · secrets masked</sub>")
    return "\n".join(lines) + "\n"


def bisect_markdown(result: BisectResult) -> str:
    """A bisect as Markdown: the answer ("2 of 17 differing responses suffice"), the
    minimal steps as a table, how many candidates and replays it took, the unresolved
    candidates; or why there is no answer."""
    from pathlib import PurePath

    a, b = PurePath(result.failing).name, PurePath(result.passing).name
    lines = [f"### cassette-tui bisect: {code(a)} (failing) vs {code(b)} (passing)", ""]
    mark = "✅" if result.exit_status == 0 else ("⚠️" if result.minimal is not None else "❌")
    lines += [f"{mark} **{plain(result.summary())}**", ""]
    if result.minimal:
        body = [
            [
                str(s.a_seq),
                str(s.b_seq),
                code(mask_value(s.tool)),
                ", ".join(code(mask_text(p), 60) for p in s.paths),
            ]
            for s in result.minimal
        ]
        lines += [*_table(["A seq", "B seq", "tool", "response paths that differ"], body), ""]
    lines.append(
        f"{plural(len(result.candidates), 'candidate')}, {plural(result.replays, 'replay')} "
        f"offline, network off; {plural(len(result.differing), 'differing response')} in all"
        + (" (cancelled)" if result.cancelled else "")
    )
    unresolved = [c for c in result.candidates if c.outcome == "unresolved"]
    if unresolved:
        lines += [
            "",
            f"{plural(len(unresolved), 'candidate')} unresolved (never counted as pass or fail):",
        ]
        lines += [
            # the end with none of A's answers (B's own) says so, as the text does
            f"- A seqs {', '.join(str(s.a_seq) for s in c.steps) or 'none'}: {plain(c.why)}"
            for c in unresolved[:20]
        ]
    lines += ["", "<sub>cassette-tui bisect · secrets masked</sub>"]
    return "\n".join(lines) + "\n"
