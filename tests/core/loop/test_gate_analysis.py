"""The gate's analysis without subprocesses: call logs from replay reports (one wrapper or
several), where runs part, and safe fixture names (property test)."""

from __future__ import annotations

import string
from dataclasses import dataclass, replace
from pathlib import Path

from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.loop.call_log import call_log_entries, write_call_log
from cassette_tui.core.loop.divergence import divergence
from cassette_tui.core.loop.pin import fixture_name
from cassette_tui.core.replay.report import ReplayReport, ReplayReportError
from hypothesis import given
from hypothesis import strategies as st
from support.factory import make_cassette

SOURCE = make_cassette(
    [
        ("lookup", {"key": "a"}, {"value": 1}),
        ("lookup", {"key": "a"}, {"value": 2}),
        ("fetch", {"path": "x"}, {"text": "good"}),
        ("fetch", {"path": "y"}, {"text": "bad"}),
    ]
)


@dataclass
class Run:
    run: int
    passed: bool


def report(*calls: tuple[str, dict, int | None, str], misses: list | None = None) -> ReplayReport:
    rows = []
    for n, (tool, args, seq, outcome) in enumerate(calls, 1):
        index = SOURCE.index_of_seq(seq) if seq is not None else None
        dig = SOURCE.digest(index) if index is not None else "sha256:0000000000000000"
        if index is None:
            from cassette_tui.core.format.digest import digest

            dig = digest(args)
        rows.append({"n": n, "tool": tool, "digest": dig, "seq": seq, "outcome": outcome})
    return ReplayReport.from_json({"mode": "replay", "calls": rows, "misses": misses or []})


def log_of(rep: ReplayReport) -> Cassette:
    return Cassette.from_entries(call_log_entries(rep, SOURCE))


def test_call_log_of_hits_misses_and_exhausted_calls() -> None:
    rep = report(
        ("lookup", {"key": "a"}, 1, "hit"),
        ("lookup", {"key": "a"}, 2, "hit"),
        ("lookup", {"key": "a"}, None, "exhausted"),
        ("lookup", {"key": "q"}, None, "miss"),
        misses=[{"tool": "lookup", "args": {"key": "q"}}],
    )
    calls = list(rep.calls or ())
    calls[2] = replace(calls[2], digest=SOURCE.digest(0))
    entries = call_log_entries(replace(rep, calls=tuple(calls)), SOURCE)
    assert [e.seq for e in entries] == [1, 2, 3, 4]
    assert entries[1].response == {"value": 2} and entries[1].extra["replayed_seq"] == 2
    assert entries[2].error["type"] == "ReplayExhausted" and entries[2].args == {"key": "a"}
    assert entries[3].error["type"] == "CassetteMiss" and entries[3].args == {"key": "q"}


def test_several_wrappers_are_joined_in_order() -> None:
    one = report(("lookup", {"key": "a"}, 1, "hit")).to_json()
    two = report(("fetch", {"path": "x"}, 3, "hit")).to_json()
    flat = ReplayReport.from_json({"mode": "replay", "wrappers": [one, two]})
    assert [c.n for c in flat.calls or ()] == [1, 2]
    assert [c.tool for c in flat.calls or ()] == ["lookup", "fetch"]


def test_a_report_round_trips_and_a_bad_field_is_named(tmp_path: Path) -> None:
    rep = report(("lookup", {"key": "a"}, 1, "hit"), ("lookup", {"key": "q"}, None, "miss"))
    assert ReplayReport.from_json(rep.to_json()) == rep
    path = tmp_path / "run-01.report.json"
    try:
        ReplayReport.from_json({"calls": [{"n": 1, "seq": "one"}]}, source=path)
    except ReplayReportError as exc:
        assert str(exc) == f"{path}: replay report field 'calls[0].seq': expected int, got str"
        assert exc.field == "calls[0].seq"
    else:  # pragma: no cover
        raise AssertionError("a seq that is not a number was read")
    try:
        ReplayReport.from_json([], source=path)
    except ReplayReportError as exc:
        assert str(exc) == f"{path}: the replay report is not a JSON object"
    else:  # pragma: no cover
        raise AssertionError("a list was read as a report")


