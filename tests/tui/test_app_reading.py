"""Two large files open at once: the rows of their first lines, then the files read whole
in a worker with "reading A: n / ~N lines" in the header (issue 31).

The read is held by a hook on the loader's chunk reader (the test's, not the product's):
after its first chunk it waits until the test has seen the progress line, so the test, not
the machine's speed, decides what is on screen when."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format import _loader
from cassette_tui.core.format import _readahead as readahead
from cassette_tui.core.format.cassette import load, load_head
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.session import Session
from support.factory import entry, write_cassette
from support.pilot import notes, screen_text, sync, wait_until

SIZE = (100, 24)
LINES = 3_000
PROGRESS = re.compile(r"reading ([AB]): ([\d,]+) / ~?([\d,]+) lines")


def _files(tmp_path: Path) -> tuple[Path, Path]:
    """Two runs whose every answer differs, B with one extra call at seq 1000."""
    a_entries, b_entries = [], []
    for i in range(1, LINES + 1):
        tool = ("search", "read")[i % 2]
        a_entries.append(entry(i, tool, {"q": i}, response={"hits": i}))
        b_entries.append((tool, {"q": i}, {"hits": -i}))
    b_entries.insert(999, ("ping", {}, {"ok": True}))
    b = [entry(seq, tool, args, response=r) for seq, (tool, args, r) in enumerate(b_entries, 1)]
    return (
        write_cassette(tmp_path / "a.jsonl", *a_entries),
        write_cassette(tmp_path / "b.jsonl", *b),
    )


def _hold_after_first_chunk(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The loader's reads: small chunks, and after the first one of each file a wait until
    the returned event is set."""
    go_on = threading.Event()
    real = readahead.read_chunks

    def held(fh: BinaryIO, chunk: int, size: int | None = None) -> Iterator[bytes]:
        chunks = real(fh, 8192, size=size)
        try:
            for k, data in enumerate(chunks):
                if k == 1:
                    go_on.wait(60)
                yield data
        finally:
            chunks.close()

    monkeypatch.setattr(_loader.readahead, "read_chunks", held)
    return go_on


def _header(app: CassetteApp) -> str:
    summary = app.screen.query_one("#summary")
    return "\n".join(screen_text(app).splitlines()[: summary.size.height])


@sync
async def test_progress_line_while_two_large_files_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pa, pb = _files(tmp_path)
    go_on = _hold_after_first_chunk(monkeypatch)
    head_a, head_b = load_head(pa, max_bytes=4096), load_head(pb, max_bytes=4096)
    app = CassetteApp(head_a, head_b, align="auto", reading=(pa, pb))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, PairScreen)

        def counted() -> bool:
            found = PROGRESS.search(_header(app))
            return found is not None and int(found[2].replace(",", "")) > 0

        await wait_until(pilot, counted, "a progress line with lines read")
        found = PROGRESS.search(_header(app))
        assert found is not None and found[1] == "A"
        done, total = (int(found[k].replace(",", "")) for k in (2, 3))
        assert 0 < done < LINES and abs(total - LINES) < LINES // 5  # an estimate
        # meanwhile: the rows of the first lines, the cursor on the first divergence
        assert screen.session.reading is not None
        assert len(screen.model) == min(len(head_a), len(head_b)) < LINES  # what both hold
        assert screen.steps.cursor == 0
        assert screen.result is not None and screen.result.rows[0].status is Status.RESPONSE_DRIFT
        j_before = screen.steps.cursor
        await pilot.press("j")  # the keys work on the first rows
        assert screen.steps.cursor == j_before + 1
        await pilot.press("p")  # a pin (or a replay) of the first lines alone: refused
        assert app.screen is screen and "still being read" in notes(app)
        await pilot.press("a")  # the alignment asked for now is the one shown after
        assert "by key once the files are read" in notes(app)

        go_on.set()
        await wait_until(
            pilot,
            lambda: screen.session.reading is None and screen.result is not None
            and screen.result.exact and len(screen.model) > LINES,
            "the whole files' exact diff",
        )  # fmt: skip
        assert not PROGRESS.search(_header(app))
        whole = diff_cassettes(load(pa), load(pb), "key")
        assert diff_cassettes(load(pa), load(pb), "auto").align == "key"  # the extra call
        assert screen.result.align == "key"
        assert list(screen.result.rows) == list(whole.rows)
        assert screen.result.first_divergence == whole.first_divergence


