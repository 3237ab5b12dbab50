"""``cassette-tui group SOURCES...``: many runs of one task grouped by where they part
(``core/why/grouping.py``): a prefix tree over the call keys with pass and fail counts, and
the first step where outcomes split.

SOURCES: multi-run files (tau-bench: one tree per task; ``--task`` for one), folders of
cassettes or a gate's ``--runs-dir``, cassettes. The text names the split and two runs to
open side by side (a failure from the branch most failures take, a pass from another);
``--tree`` prints the tree (chains of one child on one line). ``--json``: the document of
docs/json.md. ``--app`` opens the tree in the app (``screens/group.py``): mark two runs,
open them side by side; ``cassette-tui FOLDER`` does the same for a folder of runs.

Exit status: 0 grouped, 2 bad usage or unreadable input. Imports Textual only with
``--app``.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._options import config_option
from ._output import echo_json, fail

if TYPE_CHECKING:
    from cassette_tui.core.why.grouping import Grouping, Node


@click.command("group")
@click.argument("sources", nargs=-1, required=True)
@click.option("--task", default=None, help="Only this task's runs (multi-run files).")
@click.option("--tree", is_flag=True, help="Print each task's tree of calls too.")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--app",
    "in_app",
    is_flag=True,
    help="Open the tree in the app: mark two runs, open them side by side.",
)
def group(sources: tuple[str, ...], task: str | None, tree: bool, config: str | None,
          as_json: bool, in_app: bool) -> None:  # fmt: skip
    """Group many runs by where they part, with pass/fail counts per branch.

    \b
    Exit status: 0 grouped, 2 bad usage or unreadable input.
    """
    if in_app and (as_json or tree):
        fail("group", ValueError("--app opens the tree in the app; --json and --tree print it"))
    if in_app:
        open_tree(list(sources), task, config)
        return
    groups = grouped(list(sources), task, config)
    if as_json:
        echo_json({"tasks": [{"task": t, **g.to_json()} for t, g in groups.items()]})
        sys.exit(0)
    for name, grouping in groups.items():
        for line in group_lines(name, grouping, tree):
            click.echo(line)
    sys.exit(0)


def grouped(
    sources: list[str], task: str | None, config: str | None, command: str | None = "group"
) -> dict[str | None, Grouping]:
    """The runs of ``sources`` grouped per task; exits with status 2 on unreadable input,
    said as ``cassette-tui COMMAND: ...`` (``None``: the app's ``cassette-tui: ...``, for
    ``cassette-tui FOLDER``)."""
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.keys.config import load_rules
    from cassette_tui.core.why.grouping import group_by_task, runs_of

    try:
        return group_by_task(runs_of(sources, load_rules(config), task))
    except (CassetteError, OSError, ValueError) as exc:
        if command is None:
            from ..text.safe import safe
            from .open_app import _fail

            _fail(safe(exc))
        fail(command, exc)


def tree_title(sources: list[str]) -> str:
    """What the app's header says was grouped: ``gpt-4o-airline.json``, ``runs/``,
    ``results.json#task=6``, or ``3 sources`` (the task under the cursor is said beside)."""
    from cassette_tui.core.importers.sources import parse_path_spec

    if len(sources) != 1:
        return f"{len(sources)} sources"
    spec = parse_path_spec(sources[0])
    title = spec.path.name + ("/" if spec.path.is_dir() else "")
    selector = sources[0][len(str(spec.path)) :]  # "#task=6" as given, or ""
    return title + selector


def open_tree(
    sources: list[str],
    task: str | None,
    config: str | None,
    *,
    theme: str | None = None,
    keys_file: Path | None = None,
    command: str | None = "group",
) -> None:
    """The app on the tree of ``sources``' runs (``group --app``, ``cassette-tui FOLDER``:
    ``command`` ``None``, its errors said as the app's). The runs are read and grouped
    before the terminal is taken over, so bad input is one line and exit status 2; without
    a terminal, status 2 and where to look instead."""
    from cassette_tui.core.keys.config import load_rules

    from .open_app import _fail, _load_keymap, terminal_problem

    groups = grouped(sources, task, config, command)
    keymap = _load_keymap(keys_file)
    problem = terminal_problem()
    if problem is not None:
        # the same words as `open`, pointing to this command's text output
        _fail(problem.split(";")[0] + "; for text output use `cassette-tui group SOURCES --tree`")

    from ..app import CassetteApp
    from ..colours import plain_colours
    from ..screens.group import GroupSource

    source = GroupSource(tree_title(sources), groups, load_rules(config))
    app = CassetteApp(
        group_source=source,
        theme=theme,
        keymap=keymap,
        handle_signals=True,
        plain=plain_colours(),
        config=config,
    )
    app.run()
    if app.bad_input is not None:
        _fail(app.bad_input)
    if app.return_code:
        sys.exit(app.return_code)


def group_lines(task: str | None, grouping: Grouping, tree: bool) -> list[str]:
    """One task's report: its runs and counts, the split, two runs to open, the tree."""
    from cassette_tui.core.why.grouping import suggested_pair

    from ..text.plural import plural
    from ..text.safe import safe

    runs = grouping.runs
    passed = sum(1 for r in runs if r.passed is True)
    failed = sum(1 for r in runs if r.passed is False)
    head = f"task {safe(task)}: " if task is not None else ""
    untold = len(runs) - passed - failed
    of_unknown = f", {untold} of unknown outcome" if untold else ""
    lines = [f"{head}{plural(len(runs), 'run')} ({passed} passed, {failed} failed{of_unknown})"]
    split = grouping.split
    if split is None and not passed + failed:
        lines.append(
            "  no run's outcome is known: a cassette made by `cassette-tui record` has its "
            "RUN.end.json beside it, a gate's --runs-dir its run-NN.end.json"
        )
    elif split is None:
        lines.append("  no branching separates passes from failures")
    else:
        lines.append("  " + safe(split.message()))
        for b in split.branches:
            unknown = f", {b.unknown} unknown" if b.unknown else ""
            lines.append(f"    {safe(b.label)}: {plural(len(b.runs), 'run')}, {b.passed} passed, "
                         f"{b.failed} failed{unknown}")  # fmt: skip
        worst = max(split.branches, key=lambda b: (b.failed, -b.passed))
        pair = suggested_pair(grouping)
        if pair is not None:
            fail_run, pass_run = runs[pair[0]], runs[pair[1]]
            lines.append(f"  open a failure of branch {worst.label[0]} beside a pass: cassette-tui "
                         f"{shlex.quote(fail_run.name)} {shlex.quote(pass_run.name)}")  # fmt: skip
    if tree:
        lines.extend(_tree_lines(grouping.root, grouping, "  "))
    return lines


def _tree_lines(node: Node, grouping: Grouping, indent: str) -> list[str]:
    from ..text.plural import plural
    from ..text.safe import safe

    out = []
    for child in node.children.values():
        chain = [child]
        while len(chain[-1].children) == 1 and not chain[-1].ended:
            chain.append(next(iter(chain[-1].children.values())))
        p, f, u = chain[-1].counts(grouping.runs)
        steps = " > ".join(safe(c.key[0]) for c in chain if c.key)
        first = chain[0].depth
        where = f"step {first}" if len(chain) == 1 else f"steps {first}-{chain[-1].depth}"
        out.append(f"{indent}{where}: {steps}  [{plural(len(chain[-1].runs), 'run')}: {p}✓ {f}✗"
                   + (f" {u}?" if u else "") + "]")  # fmt: skip
        out.extend(_tree_lines(chain[-1], grouping, indent + "  "))
    return out
