"""What the app shows of bisect and swap (``core/why/``): why a row cannot be swapped, the
mark a swap leaves beside its row, the bisect screen's answer and candidates, and the
Bisect line of the loop panel. No Textual.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cassette_tui.core.diff.model import Status
from cassette_tui.core.why.ddmin import FAIL, PASS, UNRESOLVED
from cassette_tui.core.why.oracle import gate_outcome
from rich.text import Text

from .loop import HOW_TO_CONFIGURE, NEEDS_TWO, NO_AGENT, Stage
from .plural import plural
from .safe import printable

if TYPE_CHECKING:
    from cassette_tui.core.diff.result import DiffResult
    from cassette_tui.core.loop.gate import GateResult
    from cassette_tui.core.why.bisect import BisectResult, Candidate
    from cassette_tui.core.why.hybrid import DifferingStep

    from ..session import Session

#: what every swap mark starts with (the full form)
SWAP_LEAD = "with B's answer here: "
#: the short form's lead, when the row has no room for the words
SWAP_GLYPH = "⇄ "
#: the glyphs of a candidate's outcome
OUTCOME_GLYPHS = {PASS: "✓", FAIL: "✗", UNRESOLVED: "?"}


# -- swap ----------------------------------------------------------------------------------
def swap_refusal(result: DiffResult, index: int) -> str | None:
    """Why ``s`` does nothing on row ``index`` of ``result`` (A failing, B passing), or
    ``None`` when B's answer can be swapped in: both runs made the call, with the same tool,
    and answered it differently."""
    row = result.rows[index]
    if row.a is None:
        return "only B made this call: there is no step of A to answer otherwise"
    if row.b is None:
        return f"A seq {row.a_seq} has no B counterpart: B never made this call"
    if row.status is Status.OTHER_CALL:
        return (
            f"A seq {row.a_seq} calls {row.tool} but B seq {row.b_seq} calls "
            f"{result.b.tool(row.b)}: B's answer is to another tool"
        )
    if row.status in (Status.SAME, Status.MOVED):
        return f"A seq {row.a_seq} and B seq {row.b_seq} got the same response: nothing to swap"
    if row.status is Status.METADATA_DRIFT:
        return (
            f"A seq {row.a_seq} and B seq {row.b_seq} differ only in volatile metadata: "
            "nothing to swap"
        )
    if row.status is Status.ARGS_DRIFT:
        a, b = result.a[row.a], result.b[row.b]
        if (a.response, a.error) == (b.response, b.error):
            return (
                f"A seq {row.a_seq} and B seq {row.b_seq} differ in their args only: "
                "the same response, nothing to swap"
            )
    return None


@dataclass
class SwapMark:
    """One row's swap: A's seq answered as B's seq, gated ``runs`` times.

    Attributes:
        a_seq, b_seq: the two steps.
        runs: the gate's N.
        done: runs ended so far (while it runs).
        result: the gate, once it ended (``cancelled`` set when escape stopped it).
        problem: why it could not run, or ``""``.
    """

    a_seq: int
    b_seq: int
    runs: int
    done: int = 0
    result: GateResult | None = None
    problem: str = ""

    @property
    def running(self) -> bool:
        return self.result is None and not self.problem

    def outcome(self) -> str:
        """``20/20 pass``, ``13/20 pass (flaky)``, ``0/20 pass``, ``7/20…`` while it
        runs, ``cancelled at 7/20``, ``could not run``."""
        if self.problem:
            return "could not run"
        result = self.result
        if result is None:
            return f"{self.done}/{self.runs}…"
        if result.cancelled:
            return f"cancelled at {result.runs}/{self.runs}"
        outcome, why = gate_outcome(result)
        rate = f"{result.passed}/{result.runs} pass"
        if outcome == UNRESOLVED:
            kind = "flaky" if why.startswith("flaky") else "unresolved"
            return f"{rate} ({kind})"
        return rate

    def words(self) -> str:
        """The whole sentence: ``A seq 3 with B's answer (B seq 3): 20/20 pass``, and why
        when the gate is unresolved or could not run."""
        head = f"A seq {self.a_seq} with B's answer (B seq {self.b_seq}): {self.outcome()}"
        if self.problem:
            return f"{head}: {self.problem}"
        if self.result is not None and not self.result.cancelled:
            outcome, why = gate_outcome(self.result)
            if outcome == UNRESOLVED and not why.startswith("flaky"):
                return f"{head}: {why}"
        return head

    def note(self, room: int) -> Text:
        """The mark beside the row: ``with B's answer here: 20/20 pass``, or ``⇄ 20/20
        pass`` when the words would take more than ``room`` cells."""
        outcome = self.outcome()
        full = SWAP_LEAD + outcome
        # bold, not a colour: it reads the same with NO_COLOR and on 16 colours
        return Text(full if len(full) <= room else SWAP_GLYPH + outcome, style="bold", end="")


# -- bisect --------------------------------------------------------------------------------
def taken(steps: tuple[DifferingStep, ...] | list[DifferingStep], of: int) -> str:
    """A candidate's steps from A in words: ``none of A's answers (B as recorded)``,
    ``all 8 of A's answers``, ``A's answers at seq 2, 6``."""
    if not steps:
        return "none of A's answers (B as recorded)"
    if len(steps) == of and of > 1:
        return f"all {of} of A's answers"
    return "A's answers at seq " + ", ".join(str(s.a_seq) for s in steps)


def bisect_answer(result: BisectResult) -> Text:
    """The answer in bold: ``2 of 17 differing responses suffice: A seq 3 search_docs
    $.results[0], A seq 5 read_file``; stopped, the smallest failing set so far, marked
    not proven minimal; then the counts and how many candidates were unresolved."""
    text = Text(end="")
    if result.minimal is None:
        if result.cancelled and not result.problem:
            text.append("stopped before both ends were checked: no answer yet", style="bold")
        else:
            text.append(printable(result.summary()), style="bold")
    elif result.cancelled:
        text.append("stopped: the smallest failing set so far, not proven minimal\n")
        text.append(printable(result.summary()), style="bold")
    else:
        glyph = "✓" if not result.unresolved else "?"
        text.append(f"{glyph} {printable(result.summary())}", style="bold")
    text.append(
        f"\n{plural(len(result.differing), 'differing response')} · "
        f"{plural(len(result.candidates), 'candidate')} · "
        f"{plural(result.replays, 'replay')} (network off)"
    )
    if result.unresolved and result.minimal is not None:
        text.append(
            f"\n{result.unresolved} candidate(s) unresolved (flaky, or the agent left the "
            "recording): the set is minimal among the ones that resolved"
        )
    return text


def candidate_line(number: int, candidate: Candidate, of: int) -> Text:
    """One candidate as a list row: number, outcome glyph and word, the steps taken from
    A, and why (flaky, left the recording at a step)."""
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    glyph = OUTCOME_GLYPHS.get(candidate.outcome, "?")
    text.append(f"{number:>4}  {glyph} {candidate.outcome:<10} ")
    text.append(printable(taken(candidate.steps, of)))
    if candidate.why:
        text.append(f" · {printable(candidate.why)}")
    return text


def bisect_found(result: BisectResult) -> str:
    """What the loop panel says of the last bisect: ``2 of 17 suffice``, ``stopped: 3 of
    17 so far``, ``no answer``."""
    if result.minimal is None:
        return "stopped" if result.cancelled and not result.problem else "no answer"
    found = f"{len(result.minimal)} of {len(result.differing)}"
    return f"stopped: {found} so far" if result.cancelled else f"{found} suffice"


def last_bisect(session: Session) -> BisectResult | None:
    """The session's last bisect if it was of the A and B open now (a re-recording's
    pair shares the loop's results with the pair it came from), else ``None``."""
    last, a, b = session.loop.bisect, session.a, session.b
    if last is None or a is None or b is None:
        return None
    if a.path is None or b.path is None:
        return None
    # the screen bisects Path(a.path) and Path(b.path); the result keeps them as str
    same = (last.failing, last.passing) == (str(Path(a.path)), str(Path(b.path)))
    return last if same else None


def bisect_stage(session: Session) -> Stage:
    """The loop panel's Bisect line: what the last bisect found and how to run one (``b``
    on the panel, or the command)."""
    if session.b is None:
        how = "open A with a passing run of it, then b here bisects their differing responses"
        return Stage("Bisect", NEEDS_TWO, how)
    if session.agent is None:
        return Stage("Bisect", NO_AGENT, f"no agent: {HOW_TO_CONFIGURE}")
    last = last_bisect(session)
    found = bisect_found(last) if last is not None else "–"
    a, b = session.pair()
    names = " ".join(
        shlex.quote(c.path.name) if c.path is not None else side
        for c, side in ((a, "FAIL.jsonl"), (b, "PASS.jsonl"))
    )
    given = session.agent
    flag = f" --agent {shlex.quote(given.template)}" if given.source == "--agent" else ""
    how = (
        "b here: which of A's differing responses make it fail (B passing), offline; "
        f"or cassette-tui bisect {names}{flag}"
    )
    return Stage("Bisect", found, how)
