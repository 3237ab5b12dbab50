"""End to end: the installed ``cassette-tui`` in a real terminal (tmux, 80x24).

Starts the console script next to ``sys.executable`` on the sample pair, presses keys with
``send-keys`` and reads the screen with ``capture-pane``, asserting what a person sees: the
first divergence, the drift of a response, the help screen, and a clean exit that gives the
terminal back. Each test has its own tmux server (``-L``) and always kills it. Screens are
polled until they show what is expected or a deadline passes; no fixed sleeps.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.importers.sources import open_cassette
from support.paths import SAMPLES, SCRIPT
from support.tmux import DEADLINE, Tmux, open_pair

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"console script not installed: {SCRIPT}"),
]


def test_first_divergence_and_response_drift(tmux: Tmux) -> None:
    result = diff_cassettes(
        open_cassette(SAMPLES / "fail.jsonl"), open_cassette(SAMPLES / "fix.jsonl"), "auto"
    )
    first = result.first_divergence
    assert first is not None
    row = result.rows[first]
    screen = open_pair(tmux)
    lines = screen.splitlines()
    assert "A fail.jsonl (7)" in lines[0] and "B fix.jsonl (4)" in lines[0]
    header = next(line for line in lines if "first divergence" in line)
    assert f"row {first + 1}" in header and f"A seq {row.a_seq}" in header
    cursor = next(line for line in lines if line.startswith("▶"))
    assert cursor[1:6].strip() == str(row.a_seq)
    # the drift of the first response that differs, path by path, old -> new (computed in
    # a worker): n walks there from the first divergence (by key, A's extra retries first)
    drifted = next(i for i, r in enumerate(result.rows) if r.status is Status.RESPONSE_DRIFT)
    for _ in range(drifted - first):
        tmux.keys("n")
    drift = {d.path: d for d in result.drift(drifted)}
    screen = tmux.wait_for(lambda s: "drift (" in s, "the drift of the selected row")
    changed = [d for d in drift.values() if d.change.value == "value_changed"]
    assert changed, "the sample's first divergence changes a value"
    item = next((d for d in changed if not isinstance(d.a, str)), changed[0])  # fits a line
    screen = tmux.wait_for(lambda s: item.path in s, f"drift of {item.path}")
    line = next(x for x in screen.splitlines() if item.path in x)
    assert f"{item.a} -> {item.b}" in line


def _cursor_seq(screen: str) -> str | None:
    """A's seq on the cursor's row, or None."""
    line = next((x for x in screen.splitlines() if x.startswith("▶")), None)
    return line[1:6].strip() if line is not None else None


def test_keys_walk_the_diffs_and_open_a_step(tmux: Tmux) -> None:
    open_pair(tmux)
    tmux.keys("n")  # by key (auto's choice for the sample): A's next extra retry
    screen = tmux.wait_for(lambda s: _cursor_seq(s) == "3", "next difference")
    assert "only in A" in screen
    tmux.keys("Enter")
    screen = tmux.wait_for(lambda s: "B response" in s and "Back" in s, "step full-screen")
    tmux.keys("q")
    screen = tmux.wait_for(lambda s: "first divergence" in s, "back on the main screen")
    tmux.keys("a")

    def by_seq_rows(s: str) -> bool:
        # the header says "by seq" a frame before the re-aligned rows are drawn: wait for both
        lines = s.splitlines()
        row_drawn = len(lines) > 7 and " × " in lines[7]
        return "by seq" in s and "first divergence" in s and row_drawn

    screen = tmux.wait_for(by_seq_rows, "rows aligned by seq")
    assert " × " in screen.splitlines()[7]  # by seq: A's retry beside B's read_file


def test_search_typed_in_one_burst_finds_the_step(tmux: Tmux) -> None:
    """ "/" then the term and enter arrive in one burst over SSH; all of it must reach the
    search bar (including the "/" inside a path) and the cursor lands on the match."""
    open_pair(tmux)
    tmux.keys("/docs/backoff.md", "Enter")
    # the whole term reached the bar, and the cursor went from the first divergence (row 2)
    # to the first row after it holding the term: A seq 5, the search whose hits list it
    # (by key, the sample's default; B's read_file of it is further down, beside A seq 7)
    screen = tmux.wait_for(
        lambda s: "search: docs/backoff.md" in s and _cursor_seq(s) == "5",
        "the cursor on the first row that holds docs/backoff.md",
    )
    assert "backoff.md" in screen


def test_help_then_clean_exit(tmux: Tmux) -> None:
    open_pair(tmux)
    assert tmux.pane("#{alternate_on}") == "1"
    tmux.keys("?")
    screen = tmux.wait_for(lambda s: "cassette-tui keys" in s, "help screen")
    assert "same call, same response" in screen and "response drift" in screen
    tmux.keys("q")
    tmux.wait_for(lambda s: "first divergence" in s, "main screen again")
    tmux.keys("q")
    assert tmux.wait_exit() in ("0", ""), "the app exited with an error"
    # the terminal is given back: alternate screen off, no app left on it
    assert tmux.pane("#{alternate_on}") == "0"
    assert "first divergence" not in tmux.screen()


def test_bad_input_is_an_error_before_the_ui(tmux: Tmux, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 1, "tool": "t", "args": {}}\n')
    tmux.start(str(SCRIPT), str(bad))
    assert tmux.wait_exit() in ("2", "")
    assert tmux.pane("#{alternate_on}") == "0"
    assert "bad.jsonl:1: field 'response'" in tmux.screen(history=True)


# -- issue 5: a tau-bench pass/fail pair straight from the results file -------------------
AIRLINE = "tau-bench/gpt-4o-airline.json"


@pytest.fixture
def airline(real: Path) -> Path:
    path = real / AIRLINE
    if not path.is_file():
        pytest.skip(f"real-world data not available: {path} is absent")
    return path


def see_task_31_pair(tmux: Tmux) -> str:
    """Assert the pair screen of task 31 (A = trial 2, failed; B = trial 3, passed) shows
    what the diff engine says: the first divergence at seq 7, ``cancel_reservation`` with
    another ``reservation_id``, in the header, the rows and the detail pane."""
    screen = tmux.wait_for(
        lambda s: "first divergence" in s and "findings:" in s and "D1EW9B" in s,
        "the task-31 pair with its first divergence and drift",
    )
    lines = screen.splitlines()
    assert "A task 31 trial 2 ✗ (7)  B task 31 trial 3 ✓ (7)" in lines[0]
    header = next(line for line in lines if "first divergence" in line)
    assert "row 7: A seq 7, B seq 7 cancel_reservation (args drift)" in header
    cursor = next(line for line in lines if line.startswith("▶"))
    assert cursor[1:6].strip() == "7" and "cancel_reser" in cursor and " ≠ " in cursor
    # the rows above it are the same calls on both sides
    assert sum(1 for line in lines if " = " in line and line[1:6].strip().isdigit()) == 6
    # the detail pane: the differing reservation ids, A -> B
    drift = next(line for line in lines if "$.reservation_id" in line)
    assert drift.split() == ["args", "$.reservation_id", '"D1EW9B"', "->", '"9HBUV8"', "(changed)"]
    return screen


def test_tau_bench_selector_opens_task_31(tmux: Tmux, airline: Path) -> None:
    tmux.start(str(SCRIPT), str(airline))
    screen = tmux.wait_for(lambda s: "runs in gpt-4o-airline.json" in s, "the run selector")
    assert "200 runs · 50 tasks · 84 ✓ pass · 116 ✗ fail · 26 tasks with both" in screen
    tmux.keys("/", "3", "1", "Enter")  # in one go, as a quick typist over SSH sends them
    screen = tmux.wait_for(
        lambda s: "1 of 50 tasks" in s and "▔" not in s, "task 31 only, the filter bar closed"
    )
    lines = screen.splitlines()
    assert lines[4].startswith("▶31 ")
    assert "enter: A trial 2 ✗ vs B trial 3 ✓" in lines[4]
    tmux.keys("Enter")
    see_task_31_pair(tmux)
    # q goes back to the selector, then quits cleanly
    tmux.keys("q")
    tmux.wait_for(lambda s: "runs in gpt-4o-airline.json" in s, "the selector again")
    tmux.keys("q")
    assert tmux.wait_exit() in ("0", ""), "the app exited with an error"
    assert tmux.pane("#{alternate_on}") == "0"
    assert "runs in" not in tmux.screen()


def test_tau_bench_path_specs_open_task_31(tmux: Tmux, airline: Path) -> None:
    tmux.start(str(SCRIPT), f"{airline}#task=31,trial=2", f"{airline}#task=31,trial=3")
    see_task_31_pair(tmux)
    tmux.keys("q")
    assert tmux.wait_exit() in ("0", ""), "the app exited with an error"
    assert tmux.pane("#{alternate_on}") == "0"


def test_the_app_ends_when_its_terminal_goes_away(tmux: Tmux) -> None:
    """An SSH session (here: the tmux server) that dies under the app sends SIGHUP; the
    app must end, not hang in its shutdown writing to a terminal that is gone."""
    open_pair(tmux)
    tmux.keys("n")  # some work in flight: the drift worker of the next row
    pid = int(tmux.pane("#{pane_pid}"))
    tmux.kill()
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, 9)
    raise AssertionError(f"cassette-tui (pid {pid}) still runs after its terminal went away")
