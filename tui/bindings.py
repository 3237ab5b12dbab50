"""Every key of the app, per screen. Each binding has an id, so a user can remap it with a
keymap file (``[keys]`` table: ``"main.next" = "x"``); the help screen and the command
palette are built from these tables, so they always list what the keys really do.

ctrl+h, ctrl+i, ctrl+j and ctrl+m are left alone: terminals send them as backspace, tab
and enter.
"""

from __future__ import annotations

from textual.binding import Binding

APP = [
    Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="app.quit"),
    Binding(
        "question_mark,f1",
        "help",
        "Keys",
        key_display="?",
        id="app.help",
        tooltip="Every key and mark",
    ),
]

#: Moving over the rows; shared by both step screens.
_MOVE = [
    Binding("down,j", "cursor_down", "Down", show=False, id="main.cursor_down"),
    Binding("up,k", "cursor_up", "Up", show=False, id="main.cursor_up"),
    Binding("pagedown", "page_down", "Page down", show=False, id="main.page_down"),
    Binding("pageup", "page_up", "Page up", show=False, id="main.page_up"),
    Binding("g,home", "first", "First row", show=False, id="main.first"),
    Binding("G,end", "last", "Last row", show=False, id="main.last"),
    Binding(
        "tab",
        "switch_pane",
        "Switch pane",
        show=False,
        id="main.switch_pane",
        tooltip="Move the focus between the step list and the detail pane",
    ),
    Binding(
        "enter",
        "open_step",
        "Step",
        id="main.open_step",
        tooltip="Open the selected step full-screen",
    ),
    Binding(
        "e",
        "toggle_expand",
        "Expand",
        show=False,
        id="main.expand",
        tooltip="Show long values whole / cut them again",
    ),
    Binding(
        "v",
        "toggle_reveal",
        "Reveal",
        show=False,
        id="main.reveal",
        tooltip="Show secrets whole in the step list and the detail pane / mask them again",
    ),
    Binding(
        "slash",
        "search",
        "Search",
        key_display="/",
        id="main.search",
        tooltip="Search tool names, args and responses; n/N repeat it",
        # handled before the keys queued behind it, so "/retry" typed or pasted in one go
        # over SSH lands in the search bar whole (check_action lets "/" through to the bar)
        priority=True,
    ),
    Binding(
        "escape",
        "clear_search",
        "Clear search",
        show=False,
        id="main.clear_search",
        tooltip="Close the search bar; stop a running diff; then forget the search",
    ),
    Binding("q", "back", "Quit", id="main.back", tooltip="Quit (from a step or the help: back)"),
]

#: The debug loop's keys, on both step screens: each acts on A (``screens/loop_keys.py``).
_LOOP = [
    Binding(
        "p",
        "pin",
        "Pin",
        show=False,
        id="main.pin",
        tooltip="Pin the selected entry (A's, else B's) as a fixture: preview, then write",
    ),
    Binding(
        "r",
        "replay",
        "Replay",
        show=False,
        id="main.replay",
        tooltip="Replay A once, offline, with the agent: its hits, misses and repeats",
    ),
    Binding(
        "t",
        "gate",
        "Gate",
        show=False,
        id="main.gate",
        tooltip="Gate: replay A N times (default 20); deterministic or flaky, and where "
        "the runs part",
    ),
    Binding(
        "l",
        "loop",
        "Loop",
        id="main.loop",
        tooltip="The debug loop: Record, Replay, Gate, Diff, Pin, Re-record and what each found",
    ),
    Binding(
        "R",
        "rerecord",
        "Re-record",
        show=False,
        id="main.rerecord",
        tooltip="Re-record A: run the agent once, live, into a new file (asks first), then "
        "open A against it",
    ),
]

PAIR = [
    Binding(
        "n",
        "next",
        "Next diff",
        id="main.next",
        tooltip="Next row that is not same; repeats the search when one is active",
    ),
    Binding(
        "N",
        "previous",
        "Prev diff",
        show=False,
        id="main.previous",
        tooltip="Previous row that is not same; or the previous search match",
    ),
    Binding(
        "right_square_bracket",
        "next_difference",
        "Next difference",
        show=False,
        key_display="]",
        id="main.next_difference",
    ),
    Binding(
        "left_square_bracket",
        "previous_difference",
        "Previous difference",
        show=False,
        key_display="[",
        id="main.previous_difference",
    ),
    Binding("f", "first_divergence", "First divergence", show=False, id="main.first_divergence"),
    Binding(
        "a",
        "toggle_align",
        "Align",
        id="main.toggle_align",
        tooltip="Align the runs by seq / by call key",
    ),
    *_LOOP,
    Binding(
        "s",
        "swap",
        "Swap",
        show=False,
        id="main.swap",
        tooltip="Gate A N times with B's answer at the selected row (as gate --swap); "
        "the pass rate shows beside the row",
    ),
    *_MOVE,
]

