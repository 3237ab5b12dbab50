"""``cassette-tui gate CASSETTE --agent CMD --runs 20``: N offline replays, and a verdict.

Verdict ``deterministic`` (0/N or N/N passed) or ``flaky``; when flaky, where the runs part
(after the tool layer, or the first call at which they differ and how many runs took each
path). Misses and repeats are summed over the runs. Every run's call log is kept, and the
output names two runs to open side by side in the app. ``--json`` prints
``GateResult.to_json()``: ``runs, passed, pass_rate, verdict, isolation, divergence`` and
the per-run ``results``.

Exit status: 0 deterministic, 1 flaky, 2 bad usage or unreadable input, 130 cancelled (the
partial result is printed first). Does not import Textual.
"""

from __future__ import annotations

import shlex
import sys
import textwrap
from typing import Any

import click
from cassette_tui.core.constants import EXIT_CANCELLED, EXIT_CLEAN, EXIT_FINDINGS

from ._loop import (
    agent_option,
    fail,
    isolation_option,
    run_cancellable,
    runs_dir_option,
    timeout_option,
)
from ._options import config_option
from ._output import echo_json, safe
from .replay import isolation_line, run_line

EXIT_DETERMINISTIC = EXIT_CLEAN
EXIT_FLAKY = EXIT_FINDINGS


@click.command("gate")
@click.argument("cassette", type=click.Path(dir_okay=False))
@agent_option
@click.option(
    "--runs", "-n", type=click.IntRange(min=1), default=20, show_default=True,
    help="How many replays.",
)  # fmt: skip
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Replays at once (default: the number of CPUs).",
)
@timeout_option
@isolation_option
@runs_dir_option
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def gate(
    cassette: str,
    agent: str | None,
    runs: int,
    jobs: int | None,
    timeout: float,
    isolation: str | None,
    runs_dir: str | None,
    config: str | None,
    as_json: bool,
) -> None:
    """Replay CASSETTE --runs times with the network off; the pass rate must be 0 or 1.

    \b
    Exit status: 0 deterministic, 1 flaky, 2 bad usage, 130 cancelled.
    """
    from cassette_tui.core.agent import resolve_agent
    from cassette_tui.core.errors import CassetteError
    from cassette_tui.core.gate import GateResult, gate_job

    try:
        command = resolve_agent(agent, config)
        result: GateResult = run_cancellable(
            lambda token: gate_job(
                cassette,
                command,
                runs=runs,
                jobs=jobs,
                timeout=timeout,
                isolation=isolation,
                runs_dir=runs_dir,
                config=config,
                token=token,
            )
        )
    except (CassetteError, OSError, ValueError) as exc:
        fail("gate", exc)
    if as_json:
        echo_json(result.to_json())
    else:
        print_gate(result, cassette)
    if result.cancelled:
        sys.exit(EXIT_CANCELLED)
    sys.exit(EXIT_FLAKY if result.verdict == "flaky" else EXIT_DETERMINISTIC)


def _pair(result: Any) -> tuple[Any, Any] | None:
    """Two runs worth opening side by side: from the two biggest paths where the runs
    part, else a passing and a failing one, else the first two."""
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


def print_gate(result: Any, name: str) -> None:
    echo = click.echo
    rr = result.runs_result
    echo(f"gate    {safe(name)}  x{rr.requested}")
    echo(f"agent   {safe(rr.agent)}")
    blocked = [b for r in result.results for b in r.blocked]
    isolations = sorted({r.isolation for r in result.results if r.completed}) or [rr.isolation]
    for iso in isolations:
        echo(isolation_line(iso, blocked if iso.startswith("guard") else []))
    pct = f"{result.pass_rate:.0%}"
    echo(f"verdict {result.verdict}: {result.passed}/{result.runs} passed ({pct})")
    if result.cancelled:
        echo(f"cancelled after {result.runs} of {rr.requested} runs (partial result)")
    counts: dict[str, int] = {}
    for r in result.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    echo("runs    " + " · ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    echo(
        f"calls   {result.total('misses')} misses · {result.total('exhausted')} past the last "
        f"recording · {result.total('repeated_calls')} repeated calls (summed over runs)"
    )
    div = result.divergence
    if div is not None:
        echo("where the runs part:")
        echo(textwrap.fill(safe(div.message), width=88, initial_indent="  ",
                           subsequent_indent="  "))  # fmt: skip
        if div.without_log:
            echo(f"  (runs {', '.join(map(str, div.without_log))} left no call log)")
    odd = [r for r in result.results if r.status in ("timeout", "crashed", "not_started")]
    for r in odd[:5]:
        echo(f"  run {r.run}: {run_line(r)}")
        tail = r.stderr_tail.splitlines()[-1:] if r.status == "crashed" else []
        for line in tail:
            echo(f"    {safe(line)}")
    echo(f"files   {safe(rr.runs_dir)}")
    pair = _pair(result)
    if pair is not None:
        a, b = pair
        echo(
            f"open two runs side by side (run {a.run} {a.status}, run {b.run} {b.status}):\n"
            f"  cassette-tui {shlex.quote(str(a.call_log))} {shlex.quote(str(b.call_log))}"
        )
