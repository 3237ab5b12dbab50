"""``cassette-tui replay CASSETTE --agent CMD``: one offline replay, and its report.

Prints the replay report the agent wrote: hits, repeated keys (served in recorded order),
misses with their nearest recorded calls and the argument paths that differ, unused
entries; the isolation in force; where the run's files are. ``--json`` prints
``ReplayResult.to_json()``.

Exit status: 0 the agent passed with no miss, 1 otherwise, 2 bad usage or unreadable input,
130 cancelled. Does not import Textual.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from cassette_tui.core.constants import EXIT_CANCELLED, EXIT_CLEAN, EXIT_FINDINGS

from ..text.runs import run_line
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


@click.command("replay")
@click.argument("cassette", type=click.Path(dir_okay=False))
@agent_option
@timeout_option
@isolation_option
@runs_dir_option
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def replay(
    cassette: str,
    agent: str | None,
    timeout: float,
    isolation: str | None,
    runs_dir: str | None,
    config: str | None,
    as_json: bool,
) -> None:
    """Replay CASSETTE once with the network off and print the replay report.

    \b
    The agent runs with CASSETTE_MODE=replay, CASSETTE_PATH and CASSETTE_REPORT set.
    Exit status: 0 the agent passed with no miss, 1 otherwise, 2 bad usage.
    """
    from cassette_tui.core.agent import resolve_agent
    from cassette_tui.core.errors import CassetteError
    from cassette_tui.core.gate import ReplayResult, replay_job

    try:
        command = resolve_agent(agent, config)
        result: ReplayResult = run_cancellable(
            lambda token: replay_job(
                cassette,
                command,
                timeout=timeout,
                isolation=isolation,
                runs_dir=runs_dir,
                config=config,
                token=token,
            )
        )
    except (CassetteError, OSError, ValueError) as exc:
        fail("replay", exc)
    if as_json:
        echo_json(result.to_json())
    else:
        print_replay(result, cassette)
    if result.runs_result.cancelled:
        sys.exit(EXIT_CANCELLED)
    sys.exit(EXIT_CLEAN if result.clean else EXIT_FINDINGS)


def _args(value: Any, width: int = 70) -> str:
    text = safe(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))
    return text if len(text) <= width else text[: width - 3] + "..."


def isolation_line(isolation: str, blocked: list[dict[str, Any]]) -> str:
    line = f"network: off ({isolation})"
    if isolation == "guard (not loaded)":
        line = (
            "network: NOT off: the guard never loaded (the agent is not a Python process "
            "that reads PYTHONPATH); use --isolation netns where the system allows it"
        )
    if blocked:
        where = ", ".join(sorted({safe(b.get("address")) for b in blocked})[:3])
        line += f"; refused {len(blocked)} connection attempt(s): {where}"
    return line


def print_replay(result: Any, name: str) -> None:
    run = result.run
    report = run.report or {}
    echo = click.echo
    echo(f"replay  {safe(name)}")
    echo(f"agent   {safe(result.runs_result.agent)}")
    echo(f"result  {run_line(run)}")
    echo(isolation_line(run.isolation, run.blocked))
    if run.report is None:
        echo(f"no replay report: {safe(run.error)}")
    else:
        calls = report.get("calls") or []
        echo(
            f"calls {len(calls)}: {run.hits} hits · {run.misses} misses · "
            f"{run.exhausted} past the last recording · "
            f"{report.get('used', '?')} of {report.get('entries', '?')} entries used"
        )
        repeats = report.get("repeats") or []
        if repeats:
            echo("repeated keys (served in recorded order):")
            for r in repeats:
                echo(
                    f"  {safe(r.get('tool'))} {safe(r.get('digest'))}  called "
                    f"{r.get('calls')}x, recorded {r.get('recorded')}x"
                )
        misses = report.get("misses") or []
        if misses:
            echo("misses (never served live):")
            for m in misses:
                echo(f"  {safe(m.get('tool'))} {safe(m.get('digest'))} {_args(m.get('args'))}")
                nearest = m.get("nearest") or []
                if not nearest:
                    echo(f"    no call of {safe(m.get('tool'))} was recorded")
                for cand in nearest:
                    echo(f"    nearest: seq {cand.get('seq')} ({safe(cand.get('args_digest'))})")
                    for d in cand.get("differences") or []:
                        echo(
                            f"      {safe(d.get('path'))}: recorded {_args(d.get('recorded'), 30)}"
                            f", live {_args(d.get('live'), 30)} [{safe(d.get('kind'))}]"
                        )
        for call in calls:
            if call.get("outcome") == "exhausted":
                echo(
                    f"  call {call.get('n')} {safe(call.get('tool'))} {safe(call.get('digest'))}:"
                    " past the last recording of its key"
                )
        unused = report.get("unused_seqs") or []
        if unused:
            shown = ", ".join(map(str, unused[:20])) + (" ..." if len(unused) > 20 else "")
            echo(f"unused entries: seq {shown}")
        if run.call_log is not None:
            echo(f"call log: {safe(run.call_log)}")
    if not run.passed and run.stderr_tail:
        echo("agent stderr (last lines):")
        for line in run.stderr_tail.splitlines()[-8:]:
            echo(f"  {safe(line)}")
    echo(f"files: {safe(result.runs_result.runs_dir)}")