SINGLE = [
    Binding(
        "n",
        "next",
        "Next finding",
        id="single.next",
        tooltip="Next entry with a finding; repeats the search when one is active",
    ),
    Binding("N", "previous", "Prev finding", show=False, id="single.previous"),
    Binding(
        "right_square_bracket",
        "next_difference",
        "Next finding",
        show=False,
        key_display="]",
        id="single.next_difference",
    ),
    Binding(
        "left_square_bracket",
        "previous_difference",
        "Previous finding",
        show=False,
        key_display="[",
        id="single.previous_difference",
    ),
    *_LOOP,
    *_MOVE,
]

STEP = [
    Binding("q,escape", "back", "Back", id="step.back"),
    Binding("down,j", "scroll_down", "Scroll down", show=False, id="step.scroll_down"),
    Binding("up,k", "scroll_up", "Scroll up", show=False, id="step.scroll_up"),
    Binding("pagedown,space", "page_down", "Page down", show=False, id="step.page_down"),
    Binding("pageup", "page_up", "Page up", show=False, id="step.page_up"),
    Binding("g,home", "scroll_top", "Top", show=False, id="step.top"),
    Binding("G,end", "scroll_bottom", "Bottom", show=False, id="step.bottom"),
    Binding(
        "n,right_square_bracket",
        "next_step",
        "Next diff",
        id="step.next",
        tooltip="Show the next row that is not same",
    ),
    Binding(
        "N,left_square_bracket",
        "previous_step",
        "Prev diff",
        id="step.previous",
        tooltip="Show the previous row that is not same",
    ),
    Binding("e", "toggle_expand", "Expand", id="step.expand"),
    Binding(
        "v",
        "toggle_reveal",
        "Reveal",
        show=False,
        id="step.reveal",
        tooltip="Show secrets whole / mask them again",
    ),
]

HELP = [
    Binding("q,escape,question_mark,f1", "back", "Back", id="help.back"),
    Binding("down,j", "scroll_down", "Scroll down", show=False, id="help.scroll_down"),
    Binding("up,k", "scroll_up", "Scroll up", show=False, id="help.scroll_up"),
    Binding("g,home", "scroll_top", "Top", show=False, id="help.top"),
    Binding("G,end", "scroll_bottom", "Bottom", show=False, id="help.bottom"),
]

#: The pin preview (p on the main screen).
PIN = [
    Binding("enter,y", "confirm", "Write", id="pin.confirm", tooltip="Write the fixture"),
    Binding("escape,n,q", "cancel", "Cancel", id="pin.cancel", tooltip="Leave without writing"),
    Binding("down,j", "scroll_down", "Scroll down", show=False, id="pin.scroll_down"),
    Binding("up,k", "scroll_up", "Scroll up", show=False, id="pin.scroll_up"),
]

#: The debug loop panel (l on the main screen).
LOOP = [
    Binding("escape,q,l", "back", "Back", id="loop.back"),
    Binding(
        "b",
        "bisect",
        "Bisect",
        id="loop.bisect",
        tooltip="Bisect A against B: which of the differing responses make A fail, offline",
    ),
]

#: The bisect screen (b on the loop panel).
BISECT = [
    Binding(
        "escape",
        "cancel",
        "Cancel/back",
        id="bisect.cancel",
        tooltip="Stop the running bisect (what it learned stays), then leave",
    ),
    Binding("q", "back", "Back", show=False, id="bisect.back", tooltip="Leave (stops it)"),
    Binding(
        "enter",
        "open_b",
        "Hybrid vs B",
        id="bisect.open_b",
        tooltip="The hybrid cassette under the cursor (A side) against B in the main view",
    ),
    Binding(
        "a",
        "open_a",
        "A vs hybrid",
        id="bisect.open_a",
        tooltip="A against the hybrid cassette under the cursor in the main view",
    ),
    Binding("b", "again", "Again", id="bisect.again", tooltip="Bisect again, into a new folder"),
    Binding("down,j", "cursor_down", "Down", show=False, id="bisect.cursor_down"),
    Binding("up,k", "cursor_up", "Up", show=False, id="bisect.cursor_up"),
    Binding("g,home", "first", "First", show=False, id="bisect.first"),
    Binding("G,end", "last", "Last", show=False, id="bisect.last"),
]