@sync
async def test_escape_stops_the_reading_and_keeps_the_first_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pa, pb = _files(tmp_path)
    go_on = _hold_after_first_chunk(monkeypatch)
    app = CassetteApp(load_head(pa, max_bytes=4096), load_head(pb, max_bytes=4096),
                      reading=(pa, pb))  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, PairScreen)
        await wait_until(pilot, lambda: PROGRESS.search(_header(app)), "a progress line")
        rows = len(screen.model)
        await pilot.press("escape")
        go_on.set()
        await wait_until(pilot, lambda: "reading stopped" in _header(app), "the stop said")
        assert len(screen.model) == rows and screen.session.reading is not None
        await pilot.press("a")  # reads again, to the end this time
        await wait_until(
            pilot,
            lambda: screen.session.reading is None and len(screen.model) > LINES,
            "the whole files read again",
        )


def test_session_reads_each_file_once_with_its_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read gives whole cassettes whose keys came with the load: no second read of a
    file for them (the key pass is never run)."""
    from cassette_tui.core.format._view import Cassette
    from cassette_tui.core.format.jobs import CancelToken, run_job

    pa, pb = _files(tmp_path)
    expected = load(pa).digests()
    session = Session(load_head(pa), load_head(pb), align="auto", reading=(pa, pb))
    run_job(session.read_job(CancelToken()))
    assert session.reading is None and session.a is not None and session.b is not None
    assert (len(session.a), len(session.b)) == (LINES, LINES + 1)

    def refuse(self: Cassette, cancel: object) -> None:
        raise AssertionError("a second read of the file for the keys")

    monkeypatch.setattr(Cassette, "_key_pass", refuse)
    assert session.resolve_align() == "key"
    assert session.a.digests() == expected


@sync
async def test_a_bad_line_found_while_reading_ends_the_app_like_diff(tmp_path: Path) -> None:
    pa, pb = _files(tmp_path)
    lines = pa.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2499] = '{"seq": 2500, "tool": "search", "args": {"q": }, "response": {}}\n'
    pa.write_text("".join(lines), encoding="utf-8")
    app = CassetteApp(load_head(pa, max_bytes=4096), load_head(pb, max_bytes=4096),
                      reading=(pa, pb))  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.return_code is not None, "the app to end")
    assert app.return_code == 2
    assert app.bad_input is not None and app.bad_input.startswith(f"{pa}:2500: ")


def test_open_reads_two_large_files_in_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cassette-tui A B` on files from READ_IN_APP_BYTES on: their first lines before the
    terminal is taken (a bad first line is still a plain error there), the rest in the
    app; smaller files open whole, as before."""
    import cassette_tui.tui.commands.open_app as open_app_module
    from cassette_tui.tui.commands.open_app import open_app
    from click.testing import CliRunner

    pa, pb = _files(tmp_path)
    opened: list[CassetteApp] = []
    monkeypatch.setattr(CassetteApp, "run", lambda self, **kw: opened.append(self))
    monkeypatch.setattr(open_app_module, "terminal_problem", lambda: None)
    result = CliRunner().invoke(open_app, [str(pa), str(pb)])
    assert result.exit_code == 0, result.output
    assert opened[-1].session.reading is None  # small files: opened whole
    assert len(opened[-1].session.a or ()) == LINES

    monkeypatch.setattr(open_app_module, "READ_IN_APP_BYTES", pa.stat().st_size // 2)
    result = CliRunner().invoke(open_app, [str(pa), str(pb)])
    assert result.exit_code == 0, result.output
    session = opened[-1].session
    assert session.reading == (pa, pb)
    assert session.a is not None and 0 < len(session.a) <= LINES

    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"seq": 1, "tool": 5, "args": {}, "response": {}}\n' + pb.read_bytes())
    result = CliRunner().invoke(open_app, [str(bad), str(pb)])
    assert result.exit_code == 2
    assert f"{bad}:1: " in result.output


