"""``cassette-tui group SOURCES...``: many runs of one task grouped by where they part
(``core/why/grouping.py``): a prefix tree over the call keys with pass and fail counts, and
the first step where outcomes split.

SOURCES: multi-run files (tau-bench: one tree per task; ``--task`` for one), folders of
cassettes or a gate's ``--runs-dir``, cassettes. The text names the split and two runs to
open side by side (a failure from the branch most failures take, a pass from another);
``--tree`` prints the tree (chains of one child on one line). ``--json``: the document of
docs/json.md.

Exit status: 0 grouped, 2 bad usage or unreadable input. Does not import Textual.
"""

from __future__ import annotations

import shlex
import sys
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
def group(sources: tuple[str, ...], task: str | None, tree: bool, config: str | None,
          as_json: bool) -> None:  # fmt: skip
    """Group many runs by where they part, with pass/fail counts per branch.

    \b
    Exit status: 0 grouped, 2 bad usage or unreadable input.
    """
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.keys.config import load_rules
    from cassette_tui.core.why.grouping import group_by_task, runs_of

    try:
        runs = runs_of(list(sources), load_rules(config), task)
        groups = group_by_task(runs)
    except (CassetteError, OSError, ValueError) as exc:
        fail("group", exc)
    if as_json:
        echo_json({"tasks": [{"task": t, **g.to_json()} for t, g in groups.items()]})
        sys.exit(0)
    for name, grouping in groups.items():
        for line in group_lines(name, grouping, tree):
            click.echo(line)
    sys.exit(0)


def group_lines(task: str | None, grouping: Grouping, tree: bool) -> list[str]:
    """One task's report: its runs and counts, the split, two runs to open, the tree."""
    from ..text.plural import plural
    from ..text.safe import safe

    runs = grouping.runs
    passed = sum(1 for r in runs if r.passed is True)
    failed = sum(1 for r in runs if r.passed is False)
    head = f"task {safe(task)}: " if task is not None else ""
    lines = [f"{head}{plural(len(runs), 'run')} ({passed} passed, {failed} failed)"]
    split = grouping.split
    if split is None:
        lines.append("  no branching separates passes from failures")
    else:
        lines.append("  " + safe(split.message()))
        for b in split.branches:
            unknown = f", {b.unknown} unknown" if b.unknown else ""
            lines.append(f"    {safe(b.label)}: {plural(len(b.runs), 'run')}, {b.passed} passed, "
                         f"{b.failed} failed{unknown}")  # fmt: skip
        worst = max(split.branches, key=lambda b: (b.failed, -b.passed))
        fail_run = next((runs[i] for i in worst.runs if runs[i].passed is False), None)
        pass_run = next((runs[i] for b in split.branches if b is not worst for i in b.runs
                         if runs[i].passed is True), None)  # fmt: skip
        if fail_run is not None and pass_run is not None:
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
