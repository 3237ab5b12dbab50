"""The debug loop's bar and panel text: Record · Replay · Gate · Diff · Pin · Re-record,
each with what it found so far. Built from the ``Session`` and the shown diff; no Textual.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .gate import gate_found
from .plural import plural
from .replay import replay_found
from .safe import printable

if TYPE_CHECKING:
    from cassette_tui.core.diff.result import DiffResult

    from ..session import Session

#: what the bar says of a stage that needs the agent when none is configured (the loop
#: panel, ``l``, says how to configure one)
NO_AGENT = "⊘"
#: how to configure one (the same words as ``core.agent.resolve_agent``'s error)
HOW_TO_CONFIGURE = (
    'start the app with --agent CMD, or set agent = "..." under [tool.cassette] in '
    "pyproject.toml (or at the top of cassette.toml)"
)


#: the unit after a count, left out of the bar (the panel says it)
_UNIT = re.compile(r"(?<=[\d+]) (?:calls|fixtures?)$")


@dataclass(frozen=True)
class Stage:
    """One stage of the loop: its ``name``, what it found (``found``), and ``how`` to run
    it from here; ``short``: what the bar says when ``found`` does not fit (``None``: the
    same)."""

    name: str
    found: str
    how: str
    short: str | None = None


def loop_stages(session: Session, result: DiffResult | None) -> list[Stage]:
    """The six stages in order, from what the session holds."""
    agent = session.agent is not None
    a, b = session.a, session.b
    record = str(len(a)) if a is not None else "–"
    reading = a is not None and session.heads_cut()[0]
    if a is not None and reading:  # A is its file's first lines: the rest still unread
        record = f"{len(a)}+"
    if result is None:
        diff = "…"
    elif result.first_divergence is None:
        diff = "= same"
    else:
        diff = f"parts at row {result.first_divergence + 1}"
    pins = len(session.loop.pins)
    pin = plural(pins, "fixture") if pins else "–"
    needs = "–" if agent else NO_AGENT
    a_file = shlex.quote(a.path.name) if a is not None and a.path is not None else "A.jsonl"

    # the app's --agent goes into the command shown, so it runs as typed (a configured
    # agent is found again from the config)
    given = session.agent
    flag = f" --agent {shlex.quote(given.template)}" if given and given.source == "--agent" else ""

    def how_agent(key: str, command: str) -> str:
        if not agent:
            return f"no agent: {HOW_TO_CONFIGURE}"
        return (
            f"{key} on the main view, or from the command line: "
            f"cassette-tui {command} {a_file}{flag}"
        )

    replay, replay_short = needs, None
    if session.loop.replay is not None:
        replay, replay_short = replay_found(session.loop.replay)
    gate, gate_short = needs, None
    if session.loop.gate is not None:
        gate, gate_short = gate_found(session.loop.gate)
    return [
        Stage(
            "Record",
            record + " calls" if a is not None else record,
            "A is the recorded run"
            + (", B the other" if b else "")
            + (" (its first lines: the file is not read whole yet)" if reading else ""),
        ),
        Stage("Replay", replay, how_agent("r", "replay"), replay_short),
        Stage("Gate", gate, how_agent("t", "gate"), gate_short),
        _diff_stage(diff, b is not None, a_file),
        Stage("Pin", pin, "p on the main view pins the selected row as a fixture"),
        _rerecord_stage(session, needs, agent),
    ]


#: what the Diff stage says with one cassette open
NEEDS_TWO = "needs two files"


def _diff_stage(found: str, pair: bool, a_file: str) -> Stage:
    if pair:
        return Stage("Diff", found, "the main view: n/N step through the differences")
    how = (
        f"open A with another run of it (a passing one, or a re-recording: R): "
        f"cassette-tui {a_file} OTHER.jsonl"
    )
    return Stage("Diff", NEEDS_TWO, how)


def _rerecord_stage(session: Session, needs: str, agent: bool) -> Stage:
    from .rerecord import rerecord_found

    result = session.loop.rerecord
    found = rerecord_found(result) if result is not None else needs
    if not agent:
        return Stage("Re-record", found, f"no agent: {HOW_TO_CONFIGURE}")
    how = "R on the main view re-records A live into a new file, then opens A against it"
    if result is not None:
        how += f" (last: {result.path.name})"
    return Stage("Re-record", found, how)


def loop_bar(stages: list[Stage], width: int | None = None) -> Text:
    """One line: ``Record 7 · Replay – · Gate – · Diff parts at row 2 · Pin 1 · Re-record ✓ 4``
    (``⊘``: needs an agent, none configured). When that is wider than ``width`` cells,
    the stages' short forms (``Gate 0/20 ✓`` for ``Gate 0/20 ✓ deterministic``)."""

    def build(short: bool) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        for i, stage in enumerate(stages):
            if i:
                text.append(" · ", style="dim")
            text.append(stage.name, style="bold")
            found = stage.short if short and stage.short is not None else stage.found
            # the bar is one line at 80 columns: the counts without their unit ("Pin 1")
            found = _UNIT.sub("", found)
            text.append(f" {printable(found)}")
        return text

    full = build(short=False)
    if width is not None and full.cell_len > width:
        return build(short=True)
    return full


def loop_panel(stages: list[Stage], agent_problem: str | None) -> Group:
    """Every stage with what it found and how to run it; why there is no agent, if so.

    A two-column grid, so that a line wrapped at 80 columns stays under its stage's text
    instead of running back under the stage names."""
    grid = Table.grid(padding=(0, 2, 0, 0))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    for n, stage in enumerate(stages):
        cell = Text("\n" if n else "", end="")
        cell.append(printable("⊘ no agent configured" if stage.found == NO_AGENT else stage.found))
        cell.append(f"\n{printable(stage.how)}", style="dim")
        grid.add_row(("\n" if n else "") + stage.name, cell)
    parts: list[Text | Table] = [Text("The debug loop\n", style="bold underline", end="\n"), grid]
    if agent_problem:
        tail = Text("\nno agent: ", style="bold", end="")
        tail.append(printable(agent_problem), style="not bold")
        parts.append(tail)
    return Group(*parts)