#: The re-record screen (R on the main screen): confirm, run, result.
RERECORD = [
    Binding("enter,y", "run", "Run live", id="rerecord.run", tooltip="Run the agent live"),
    Binding("escape,n", "cancel", "Cancel", id="rerecord.cancel", tooltip="Leave; nothing runs"),
    Binding(
        "escape",
        "stop",
        "Stop",
        id="rerecord.stop",
        tooltip="While it runs: kill the agent's process group (what it recorded stays)",
    ),
    Binding(
        "enter,o",
        "open",
        "Open A vs new",
        id="rerecord.open",
        tooltip="Open A against the new recording in the main view",
    ),
    Binding("escape,q", "back", "Back", id="rerecord.back", tooltip="Back to the main view"),
    Binding("down,j", "scroll_down", "Scroll down", show=False, id="rerecord.scroll_down"),
    Binding("up,k", "scroll_up", "Scroll up", show=False, id="rerecord.scroll_up"),
]

#: ``q`` on A against its re-recording goes back to the pair opened before (same id as the
#: main screen's ``q``, so a remap applies to both).
BACK_FROM_RERECORD = Binding(
    "q", "back", "Back", id="main.back", tooltip="Back to the pair opened before (a re-recording)"
)
#: The replay screen (r on the main screen).
REPLAY = [
    Binding(
        "escape",
        "cancel",
        "Cancel/back",
        id="replay.cancel",
        tooltip="Cancel the running replay (its agent is killed), then leave",
    ),
    Binding("q", "back", "Back", id="replay.back", tooltip="Leave (cancels a running replay)"),
    Binding(
        "enter",
        "open_miss",
        "Nearest call",
        id="replay.open_miss",
        tooltip="The miss under the cursor: its nearest recorded calls, the differing "
        "argument paths highlighted",
    ),
    Binding(
        "d",
        "diff",
        "Diff",
        id="replay.diff",
        tooltip="The replay's call log (B) against the recorded cassette (A) in the main view",
    ),
    Binding("r", "again", "Again", id="replay.again", tooltip="Replay once more"),
    Binding(
        "s",
        "strict",
        "Strict",
        show=False,  # the footer keeps "? Keys" in 80 columns; help and palette list it
        id="replay.strict",
        tooltip="Toggle --strict: recorded calls left unused fail the replay (they are "
        "named either way)",
    ),
    Binding("down,j", "cursor_down", "Down", show=False, id="replay.cursor_down"),
    Binding("up,k", "cursor_up", "Up", show=False, id="replay.cursor_up"),
]

#: The nearest recorded call of a miss (enter on the replay screen).
MISS = [
    Binding("q,escape", "back", "Back", id="miss.back"),
    Binding("down,j", "scroll_down", "Scroll down", show=False, id="miss.scroll_down"),
    Binding("up,k", "scroll_up", "Scroll up", show=False, id="miss.scroll_up"),
    Binding("pagedown,space", "page_down", "Page down", show=False, id="miss.page_down"),
    Binding("pageup", "page_up", "Page up", show=False, id="miss.page_up"),
]

#: The gate screen (t on the main screen).
GATE = [
    Binding(
        "escape",
        "cancel",
        "Cancel/back",
        id="gate.cancel",
        tooltip="Cancel the running gate (its agents are killed; the runs so far stay), then leave",
    ),
    Binding(
        "q", "back", "Back", show=False, id="gate.back", tooltip="Leave (cancels a running gate)"
    ),
    Binding(
        "space",
        "mark",
        "Mark",
        id="gate.mark",
        tooltip="Mark the run under the cursor as A, then another as B; again to unmark",
    ),
    Binding(
        "enter",
        "open",
        "Open",
        id="gate.open",
        tooltip="Two marked runs side by side in the main view; else the run under the "
        "cursor against the recorded cassette",
    ),
    Binding(
        "d",
        "diff",
        "Fail/pass",
        id="gate.diff",
        tooltip="The first failing run against the first passing one (or where the runs "
        "part) side by side",
    ),
    Binding("t", "again", "Again", id="gate.again", tooltip="Choose N and gate again"),
    Binding("down,j", "cursor_down", "Down", show=False, id="gate.cursor_down"),
    Binding("up,k", "cursor_up", "Up", show=False, id="gate.cursor_up"),
    Binding("g,home", "first", "First run", show=False, id="gate.first"),
    Binding("G,end", "last", "Last run", show=False, id="gate.last"),
]

