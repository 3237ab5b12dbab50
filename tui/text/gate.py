"""What a gate says, in the same words for ``cassette-tui gate`` and the app's gate screen:
the isolation, the verdict and the pass rate, the runs by status, the calls summed over
the runs, where the runs part (``Divergence.message``), the odd runs, and two runs worth
opening side by side. Plain strings; no Textual.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .plural import plural
from .replay import FAIL, PASS, cut_lines, isolation_line, network_lines, run_line, served_line
from .report import ReportLine
from .runs import files_text
from .safe import safe

if TYPE_CHECKING:
    from cassette_tui.core.loop.gate import GateResult
    from cassette_tui.core.loop.results import RunResult


def isolation_lines(result: GateResult) -> list[str]:
    """One ``network: off (...)`` line per isolation the completed runs had."""
    rr = result.runs_result
    blocked = [b for r in result.results for b in r.blocked]
    isolations = sorted({r.isolation for r in result.results if r.completed}) or [rr.isolation]
    return [isolation_line(iso, blocked if iso.startswith("guard") else []) for iso in isolations]


def verdict_line(result: GateResult) -> str:
    """``verdict deterministic: 0/20 passed (0%)`` when every run replayed cleanly;
    ``verdict flaky: 9/18 clean replays passed (50%); 2 of 20 runs not clean`` when some
    did not; ``verdict unclean_replay: 1 of 4 runs replayed cleanly`` for a verdict that is
    no measurement of the agent."""
    verdict, clean, runs = result.verdict, result.clean, len(result.replays())
    if verdict in ("deterministic", "flaky") and clean == runs:
        return f"verdict {verdict}: {result.passed}/{clean} passed ({result.pass_rate:.0%})"
    if verdict == "flaky":
        return (
            f"verdict flaky: {result.passed}/{clean} clean replays passed "
            f"({result.pass_rate:.0%}); {runs - clean} of {plural(runs, 'run')} not clean"
        )
    return f"verdict {verdict}: {clean} of {plural(runs, 'run')} replayed cleanly"


#: what each verdict that is not a measurement means, for a person
VERDICT_WHY = {
    "no_tool_call": "no replay took place; not a verdict on determinism",
    "unclean_replay": "not every replay was clean (a clean replay has no miss and no call past "
    "the last recording{strict}); only clean replays measure the agent",
    "infrastructure": "not every run ended by the agent's doing (timed out, killed from "
    "outside, not started, or its files not written): not a verdict on the agent",
}


def verdict_why_line(result: GateResult) -> str | None:
    """Why the verdict is not a measurement (``VERDICT_WHY``), the runs it concerns and,
    for ``no_tool_call``, the first crash's last line; ``None`` for ``deterministic`` and
    for a flaky gate whose every replay was clean (``no_replay`` has its own line)."""
    verdict = result.verdict
    not_clean = [r for r, kind, _ in result.replays() if kind != "clean"]
    if verdict == "flaky":
        if not not_clean:
            return None
        return f"runs {_numbers(not_clean)} left out: not clean (listed below)"
    if verdict not in VERDICT_WHY:
        return None
    words = VERDICT_WHY[verdict].format(strict=", no unused recording" if result.strict else "")
    if verdict == "no_tool_call":
        tails = [r.stderr_tail.splitlines()[-1] for r in not_clean if r.stderr_tail.strip()]
        cause = f" ({safe(tails[0])})" if tails else ""
        return f"no run reached a tool call that a replay report shows{cause}: {words} (exit 2)"
    return f"{words}: runs {_numbers(not_clean)} (exit 2)"


def _numbers(runs: Iterable[RunResult]) -> str:
    """``1, 2, 5`` (the first 12, then ``...``)."""
    numbers = [str(r.run) for r in runs]
    return ", ".join(numbers[:12]) + (", ..." if len(numbers) > 12 else "")


def verdict_words(result: GateResult) -> str:
    """The verdict for a person: ``deterministic pass`` (every run passed),
    ``deterministic fail`` (every run failed), ``flaky``, ``incomplete``, ``unclean replay``,
    ``infrastructure`` (not the agent), ``no tool call``; a cancelled gate says so and how far
    it got."""
    words = {
        "no_replay": "no replay (the agent replayed nothing)",
        "no_tool_call": "no tool call (no run reached one)",
        "unclean_replay": "unclean replay (not every replay was clean)",
        "infrastructure": "infrastructure (not every run ended by the agent's doing)",
    }.get(result.verdict, result.verdict)
    if result.verdict == "deterministic":
        words = "deterministic pass" if result.passed else "deterministic fail"
    if result.cancelled:
        asked = plural(result.runs_result.requested, "run")
        words += f" so far (cancelled after {result.runs} of {asked})"
    return words


def no_replay_line(result: GateResult) -> str | None:
    """Why the verdict is ``no_replay``: ``the agent exited 0 but replayed nothing: does it
    wrap its dispatcher ...? (4 of 4 runs)``, or ``None``."""
    done = result.runs_result.completed
    empty = [r for r in done if r.no_replay]
    if not empty:
        return None
    why = safe(empty[0].error).split(" (", 1)[0]
    return f"{why} ({len(empty)} of {plural(len(done), 'run')})"


def timeout_line(result: GateResult) -> str | None:
    """``3 runs timed out with 16 at once on 2 CPUs: the machine may be the cause; try
    -j 1 or a longer --timeout``, or ``None`` when no run timed out."""
    from cassette_tui.core.loop.options import default_jobs

    timed_out = [r for r in result.results if r.status == "timeout"]
    if not timed_out:
        return None
    jobs, cpus = result.runs_result.jobs, default_jobs()
    load = f" with {jobs} at once on {plural(cpus, 'CPU')}" if jobs and jobs > 1 else ""
    busy = "the machine may be the cause" if jobs and jobs > cpus else "it may be the machine"
    return (
        f"{plural(len(timed_out), 'run')} timed out{load}: {busy}; try -j 1 or a longer --timeout"
    )


def cancelled_line(result: GateResult) -> str | None:
    if not result.cancelled:
        return None
    asked = plural(result.runs_result.requested, "run")
    return f"cancelled after {result.runs} of {asked} (partial result)"


def status_counts_line(result: GateResult) -> str:
    """``runs    11 failed · 9 passed``."""
    counts: dict[str, int] = {}
    for r in result.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return "runs    " + " · ".join(f"{n} {status}" for status, n in sorted(counts.items()))


def totals_line(result: GateResult) -> str:
    return (
        f"calls   {plural(result.total('misses'), 'miss')} · {result.total('exhausted')} past "
        f"the last recording · {plural(result.total('repeated_calls'), 'repeated call')} "
        "(summed over runs)"
    )


def without_log_line(result: GateResult) -> str | None:
    div = result.divergence
    if div is None or not div.without_log:
        return None
    return f"(runs {', '.join(map(str, div.without_log))} left no call log)"


def odd_run_lines(result: GateResult, limit: int = 5) -> list[str]:
    """The runs that timed out, crashed, never started or whose replay was not clean, each
    with why (``RunResult.replay``) and a crash's last line."""
    lines = []
    odd = [
        (r, kind, why)
        for r, kind, why in result.replays()
        if kind != "clean" or r.status in ("timeout", "crashed", "not_started")
    ]
    for r, kind, why in odd[:limit]:
        what = f" · {kind}: {safe(why)}" if kind != "clean" else ""
        lines.append(f"  run {r.run}: {run_line(r)}{what}")
        tail = r.stderr_tail.splitlines()[-1:] if r.status == "crashed" else []
        lines.extend(f"    {safe(line)}" for line in tail)
    return lines


