"""The marks that tell a row's status without colour (NO_COLOR, 16-colour SSH sessions).

Each status has a glyph and a name; colour only repeats what the glyph already says.
"""

from __future__ import annotations

from dataclasses import dataclass

from cassette_tui.core.diff.model import Status


@dataclass(frozen=True)
class Mark:
    glyph: str
    label: str
    #: the step list's component class that colours it
    style: str


STATUS_MARKS: dict[Status, Mark] = {
    Status.SAME: Mark("=", "same call, same response", "steplist--same"),
    Status.RESPONSE_DRIFT: Mark(
        "~", "response drift: same key, another response", "steplist--drift"
    ),
    Status.ARGS_DRIFT: Mark("≠", "args drift: same tool, other args", "steplist--drift"),
    Status.OTHER_CALL: Mark("×", "other call: another tool at this seq", "steplist--drift"),
    Status.ONLY_A: Mark("<", "only in A (left)", "steplist--only"),
    Status.ONLY_B: Mark(">", "only in B (right)", "steplist--only"),
    Status.METADATA_DRIFT: Mark(
        "m", "metadata drift: same answer, volatile metadata differs", "steplist--same"
    ),
    Status.MOVED: Mark("↕", "moved: same call and answer at another position", "steplist--same"),
}

#: Per-side flags, shown next to the seq on that side.
REPEATED = Mark(
    "↻", "repeated key: this call key occurs more than once in its run", "steplist--repeat"
)
ERROR = Mark("!", "error: the call raised or answered HTTP 4xx/5xx", "steplist--error")
LINT = Mark("?", "lint finding on this entry (single-file mode)", "steplist--repeat")


def legend() -> list[Mark]:
    """Every mark, in the order the help screen lists them."""
    return [*STATUS_MARKS.values(), REPEATED, ERROR, LINT]
