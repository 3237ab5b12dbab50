"""Jobs: progress events reach the sink, cancellation runs cleanups once and at once."""

from __future__ import annotations

import threading

import pytest
from cassette_tui.core.format.jobs import Cancelled, CancelToken, Progress, run_job


def counting(n: int, token: CancelToken, closed: list[bool]):
    try:
        for i in range(n):
            token.raise_if_cancelled()
            yield Progress("count", i + 1, n, "items")
        return n
    finally:
        closed.append(True)


def test_run_job_passes_every_event_and_returns_the_result() -> None:
    seen: list[Progress] = []
    closed: list[bool] = []
    assert run_job(counting(3, CancelToken(), closed), seen.append) == 3
    assert [e.done for e in seen] == [1, 2, 3]
    assert seen[-1].fraction == 1.0
    assert closed == [True]


def test_cancel_mid_job_raises_cancelled_and_closes_the_job() -> None:
    token = CancelToken()
    closed: list[bool] = []

    def sink(event: Progress) -> None:
        if event.done == 2:
            token.cancel()

    with pytest.raises(Cancelled):
        run_job(counting(10, token, closed), sink)
    assert closed == [True]


def test_a_sink_that_raises_closes_the_job_first() -> None:
    closed: list[bool] = []

    def sink(event: Progress) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_job(counting(10, CancelToken(), closed), sink)
    assert closed == [True]


def test_cleanups_run_once_at_cancel_and_at_once_when_late() -> None:
    token = CancelToken()
    calls: list[str] = []
    token.on_cancel(lambda: calls.append("first"))
    unregister = token.on_cancel(lambda: calls.append("gone"))
    unregister()
    threading.Thread(target=token.cancel).start()
    assert token.wait(5)
    token.cancel()
    token.on_cancel(lambda: calls.append("late"))
    assert calls == ["first", "late"]


def test_progress_without_total_has_no_fraction() -> None:
    assert Progress("scan", 5).fraction is None
    assert Progress("scan", 5, 0).fraction is None
