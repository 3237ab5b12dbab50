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

import click
from cassette_tui.core.format.constants import EXIT_CANCELLED, EXIT_CLEAN, EXIT_FINDINGS

from ..text.plural import plural
from ._loop import agent_option, run_cancellable, timeout_option
from ._options import config_option
from ._output import echo_json, fail, safe
from .replay import run_line


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
@timeout_option
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def record(
    agent: str | None,
    output: str,
    against: str | None,
    align: str,
    timeout: float,
    config: str | None,
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
    from cassette_tui.core.loop.runs import RecordResult, record_job

    try:
        command = resolve_agent(agent, config)
        old = open_cassette(against, rules=load_rules(config)) if against else None
        result: RecordResult = run_cancellable(
            lambda token: record_job(command, output, timeout=timeout, config=config, token=token)
        )
        diff = (
            diff_cassettes(old, result.cassette, align=align)
            if old is not None and result.cassette is not None
            else None
        )
        doc = diff.to_json() if diff is not None and as_json else None
    except (CassetteError, OSError, ValueError) as exc:
        fail("record", exc)
    run = result.run
    entries = len(result.cassette) if result.cassette is not None else 0
    if as_json:
        echo_json(
            {
                "cassette": str(result.path),
                "entries": entries,
                "agent": command.template,
                "cancelled": result.cancelled,
                "run": run.to_json(),
                "against": against,
                "diff": doc,
            }
        )
    else:
        click.echo(f"record  {safe(output)}: {plural(entries, 'entry')}")
        click.echo(f"agent   {safe(command.template)}: {run_line(run)}")
        if run.error:
            click.echo(f"        {safe(run.error)}")
        if entries and (not run.passed or result.cancelled):
            click.echo(
                f"        kept: the {plural(entries, 'entry')} recorded before it "
                f"{'was stopped' if result.cancelled else 'failed'} stay in {safe(output)}"
            )
        if not run.passed and run.stderr_tail:
            for line in run.stderr_tail.splitlines()[-5:]:
                click.echo(f"  {safe(line)}")
        if diff is not None and against is not None:
            from .diff import _print_human

            click.echo()
            _print_human(diff, against, output, 40, False)
    if result.cancelled:
        sys.exit(EXIT_CANCELLED)
    if result.cassette is None:
        sys.exit(EXIT_FINDINGS)
    differs = diff is not None and not diff.is_same
    sys.exit(EXIT_FINDINGS if differs or not run.passed else EXIT_CLEAN)
