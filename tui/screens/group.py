"""The tree of many runs grouped by where they part (``core/why/grouping.py``, issue 28):
one task's runs, or every task of a multi-run file, as a Textual ``Tree`` of segments
(calls made in the same order by the same runs), each with its pass/fail counts; the node
where outcomes split carries ``⑂ parts here`` and its branches their letters (A: the most
runs). The header says the split ("the runs part at step 3 into 2 branches; 2 of 3
failures take branch A (search_onestop_flight)").

Two runs are marked (space: on a run, that run; on a branch, a failing run of it for A, a
passing one for B) and enter opens them side by side in the pair view, with a ``Session``
of its own; q or escape there comes back to the tree. ``d`` opens the split's suggested
pair (a failure of the branch most failures take beside a pass) at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.why.grouping import GroupedRun, Grouping, Node, suggested_pair
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import Footer, Static, Tree
from textual.widgets.tree import TreeNode

from ..bindings import GROUP, PAIR_FROM_GROUP
from ..messages import RunsOpened, WorkerFailed
from ..session import Session
from ..text.group import (
    FAIL,
    PASS,
    UNKNOWN,
    chain_from,
    counts_text,
    outcomes_known,
    run_label,
    run_name,
    segment_label,
    segment_lines,
    split_lines,
    task_label,
)
from ..text.plural import plural
from ..text.safe import printable
from ..widgets.summary import SummaryHeader
from .base import AppScreen
from .loop_pair import LoopPairScreen


@dataclass(frozen=True)
class GroupSource:
    """Runs grouped by where they part, to show as a tree.

    Attributes:
        title: what was grouped, for the header (a file's or a folder's name).
        groups: one ``Grouping`` per task (``core.why.grouping.group_by_task``).
        rules: the normalization rules a run is opened with when its cassette was not kept.
    """

    title: str
    groups: dict[str | None, Grouping]
    rules: NormalizationRules | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Item:
    """What a line of the tree stands for: a task (``chain`` its root), a segment of calls
    (``chain``: ``core.why.grouping.Node``s), or a run (``run``: its index)."""

    task: str | None
    grouping: Grouping
    chain: tuple[Node, ...] = ()
    run: int | None = None

    @property
    def runs(self) -> list[int]:
        """The runs under this line."""
        if self.run is not None:
            return [self.run]
        return self.chain[-1].runs


#: a marked run: its task and its index in that task's grouping
Mark = tuple["str | None", int]


class GroupTree(Tree[Item], inherit_bindings=False):
    """The tree, with no keys of its own: every key is the screen's (``bindings.GROUP``),
    so the help screen, the palette and the keymap file know them."""

    DEFAULT_CSS = """
    GroupTree { height: 1fr; min-height: 4; overflow-x: hidden; }
    """


class GroupScreen(AppScreen):
    """Many runs of one task (or of each task of a file) as a tree of where they part."""

    BINDINGS: ClassVar[list[BindingType]] = list(GROUP)
    KEYMAP_NAME = "group tree"

    DEFAULT_CSS = """
    GroupScreen #group-detail {
        height: 6; border-top: solid $primary; padding: 0 1;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def __init__(self, source: GroupSource, *, first: bool = False) -> None:
        """``first``: the app's first view (q quits); else q and escape go back."""
        super().__init__()
        self.source = source
        self.first = first
        self.marks: dict[str, Mark] = {}
        #: what the pair view opening says it shows (set before its worker starts)
        self._pending_label = ""

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield SummaryHeader(self.summary(None), id="summary")
        yield GroupTree(self._root_label(), id="group-tree")
        yield Static("", id="group-detail")
        yield Footer()

    @property
    def view_tree(self) -> GroupTree:
        return self.query_one("#group-tree", GroupTree)

    def _root_label(self) -> Text:
        groups = self.source.groups
        if len(groups) == 1:
            task, grouping = next(iter(groups.items()))
            return task_label(task, grouping)
        runs = sum(len(g.runs) for g in groups.values())
        parted = sum(1 for g in groups.values() if g.split is not None)
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(f"{plural(runs, 'run')} of {plural(len(groups), 'task')}", "bold")
        text.append(f"  outcomes split in {parted} of {len(groups)}", "dim")
        return text

    def on_mount(self) -> None:
        tree = self.view_tree
        tree.show_root = True
        tree.guide_depth = 2
        groups = self.source.groups
        if len(groups) == 1:
            task, grouping = next(iter(groups.items()))
            tree.root.data = Item(task, grouping, (grouping.root,))
            self._fill(tree.root)
            tree.root.expand()
            self._reveal_split(tree.root)
        else:
            tree.root.expand()
            for task, grouping in groups.items():
                node = tree.root.add(
                    task_label(task, grouping), Item(task, grouping, (grouping.root,))
                )
                self._fill(node)
            tree.move_cursor(tree.root)
        tree.focus()
        self.refresh_view()

    def _fill(self, parent: TreeNode[Item]) -> None:
        """Add ``parent``'s branches (segments, the most runs first) and the runs that end
        with it, all at once: a few hundred runs make at most a few thousand lines."""
        item = parent.data
        assert item is not None
        grouping = item.grouping
        runs = grouping.runs
        last = item.chain[-1]
        split = grouping.split
        at_split = split is not None and split.node is last
        letters: dict[object, tuple[str, bool]] = {}
        if at_split and split is not None:
            worst = max(split.branches, key=lambda b: (b.failed, -b.passed))
            for b in split.branches:
                letters[b.key] = (b.label.split(" ", 1)[0], b is worst)
        children = sorted(last.children.values(), key=lambda c: -len(c.runs))
        for child in children:
            chain = chain_from(child)
            letter, worst_branch = letters.get(child.key, (None, False))
            splits = split is not None and split.node is chain[-1]
            label = segment_label(chain, runs, branch=letter, splits=splits, worst=worst_branch)
            node = parent.add(label, Item(item.task, grouping, tuple(chain)))
            self._fill(node)
        ends = letters.get(None, (None, False))[0]
        for index in last.ended:
            parent.add_leaf(self._run_label(item.task, grouping, index, ends),
                            Item(item.task, grouping, item.chain, index))  # fmt: skip

    def _run_label(
        self, task: str | None, grouping: Grouping, index: int, ends: str | None = None
    ) -> Text:
        side = next((s for s, m in self.marks.items() if m == (task, index)), None)
        return run_label(grouping.runs[index], side, ends_branch=ends)

    def _reveal_split(self, start: TreeNode[Item]) -> None:
        """Expand the path to the split node and put the cursor on it (else on ``start``)."""
        target = self._find(start, _is_split)
        node = target or start
        walk: TreeNode[Item] | None = node
        while walk is not None:
            walk.expand()
            walk = walk.parent
        # once the tree has laid out the lines just opened (a node has no line before)
        self.call_after_refresh(self.view_tree.move_cursor, node)

    @staticmethod
    def _find(start: TreeNode[Item], want: Callable[[Item], bool]) -> TreeNode[Item] | None:
        stack = [start]
        while stack:
            node = stack.pop()
            if node.data is not None and want(node.data):
                return node
            stack.extend(reversed(node.children))
        return None

    # -- what the header and the detail say -----------------------------------------------
    def current(self) -> Item | None:
        node = self.view_tree.cursor_node
        return node.data if node is not None else None

    def summary(self, item: Item | None) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append("where runs part ", "bold")
        text.append(printable(self.source.title))
        if item is not None:
            text.append(" · ")
            text.append(f"task {printable(item.task)}: " if item.task is not None else "")
            text.append_text(counts_text(item.grouping.root, item.grouping.runs))
            text.append("\n")
            text.append_text(split_lines(item.grouping))
        else:  # the root of every task's tree
            groups = self.source.groups
            parted = sum(1 for g in groups.values() if g.split is not None)
            text.append(f"\noutcomes split in {parted} of {plural(len(groups), 'task')}\n")
            text.append("move to a task: f goes where its runs part", "dim")
        text.append("\n")
        if self.marks:
            text.append("marked: ", "bold")
            for side in ("A", "B"):
                mark = self.marks.get(side)
                text.append(f"{side} {self._mark_name(mark) if mark else '—'}  ")
            text.append(
                "enter opens them" if len(self.marks) == 2 else "space marks the other", "dim"
            )
        else:
            text.append("space marks two runs (A, B), enter opens them; d: a failure "
                        "beside a pass", "dim")  # fmt: skip
        return text

    def _mark_name(self, mark: Mark) -> str:
        grouping = self.source.groups[mark[0]]
        run = grouping.runs[mark[1]]
        glyph = UNKNOWN if run.passed is None else PASS if run.passed else FAIL
        return f"{run_name(run)} {glyph}"

    def detail(self, item: Item | None) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if item is None:
            return text
        runs = item.grouping.runs
        if item.run is not None:
            run = runs[item.run]
            outcome = "outcome unknown" if run.passed is None else (
                "passed" if run.passed else "failed")  # fmt: skip
            text.append(printable(run.name), "bold")
            text.append(f"\n{outcome} · {plural(len(run.keys), 'call')}")
            text.append("\nspace marks it (A, then B); enter opens the two marked", style="dim")
            return text
        chain = list(item.chain)
        if chain[0].key is None:  # a task: its first steps
            text.append_text(task_label(item.task, item.grouping))
            first = next(iter(chain[0].children.values()), None)
            lines = segment_lines(chain_from(first), runs, most=4) if first is not None else []
        else:
            where = (f"step {chain[0].depth}" if len(chain) == 1
                     else f"steps {chain[0].depth}-{chain[-1].depth}")  # fmt: skip
            text.append(f"{where} · ", "bold")
            text.append_text(counts_text(chain[-1], runs))
            lines = segment_lines(chain, runs, most=4)
        for line in lines:
            text.append("\n")
            text.append_text(line)
        return text

    def refresh_view(self) -> None:
        item = self.current()
        self.query_one("#summary", SummaryHeader).update(self.summary(item))
        self.query_one("#group-detail", Static).update(self.detail(item))

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[Item]) -> None:
        self.refresh_view()

    # -- actions: moving ------------------------------------------------------------------
    def action_cursor_down(self) -> None:
        self.view_tree.action_cursor_down()

    def action_cursor_up(self) -> None:
        self.view_tree.action_cursor_up()

    def action_page_down(self) -> None:
        self.view_tree.action_page_down()

    def action_page_up(self) -> None:
        self.view_tree.action_page_up()

    def action_first(self) -> None:
        self.view_tree.move_cursor_to_line(0)

    def action_last(self) -> None:
        self.view_tree.move_cursor_to_line(self.view_tree.last_line)

    def action_expand(self) -> None:
        """right: open the node; on an open one, go to its first child."""
        node = self.view_tree.cursor_node
        if node is None or not node.children:
            return
        if node.is_expanded:
            self.view_tree.move_cursor(node.children[0])
        else:
            node.expand()

    def action_collapse(self) -> None:
        """left: close the node; on a closed one (or a run), go to its parent."""
        node = self.view_tree.cursor_node
        if node is None:
            return
        if node.is_expanded and node.children:
            node.collapse()
        elif node.parent is not None:
            self.view_tree.move_cursor(node.parent)

    def action_expand_all(self) -> None:
        """e: open everything under the node, or close it all when it is all open."""
        node = self.view_tree.cursor_node
        if node is None:
            return
        if all(n.is_expanded for n in self._subtree(node) if n.children):
            node.collapse_all()
        else:
            node.expand_all()

    @staticmethod
    def _subtree(start: TreeNode[Item]) -> list[TreeNode[Item]]:
        out, stack = [], [start]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children)
        return out

    def action_split(self) -> None:
        """f: the cursor to the node where the runs (of the task under the cursor) part."""
        item = self.current()
        split = item.grouping.split if item is not None else None
        if item is not None and split is None and not outcomes_known(item.grouping):
            self.app.notify("no run's outcome is known here: nothing parts them", timeout=3)
            return
        if item is None or split is None:
            self.app.notify("no branching separates passes from failures here", timeout=3)
            return
        task = item.task
        start = self._find(
            self.view_tree.root, lambda it: it.task == task and not it.chain[0].depth
        )
        self._reveal_split(start or self.view_tree.root)

    # -- actions: marking and opening -----------------------------------------------------
    def action_mark(self) -> None:
        """space: on a run, mark it (again: unmark); on a branch or a task, mark one of its
        runs: a failing one for A, a passing one for B (else the first not marked)."""
        item = self.current()
        if item is None:
            return
        if item.run is not None:
            mark: Mark = (item.task, item.run)
            side = next((s for s, m in self.marks.items() if m == mark), None)
            if side is not None:
                del self.marks[side]
                self._relabel(mark)
                self.refresh_view()
                return
        slot = "A" if "A" not in self.marks else "B" if "B" not in self.marks else None
        if slot is None:
            self.app.notify("A and B are marked: enter opens them; escape clears the marks")
            return
        if item.run is None:
            index = self._representative(item, want_pass=slot == "B")
            if index is None:
                self.app.notify("every run of this branch is marked already")
                return
            mark = (item.task, index)
        self.marks[slot] = mark
        self._relabel(mark)
        self.refresh_view()

    def _representative(self, item: Item, *, want_pass: bool) -> int | None:
        runs = item.grouping.runs
        taken = {m for m in self.marks.values()}
        free = [i for i in item.runs if (item.task, i) not in taken]
        wanted = [i for i in free if runs[i].passed is want_pass]
        chosen = wanted or free
        return chosen[0] if chosen else None

    def _relabel(self, mark: Mark) -> None:
        """Redraw the run line of ``mark`` (its A/B)."""
        node = self._find(self.view_tree.root, lambda it: it.run == mark[1] and it.task == mark[0])
        if node is not None and node.data is not None:
            item = node.data
            ends = None
            split = item.grouping.split
            if split is not None and split.node is item.chain[-1]:
                ends = next(
                    (b.label.split(" ", 1)[0] for b in split.branches if b.key is None), None
                )
            node.set_label(self._run_label(item.task, item.grouping, mark[1], ends))

    def action_clear(self) -> None:
        """escape: forget the marks; without marks, go back (not from the first view)."""
        if self.marks:
            marks = list(self.marks.values())
            self.marks.clear()
            for mark in marks:
                self._relabel(mark)
            self.refresh_view()
        elif not self.first:
            self.app.pop_screen()

    def action_choose(self) -> None:
        """enter: the two marked runs side by side; else open or close the node."""
        if "A" in self.marks and "B" in self.marks:
            self.open_pair(self.marks["A"], self.marks["B"])
            return
        node = self.view_tree.cursor_node
        if node is None:
            return
        if node.children:
            node.toggle()
        else:
            self.app.notify("mark two runs with space (A, then B); enter opens them side by side")

    def action_suggested(self) -> None:
        """d: the split's failing run beside a passing one."""
        item = self.current()
        if item is None:
            return
        pair = suggested_pair(item.grouping)
        if pair is None:
            self.app.notify("no failing and passing run to pair where these runs part")
            return
        self.open_pair((item.task, pair[0]), (item.task, pair[1]))

    def open_pair(self, a: Mark, b: Mark) -> None:
        groups = self.source.groups
        self._pending_label = self._pair_label(a, b)
        self._open(groups[a[0]].runs[a[1]], groups[b[0]].runs[b[1]])

    def _pair_label(self, a: Mark, b: Mark) -> str:
        return f"A {self._mark_name(a)}  B {self._mark_name(b)}"

    @work(thread=True, exclusive=True, exit_on_error=False, group="open", description="open")
    def _open(self, a: GroupedRun, b: GroupedRun) -> None:
        """The two runs as cassettes (kept from the grouping, else opened), off the UI
        thread."""
        try:
            first = a.cassette or open_cassette(a.name, rules=self.source.rules)
            second = b.cassette or open_cassette(b.name, rules=self.source.rules)
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            self.post_message(WorkerFailed("cannot open the run", exc))
            return
        self.post_message(RunsOpened(first, second))

    @on(RunsOpened)
    def _runs_opened(self, message: RunsOpened) -> None:
        if not self.is_current or message.b is None:
            return
        self.app.push_screen(
            GroupPairScreen(self._session(message.a, message.b), self._pending_label)
        )

    def _session(self, a: Cassette, b: Cassette) -> Session:
        session = Session(a, b, align="auto")
        session.config = self.app.session.config
        return session

    def action_back(self) -> None:
        """q: back to where the tree was opened from; the first view quits."""
        if self.first:
            self.app.exit()
        else:
            self.app.pop_screen()


def _is_split(item: Item) -> bool:
    """The line of the node where the runs part (the last of a segment, or a task)."""
    split = item.grouping.split
    return split is not None and item.run is None and split.node is item.chain[-1]


class GroupPairScreen(LoopPairScreen):
    """Two runs marked in the tree, side by side; q or escape comes back to the tree."""

    BINDINGS: ClassVar[list[BindingType]] = list(PAIR_FROM_GROUP)
    KEYMAP_NAME = "grouped runs view"


__all__ = ["GroupPairScreen", "GroupScreen", "GroupSource", "GroupTree", "Item"]
