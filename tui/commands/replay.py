"""``cassette-tui replay CASSETTE --agent CMD``: one offline replay, and its report.

Prints the replay report the agent wrote: hits, repeated keys (served in recorded order),
misses with their nearest recorded calls and the argument paths that differ, unused
entries; the isolation in force; where the run's files are. ``--json`` prints
``ReplayResult.to_json()``.

``--new-calls report|record`` answers calls the cassette never recorded live (and
``record`` writes them to a new cassette) and names them; ``--fixture PIN`` overlays a
pinned fixture; ``--strict`` fails a replay that left recorded calls unused.

Exit status: 0 the agent passed with no miss (with ``--strict``, no recorded call unused),
1 otherwise, 2 bad usage, unreadable input or an agent that exited 0 but replayed nothing
(status ``no_replay``), 130 cancelled.
Does not import Textual.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from cassette_tui.core.format.constants import (
    EXIT_BAD_INPUT,
    EXIT_CANCELLED,
    EXIT_CLEAN,
    EXIT_FINDINGS,
)

from ..text.replay import isolation_line, replay_lines
from ..text.runs import run_line
from ._loop import (
    agent_option,
    fixture_option,
    loop_options,
    run_cancellable,
    swap_option,
    swapped,
)
from ._output import echo_json, fail, safe

if TYPE_CHECKING:
    from cassette_tui.core.loop.options import LoopOptions

__all__ = ["isolation_line", "print_replay", "replay", "run_line"]


@click.command("replay")
@click.argument("cassette", type=click.Path(dir_okay=False))
@agent_option
@click.option(
    "--new-calls",
    type=click.Choice(["error", "report", "record"]),
    default="error",
    show_default=True,
    help="What a call the cassette never recorded gets: error (a miss); report (answered "
    "by the live tool, written nowhere); record (answered live and written to a new "
    "cassette, --new-path). Not error: the run has the network, and the result names "
    "every new call.",
)
@click.option(
    "--new-path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Where --new-calls record writes the new calls (a new file; default: "
    "NAME.new-<UTC>.jsonl beside the cassette).",
)
@fixture_option
@swap_option
@click.option(
    "--strict",
    is_flag=True,
    help="Recorded calls left unused fail the replay (they are named either way).",
)
@loop_options()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def replay(
    cassette: str,
    agent: str | None,
    new_calls: str,
    new_path: str | None,
    fixtures: tuple[str, ...],
    swaps: tuple[str, ...],
    strict: bool,
    options: LoopOptions,
    as_json: bool,
) -> None:
    """Replay CASSETTE once with the network off and print the replay report.

    \b
    The agent runs with CASSETTE_MODE=replay, CASSETTE_PATH and CASSETTE_REPORT set.
    Exit status: 0 the agent passed with no miss (and, with --strict, no recorded call
    unused), 1 otherwise, 2 bad usage or an agent that replayed nothing.
    """
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.loop.agent import resolve_agent
    from cassette_tui.core.loop.replay import ReplayResult, replay_job

    if new_path is not None and new_calls != "record":
        fail("replay", ValueError("--new-path applies to --new-calls record only"))
    if new_calls != "error" and options.isolation is not None:
        fail(
            "replay",
            ValueError(
                "--isolation does not apply: under --new-calls "
                f"{new_calls} the new calls go live (the network is on)"
            ),
        )
    if new_path is not None and os.path.lexists(new_path):
        fail("replay", FileExistsError(f"{new_path}: exists; new calls go to a new file"))
    options = replace(options, new_calls=new_calls, new_cassette=new_path, fixtures=fixtures)
    with tempfile.TemporaryDirectory(prefix="cassette-swap-") as scratch:
        try:
            command = resolve_agent(agent, options.config)
            replayed, made = swapped(cassette, swaps, Path(scratch))
            result: ReplayResult = run_cancellable(
                lambda token: replay_job(replayed, command, options, token=token, strict=strict)
            )
        except (CassetteError, OSError, ValueError) as exc:
            fail("replay", exc)
    if as_json:
        doc = masked_tools(result.to_json())
        if made:  # the cassette named, not the swapped copy replayed
            from cassette_tui.core.loop.served import absolute_spec

            doc["cassette"] = absolute_spec(cassette)  # as without --swap
            doc["swaps"] = [str(s) for s in made]
        echo_json(doc)
    else:
        for swap in made:
            click.echo(f"swapped {swap}")
        print_replay(result, cassette)
    if result.runs_result.cancelled:
        sys.exit(EXIT_CANCELLED)
    if result.no_replay:
        sys.exit(EXIT_BAD_INPUT)  # a mis-wired agent: bad setup, never a pass
    sys.exit(EXIT_CLEAN if result.clean else EXIT_FINDINGS)


def print_replay(result: Any, name: str) -> None:
    """The replay report: every line of ``text/replay.py``'s ``replay_lines``, the one
    builder the app's replay screen shows too."""
    for line in replay_lines(result, name):
        click.echo(safe(line.text))


def masked_tools(doc: Any) -> Any:
    """``doc`` with every ``"tool"`` value that is a token masked (``mask_value``), at any
    depth: the report names calls by tool, and a tool's name can be a secret (issue 26)."""
    from cassette_tui.core.scan.masking import mask_value

    if isinstance(doc, dict):
        return {
            k: (mask_value(v) if k == "tool" and isinstance(v, str) else masked_tools(v))
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [masked_tools(v) for v in doc]
    return doc
