"""One line of a loop report, as ``cassette-tui replay`` and ``gate`` print it and the
app's replay and gate screens show it: the words come from one builder
(``text/replay.py``'s ``replay_lines``, ``text/gate.py``'s ``gate_lines``); the command
prints ``line.text``, a screen styles each line by its ``kind`` (or shows it elsewhere: the
replay screen lists the misses as rows, the gate screen names A and the agent in its
title). No Textual.
"""

from __future__ import annotations

from typing import NamedTuple


class ReportLine(NamedTuple):
    """One line: ``kind`` says what it is (``"result"``, ``"isolation"``, ``"miss"``...),
    ``value`` what it says, ``label`` the words before the value (``"result  "``, empty for
    most lines). Both printable (every value from a cassette or a file name went through
    ``safe``)."""

    kind: str
    value: str
    label: str = ""

    @property
    def text(self) -> str:
        """The whole line: ``label`` then ``value``."""
        return self.label + self.value
