"""What a replay says, in the same words for ``cassette-tui replay`` and the app's replay
screen: the run's result, the isolation, the calls (hits, misses, past the last recording,
entries used), the repeated keys, each miss with its nearest recorded calls and the
argument paths that differ, the unused entries. Plain strings (the command prints them,
the app puts them in Rich ``Text``); every value from a cassette or a file name goes
through ``printable``. No Textual.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cassette_tui.core.format.errors import NULLS_HINT, is_null_vs_absent
from cassette_tui.core.loop.served import IMPORTED_NAME
from cassette_tui.core.scan.masking import mask_at, mask_value

from .plural import plural
from .report import ReportLine
from .runs import cut_lines, files_text, output_lines, run_line
from .safe import safe, tool_text

__all__ = ["cut_lines", "run_line"]  # one run in lines (tui/text/runs.py), re-exported

if TYPE_CHECKING:
    from cassette_tui.core.loop.replay import ReplayResult
    from cassette_tui.core.loop.results import RunResult, RunsResult
    from cassette_tui.core.replay.report import Miss

#: the glyphs of a run's outcome (the loop bar, the gate's table)
PASS, FAIL = "✓", "✗"


def short_json(value: Any, width: int = 70) -> str:
    """Compact sorted JSON of ``value``, cut to ``width`` characters with ``...``."""
    text = safe(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))
    return text if len(text) <= width else text[: width - 3] + "..."


#: what the socket guard covers, wherever the isolation is named: only the agent's Python
#: processes that load it (``guard_lines`` says what it does not cover)
GUARD_WORDS = "network: off for Python only (guard; --isolation netns cuts off every process)"
#: a run whose every Python loaded the guard, but which started programs it does not cover
PARTIAL_WORDS = "network: NOT off for every process: the guard ran, but not in all of them"
#: how many programs that ran without the guard are named
UNCOVERED_SHOWN = 3


def isolation_line(isolation: str, blocked: list[dict[str, Any]]) -> str:
    """``network: off (netns)``; for the guard, that it blocks Python only
    (``GUARD_WORDS``); the guard that never loaded says the network was on, one that
    did not reach every process says so (``PARTIAL_WORDS``)."""
    line = f"network: off ({isolation})"
    if isolation.startswith("none"):
        line = "network: ON: new calls go to the live tools (--new-calls)"
    elif isolation == "guard":
        line = GUARD_WORDS
    elif isolation == "guard (partial)":
        line = PARTIAL_WORDS
    elif isolation == "guard (not loaded)":
        line = (
            "network: NOT off: the guard never loaded (the agent is not a Python process "
            "that reads PYTHONPATH); use --isolation netns where the system allows it"
        )
    if blocked:
        where = ", ".join(sorted({safe(b.get("address")) for b in blocked})[:3])
        line += f"; refused {len(blocked)} connection attempt(s): {where}"
    return line


def not_covered_line(not_covered: Sequence[str]) -> str | None:
    """``  not covered: programs that are not Python (...); ...`` (what the isolation in
    force does not cut off, ``RunsResult.not_covered``), or ``None``."""
    if not not_covered:
        return None
    return "  not covered: " + "; ".join(safe(p) for p in not_covered)


def uncovered_lines(runs: Sequence[RunResult], limit: int = UNCOVERED_SHOWN) -> list[str]:
    """The programs that ran without the guard (``RunResult.uncovered``), the first
    ``limit`` of them: ``  ran without the guard: curl -s http://... (not Python: ...)``;
    with ``run N`` before each when ``runs`` holds more than one run."""
    found = [(r.run, u) for r in runs for u in r.uncovered]
    lines = []
    for n, u in found[:limit]:
        argv = " ".join(str(a) for a in u.get("argv") or [])
        which = f"run {n}: " if len(runs) > 1 else ""
        lines.append(
            f"  ran without the guard: {which}{short_json(argv, 60)[1:-1]} ({safe(u.get('why'))})"
        )
    if len(found) > limit:
        lines.append(f"  ... and {len(found) - limit} more (--json: each run's uncovered)")
    return lines


def served_line(runs_result: RunsResult) -> str | None:
    """For a run imported from another format (``FILE#task=31,trial=2``, a VCR cassette):
    ``served  a tau-bench run, written as a cassette for the agent (run-cassette.jsonl)``;
    ``None`` for a cassette file."""
    fmt = runs_result.source_format
    if fmt == "cassette":
        return None
    return f"served  a {safe(fmt)} run, written as a cassette for the agent ({IMPORTED_NAME})"


def calls_line(run: RunResult) -> str:
    """``calls 7: 7 hits · 0 misses · 0 past the last recording · 7 of 7 entries used``."""
    report = run.report
    entries = report.entries if report is not None else None
    used = report.used if report is not None and report.used is not None else "?"
    of = plural(entries, "entry") if entries is not None else "? entries"
    more = "".join(
        f" · {n} {word}" for n, word in ((run.new_calls, "new"), (run.pinned, "pinned")) if n
    )
    return (
        f"calls {run.calls or 0}: {plural(run.hits, 'hit')} · {plural(run.misses, 'miss')} · "
        f"{run.exhausted} past the last recording{more} · {used} of {of} used"
    )


def new_call_lines(result: ReplayResult) -> list[str]:
    """The calls answered live under ``--new-calls`` (each with its nearest recorded
    call), and where ``record`` wrote them: ``new calls (answered live, recorded to
    fail.new-20261203T210405Z.jsonl):``."""
    run = result.run
    found = list(run.report.new_calls or ()) if run.report is not None else []
    if not found:
        return []
    where = "not written: --new-calls report"
    if result.new_calls_policy == "record":
        written = result.new_cassette
        where = f"recorded to {safe(written)}" if written is not None else "NOT recorded"
    lines = [f"new calls (answered live, {where}):"]
    for m in found:
        lines.append(f"  {miss_line(m)}")
        lines.extend(nearest_lines(m, "    "))
    return lines


def fixture_line(result: ReplayResult) -> str | None:
    """``pinned  2 calls answered by check_budget-9f2c.jsonl`` (``--fixture``), or
    ``None`` without a fixture."""
    if not result.fixtures:
        return None
    names = ", ".join(safe(f) for f in result.fixtures)
    return f"pinned  {plural(result.run.pinned, 'call')} answered by {names}"


def repeat_lines(run: RunResult) -> list[str]:
    """The repeated keys (served in recorded order), a heading and one line per key."""
    # a key called 0 times is unused (its seqs are in the unused line), not repeated
    report = run.report
    repeats = [r for r in report.repeats if r.calls > 0] if report is not None else []
    if not repeats:
        return []
    lines = ["repeated keys (served in recorded order):"]
    calls = report.calls or () if report is not None else ()
    for r in repeats:
        line = f"  {tool_text(r.tool)} {safe(r.digest)}  called {r.calls}x, recorded {r.recorded}x"
        # past the last recording: a miss (exhausted), or the last answer again under a
        # repeat-last policy (an MCP tool annotated readOnlyHint/idempotentHint): say which
        past = sum(
            1
            for c in calls
            if c.outcome == "exhausted" and (c.tool, c.digest) == (r.tool, r.digest)
        )
        again = r.calls - r.recorded - past
        if again > 0 and calls:  # a report without its calls cannot tell
            line += f"; the last answer served again {again}x past the recording"
        lines.append(line)
    return lines


def misses(run: RunResult) -> list[Miss]:
    """The report's misses (``ReplayReport.misses``: each with its ``nearest`` recorded
    calls, ``{"seq", "args_digest", "differences": [{"path", "recorded", "live",
    "absent", "kind"}]}``)."""
    return list(run.report.misses) if run.report is not None else []


def miss_line(miss: Miss, width: int = 70) -> str:
    """``search_docs sha256:… {"q": "retry budget", "top_k": 5}``."""
    # a report written before misses were masked may hold a live secret: masked here too
    return f"{tool_text(miss.tool)} {safe(miss.digest)} {short_json(mask_value(miss.args), width)}"


ABSENT = "(absent)"


def side_value(d: Mapping[str, Any], side: str, width: int = 30) -> str:
    """One side (``"recorded"`` or ``"live"``) of a differing arg ``d`` (``{"path",
    "recorded", "live", "absent", "kind"}``): ``(absent)`` when the path is left out on
    that side (``d["absent"] == side``), else its value as short JSON (``null`` is a real
    null). The one wording of the replay command and the app's miss screen."""
    if d.get("absent") == side:
        return ABSENT
    return short_json(mask_at(d.get(side), str(d.get("path") or "")), width)


