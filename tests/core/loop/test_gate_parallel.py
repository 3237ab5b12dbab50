"""The gate says when runs part inside one batch of parallel calls made in another order,
and whether that order mattered (issue 24)."""

from __future__ import annotations

from dataclasses import dataclass

from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.loop.call_log import call_log_entries
from cassette_tui.core.loop.divergence import divergence
from cassette_tui.core.replay.report import ReplayReport

SOURCE = Cassette.from_entries(
    [
        Entry(1, "get_weather", {"city": "Lisbon"}, {"temp_c": 21}, extra={"batch": 1}),
        Entry(2, "get_weather", {"city": "Oslo"}, {"temp_c": 4}, extra={"batch": 1}),
        Entry(3, "get_weather", {"city": "Cairo"}, {"temp_c": 33}, extra={"batch": 1}),
        Entry(4, "summarize", {"n": 3}, {"ok": True}),
    ]
)


@dataclass
class Run:
    run: int
    passed: bool


def log_of(*seqs: int) -> Cassette:
    """The call log of a replay that was served these recorded seqs, in this order."""
    rows = []
    for n, seq in enumerate(seqs, 1):
        i = SOURCE.index_of_seq(seq)
        assert i is not None
        rows.append({"n": n, "tool": SOURCE.tool(i), "digest": SOURCE.digest(i), "seq": seq,
                     "outcome": "hit"})  # fmt: skip
    report = ReplayReport.from_json({"mode": "replay", "calls": rows, "misses": []})
    return Cassette.from_entries(call_log_entries(report, SOURCE))


def test_the_call_log_keeps_the_batch_mark() -> None:
    log = log_of(2, 1, 3, 4)
    assert [e.extra.get("batch") for e in log] == [1, 1, 1, None]


def test_runs_that_part_by_the_order_of_parallel_calls_say_it_mattered() -> None:
    logs = [
        (Run(1, True), log_of(1, 2, 3, 4)),
        (Run(2, True), log_of(1, 2, 3, 4)),
        (Run(3, False), log_of(3, 1, 2, 4)),
    ]
    div = divergence(logs, flaky=True)
    assert div is not None and div.kind == "calls" and div.call == 1
    assert div.parallel_order is True and div.to_json()["parallel_order"] is True
    assert "Calls 1-3 are parallel calls the runs made alike, issued in another order" in (
        div.message
    )
    assert "the order mattered" in div.message
    # the paths at that call are the same calls, moved: never a call one run did not make
    assert {p.status for p in div.paths} <= {"same", "moved"}


def test_an_order_that_every_run_passed_alike_did_not_matter() -> None:
    logs = [
        (Run(1, True), log_of(1, 2, 3, 4)),
        (Run(2, False), log_of(1, 2, 3, 4)),
        (Run(3, True), log_of(2, 1, 3, 4)),
        (Run(4, False), log_of(2, 1, 3, 4)),
    ]
    div = divergence(logs, flaky=True)
    assert div is not None and div.parallel_order is True
    assert "the order alone does not explain a failure" in div.message


def test_other_calls_in_a_batch_are_no_parallel_order() -> None:
    logs = [(Run(1, True), log_of(1, 2, 3, 4)), (Run(2, False), log_of(1, 2, 4))]
    div = divergence(logs, flaky=True)
    assert div is not None and div.parallel_order is False
    assert "parallel" not in div.message