def cut_run_lines(result: GateResult, limit: int = 5) -> list[str]:
    """Per run, what was cut or killed at its end (``replay.cut_lines``):
    ``  run 2: stdout cut: ...``."""
    lines = [f"  run {r.run}: {line}" for r in result.results for line in cut_lines(r)]
    return lines[:limit] + ([f"  ... and {len(lines) - limit} more"] if len(lines) > limit else [])


def odd_more_line(result: GateResult, limit: int = 5) -> str | None:
    """``  ... and 3 more (--json lists every run)`` past ``odd_run_lines``' ``limit``."""
    odd = [
        r
        for r, kind, _ in result.replays()
        if kind != "clean" or r.status in ("timeout", "crashed", "not_started")
    ]
    return (
        f"  ... and {len(odd) - limit} more (--json lists every run)" if len(odd) > limit else None
    )


def gate_lines(result: GateResult, name: str, odd_runs: int = 5) -> list[ReportLine]:
    """Every line of a gate's report, in order: the one builder of ``cassette-tui gate``
    (which prints each ``line.text`` and then how to open two runs) and the app's gate
    screen (which names A and the agent in its title, marks the verdict line, styles the
    rest by kind and then says its keys). ``name``: the cassette as the user named it;
    ``odd_runs``: how many of the runs that timed out, crashed or never started are
    listed. The ``"divergence"`` line is the whole message (the command wraps it)."""
    rr = result.runs_result
    served = served_line(rr)
    lines = [
        ReportLine("title", f"{safe(name)}  x{rr.requested}", "gate    "),
        *([ReportLine("served", served)] if served else []),
        ReportLine("agent", safe(rr.agent), "agent   "),
        *(ReportLine("isolation", line) for line in isolation_lines(result)),
        *(ReportLine("isolation", line) for line in network_lines(rr)),
        ReportLine("verdict", verdict_line(result)),
    ]
    why = verdict_why_line(result)
    if why:
        lines.append(ReportLine("verdict_why", why))
    empty = no_replay_line(result)
    if empty:
        lines.append(ReportLine("no_replay", empty))
    timed_out = timeout_line(result)
    if timed_out:
        lines.append(ReportLine("timeout", timed_out))
    cancelled = cancelled_line(result)
    if cancelled:
        lines.append(ReportLine("cancelled", cancelled))
    lines.append(ReportLine("runs", status_counts_line(result)))
    lines.append(ReportLine("totals", totals_line(result)))
    div = result.divergence
    if div is not None:
        lines.append(ReportLine("divergence_head", "where the runs part:"))
        lines.append(ReportLine("divergence", safe(div.message), "  "))
        missing = without_log_line(result)
        if missing:
            lines.append(ReportLine("without_log", missing, "  "))
    lines.extend(ReportLine("odd_run", line) for line in odd_run_lines(result, odd_runs))
    more = odd_more_line(result, odd_runs)
    if more:
        lines.append(ReportLine("odd_more", more))
    lines.extend(ReportLine("cut", line) for line in cut_run_lines(result))
    lines.append(ReportLine("files", files_text(rr.runs_dir), "files   "))
    return lines


