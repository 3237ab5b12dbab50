"""Readable in every terminal (issue 9): the app in tmux at 80x24 with a 256-colour TERM,
with ``NO_COLOR=1`` and with ``TERM=vt100``. ``capture-pane -e`` shows how every character
is drawn: no text may be drawn in the same foreground and background colour, and with
NO_COLOR or 16 colours the app uses the terminal's default colours only, with marks, bold
and reverse video for what colour said."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from support.paths import SCRIPT
from support.sgr import Cell, cells, colour_codes, same_colour_text
from support.tmux import TERMINALS, Tmux, open_pair

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"console script not installed: {SCRIPT}"),
]


def text(line: list[Cell]) -> str:
    return "".join(c.char for c in line)


def check_screen(tmux: Tmux, terminal: str, what: str) -> str:
    capture = tmux.screen_escapes()
    assert not same_colour_text(capture), (
        f"{what}: text drawn invisibly {same_colour_text(capture)}"
    )
    if terminal != "256-colour":
        assert colour_codes(capture) == [], f"{what}: colours drawn under {terminal}"
    return capture


@pytest.mark.parametrize("terminal", list(TERMINALS))
def test_every_screen_is_readable(tmux: Tmux, terminal: str) -> None:
    open_pair(tmux, TERMINALS[terminal])
    capture = check_screen(tmux, terminal, "main screen")
    # the cursor row is reverse video, its status a mark
    cursor = next(cs for cs in map(cells, capture.splitlines()) if "▶" in text(cs))
    drawn = [c for c in cursor if not c.char.isspace()]
    assert all(c.reverse for c in drawn), text(cursor)
    assert "<" in text(drawn)  # the first divergence: A's extra retry (by key, auto)
    # the detail pane focused: a double rule, not a colour
    tmux.keys("Tab")
    tmux.wait_for(lambda s: "═" in s, "the focused detail pane's double rule")
    check_screen(tmux, terminal, "detail focused")
    tmux.keys("Tab", "n")
    tmux.wait_for(
        lambda s: any(x.startswith("▶") and x[1:6].strip() == "3" for x in s.splitlines()),
        "next difference",
    )
    check_screen(tmux, terminal, "next difference")
    tmux.keys("/")
    tmux.wait_for(lambda s: "search tool names" in s, "the search bar")
    capture = check_screen(tmux, terminal, "search bar")
    # the input cursor shows (reverse video), not only as a colour
    bar = next(cs for cs in map(cells, capture.splitlines()) if "search tool names" in text(cs))
    assert any(c.reverse for c in bar), text(bar)
    tmux.keys("Escape")
    tmux.wait_for(lambda s: "search tool names" not in s, "the search bar closed")
    tmux.keys("?")
    tmux.wait_for(lambda s: "cassette-tui keys" in s, "help screen")
    check_screen(tmux, terminal, "help screen")
    tmux.keys("q")
    tmux.wait_for(lambda s: "first divergence" in s, "main screen again")
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "B response" in s, "step full-screen")
    check_screen(tmux, terminal, "step screen")
    tmux.keys("q", "q")
    assert tmux.wait_exit() in ("0", "")


def test_bugcase_53_wide_chars_keep_the_marks_in_one_column(tmux: Tmux, real: Path) -> None:
    """bugcases/53: CJK and emoji args in the step list at 80x24: each row's status mark
    sits in the same display column (cells, not characters), wide text cut at a cell."""
    from rich.cells import cell_len

    case = real / "bugcases" / "53_wide_chars_in_app"
    tmux.start(str(SCRIPT), "a.jsonl", "b.jsonl", env={"NO_COLOR": "1"}, cwd=case)
    screen = tmux.wait_for(lambda s: "plain ascii" in s, "the five steps")
    rows = [
        line
        for line in screen.splitlines()
        if line[:1] in ("▶", " ") and line[1:6].strip().isdigit() and line[6:].strip()
    ]
    assert len(rows) >= 5, screen
    assert any("東京" in r for r in rows) and any("読む" in r for r in rows)
    columns = set()
    for row in rows:
        found = re.search(r" ([=~]) +\d+  ", row)  # the mark, then B's seq
        assert found is not None, row
        columns.add(cell_len(row[: found.start(1)]))
    assert len(columns) == 1, (columns, rows)
    tmux.keys("q")