@sync
async def test_no_divergence_in_the_first_lines_is_not_no_divergence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runs part past the first lines: meanwhile the header says none so far among
    them, never that the runs are the same; the whole diff then finds where they part."""
    records = [entry(i, "search", {"q": i}, response={"hits": i}) for i in range(1, LINES + 1)]
    pa = write_cassette(tmp_path / "a.jsonl", *records)
    records[2499] = entry(2500, "search", {"q": 2500}, response={"hits": 0})
    pb = write_cassette(tmp_path / "b.jsonl", *records)
    go_on = _hold_after_first_chunk(monkeypatch)
    app = CassetteApp(load_head(pa, max_bytes=4096), load_head(pb, max_bytes=4096),
                      align="auto", reading=(pa, pb))  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, PairScreen)
        await wait_until(pilot, lambda: PROGRESS.search(_header(app)), "a progress line")
        header = _header(app)
        assert "no divergence in the first" in header and "the runs make the same" not in header
        go_on.set()
        await wait_until(
            pilot,
            lambda: screen.session.reading is None and screen.result is not None
            and screen.result.exact,
            "the whole files' exact diff",
        )  # fmt: skip
        assert screen.result.first_divergence == 2499
        assert screen.steps.cursor == 2499


def _loop_bar(app: CassetteApp) -> str:
    from textual.widgets import Static

    return str(app.screen.query_one("#loopbar", Static).render())


@sync
async def test_the_loop_bar_never_counts_the_first_lines_as_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the files are read, A is its first lines: the bar says ``Record N+`` (at
    least those, more to come), never the first lines' count as if it were the run; once
    read, the whole run's count."""
    pa, pb = _files(tmp_path)
    go_on = _hold_after_first_chunk(monkeypatch)
    head_a = load_head(pa, max_bytes=4096)
    app = CassetteApp(head_a, load_head(pb, max_bytes=4096), reading=(pa, pb))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, PairScreen)
        await wait_until(pilot, lambda: PROGRESS.search(_header(app)), "a progress line")
        bar = _loop_bar(app)
        assert f"Record {len(head_a)}+ " in bar, bar
        go_on.set()
        await wait_until(
            pilot,
            lambda: screen.session.reading is None and screen.result is not None
            and screen.result.exact,
            "the whole files' diff",
        )  # fmt: skip
        assert f"Record {LINES} " in _loop_bar(app)


LINT_PROGRESS = re.compile(r"linting: ([\d,]+) / ([\d,]+) entries")


