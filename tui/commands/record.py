"""``cassette-tui record --agent CMD -o NEW [--against OLD]``: the re-record step.

Runs the agent once, live (``CASSETTE_MODE=record``), recording into NEW, which must not
exist (a recording never overwrites a cassette); then, with ``--against``, the diff of OLD
(A) against NEW (B), as ``cassette-tui diff`` prints it. Keep both for review.

Exit status: 0 recorded and (with ``--against``) the same as OLD, 1 the agent failed or
the runs differ, 2 bad usage, NEW exists, or unreadable input, 130 cancelled. Does not
import Textual.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click
from cassette_tui.core.format.constants import EXIT_CANCELLED, EXIT_CLEAN, EXIT_FINDINGS

from ..text.plural import plural
from ..text.runs import cut_lines, output_lines, recording_end_line
from ._loop import agent_option, fixture_option, loop_options, run_cancellable
from ._output import echo_json, fail, safe
from .replay import run_line

if TYPE_CHECKING:
    from cassette_tui.core.diff.result import DiffResult
    from cassette_tui.core.loop.agent import AgentCommand
    from cassette_tui.core.loop.options import LoopOptions
    from cassette_tui.core.loop.record import RecordResult


@click.command("record")
@agent_option
@click.option(
    "-o", "--out", "output", type=click.Path(dir_okay=False), required=True,
    help="The new cassette (must not exist).",
)  # fmt: skip
@click.option(
    "--against",
    type=click.Path(dir_okay=False),
    default=None,
    help="Diff this cassette (A) against the new one (B).",
)
@click.option(
    "--align",
    type=click.Choice(["seq", "key"]),
    default="seq",
    show_default=True,
    help="Alignment of the diff.",
)
@fixture_option
@loop_options(replay=False)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def record(
    agent: str | None,
    output: str,
    against: str | None,
    align: str,
    fixtures: tuple[str, ...],
    options: LoopOptions,
    as_json: bool,
) -> None:
    """Record one live run of the agent into a new cassette, then diff it against --against.

    \b
    Exit status: 0 recorded (and the same as --against), 1 the agent failed or the runs
    differ, 2 bad usage or the output exists.
    """
    from cassette_tui.core.diff.result import diff_cassettes
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.importers.sources import open_cassette
    from cassette_tui.core.keys.config import load_rules
    from cassette_tui.core.loop.agent import resolve_agent
    from cassette_tui.core.loop.record import record_job

    options = replace(options, fixtures=fixtures)  # held fixed while the rest runs live
    try:
        command = resolve_agent(agent, options.config)
        old = open_cassette(against, rules=load_rules(options.config)) if against else None
        result: RecordResult = run_cancellable(
            lambda token: record_job(command, output, options, token=token)
        )
        diff = (
            diff_cassettes(old, result.cassette, align=align)
            if old is not None and result.cassette is not None
            else None
        )
        doc = diff.to_json() if diff is not None and as_json else None
    except (CassetteError, OSError, ValueError) as exc:
        fail("record", exc)
    if as_json:
        echo_json(_document(result, command, against, doc))
    else:
        _print_record(result, command, output, against, diff)
    sys.exit(_exit_status(result, diff))


def _document(
    result: RecordResult, command: AgentCommand, against: str | None, diff: Any
) -> dict[str, Any]:
    """The ``--json`` document: the new cassette, the run, the diff's document or null."""
    return {
        "cassette": str(result.path),
        "entries": len(result.cassette) if result.cassette is not None else 0,
        "agent": command.template,
        "cancelled": result.cancelled,
        "run": result.run.to_json(),
        "against": against,
        "diff": diff,
    }


def _print_record(
    result: RecordResult,
    command: AgentCommand,
    output: str,
    against: str | None,
    diff: DiffResult | None,
) -> None:
    """What was recorded, how the agent ended (and what a stopped run kept), its last
    lines of stdout and stderr when it failed, then the diff against ``against``."""
    run = result.run
    entries = len(result.cassette) if result.cassette is not None else 0
    click.echo(f"record  {safe(output)}: {plural(entries, 'entry')}")
    click.echo(f"agent   {safe(command.template)}: {run_line(run)}")
    if run.error:
        click.echo(f"        {safe(run.error)}")
    for line in cut_lines(run):
        click.echo(f"        {line}")
    end = recording_end_line(run, entries, result.cancelled, output)
    if end is not None:
        click.echo(f"        {end}")
    if not run.passed:  # where the agent says why it failed
        for stream in ("stdout", "stderr"):
            for line in output_lines(run, stream):
                click.echo(line)
    if diff is not None and against is not None:
        from .diff import _print_human

        click.echo()
        _print_human(diff, against, output, 40, False)


def _exit_status(result: RecordResult, diff: DiffResult | None) -> int:
    """130 cancelled; 1 nothing recorded, the agent failed or the runs differ; else 0."""
    if result.cancelled:
        return EXIT_CANCELLED
    if result.cassette is None:
        return EXIT_FINDINGS
    differs = diff is not None and not diff.is_same
    return EXIT_FINDINGS if differs or not result.run.passed else EXIT_CLEAN
