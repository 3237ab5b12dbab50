"""``cassette-tui gate CASSETTE --agent CMD --runs 20``: N offline replays, and a verdict.

Only clean replays (no miss, no call past the last recording, no unused recording under
``--strict``, at least one tool call, ended by the agent) measure the agent. Verdict
``deterministic`` (every replay clean, 0/N or N/N passed), ``flaky`` (clean replays
disagree), or a verdict that is no measurement: ``unclean_replay``, ``infrastructure``,
``no_tool_call``, ``no_replay``, ``incomplete`` (``core.loop.gate``); the runs that were not
clean are listed with why. When runs differ, where they part (after the tool layer, or the
first call at which they differ and how many runs took each path). Misses and repeats are
summed over the runs. The output names two runs to open side by side in the app.
``--json`` prints ``GateResult.to_json()``: ``runs, passed, pass_rate, verdict, clean,
not_clean, isolation, divergence`` and the per-run ``results``.

Exit status: 0 deterministic, 1 flaky, 2 bad usage, unreadable input or a verdict that is
no measurement (``VERDICT_EXIT``), 130 cancelled (the partial result is printed first).
Does not import Textual.
"""

from __future__ import annotations

import shlex
import sys
import tempfile
import textwrap
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from cassette_tui.core.format.atomic import write_atomic
from cassette_tui.core.format.constants import EXIT_CANCELLED, EXIT_CLEAN, EXIT_FINDINGS
from rich.text import Text

from ..text.gate import gate_lines, pick_pair
from ._loop import (
    agent_option,
    fixture_option,
    loop_options,
    run_cancellable,
    swap_option,
    swapped,
)
from ._options import RUNS
from ._output import echo_json, fail, stdout_console

if TYPE_CHECKING:
    from cassette_tui.core.loop.options import LoopOptions

EXIT_DETERMINISTIC = EXIT_CLEAN
EXIT_FLAKY = EXIT_FINDINGS


@click.command("gate")
@click.argument("cassette", type=click.Path(dir_okay=False))
@agent_option
@click.option(
    "--runs", "-n", type=RUNS, default=20, show_default=True,
    help="How many replays.",
)  # fmt: skip
@fixture_option
@loop_options(jobs=True)
@click.option(
    "--strict", is_flag=True,
    help="A recorded call left unused makes a replay unclean (exit 2).",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--format", "out_format", type=click.Choice(["text", "json", "markdown"]), default="text",
    show_default=True,
    help="text, json (as --json), or markdown: the verdict for a pull-request comment or a "
    "CI job summary.",
)  # fmt: skip
@swap_option
@click.option(
    "--junit", "junit_path", type=click.Path(dir_okay=False), default=None,
    help="Also write the verdict as JUnit XML to this file (a flaky verdict is a failing "
    "test case); an existing JUnit report there is replaced.",
)  # fmt: skip
def gate(
    cassette: str,
    agent: str | None,
    runs: int,
    fixtures: tuple[str, ...],
    options: LoopOptions,
    strict: bool,
    as_json: bool,
    out_format: str,
    junit_path: str | None,
    swaps: tuple[str, ...],
) -> None:
    """Replay CASSETTE --runs times with the network off; the pass rate must be 0 or 1.

    Only clean replays count: a miss, a call past the last recording, a run with no
    tool call, a timeout or a run killed from outside is not the agent's result.

    \b
    Exit status: 0 deterministic, 1 flaky (clean replays disagree), 2 bad usage or
    no measurement (unclean_replay, infrastructure, no_tool_call, no_replay),
    130 cancelled.
    """
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.loop.agent import resolve_agent
    from cassette_tui.core.loop.gate import GateResult, gate_job

    options = replace(options, fixtures=fixtures)  # one flaky answer held in every run
    as_json = as_json or out_format == "json"
    with tempfile.TemporaryDirectory(prefix="cassette-swap-") as scratch:
        try:
            if junit_path is not None:
                check_junit_target(junit_path)
            command = resolve_agent(agent, options.config)
            gated, made = swapped(cassette, swaps, Path(scratch))
            started = time.monotonic()
            result: GateResult = run_cancellable(
                lambda token: gate_job(gated, command, options, runs=runs, token=token,
                                       strict=strict)
            )  # fmt: skip
        except (CassetteError, OSError, ValueError) as exc:
            fail("gate", exc)
    if junit_path is not None:
        from ..text.junit import gate_junit

        took = time.monotonic() - started
        try:
            write_atomic(
                junit_path, [gate_junit(result, cassette, duration_s=took)], overwrite=True
            )
        except OSError as exc:
            fail("gate", exc)
    if as_json:
        doc = result.to_json()
        if made:  # the cassette named, not the swapped copy gated
            from cassette_tui.core.loop.served import absolute_spec

            doc["cassette"] = absolute_spec(cassette)  # as without --swap
            doc["swaps"] = [str(s) for s in made]
        echo_json(doc)
    elif out_format == "markdown":
        from ..text.markdown import gate_markdown

        click.echo(gate_markdown(result, cassette), nl=False)
    else:
        for swap in made:
            click.echo(f"swapped {swap}")
        print_gate(result, cassette)
    if result.cancelled:
        sys.exit(EXIT_CANCELLED)
    sys.exit(result.exit_status)  # 0 deterministic, 1 flaky, 2 no measurement


def check_junit_target(path: str) -> None:
    """``core.loop.junit.check_junit_target``: a path holding anything but a JUnit report
    is refused (``FileExistsError``)."""
    from cassette_tui.core.loop.junit import check_junit_target as check

    check(path)


def print_gate(result: Any, name: str) -> None:
    """The gate's report: every line of ``text/gate.py``'s ``gate_lines``, the one
    builder the app's gate screen shows too, then how to open two runs. On a terminal
    each line is wrapped at word boundaries to its width (Rich); into a pipe or a file
    every line is written whole, as ``_output`` lays text out."""
    console, layout = stdout_console()

    def echo(line: str) -> None:
        if layout.wrap:
            console.print(Text(line, end=""), overflow="fold")
        else:
            click.echo(line)

    rr = result.runs_result
    for line in gate_lines(result, name):
        if line.kind == "divergence" and layout.wrap:  # the long line, as a paragraph
            indent = line.label
            echo(textwrap.fill(line.value, width=min(88, layout.width),
                               initial_indent=indent, subsequent_indent=indent))  # fmt: skip
        elif line.kind == "divergence":  # a pipe or a file: whole, for grep
            echo(line.label + line.value)
        else:
            echo(line.text)
    pair = pick_pair(result)
    if pair is not None:
        a, b = pair
        echo(
            f"open two runs side by side (run {a.run} {a.status}, run {b.run} {b.status}):\n"
            f"  cassette-tui {shlex.quote(str(a.call_log))} {shlex.quote(str(b.call_log))}"
        )
    elif rr.runs_dir is None and result.verdict == "flaky":
        echo("open two runs side by side: gate again with --runs-dir DIR to keep their call logs")