#: Replay and Gate without an agent configured: how to configure one.
NO_AGENT = [Binding("q,escape", "back", "Back", id="noagent.back")]

#: The run selector (a file holding many runs, such as tau-bench results).
RUNS = [
    Binding(
        "enter",
        "choose",
        "Open",
        id="runs.open",
        tooltip="Open: on a task, its failing (A) vs passing (B) trial; on a trial, that run "
        "alone; with A and B marked, the marked pair",
    ),
    Binding(
        "space",
        "mark",
        "Mark A/B",
        id="runs.mark",
        tooltip="Mark the trial under the cursor as A, then another as B; again to unmark",
    ),
    Binding(
        "slash",
        "filter",
        "Filter",
        key_display="/",
        id="runs.filter",
        tooltip="Filter the tasks by id (as you type); enter keeps it",
        # handled before the keys queued behind it, so "/31" typed or pasted in one go
        # over SSH lands in the filter whole
        priority=True,
    ),
    Binding(
        "escape",
        "clear",
        "Clear",
        show=False,
        id="runs.clear",
        tooltip="Close the filter bar, then clear the filter, then the marks",
    ),
    Binding(
        "n",
        "next_pair",
        "Next pair",
        show=False,
        id="runs.next_pair",
        tooltip="Next task with a passing and a failing trial",
    ),
    Binding(
        "N",
        "previous_pair",
        "Prev pair",
        show=False,
        id="runs.previous_pair",
        tooltip="Previous task with a passing and a failing trial",
    ),
    Binding("down,j", "cursor_down", "Down", show=False, id="runs.cursor_down"),
    Binding("up,k", "cursor_up", "Up", show=False, id="runs.cursor_up"),
    Binding("pagedown", "page_down", "Page down", show=False, id="runs.page_down"),
    Binding("pageup", "page_up", "Page up", show=False, id="runs.page_up"),
    Binding("g,home", "first", "First row", show=False, id="runs.first"),
    Binding("G,end", "last", "Last row", show=False, id="runs.last"),
    Binding("q", "back", "Quit", id="runs.back", tooltip="Quit"),
]

#: ``q`` on a run opened from the run selector goes back to the selector (same id as the
#: main screen's ``q``, so a remap applies to both).
BACK_TO_RUNS = Binding(
    "q", "back", "Runs", id="main.back", tooltip="Back to the run selector (a run opened from it)"
)


def _with_back(table: list[Binding], back: Binding, without: tuple[str, ...] = ()) -> list[Binding]:
    """``table`` (a main view's keys) with ``back`` in place of its ``q`` (id
    ``main.back``, so a remap of the main screen's ``q`` applies to every such view), and
    the bindings whose id is in ``without`` left out. The one way a main view opened from
    somewhere else (the run selector, a loop screen, a re-recording) says where ``q`` goes
    back to."""
    return [back if b.id == "main.back" else b for b in table if b.id not in without]


#: ``q`` on runs opened from a loop screen (a replay's or a gate's call logs, a bisect's
#: hybrids) goes back to it (same id as the main screen's ``q``, so a remap applies to both).
BACK_TO_LOOP = Binding(
    "q",
    "back",
    "Back",
    id="main.back",
    tooltip="Back to the replay, gate or bisect screen that opened these runs",
)

#: The pair view of runs opened from a loop screen: no Replay, Gate or Re-record of call logs.
PAIR_FROM_LOOP = _with_back(
    PAIR, BACK_TO_LOOP, ("main.replay", "main.gate", "main.rerecord", "main.swap")
)

#: The pair and single-file screens of runs opened from the run selector.
PAIR_FROM_RUNS = _with_back(PAIR, BACK_TO_RUNS)
SINGLE_FROM_RUNS = _with_back(SINGLE, BACK_TO_RUNS)
#: A against its re-recording (R, then enter).
PAIR_RERECORDED = _with_back(PAIR, BACK_FROM_RERECORD)