def difference_line(d: Mapping[str, Any]) -> str:
    """``$.top_k: recorded 3, live 5 [other]``; ``$.lang: recorded null, live (absent)
    [missing]`` for a path left out of the live call."""
    return (
        f"{safe(d.get('path'))}: recorded {side_value(d, 'recorded')}"
        f", live {side_value(d, 'live')} [{safe(d.get('kind'))}]"
    )


def nearest_lines(miss: Miss, indent: str = "  ") -> Iterator[str]:
    """Each nearest recorded call and its differing paths, or that none was recorded;
    then the ``nulls`` preset's hint when an arg is null on one side and left out on the
    other (the words of ``CassetteMiss``)."""
    nearest = miss.nearest
    if not nearest:
        yield f"{indent}no call of {tool_text(miss.tool)} was recorded"
    null_vs_absent = False
    for cand in nearest:
        yield f"{indent}nearest: seq {cand.get('seq')} ({safe(cand.get('args_digest'))})"
        for d in cand.get("differences") or []:
            yield f"{indent}  {difference_line(d)}"
            null_vs_absent = null_vs_absent or is_null_vs_absent(d)
    if null_vs_absent:
        yield f"{indent}{NULLS_HINT}"


def exhausted_lines(run: RunResult) -> list[str]:
    calls = (run.report.calls if run.report is not None else None) or ()
    return [
        f"  call {call.n} {tool_text(call.tool)} {safe(call.digest)}: "
        "past the last recording of its key"
        for call in calls
        if call.outcome == "exhausted"
    ]


