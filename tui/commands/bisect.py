"""``cassette-tui bisect FAIL PASS --agent CMD``: which of the responses that differ between
the failing and the passing run make the agent fail (``core/why/bisect.py``).

Each candidate is a hybrid cassette (PASS with some of FAIL's answers) gated ``--runs``
times offline, network off; delta debugging narrows the differing responses to a
1-minimal set. The hybrids are kept in ``--out`` (default ``bisect-<UTC time>`` beside
FAIL), ``minimal.jsonl`` among them, to open beside FAIL or PASS in the app.

Exit status: 0 a 1-minimal set found, 1 found but some candidates were unresolved (flaky,
or the agent left the recording: the set is minimal among the resolved ones), 2 bad usage
or no answer (no differing response, or the two ends do not hold offline), 130 cancelled
(what was learned is printed first). Does not import Textual.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
from cassette_tui.core.format.constants import EXIT_CANCELLED

from ._loop import agent_option, loop_options, run_cancellable
from ._options import RUNS
from ._output import echo_json, fail

if TYPE_CHECKING:
    from cassette_tui.core.loop.options import LoopOptions
    from cassette_tui.core.why.bisect import BisectResult


@click.command("bisect")
@click.argument("failing", metavar="FAIL", type=click.Path(dir_okay=False))
@click.argument("passing", metavar="PASS", type=click.Path(dir_okay=False))
@agent_option
@click.option("--runs", "-n", type=RUNS, default=5, show_default=True,
              help="Offline replays per candidate.")  # fmt: skip
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for the hybrids (default: bisect-<UTC time> beside FAIL).")  # fmt: skip
@loop_options(jobs=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--format", "out_format", type=click.Choice(["text", "json", "markdown"]),
              default="text", show_default=True,
              help="text, json (as --json), or markdown for a pull-request comment.")  # fmt: skip
def bisect(
    failing: str,
    passing: str,
    agent: str | None,
    runs: int,
    out_dir: str | None,
    options: LoopOptions,
    as_json: bool,
    out_format: str,
) -> None:
    """Find which of FAIL's differing responses make the agent fail, offline.

    \b
    Exit status: 0 found, 1 found with unresolved candidates, 2 bad usage or no answer,
    130 cancelled.
    """
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.loop.agent import resolve_agent
    from cassette_tui.core.why.bisect import bisect_job

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = Path(out_dir) if out_dir else Path(failing).parent / f"bisect-{stamp}"
    try:
        command = resolve_agent(agent, options.config)
        result: BisectResult = run_cancellable(
            lambda token: bisect_job(
                failing, passing, command, out, options, runs=runs, token=token
            )
        )
    except (CassetteError, OSError, ValueError) as exc:
        fail("bisect", exc)
    if as_json or out_format == "json":
        echo_json(result.to_json())
    elif out_format == "markdown":
        from ..text.markdown import bisect_markdown

        click.echo(bisect_markdown(result), nl=False)
    else:
        for line in bisect_lines(result):
            click.echo(line)
    sys.exit(EXIT_CANCELLED if result.cancelled else result.exit_status)


def bisect_lines(result: BisectResult) -> list[str]:
    """The text report: the answer, the candidates tried with their outcomes, the files."""
    from ..text.plural import plural
    from ..text.safe import safe

    lines = [
        f"bisect  A {safe(result.failing)} (failing)  B {safe(result.passing)} (passing)",
        f"{plural(len(result.differing), 'differing response')}; "
        f"{plural(len(result.candidates), 'candidate')}, "
        f"{plural(result.replays, 'replay')} (network off)",
        ("cancelled: " if result.cancelled else "") + safe(result.summary()),
    ]
    for i, c in enumerate(result.candidates, 1):
        taken = ", ".join(str(s.a_seq) for s in c.steps)
        what = f"A's answers at seq {taken}" if taken else "none of A's answers (B as recorded)"
        why = f" ({safe(c.why)})" if c.why else ""
        lines.append(f"  {i:3d}. {what}: {c.outcome}{why}")
    if result.unresolved and result.minimal is not None:
        lines.append(
            f"{result.unresolved} candidate(s) unresolved: the set is minimal among the ones "
            "that resolved (try more --runs, or look at why)"
        )
    if result.out_dir is not None:
        minimal = result.out_dir / "minimal.jsonl"
        lines.append(f"hybrids  {safe(str(result.out_dir))}")
        if minimal.exists():
            lines.append(
                # the app's A is the failing run: the minimal hybrid fails, B passes
                f"open the minimal hybrid beside B:  cassette-tui {safe(str(minimal))} "
                f"{safe(result.passing)}"
            )
    return lines
