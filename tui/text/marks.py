"""The marks and words that tell a row's status and a drift item's change, without colour
(NO_COLOR, 16-colour SSH sessions): the one table of each, for the app and the headless
``diff`` command alike.

Each status has a glyph and a name; colour only repeats what the glyph already says.
"""

from __future__ import annotations

from dataclasses import dataclass

from cassette_tui.core.diff.model import Change, Status


@dataclass(frozen=True)
class Mark:
    glyph: str
    label: str
    #: the step list's component class that colours it
    style: str


@dataclass(frozen=True)
class StatusMark(Mark):
    #: the status in a sentence (the pair screen's header: ``only in B``)
    words: str
    #: the ``diff`` command's name for it (its summary and rows: ``only B``)
    short: str
    #: the ``diff`` command's Rich style for it
    colour: str


STATUS_MARKS: dict[Status, StatusMark] = {
    Status.SAME: StatusMark(
        "=", "same call, same response", "steplist--same", "same", "same", "dim"
    ),
    Status.RESPONSE_DRIFT: StatusMark(
        "~",
        "response drift: same key, another response",
        "steplist--drift",
        "response drift",
        "response drift",
        "yellow",
    ),
    Status.ARGS_DRIFT: StatusMark(
        "≠",
        "args drift: same tool, other args",
        "steplist--drift",
        "args drift",
        "args drift",
        "magenta",
    ),
    Status.OTHER_CALL: StatusMark(
        "×",
        "other call: another tool at this seq",
        "steplist--drift",
        "other call",
        "other call",
        "red",
    ),
    Status.ONLY_A: StatusMark(
        "<", "only in A (left)", "steplist--only", "only in A", "only A", "cyan"
    ),
    Status.ONLY_B: StatusMark(
        ">", "only in B (right)", "steplist--only", "only in B", "only B", "blue"
    ),
    Status.METADATA_DRIFT: StatusMark(
        "m",
        "metadata drift: same answer, volatile metadata differs",
        "steplist--same",
        "metadata drift",
        "metadata only",
        "dim",
    ),
    Status.MOVED: StatusMark(
        "↕",
        "moved: same call and answer at another position",
        "steplist--same",
        "moved",
        "moved",
        "dim",
    ),
}

#: Per-side flags, shown next to the seq on that side.
REPEATED = Mark(
    "↻", "repeated key: this call key occurs more than once in its run", "steplist--repeat"
)
ERROR = Mark("!", "error: the call raised or answered HTTP 4xx/5xx", "steplist--error")
LINT = Mark("?", "lint finding on this entry (single-file mode)", "steplist--repeat")
#: Before a seq: the recorder's ``batch`` mark (the call ran at the same time as others).
PARALLEL = Mark(
    "⇉", "parallel: the call ran at the same time as others (one batch)", "steplist--repeat"
)


@dataclass(frozen=True)
class ChangeMark:
    #: the sign before a drift item's path (the ``diff`` command)
    sign: str
    #: the change in words, after its path (the app's detail pane)
    words: str


CHANGE_MARKS: dict[Change, ChangeMark] = {
    Change.VALUE_CHANGED: ChangeMark("~", "changed"),
    Change.TYPE_CHANGED: ChangeMark("T", "type changed"),
    Change.NUMBER_TYPE: ChangeMark("#", "number type only"),
    Change.ADDED: ChangeMark("+", "added in B"),
    Change.REMOVED: ChangeMark("-", "removed in B"),
    Change.ITEM_ADDED: ChangeMark("+", "item added in B"),
    Change.ITEM_REMOVED: ChangeMark("-", "item removed in B"),
    Change.REORDERED: ChangeMark("↕", "same items, another order"),
}


def legend() -> list[Mark]:
    """Every mark, in the order the help screen lists them."""
    return [*STATUS_MARKS.values(), PARALLEL, REPEATED, ERROR, LINT]
