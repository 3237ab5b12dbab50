"""The re-record screen's text: what will run (before it runs), the run while it runs, and
what it recorded; in the words of ``cassette-tui record`` where they say the same thing.

Built from the agent command, the target path and a ``core.loop.RecordResult``; no
Textual here (the screen is ``tui/screens/rerecord.py``).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from cassette_tui.core.format.constants import ENV_MODE, ENV_PATH
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .loop import HOW_TO_CONFIGURE
from .plural import plural
from .runs import TAIL_SHOWN, cut_lines, recording_end_line, run_line
from .safe import printable, printable_block, safe

if TYPE_CHECKING:
    from cassette_tui.core.loop.agent import AgentCommand
    from cassette_tui.core.loop.record import RecordResult

#: stderr lines shown under a run
STDERR_LINES = 8
#: what the confirmation says the run is (the network is not off, the tools really run)
LIVE = "LIVE: the network is on and the tools really run"


def _fields(rows: list[tuple[str, str | Text]]) -> Table:
    """``label  value`` lines; a long value (a path) wraps under itself, never under the
    label."""
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold", no_wrap=True, width=7)
    table.add_column(overflow="fold", ratio=1)
    for label, value in rows:
        table.add_row(label, value if isinstance(value, Text) else Text(printable(value)))
    return table


def command_line(agent: AgentCommand, target: Path) -> str | None:
    """The argument list the agent runs as, when its template holds placeholders
    (``{cassette}`` filled with ``target``); ``None`` when it runs as written."""
    values = {"cassette": str(target), "run": "1"}
    argv = agent.render(values)
    if list(argv) == list(agent.argv):
        return None
    return shlex.join(argv)


def _agent_rows(agent: AgentCommand, target: Path) -> list[tuple[str, str | Text]]:
    rows: list[tuple[str, str | Text]] = [("agent", agent.template)]
    rendered = command_line(agent, target)
    if rendered is not None:
        rows.append(("runs as", rendered))
    if agent.source != "--agent" or agent.cwd is not None:
        where = f"from {agent.source}" + (f", in {agent.cwd}" if agent.cwd is not None else "")
        rows.append(("", where))
    return rows


def confirm_text(
    agent: AgentCommand, target: Path, old: str, imported_from: str | None = None
) -> RenderableType:
    """Before anything runs: the exact command, that it runs live, the new file it writes
    (next to A, a name no file holds; in the current folder when A is a run imported from
    another format, ``imported_from`` that format) and what follows."""
    live = Text(LIVE, style="bold")
    live.append(f" ({ENV_MODE}=record {ENV_PATH}=the new file)", style="none")
    where = (
        "a new file beside A; A stays as it is"
        if imported_from is None
        else f"a new file in the current folder, not beside A: A is a {imported_from} run "
        "imported from a file whose folder is left alone"
    )
    # LIVE first: with a long interpreter or script path the command wraps over several
    # rows, and the warning must stay in view at 80x24 whatever the paths' length
    rows = [
        ("mode", live),
        *_agent_rows(agent, target),
        ("writes", Text(safe(target))),
        ("", f"{where}; a recording never overwrites a cassette"),
        ("then", f"A ({old}) against the new recording, in the main view"),
    ]
    heading = Text("Re-record A: run the agent once, live", style="bold")
    return Group(heading, Text(""), _fields(rows))


def confirm_prompt() -> Text:
    return Text("enter/y: run the agent live · escape/n: cancel (nothing runs)", style="bold")


def running_text(
    agent: AgentCommand, target: Path, elapsed_s: float, stderr_tail: str
) -> RenderableType:
    """While the agent runs: the command, the file it records into, how long it has run,
    its stderr so far."""
    rows = [
        *_agent_rows(agent, target),
        ("writes", str(target)),
        ("status", Text(f"running, live: {elapsed_s:.0f} s", style="bold")),
    ]
    parts: list[RenderableType] = [
        Text("Re-record A: recording", style="bold"),
        Text(""),
        _fields(rows),
    ]
    parts.extend(_stderr(stderr_tail))
    return Group(*parts)


def running_prompt() -> Text:
    return Text(
        "escape: stop (kills the agent's process group; what it recorded stays)", style="bold"
    )


def _stderr(tail: str, stream: str = "stderr", count: int = STDERR_LINES) -> list[RenderableType]:
    """``stderr (last lines)`` (or ``stdout``) and the last ``count`` lines of ``tail``."""
    lines = tail.splitlines()[-count:]
    if not "".join(lines).strip():
        return []
    return [
        Text(""),
        Text(f"{stream} (last lines)", style="dim"),
        Text(printable_block("\n".join(lines))),
    ]


def entries_of(result: RecordResult) -> int:
    return len(result.cassette) if result.cassette is not None else 0


def result_text(agent: AgentCommand, result: RecordResult, target: Path) -> RenderableType:
    """After the run: ``record  NEW: N entries`` and ``agent  CMD: passed (exit 0) in
    0.21 s`` (the words of ``cassette-tui record``; NEW is ``target``, the path as the
    confirmation showed it), why nothing was recorded, what a cancel kept (or that the
    agent exited 1 with its whole recording), and the agent's last lines of stdout (when
    it did not pass) and of stderr."""
    run = result.run
    entries = entries_of(result)
    # the agent wrote no file: said once, on the record row
    no_file = result.cassette is None and run.error.endswith("(no file written)")
    recorded = "nothing recorded (no file written)" if no_file else plural(entries, "entry")
    status = "cancelled" if run.status == "cancelled" else run_line(run)
    rows: list[tuple[str, str | Text]] = [
        ("record", f"{target}: {recorded}"),
        ("agent", f"{agent.template}: {status}"),
    ]
    if result.cancelled:
        kept = (
            f"; the {plural(entries, 'call')} recorded before stay in {result.path.name}"
            if result.cassette is not None
            else ""
        )
        rows.append(("", f"stopped: the agent's process group was killed{kept}"))
    elif result.cassette is not None:
        end = recording_end_line(run, entries, False, result.path.name)
        if end is not None:  # it exited 1 on its own, or was cut short
            rows.append(("", end))
    if run.error and not no_file:
        rows.append(("", run.error))
    rows.extend(("", line) for line in cut_lines(run))
    heading = "Re-record A: " + (
        "stopped" if result.cancelled else "done" if result.cassette is not None else "failed"
    )
    tails = [] if run.passed else _stderr(run.stdout_tail, "stdout", TAIL_SHOWN)
    tails += _stderr(run.stderr_tail, "stderr", TAIL_SHOWN)
    return Group(Text(heading, style="bold"), Text(""), _fields(rows), *tails)


def back_prompt() -> Text:
    return Text("escape: back", style="bold")


def stopping_prompt() -> Text:
    return Text("stopping: killing the agent's process group…", style="bold")


def result_prompt(result: RecordResult) -> Text:
    if result.cassette is None:
        return back_prompt()
    return Text("enter: open A against the new recording · escape: back", style="bold")


#: what the failed screen adds when the new file's folder takes no new file
UNWRITABLE_NOTE = (
    "nothing ran, nothing was written: the re-recording goes beside A, so open A from a "
    "folder you can write to (or record with cassette-tui record -o NEW)"
)
#: the same for a run imported from another format (its re-recording goes to the
#: current folder)
UNWRITABLE_NOTE_IMPORTED = (
    "nothing ran, nothing was written: an imported run's re-recording goes to the current "
    "folder, so start the app from a folder you can write to (or record with "
    "cassette-tui record -o NEW)"
)


def failed_text(
    agent: AgentCommand,
    target: Path,
    error: str,
    note: str = "nothing was written; R again picks a fresh name",
) -> RenderableType:
    """The recording could not start (the file appeared meanwhile, the agent is not a
    program, the folder is read-only: ``UNWRITABLE_NOTE``...): nothing ran, nothing was
    written."""
    rows = [
        *_agent_rows(agent, target),
        ("error", Text(printable(error), style="bold")),
        ("", note),
    ]
    return Group(Text("Re-record A: not started", style="bold"), Text(""), _fields(rows))


def no_agent_text(problem: str | None) -> RenderableType:
    """Re-record needs the agent: how to configure one (nothing runs)."""
    rows: list[tuple[str, str | Text]] = [("how", HOW_TO_CONFIGURE)]
    if problem:
        rows.append(("why", problem))
    heading = Text("Re-record needs the agent, and none is configured", style="bold")
    note = Text("nothing was run", style="dim")
    return Group(heading, Text(""), _fields(rows), Text(""), note)


def rerecord_found(result: RecordResult) -> str:
    """What the loop bar and panel say of a re-recording: ``✓ 7 calls`` (the agent passed),
    ``✗ 7 calls`` (it failed), ``stopped · 3 calls``, ``✗ no file``."""
    entries = entries_of(result)
    if result.cancelled:
        return f"stopped · {plural(entries, 'call')}" if result.cassette is not None else "stopped"
    if result.cassette is None:
        return "✗ no file"
    return f"{'✓' if result.run.passed else '✗'} {plural(entries, 'call')}"
