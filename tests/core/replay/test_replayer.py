"""Replay semantics (core/replay/replayer.py)."""

from __future__ import annotations

import threading

import pytest
from cassette_tui.core import (
    Cassette,
    CassetteMiss,
    Entry,
    NormalizationRules,
    Replayer,
    ReplayExhausted,
    ToolError,
    save,
)


def cassette_of(*calls: tuple[str, dict, object]) -> Cassette:
    entries = []
    for seq, (tool, args, outcome) in enumerate(calls, 1):
        if isinstance(outcome, Exception):
            err = {"type": type(outcome).__name__, "message": str(outcome)}
            entries.append(Entry(seq, tool, args, error=err))
        else:
            entries.append(Entry(seq, tool, args, response=outcome))
    return Cassette.from_entries(entries)


def test_hit_serves_the_recorded_response_and_never_calls_live() -> None:
    replay = Replayer(cassette_of(("search_docs", {"q": "retry budget", "top_k": 5}, {"hits": 3})))
    assert replay("search_docs", {"top_k": 5, "q": "retry budget"}) == {"hits": 3}


def test_miss_names_nearest_candidates_and_paths() -> None:
    replay = Replayer(
        cassette_of(
            ("search_docs", {"q": "retry budget", "top_k": 5}, {"hits": 3}),
            ("search_docs", {"q": "backoff", "top_k": 10}, {"hits": 1}),
            ("read_file", {"path": "a.md"}, "text"),
        )
    )
    with pytest.raises(CassetteMiss) as info:
        replay("search_docs", {"q": "retry budget", "top_k": 5.0})
    miss = info.value
    assert [c["seq"] for c in miss.nearest] == [1, 2]
    assert miss.nearest[0]["differences"] == [
        {"path": "$.top_k", "recorded": 5, "live": 5.0, "absent": None, "kind": "number type"}
    ]
    assert "$.top_k: recorded 5, live 5.0 [number type]" in str(miss)
    assert not isinstance(miss, ReplayExhausted)


def test_miss_of_an_unrecorded_tool_says_so() -> None:
    replay = Replayer(cassette_of(("read_file", {"path": "a.md"}, "text")))
    with pytest.raises(CassetteMiss, match="no call of 'http_get' was recorded"):
        replay("http_get", {"url": "https://example.com"})


def test_recorded_error_is_raised_as_tool_error() -> None:
    replay = Replayer(cassette_of(("http_get", {"url": "u"}, TimeoutError("read timed out"))))
    with pytest.raises(ToolError) as info:
        replay("http_get", {"url": "u"})
    assert (info.value.type, info.value.message, info.value.seq) == (
        "TimeoutError",
        "read timed out",
        1,
    )


def test_repeat_last_policy_serves_the_last_recording_again() -> None:
    c = cassette_of(("poll", {"id": 1}, "running"), ("poll", {"id": 1}, "done"))
    replay = Replayer(c, repeat="last")
    assert [replay("poll", {"id": 1}) for _ in range(4)] == ["running", "done", "done", "done"]
    assert [row["seq"] for row in replay.report()["calls"]] == [1, 2, 2, 2]


def test_exhausted_message_for_a_key_recorded_once() -> None:
    replay = Replayer(cassette_of(("poll", {"id": 1}, "x")))
    replay("poll", {"id": 1})
    with pytest.raises(ReplayExhausted, match="call #2 of a key recorded once") as info:
        replay("poll", {"id": 1})
    assert (info.value.call_number, info.value.recorded_count, info.value.seqs) == (2, 1, [1])


def test_unknown_repeat_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="repeat policy"):
        Replayer(cassette_of(), repeat="loop")


def test_rules_turn_a_volatile_miss_into_a_hit() -> None:
    c = cassette_of(("t", {"id": "6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11"}, "ok"))
    live_args = {"id": "b2e94f10-77c3-4a8e-8d2b-5c6a1f0e9d32"}
    with pytest.raises(CassetteMiss):
        Replayer(c)("t", live_args)
    assert Replayer(c, rules=NormalizationRules.from_presets(["uuid"]))("t", live_args) == "ok"


def test_report_shape() -> None:
    c = cassette_of(
        ("a", {"x": 1}, 1), ("a", {"x": 1}, 2), ("b", {}, 3), ("c", {}, ValueError("no"))
    )
    replay = Replayer(c)
    replay("a", {"x": 1})
    with pytest.raises(CassetteMiss):
        replay("a", {"x": 2})
    with pytest.raises(ToolError):
        replay("c", {})
    report = replay.report()
    assert report["mode"] == "replay"
    assert report["entries"] == 4
    assert report["used"] == 2
    assert report["unused_seqs"] == [2, 3]
    assert report["repeats"] == [{"tool": "a", "digest": c.digest(0), "calls": 1, "recorded": 2}]
    (miss,) = report["misses"]
    assert miss["tool"] == "a" and miss["args"] == {"x": 2}
    assert miss["nearest"][0]["differences"][0]["path"] == "$.x"
    assert [(r["n"], r["tool"], r["seq"], r["outcome"]) for r in report["calls"]] == [
        (1, "a", 1, "hit"),
        (2, "a", None, "miss"),
        (3, "c", 4, "error"),
    ]


def test_replayer_loads_a_path(tmp_path) -> None:
    path = save(cassette_of(("a", {}, "r")), tmp_path / "c.jsonl")
    replay = Replayer(path)
    assert replay("a", {}) == "r"
    assert replay.report()["cassette"] == str(path)


def test_threads_each_get_a_distinct_recording_in_order() -> None:
    n = 200
    c = cassette_of(*[("poll", {"id": 1}, i) for i in range(n)])
    replay = Replayer(c)
    got: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(n // 8):
            value = replay("poll", {"id": 1})
            with lock:
                got.append(value)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(n))
    served = [row["seq"] for row in replay.report()["calls"]]
    assert served == list(range(1, n + 1))
    with pytest.raises(ReplayExhausted):
        replay("poll", {"id": 1})


def test_a_key_never_called_is_unused_not_repeated() -> None:
    """A key recorded 3 times that the agent never called (it missed first) is not in
    ``repeats``: its seqs are unused."""
    c = cassette_of(("s", {"q": 1}, 1), ("s", {"q": 1}, 2), ("s", {"q": 1}, 3), ("t", {}, 4))
    replay = Replayer(c)
    with pytest.raises(CassetteMiss):
        replay("s", {"q": 2})
    report = replay.report()
    assert report["repeats"] == [] and report["unused_seqs"] == [1, 2, 3, 4]
    replay("s", {"q": 1})
    assert replay.report()["repeats"] == [
        {"tool": "s", "digest": c.digest(0), "calls": 1, "recorded": 3}
    ]