def pick_pair(result: GateResult) -> tuple[RunResult, RunResult] | None:
    """Two runs worth opening side by side: from the two biggest paths where the runs
    part, else a failing and a passing one, else the first two (runs with a call log)."""
    logged = [r for r in result.results if r.call_log is not None]
    by_run = {r.run: r for r in logged}
    div = result.divergence
    if div is not None and len(div.paths) >= 2:
        a, b = by_run.get(div.paths[0].runs[0]), by_run.get(div.paths[1].runs[0])
        if a is not None and b is not None:
            return a, b
    passed = [r for r in logged if r.passed]
    failed = [r for r in logged if not r.passed]
    if passed and failed:
        return failed[0], passed[0]
    return (logged[0], logged[1]) if len(logged) >= 2 else None


def gate_found(result: GateResult) -> tuple[str, str]:
    """What the loop bar says of a gate: ``(full, short)``, e.g. ``("0/20 ✓ deterministic",
    "0/20 ✓")``, ``("9/20 ✗ flaky", "9/20 ✗")``, ``("1/2 of 20 cancelled", ...)``."""
    counts = f"{result.passed}/{result.runs}"
    if result.cancelled:
        full = f"{counts} of {result.runs_result.requested} cancelled"
        return full, full
    glyph = PASS if result.verdict == "deterministic" else FAIL  # never ✓ for the others
    return f"{counts} {glyph} {result.verdict}", f"{counts} {glyph}"


def tally(result: GateResult) -> str:
    """``3 ✓ 1 ✗``: the clean replays that passed, and the completed runs that did not
    (failed, or not clean)."""
    return f"{result.passed} {PASS} {result.runs - result.passed} {FAIL}"