def unused_line(run: RunResult, strict: bool = False) -> str | None:
    """``unused entries: seq 1, 2, 3`` (the first 20; with ``strict``: ``(--strict: the
    replay fails)``), or ``None``."""
    unused = run.unused_seqs
    if not unused:
        return None
    shown = ", ".join(map(str, unused[:20])) + (" ..." if len(unused) > 20 else "")
    why = " (--strict: the replay fails)" if strict else ""
    return f"unused entries: seq {shown}{why}"


def no_replay_lines(run: RunResult) -> list[str]:
    """Why nothing was replayed: ``no replay: the agent exited 0 but replayed nothing: ...``
    (status ``no_replay``), ``no replay report: ...`` (a run that wrote none, not
    cancelled), or nothing."""
    if run.no_replay:
        return [f"no replay: {safe(run.error)}"]
    if run.report is None and run.status != "cancelled":  # the run line says why
        return [f"no replay report: {safe(run.error)}"]
    return []


def replay_head(name: str, agent: str, runs_result: RunsResult | None = None) -> list[ReportLine]:
    """The first lines of a replay report, known before the replay ends: ``replay  NAME``,
    what was served (an imported run, once ``runs_result`` says so), ``agent   CMD``."""
    served = served_line(runs_result) if runs_result is not None else None
    return [
        ReportLine("title", safe(name), "replay  "),
        *([ReportLine("served", served)] if served else []),
        ReportLine("agent", safe(agent), "agent   "),
    ]


#: after the result of a replay that was cancelled, unless the run's own error says so
CANCELLED_NOTE = "  (cancelled: the agent was stopped)"


def replay_lines(result: ReplayResult, name: str, stderr_count: int = 10) -> list[ReportLine]:
    """Every line of a replay's report, in order: the one builder of ``cassette-tui
    replay`` (which prints each ``line.text``) and the app's replay screen (which styles
    them by kind and shows the ``"miss"`` lines as rows). ``name``: the cassette as the
    user named it; ``stderr_count``: how many of the agent's last lines of stdout and
    of stderr."""
    run = result.run
    status = run_line(run)
    if result.runs_result.cancelled and not (run.status == "cancelled" and run.error):
        status += CANCELLED_NOTE  # (a cancelled run's error already says why)
    lines = [
        *replay_head(name, result.runs_result.agent, result.runs_result),
        ReportLine("result", status, "result  "),
        ReportLine("isolation", isolation_line(run.isolation, run.blocked)),
        *(ReportLine("isolation", line) for line in network_lines(result.runs_result)),
    ]
    lines.extend(ReportLine("cut", line) for line in cut_lines(run))
    if run.report is not None:
        lines.append(ReportLine("calls", calls_line(run)))
    pinned = fixture_line(result)
    if pinned:
        lines.append(ReportLine("pinned", pinned))
    lines.extend(ReportLine("no_replay", line) for line in no_replay_lines(run))
    if run.report is not None:
        lines.extend(ReportLine("repeat", line) for line in repeat_lines(run))
        found = misses(run)
        if found:
            lines.append(ReportLine("miss", "misses (never served live):"))
            for m in found:
                lines.append(ReportLine("miss", f"  {miss_line(m)}"))
                lines.extend(ReportLine("miss", line) for line in nearest_lines(m, "    "))
        lines.extend(ReportLine("exhausted", line) for line in exhausted_lines(run))
        lines.extend(ReportLine("new", line) for line in new_call_lines(result))
        unused = unused_line(run, result.strict)
        if unused:
            lines.append(ReportLine("unused", unused))
        if run.call_log is not None:
            lines.append(ReportLine("call_log", safe(run.call_log), "call log: "))
    if not result.clean:  # where the agent says why it failed
        lines.extend(
            ReportLine("stdout", line) for line in output_lines(run, "stdout", stderr_count)
        )
        lines.extend(
            ReportLine("stderr", line) for line in output_lines(run, "stderr", stderr_count)
        )
    lines.append(ReportLine("files", files_text(result.runs_result.runs_dir), "files: "))
    return lines


def network_lines(runs_result: RunsResult) -> list[str]:
    """Under the isolation line: what the isolation does not cover (the guard's list),
    and which programs ran without the guard."""
    if not runs_result.isolation.startswith("guard"):
        return []
    covered = not_covered_line(runs_result.not_covered)
    return [*([covered] if covered else []), *uncovered_lines(runs_result.results)]


def replay_found(result: ReplayResult) -> tuple[str, str]:
    """What the loop bar says of a replay: ``(full, short)``, e.g. ``("✗ failed · 1 miss",
    "1 miss")``, ``("✓ passed", "✓")``."""
    run = result.run
    if result.runs_result.cancelled:
        return "cancelled", "cancelled"
    strict = getattr(result, "strict", False)  # a replay result of another job has none
    unused = len(run.unused_seqs) if strict else 0  # --strict: they fail it
    glyph = PASS if run.passed and not unused else FAIL
    full = f"{glyph} {run.status}"
    if run.misses:
        many = plural(run.misses, "miss")
        return f"{full} · {many}", many
    if unused:
        return f"{full} · {unused} unused (--strict)", f"{unused} unused"
    return full, glyph
