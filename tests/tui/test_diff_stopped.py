"""Escape while the pair screen's exact diff runs never leaves an empty, dead screen: the
rows by seq (from the bytes when many responses differ) are shown, the header says what
stopped and that ``a`` realigns, and ``a`` does; a job's progress with no total reads
``aligning (0 rows)``, never ``0/None``.

The diff job is made observable (it holds until escape cancels its token), so the test, not
the machine's speed, decides when escape lands."""

from __future__ import annotations

import threading
from collections.abc import Generator
from pathlib import Path

import pytest
from cassette_tui.core.diff.result import DiffResult
from cassette_tui.core.format.jobs import CancelToken, Progress
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.session import Session
from cassette_tui.tui.text.progress import progress_count
from support.factory import entry, write_cassette
from support.pilot import notes, screen_text, settle, sync, wait_until

SIZE = (80, 24)
#: more pairs than the engine compares one by one: the first rows take the bytes' word
MANY = 2_600


def test_a_progress_without_a_total_reads_as_a_count() -> None:
    assert progress_count(Progress("align", 0, None, "rows")) == "0 rows"
    assert progress_count(Progress("outcomes", 3, 12, "files")) == "3/12 files"
    assert progress_count(Progress("align", 5, None)) == "5"
    assert "None" not in progress_count(Progress("align", 0, None, "rows"))


def _hold_first_job(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Make ``Session.diff_job``'s first run report progress with no total (as the
    alignment stage does), then hold until its token is cancelled; later runs are the real
    job. Returns the event set once the held job has reported."""
    started = threading.Event()
    real = Session.diff_job
    calls = []

    def job(self: Session, align: str, token: CancelToken) -> Generator[Progress, None, DiffResult]:
        calls.append(align)
        if len(calls) > 1:
            return (yield from real(self, align, token))  # type: ignore[arg-type]
        yield Progress("align", 0, None, "rows")
        started.set()
        token.wait(30)
        token.raise_if_cancelled()
        raise AssertionError("escape did not cancel the job")

    monkeypatch.setattr(Session, "diff_job", job)
    return started


def _byte_different_pair(tmp_path: Path) -> tuple[Path, Path]:
    """The same calls; every B response differs from A's in its bytes, half in value."""
    a_records, b_records = [], []
    for i in range(MANY):
        a_records.append(entry(i + 1, args={"q": f"q{i}"}, response={"hits": i, "top": f"d{i}"}))
        changed = {"hits": i, "top": "other"} if i % 2 else {"top": f"d{i}", "hits": i}
        b_records.append(entry(i + 1, args={"q": f"q{i}"}, response=changed))
    return (
        write_cassette(tmp_path / "a.jsonl", *a_records),
        write_cassette(tmp_path / "b.jsonl", *b_records),
    )


def _pair_screen(app: CassetteApp) -> PairScreen:
    screen = app.screen
    assert isinstance(screen, PairScreen)
    return screen


@sync
async def test_escape_before_any_row_shows_the_rows_by_seq_and_a_realigns(
    samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _hold_first_job(monkeypatch)
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, align="key")
    async with app.run_test(size=SIZE) as pilot:
        screen = _pair_screen(app)
        await wait_until(
            pilot,
            lambda: started.is_set() and "escape stops" in screen_text(app),
            "the held diff by key",
        )
        text = screen_text(app)
        assert "diffing by key: aligning (0 rows) · escape stops" in text
        assert "None" not in text
        await pilot.press("escape")
        await settle(pilot)
        text = screen_text(app)
        # the rows by seq, a step selected: not an empty screen
        assert screen.result is not None and screen.result.align == "seq"
        assert len(screen.model) == 7 and not screen.steps.loading
        assert "no step selected" not in text
        assert "by seq" in text.splitlines()[0]
        assert "1↻!search_docs" in text
        assert "diff by key stopped: the rows by seq (a aligns by key again)" in notes(app)
        # a aligns by key again: the diff runs (the real job now) and its rows are shown
        await pilot.press("a")
        await wait_until(
            pilot,
            lambda: screen.result is not None and screen.result.align == "key",
            "the diff by key after a",
        )
        await settle(pilot)
        assert app.session.align == "key"
        assert "by key" in screen_text(app).splitlines()[0]


@sync
async def test_escape_before_any_row_of_a_big_pair_keeps_the_bytes_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _hold_first_job(monkeypatch)
    a_path, b_path = _byte_different_pair(tmp_path)
    app = CassetteApp(open_cassette(a_path), open_cassette(b_path), align="key")
    async with app.run_test(size=SIZE) as pilot:
        screen = _pair_screen(app)
        await wait_until(pilot, started.is_set, "the held diff by key")
        await pilot.press("escape")
        await settle(pilot)
        result = screen.result
        assert result is not None and result.align == "seq" and not result.exact
        assert len(screen.model) == MANY and screen.steps.cursor == 0
        text = screen_text(app)
        assert "statuses from the bytes (diff by key stopped; a realigns)" in text
        assert "no step selected" not in text
        # no job the user just stopped was started again behind their back
        assert not any(w.is_running for w in app.workers)
        assert app.session.cached_diff("seq") is None


@sync
async def test_escape_during_the_exact_diff_keeps_the_rows_and_a_realigns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _hold_first_job(monkeypatch)
    a_path, b_path = _byte_different_pair(tmp_path)
    app = CassetteApp(open_cassette(a_path), open_cassette(b_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = _pair_screen(app)
        await wait_until(pilot, started.is_set, "the held exact diff by seq")
        await wait_until(pilot, lambda: "aligning (0 rows)" in screen_text(app), "its progress")
        await pilot.press("escape")
        await settle(pilot)
        result = screen.result
        assert result is not None and not result.exact and len(screen.model) == MANY
        assert "statuses from the bytes (exact diff stopped; a realigns)" in screen_text(app)
        # a, then a again: the exact diffs by key, then by seq, each run to the end
        await pilot.press("a")
        await wait_until(
            pilot, lambda: screen.result is not None and screen.result.align == "key", "by key"
        )
        await pilot.press("a")
        await wait_until(
            pilot,
            lambda: (
                screen.result is not None and screen.result.align == "seq" and screen.result.exact
            ),
            "the exact diff by seq",
        )
        await settle(pilot)
        assert screen.steps.cursor == 1  # the exact first divergence
        assert "statuses from the bytes" not in screen_text(app)