def _hold_lint_halfway(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The single screen's lint, held at its middle entry until the returned event is set
    (the test, not the machine's speed, decides what is on screen)."""
    from cassette_tui.tui.screens import single as single_screen

    go_on = threading.Event()
    real = single_screen.lint

    def held(cassette, each=None, tail=None):  # type: ignore[no-untyped-def]
        def slow(i, entry, raw):  # type: ignore[no-untyped-def]
            if each is not None:
                each(i, entry, raw)
            if i == len(cassette) // 2:
                go_on.wait(60)

        return real(cassette, slow, tail)

    monkeypatch.setattr(single_screen, "lint", held)
    return go_on


@sync
async def test_one_large_file_alone_says_how_far_its_lint_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One file alone: the rows at once, then "linting: n / N entries · escape stops" in
    the header while the entries are read (never a bare "linting…" for the whole read),
    then the findings."""
    from cassette_tui.tui.screens.single import SingleScreen

    pa, _ = _files(tmp_path)
    go_on = _hold_lint_halfway(monkeypatch)
    app = CassetteApp(load(pa))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, SingleScreen)

        def counted() -> bool:
            found = LINT_PROGRESS.search(_header(app))
            return found is not None and int(found[1].replace(",", "")) > 0

        await wait_until(pilot, counted, "a lint progress line")
        found = LINT_PROGRESS.search(_header(app))
        assert found is not None and found[2] == f"{LINES:,}"
        assert int(found[1].replace(",", "")) <= LINES // 2
        assert "escape stops" in _header(app)
        go_on.set()
        await wait_until(pilot, lambda: screen.findings is not None, "the findings")
        assert not LINT_PROGRESS.search(_header(app))


@sync
async def test_escape_stops_the_lint_of_one_large_file_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cassette_tui.tui.screens.single import SingleScreen

    pa, _ = _files(tmp_path)
    go_on = _hold_lint_halfway(monkeypatch)
    app = CassetteApp(load(pa))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, SingleScreen)
        await wait_until(pilot, lambda: LINT_PROGRESS.search(_header(app)), "lint progress")
        await pilot.press("escape")
        go_on.set()
        await wait_until(pilot, lambda: "lint stopped" in _header(app), "the stop said")
        assert screen.findings == [] and len(screen.model) == LINES  # the rows stay
        await pilot.press("n")
        assert "lint stopped" in notes(app)


@sync
async def test_a_small_file_beside_a_large_one_is_not_called_its_first_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large A against a small (here empty) B: while A is read, B's head is its whole
    file, so the header gives B's size, never "B b.jsonl (first 0)"."""
    pa, _ = _files(tmp_path)
    pb = write_cassette(tmp_path / "b.jsonl")
    go_on = _hold_after_first_chunk(monkeypatch)
    app = CassetteApp(load_head(pa, max_bytes=4096), load_head(pb), reading=(pa, pb))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: PROGRESS.search(_header(app)), "a progress line")
        header = _header(app)
        assert "(first " in header.split("B b.jsonl")[0]  # A is its first lines
        assert "B b.jsonl (first" not in header and "B b.jsonl (empty" in header
        go_on.set()


def test_one_large_file_alone_is_read_with_progress_before_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cassette-tui BIG.jsonl` alone: its lines are indexed before the terminal is taken
    (seconds for a 1M-entry file): the read reports its lines on stderr's progress bar
    instead of a blank terminal; a small file opens as before, with no bar."""
    from contextlib import contextmanager

    import cassette_tui.tui.commands.open_app as open_app_module
    from cassette_tui.core.format.jobs import Progress
    from cassette_tui.tui.commands.open_app import open_app
    from click.testing import CliRunner

    pa, _ = _files(tmp_path)
    events: list[Progress] = []

    @contextmanager
    def recorded(enabled: bool | None = None):  # type: ignore[no-untyped-def]
        yield events.append

    opened: list[CassetteApp] = []
    monkeypatch.setattr(CassetteApp, "run", lambda self, **kw: opened.append(self))
    monkeypatch.setattr(open_app_module, "terminal_problem", lambda: None)
    monkeypatch.setattr(open_app_module, "progress_on_stderr", recorded)
    result = CliRunner().invoke(open_app, [str(pa)])
    assert result.exit_code == 0, result.output
    assert events == [] and len(opened[-1].session.a or ()) == LINES  # small: no bar

    monkeypatch.setattr(open_app_module, "READ_IN_APP_BYTES", pa.stat().st_size // 2)
    result = CliRunner().invoke(open_app, [str(pa)])
    assert result.exit_code == 0, result.output
    assert len(opened[-1].session.a or ()) == LINES
    assert events and events[-1].unit == "lines" and events[-1].done == LINES
    assert all(e.done <= (e.total or e.done) for e in events)
