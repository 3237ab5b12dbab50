"""A cancel reaches the diff while it aligns by key and refines rows, not only between
stages: escape on a large pair stops the work instead of letting it run on in its thread
(issue 8: engine work stops cleanly when cancelled)."""

from __future__ import annotations

import random

import pytest
from cassette_tui.core.diff.result import diff_cassettes, diff_job
from cassette_tui.core.format.jobs import Cancelled, CancelToken, Progress, run_job
from support.factory import make_cassette


def _pair(n: int = 3000, seed: int = 7):
    """Two runs of one task whose calls mostly agree: A retries now and then, B makes
    extra lookups, every 5th response differs (many regions for the key alignment)."""
    rng = random.Random(seed)
    a, b = [], []
    for i in range(n):
        call = ("search", {"q": f"q{i % 97}", "page": i % 13})
        if rng.random() < 0.05:
            a.append((*call, {"status": 429}))
        if rng.random() < 0.04:
            b.append(("lookup", {"id": i}, {"ok": True}))
        a.append((*call, {"hits": i, "top": f"doc{i}.md"}))
        b.append((*call, {"hits": i + (i % 5 == 0), "top": f"doc{i}.md"}))
    return make_cassette(a), make_cassette(b)


class Counting(CancelToken):
    """A token that counts its checks and cancels itself at the ``at``-th one."""

    def __init__(self, at: int | None = None) -> None:
        super().__init__()
        self.calls = 0
        self.at = at

    def raise_if_cancelled(self) -> None:
        self.calls += 1
        if self.at is not None and self.calls >= self.at:
            self.cancel()
        super().raise_if_cancelled()


def _checks_before_align(token: Counting, a, b) -> int:
    before = None
    job = diff_job(a, b, "key", token)
    try:
        while True:
            event = next(job)
            if isinstance(event, Progress) and event.stage == "align" and event.done == 0:
                before = token.calls
    except StopIteration:
        pass
    assert before is not None
    return before


def test_the_key_alignment_checks_the_token_as_it_goes() -> None:
    a, b = _pair()
    token = Counting()
    before = _checks_before_align(token, a, b)
    during = token.calls - before
    assert during > 10, f"only {during} checks while aligning by key"

    # cancelled a few checks into the alignment: Cancelled, no result
    late = Counting(at=before + 3)
    with pytest.raises(Cancelled):
        run_job(diff_job(a, b, "key", late))
    assert late.calls == before + 3


def test_a_check_that_never_raises_changes_nothing() -> None:
    a, b = _pair(800, seed=3)
    calls: list[int] = []
    plain = diff_cassettes(a, b, "key")
    checked = diff_cassettes(a, b, "key", check=lambda: calls.append(1))
    assert calls, "the check was called"
    assert [(r.a_seq, r.b_seq, r.status) for r in checked.rows] == [
        (r.a_seq, r.b_seq, r.status) for r in plain.rows
    ]


def test_diff_cassettes_stops_at_the_first_raise_by_seq_and_by_key() -> None:
    a, b = _pair(600, seed=5)

    def stop() -> None:
        raise Cancelled("cancelled")

    with pytest.raises(Cancelled):
        diff_cassettes(a, b, "key", check=stop)
    # by seq, the rows' second look (metadata, moved calls) checks too: B's extra
    # lookups shift the rows, so response drift rows are examined
    rows = diff_cassettes(a, b, "seq").rows
    assert any(r.status.value == "response_drift" for r in rows)
    with pytest.raises(Cancelled):
        diff_cassettes(a, b, "seq", check=stop)
