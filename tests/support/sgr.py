"""Reading ``tmux capture-pane -e`` output: which colours each character is drawn in."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
_OTHER_ESCAPE = re.compile(r"\x1b[^\[]|\x1b\[[0-9;?]*[A-Za-ln-z]")


@dataclass(frozen=True)
class Cell:
    """One character and how it is drawn: ``fg``/``bg`` are ``None`` (the terminal's
    default) or a colour written as tmux wrote it (``"33"``, ``"38;5;208"``, ``"48;2;0;0;0"``
    normalised to the colour part: ``"5;208"``, ``"2;0;0;0"``, or ``"c3"`` for 30+3)."""

    char: str
    fg: str | None
    bg: str | None
    bold: bool
    reverse: bool

    @property
    def drawn(self) -> tuple[str | None, str | None]:
        """``(foreground, background)`` as seen: swapped under reverse video."""
        return (self.bg, self.fg) if self.reverse else (self.fg, self.bg)


def _colour(code: int, params: list[str], i: int) -> tuple[str | None, int]:
    """The colour of an SGR code at ``params[i]`` and how many parameters it used."""
    if code in (38, 48):
        if i + 1 < len(params) and params[i + 1] == "5":
            return f"5;{params[i + 2]}", 3
        if i + 1 < len(params) and params[i + 1] == "2":
            return "2;" + ";".join(params[i + 2 : i + 5]), 5
    base = {30: 0, 40: 0, 90: 8, 100: 8}
    for start, offset in base.items():
        if start <= code <= start + 7:
            return f"c{code - start + offset}", 1
    return None, 1


def cells(line: str) -> list[Cell]:
    """The characters of one captured line with their colours and attributes."""
    line = _OTHER_ESCAPE.sub("", line)
    fg: str | None = None
    bg: str | None = None
    bold = reverse = False
    out: list[Cell] = []
    pos = 0
    for match in _SGR.finditer(line):
        out.extend(Cell(ch, fg, bg, bold, reverse) for ch in line[pos : match.start()])
        pos = match.end()
        params = match.group(1).replace(":", ";").split(";") if match.group(1) else ["0"]
        i = 0
        while i < len(params):
            code = int(params[i] or 0)
            used = 1
            if code == 0:
                fg = bg = None
                bold = reverse = False
            elif code == 1:
                bold = True
            elif code == 22:
                bold = False
            elif code == 7:
                reverse = True
            elif code == 27:
                reverse = False
            elif code == 39:
                fg = None
            elif code == 49:
                bg = None
            elif 30 <= code <= 38 or 90 <= code <= 97:
                fg, used = _colour(code, params, i)
            elif 40 <= code <= 48 or 100 <= code <= 107:
                bg, used = _colour(code, params, i)
            i += used
    out.extend(Cell(ch, fg, bg, bold, reverse) for ch in line[pos:])
    return out


def colour_codes(capture: str) -> list[str]:
    """Every colour an SGR sequence of ``capture`` sets (``[]``: default colours only)."""
    found = []
    for line in capture.splitlines():
        for cell in cells(line):
            for colour in (cell.fg, cell.bg):
                if colour is not None:
                    found.append(colour)
    return found


def same_colour_text(capture: str) -> list[str]:
    """Characters drawn in the same foreground and background colour (invisible), as
    ``"line N: text"`` for each line that has some."""
    bad = []
    for number, line in enumerate(capture.splitlines(), 1):
        hidden = [
            c.char
            for c in cells(line)
            if not c.char.isspace() and c.drawn[0] is not None and c.drawn[0] == c.drawn[1]
        ]
        if hidden:
            bad.append(f"line {number}: {''.join(hidden)}")
    return bad
