"""``cassette-tui minimise CASSETTE --agent CMD``: the smallest set of the cassette's entries
on which the agent still fails the same way, offline, written as a cassette for a bug
report (``core/why/minimise.py``).

The whole cassette is gated ``--runs`` times first (network off): its failure (exit
status, the exception of a traceback, a miss it died of) and how often. Then delta
debugging gates subsets until removing any one more entry makes that failure go. The
result goes to ``-o`` (default ``CASSETTE.min.jsonl``), never over a file without
``--force``; it names the seqs kept.

Exit status, as ``gate``'s: 0 found (or nothing to minimise: the agent passes every run),
1 found with unresolved candidates (flaky, a timeout), a flaky cassette, or nothing could
be removed (no file is written), 2 bad usage,
unreadable input or a gate that measured nothing, 130 cancelled (the smallest failing set
found so far is written and printed first). Does not import Textual.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from cassette_tui.core.format.constants import EXIT_CANCELLED

from ._loop import agent_option, loop_options, run_cancellable
from ._options import RUNS
from ._output import echo_json, fail

#: how many dropped response parts the text report names
NAMED_PARTS = 12
#: a candidate's outcome as the text report words it (ddmin's fail, pass, unresolved)
OUTCOME_WORDS = {"fail": "kept", "pass": "gone", "unresolved": "unresolved"}

if TYPE_CHECKING:
    from cassette_tui.core.loop.options import LoopOptions
    from cassette_tui.core.why.minimise import MinimiseResult


@click.command("minimise")
@click.argument("cassette", type=click.Path(dir_okay=False))
@agent_option
@click.option("--runs", "-n", type=RUNS, default=5, show_default=True,
              help="Offline replays of the whole cassette and of each candidate.")  # fmt: skip
@click.option("--out", "-o", "out", type=click.Path(dir_okay=False), default=None,
              help="Where to write the result (default: CASSETTE.min.jsonl).")  # fmt: skip
@click.option("--force", is_flag=True, help="Replace the output file if it exists.")
@click.option("--allow-flaky", is_flag=True,
              help="Minimise a failure the whole cassette shows in some runs only: a subset "
              "keeps it when it fails the same way at least as often.")  # fmt: skip
@click.option("--shrink-responses", is_flag=True,
              help="Then drop the object keys and list items of the kept responses that the "
              "failure does not need (more gates).")  # fmt: skip
@loop_options(jobs=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def minimise(
    cassette: str,
    agent: str | None,
    runs: int,
    out: str | None,
    force: bool,
    allow_flaky: bool,
    shrink_responses: bool,
    options: LoopOptions,
    as_json: bool,
) -> None:
    """Shrink a failing CASSETTE to the entries that keep the failure, offline.

    \b
    Exit status: 0 found (or every run passes: nothing to minimise), 1 found with
    unresolved candidates, a flaky cassette, or nothing could be removed (no file
    written), 2 bad usage or no answer, 130 cancelled.
    """
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.loop.agent import resolve_agent
    from cassette_tui.core.why.minimise import minimise_job

    try:
        command = resolve_agent(agent, options.config)
        result: MinimiseResult = run_cancellable(
            lambda token: minimise_job(
                cassette,
                command,
                options,
                runs=runs,
                out=Path(out) if out else None,
                force=force,
                allow_flaky=allow_flaky,
                shrink_responses=shrink_responses,
                token=token,
            )  # fmt: skip
        )
    except (CassetteError, OSError, ValueError) as exc:
        fail("minimise", exc)
    if as_json:
        echo_json(result.to_json())
    else:
        for line in minimise_lines(result, agent, options.runs_dir):
            click.echo(line)
    sys.exit(EXIT_CANCELLED if result.cancelled else result.exit_status)


def minimise_lines(
    result: MinimiseResult, agent: str | None, runs_dir: str | Path | None = None
) -> list[str]:
    """The text report: the whole cassette's failure, the answer, the candidates tried
    with their outcomes (``kept``: the failure is kept, ``gone``: the agent passes or
    fails another way, ``unresolved``), the file written and how to check it, and where
    the runs are kept (``runs_dir``)."""
    from cassette_tui.core.why.ddmin import UNRESOLVED

    from ..text.plural import plural
    from ..text.safe import safe

    lines = [f"minimise  {safe(result.cassette)}  ({_count(result.entries)}, network off)"]
    whole = result.whole
    if whole is not None and result.failure is not None:
        lines.append(
            f"the whole cassette fails ({safe(result.failure.describe())}) in "
            f"{result.failed} of {whole.runs} runs"
        )
    elif whole is not None:
        lines.append(f"the whole cassette: {whole.verdict}, {whole.passed}/{whole.runs} passed")
    lines.append(
        f"{plural(len(result.candidates), 'candidate')}, {plural(result.replays, 'replay')}"
    )
    lines.append(("cancelled: " if result.cancelled else "") + safe(result.summary()))
    for i, c in enumerate(result.candidates, 1):
        what = _entries(c.seqs)
        why = f" ({safe(c.why)})" if c.why else ""
        if c.response:
            what = f"{what}, {c.response}"
        lines.append(f"  {i:3d}. {what}: {OUTCOME_WORDS.get(c.outcome, c.outcome)}{why}")
    if result.removed:
        shown = ", ".join(result.removed[:NAMED_PARTS])
        more = f", ... ({len(result.removed)} in all)" if len(result.removed) > NAMED_PARTS else ""
        lines.append(f"dropped from the kept responses: {safe(shown)}{more}")
    if result.cancelled and result.minimal is not None:
        lines.append(
            "not proven 1-minimal: the search was cancelled; this is the smallest set "
            "found to fail so far"
        )
    unresolved = sum(1 for c in result.candidates if c.outcome == UNRESOLVED)
    if unresolved:
        lines.append(
            f"{unresolved} candidate(s) unresolved: the set is minimal among the ones that "
            "resolved (try more --runs, or look at why)"
        )
    if runs_dir is not None:
        lines.append(
            f"runs kept in {safe(str(runs_dir))}: whole/, candidate-NNN/ (their cassettes "
            "in candidates/)"
        )
    if result.nothing_removed and result.cancelled:
        lines.append("no file written: no entry was removed before the search was cancelled")
    elif result.nothing_removed:
        lines.append(
            "no file written: the cassette cannot be made smaller (attach it as it is; exit 1)"
        )
    if result.out is not None:
        lines.append(f"wrote {safe(str(result.out))} ({_count(len(result.seqs))})")
        if result.sidecar is not None:
            lines.append(f"wrote {safe(str(result.sidecar))} (its MCP sidecar)")
        shown = f' --agent "{safe(agent)}"' if agent else ""
        lines.append(f"check it:  cassette-tui gate {safe(str(result.out))}{shown}")
        if result.misses:
            lines.append(
                "its replays miss the calls of removed entries, which the agent got past: a "
                "gate says unclean_replay, and the agent fails as recorded"
            )
    return lines


def _entries(seqs: tuple[int, ...]) -> str:
    """``no entry``, ``1 entry (seq 4)``, ``3 entries (seq 2, 4, 9)``, ``12 entries``."""
    if not seqs:
        return "no entry"
    head = _count(len(seqs))
    return head + (f" (seq {', '.join(map(str, seqs))})" if len(seqs) <= 6 else "")


def _count(n: int) -> str:
    return f"{n} {'entry' if n == 1 else 'entries'}"
