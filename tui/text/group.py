"""What the tree of grouped runs shows (``screens/group.py``): a label per segment of the
prefix tree (``core/why/grouping.py``), per run, the steps of a segment, the header. Rich
``Text`` only, no Textual.

A segment is a chain of calls every run of it made in the same order, from one branching
to the next: one tree node, so that a 30-step shared prefix is one line, not 30 levels of
indentation at 80 columns. Args shown are the first run's of the segment, secrets masked.
"""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.scan.masking import mask_value
from cassette_tui.core.why.grouping import GroupedRun, Grouping, Node
from rich.text import Text

from .plural import plural
from .safe import args_summary, printable

PASS, FAIL, UNKNOWN = "✓", "✗", "?"
#: before the node where the runs part
SPLIT_MARK = "⑂"


def chain_from(node: Node) -> list[Node]:
    """``node`` and the nodes after it while exactly one call follows and no run ends."""
    chain = [node]
    while len(chain[-1].children) == 1 and not chain[-1].ended:
        chain.append(next(iter(chain[-1].children.values())))
    return chain


def counts_text(node: Node, runs: list[GroupedRun]) -> Text:
    """``4 runs 1✓ 3✗`` (``2?`` when some runs' outcomes are unknown)."""
    passed, failed, unknown = node.counts(runs)
    text = Text(no_wrap=True, end="")
    text.append(f"{plural(len(node.runs), 'run')} ")
    text.append(f"{passed}{PASS}", "green")
    text.append(" ")
    text.append(f"{failed}{FAIL}", "red")
    if unknown:
        text.append(f" {unknown}{UNKNOWN}", "dim")
    return text


def step_args(runs: list[GroupedRun], node: Node, limit: int = 60) -> str:
    """The args of ``node``'s call as its first run made it, one line, secrets masked;
    ``""`` when the run was not kept or its entry cannot be read."""
    if node.key is None or not node.runs:
        return ""
    cassette = runs[node.runs[0]].cassette
    if cassette is None:
        return ""
    try:
        args = cassette[node.depth - 1].args
    except Exception:  # noqa: BLE001 - an entry the engine cannot parse: the label stays
        return "(args unreadable)"
    return args_summary(mask_value(args), limit=limit)


def segment_label(
    chain: list[Node], runs: list[GroupedRun], *, branch: str | None, splits: bool, worst: bool
) -> Text:
    """``A [3 runs 1✓ 2✗] s3-5 search_onestop_flight origin="JFK" … › think › calculate``.

    ``branch``: the letter of the split's branch this segment starts, or ``None``;
    ``splits``: the runs part after this segment (``⑂``); ``worst``: the branch most
    failures take."""
    first, last = chain[0], chain[-1]
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    if splits:  # first: a long label is cut at the right edge
        text.append(f"{SPLIT_MARK} parts", "bold reverse")
        text.append(" ")
    if branch is not None:
        text.append(f"{branch} ", "bold red" if worst else "bold")
    text.append("[")
    text.append_text(counts_text(last, runs))
    text.append("] ")
    where = f"s{first.depth}" if len(chain) == 1 else f"s{first.depth}-{last.depth}"
    text.append(f"{where} ", "dim")
    text.append(printable(first.key[0] if first.key else ""), "bold")
    args = step_args(runs, first, limit=40)
    if args:
        text.append(f" {args}")
    for node in chain[1:4]:
        text.append(" › ", "dim")
        text.append(printable(node.key[0] if node.key else ""))
    if len(chain) > 4:
        text.append(f" › +{len(chain) - 4}", "dim")
    return text


def run_name(run: GroupedRun) -> str:
    """How a run is named in the tree: a path spec's selector (``task=6,trial=2``), else
    the file's name."""
    base, sep, selector = run.name.rpartition("#")
    if sep and base:
        return printable(selector)
    return printable(Path(run.name).name)


def run_label(run: GroupedRun, mark: str | None, *, ends_branch: str | None = None) -> Text:
    """``✗ task=6,trial=2  5 calls`` and the run's mark (``A``/``B``) when marked."""
    glyph, style = (
        (UNKNOWN, "dim") if run.passed is None else (PASS, "green") if run.passed else (FAIL, "red")
    )
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    if ends_branch is not None:
        text.append(f"{ends_branch} ", "bold")
    text.append(f"{glyph} ", style)
    text.append(run_name(run))
    text.append(f"  {plural(len(run.keys), 'call')}", "dim")
    if ends_branch is not None:
        text.append("  (the run ends)", "dim")
    if mark is not None:
        text.append(f"  {mark} ", "bold reverse")
    return text


def task_label(task: str | None, grouping: Grouping) -> Text:
    """``task 6 [4 runs 1✓ 3✗] parts at step 3``."""
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    split = grouping.split
    if split is not None and split.node is grouping.root:
        text.append(f"{SPLIT_MARK} parts", "bold reverse")
        text.append(" ")
    text.append(f"task {printable(task)}" if task is not None else "runs", "bold")
    text.append(" [")
    text.append_text(counts_text(grouping.root, grouping.runs))
    text.append("]")
    if split is not None:
        text.append(f"  parts at step {split.step}", "dim")
    return text


def segment_lines(chain: list[Node], runs: list[GroupedRun], most: int = 4) -> list[Text]:
    """The steps of a segment, one line each (``s3 search_onestop_flight origin=…``), at
    most ``most`` of them and a line saying how many more."""
    out = []
    for node in chain[:most]:
        line = Text(no_wrap=True, overflow="ellipsis", end="")
        line.append(f"  s{node.depth} ", "dim")
        line.append(printable(node.key[0] if node.key else ""), "bold")
        args = step_args(runs, node, limit=200)
        if args:
            line.append(f" {args}")
        out.append(line)
    if len(chain) > most:
        out.append(Text(f"  … {plural(len(chain) - most, 'more step')}", "dim"))
    return out


#: the tree's header when no run passed or failed as far as its files say (as ``group``)
UNKNOWN_OUTCOMES = (
    "no run's outcome is known, so none can part passes from failures:\n"
    "record writes RUN.end.json beside a cassette; a gate, run-NN.end.json"
)


def outcomes_known(grouping: Grouping) -> bool:
    """Whether any run's outcome (pass or fail) is known."""
    return any(run.passed is not None for run in grouping.runs)


def split_lines(grouping: Grouping) -> Text:
    """The split's sentence on two lines (where; which branch the failures take), or that
    no branching separates passes from failures."""
    split = grouping.split
    if split is None and not outcomes_known(grouping):
        return Text(UNKNOWN_OUTCOMES, "dim")
    if split is None:
        return Text("no branching separates passes from failures\n", "dim")
    where, _, tail = split.message().partition("; ")
    return Text(f"{printable(where)};\n{printable(tail)}", "bold")
