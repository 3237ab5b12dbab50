"""A replay's call log names the calls answered outside the cassette: a new call (live,
under a new-calls policy) with its args, a pinned one with its key's recorded args; both
without a response (the answer is not in the report)."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core import wrap_dispatcher
from cassette_tui.core.format.cassette import load
from cassette_tui.core.loop.call_log import write_call_log
from cassette_tui.core.replay.report import ReplayReport
from support.factory import entry, write_cassette


def test_new_and_pinned_calls_in_the_call_log(tmp_path: Path) -> None:
    base = write_cassette(
        tmp_path / "base.jsonl",
        entry(1, "lookup", {"key": "a"}, response={"value": 1}),
        entry(2, "fetch", {"path": "x"}, response={"text": "bad"}),
    )
    pin = write_cassette(
        tmp_path / "pin.jsonl", entry(1, "fetch", {"path": "x"}, response={"text": "good"})
    )
    dispatch = wrap_dispatcher(
        lambda tool, args: {"live": tool},
        mode="replay",
        path=base,
        new_calls="report",
        fixtures=[pin],
    )
    assert dispatch("lookup", {"key": "a"}) == {"value": 1}
    assert dispatch("fetch", {"path": "x"}) == {"text": "good"}
    assert dispatch("budget", {"team": "t"}) == {"live": "budget"}
    report = ReplayReport.from_json(dispatch.report())
    path, log = write_call_log(report, load(base), tmp_path / "run-01.jsonl")
    rows = [(e.tool, e.args, e.response, e.error, e.extra.get("outcome")) for e in load(path)]
    assert rows == [
        ("lookup", {"key": "a"}, {"value": 1}, None, "hit"),
        ("fetch", {"path": "x"}, None, None, "pinned"),
        ("budget", {"team": "t"}, None, None, "new"),
    ]
    assert len(log) == 3