def test_write_call_log_never_replaces_a_file(tmp_path: Path) -> None:
    rep = report(("lookup", {"key": "a"}, 1, "hit"))
    path, log = write_call_log(rep, SOURCE, tmp_path / "run-01.jsonl")
    assert len(log) == 1 and path.read_text().count("\n") == 1
    try:
        write_call_log(rep, SOURCE, path)
    except FileExistsError:
        pass
    else:  # pragma: no cover
        raise AssertionError("a call log replaced an existing file")
    assert [p.name for p in tmp_path.iterdir()] == ["run-01.jsonl"]


def test_same_calls_flaky_is_after_the_tool_layer_and_deterministic_is_none() -> None:
    rep = report(("lookup", {"key": "a"}, 1, "hit"), ("fetch", {"path": "x"}, 3, "hit"))
    logs = [(Run(1, True), log_of(rep)), (Run(2, False), log_of(rep))]
    div = divergence(logs, flaky=True)
    assert div is not None and div.kind == "after_tool_layer" and div.calls == 2
    assert divergence(logs, flaky=False) is None


def test_first_call_where_runs_differ_and_the_paths() -> None:
    x = report(("lookup", {"key": "a"}, 1, "hit"), ("fetch", {"path": "x"}, 3, "hit"))
    y = report(("lookup", {"key": "a"}, 1, "hit"), ("fetch", {"path": "y"}, 4, "hit"))
    short = report(("lookup", {"key": "a"}, 1, "hit"))
    logs = [
        (Run(1, True), log_of(x)),
        (Run(2, False), log_of(y)),
        (Run(3, True), log_of(x)),
        (Run(4, False), log_of(short)),
        (Run(5, False), None),
    ]
    div = divergence(logs, flaky=True)
    assert div is not None and div.kind == "calls" and div.call == 2
    assert [(p.runs, p.passed, p.status) for p in div.paths] == [
        ((1, 3), 2, "same"),
        ((2,), 0, "args_drift"),
        ((4,), 0, "only_a"),
    ]
    assert div.paths[2].call is None and div.without_log == (5,)
    assert "made no more calls" in div.message


def test_same_keys_served_by_other_recordings_still_part() -> None:
    """Two runs call the same key, one served by seq 1 and one by seq 2 (another
    response): they part at that call."""
    a = report(("lookup", {"key": "a"}, 1, "hit"))
    b = report(("lookup", {"key": "a"}, 2, "hit"))
    div = divergence([(Run(1, True), log_of(a)), (Run(2, False), log_of(b))], flaky=True)
    assert div is not None and div.call == 1
    assert {p.call["seq"] for p in div.paths if p.call} == {1, 2}


@given(tool=st.text(min_size=1, max_size=300), hexpart=st.text(string.hexdigits, max_size=20))
def test_fixture_names_are_plain_names(tool: str, hexpart: str) -> None:
    name = fixture_name(tool, f"sha256:{hexpart}")
    assert name.endswith(".jsonl") and "/" not in name and "\\" not in name
    assert not name.startswith((".", "-")) and ".." not in name
    assert set(name) <= set(string.ascii_letters + string.digits + "_.-")
    assert len(name) <= 64 + 9 + 1 + 40 + 6
    base = Path("/fixtures")
    assert (base / name).parent == base


def test_flaky_without_any_call_log_says_so() -> None:
    div = divergence([(Run(1, True), None), (Run(2, False), None)], flaky=True)
    assert div is not None and div.kind == "no_call_log" and div.without_log == (1, 2)
    assert divergence([(Run(1, True), None)], flaky=False) is None


def test_each_call_log_is_diffed_against_the_reference_once(monkeypatch) -> None:
    """Three distinct call logs: each is diffed against the most common one once (the
    first call where they part and the status of each path come from the same diff)."""
    from cassette_tui.core.loop import divergence as module

    calls: list[int] = []
    real = module.diff_cassettes

    def counted(a: Cassette, b: Cassette, **kw: object) -> object:
        calls.append(1)
        return real(a, b, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "diff_cassettes", counted)
    x = report(("lookup", {"key": "a"}, 1, "hit"), ("fetch", {"path": "x"}, 3, "hit"))
    y = report(("lookup", {"key": "a"}, 1, "hit"), ("fetch", {"path": "y"}, 4, "hit"))
    short = report(("lookup", {"key": "a"}, 1, "hit"))
    x_log = log_of(x)
    logs = [(Run(1, True), x_log), (Run(2, False), log_of(y)), (Run(3, True), x_log),
            (Run(4, False), log_of(short))]  # fmt: skip
    div = divergence(logs, flaky=True)
    assert div is not None and div.call == 2
    assert len(calls) == 3  # the reference itself, y and short: once each
