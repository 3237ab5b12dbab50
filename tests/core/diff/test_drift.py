"""Per-row drift (core/diff/_drift.py) and its lazy, cached use in DiffResult."""

from __future__ import annotations

import threading

import cassette_tui.core.diff._drift as drift_mod
from cassette_tui.core.diff._drift import entry_drift, json_path, value_drift
from cassette_tui.core.diff.model import Change, Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.entry import Entry


def by_path(items):
    return {(d.part, d.path): d for d in items}


def test_json_path() -> None:
    assert json_path([]) == "$"
    assert json_path(["hits", 0, "title"]) == "$.hits[0].title"
    assert json_path(["weird key", "x-y"]) == '$["weird key"]["x-y"]'


def test_value_drift_kinds() -> None:
    a = {"top": "old.md", "n": 1, "gone": True, "t": "text", "hits": [1, 2], "nested": {"x": 1}}
    b = {"top": "new.md", "n": 1.0, "new": 5, "t": 3, "hits": [1, 2, 3], "nested": {"x": 2}}
    items = by_path(value_drift(a, b))
    assert items[("response", "$.top")].change is Change.VALUE_CHANGED
    assert (items[("response", "$.top")].a, items[("response", "$.top")].b) == ("old.md", "new.md")
    assert items[("response", "$.n")].change is Change.NUMBER_TYPE
    assert items[("response", "$.gone")].change is Change.REMOVED
    assert items[("response", "$.gone")].b is None
    assert items[("response", "$.new")].change is Change.ADDED
    assert items[("response", "$.new")].b == 5
    assert items[("response", "$.t")].change is Change.TYPE_CHANGED
    assert items[("response", "$.hits[2]")].change is Change.ITEM_ADDED
    assert items[("response", "$.nested.x")].change is Change.VALUE_CHANGED
    removed = by_path(value_drift([1, 2, 3], [1, 2]))
    assert removed[("response", "$[2]")].change is Change.ITEM_REMOVED


def test_number_type_versus_a_different_number() -> None:
    (item,) = value_drift({"p": 329}, {"p": 329.5})
    assert item.change is Change.VALUE_CHANGED
    (item,) = value_drift({"p": 329}, {"p": 329.0})
    assert item.change is Change.NUMBER_TYPE


def test_equal_values_skip_deepdiff(monkeypatch) -> None:
    def boom(*args, **kwargs):
        raise AssertionError("deepdiff must not run on equal values")

    monkeypatch.setattr(drift_mod, "_deep_reports", boom)
    assert value_drift({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) == []
    assert value_drift({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}, fast=False) == []


def test_entry_drift_args_and_error_against_response() -> None:
    a = Entry(1, "get", {"id": "x"}, error={"type": "Timeout", "message": "slow"})
    b = Entry(1, "get", {"id": "y"}, {"v": 1})
    items = entry_drift(a, b)
    assert [(d.part, d.path, d.change) for d in items] == [
        ("args", "$.id", Change.VALUE_CHANGED),
        ("error", "$", Change.REMOVED),
        ("response", "$", Change.ADDED),
    ]
    tool = entry_drift(Entry(1, "a", {}, 1), Entry(1, "b", {}, 1))
    assert [(d.part, d.a, d.b) for d in tool] == [("tool", "a", "b")]


def many(n: int, salt: str) -> Cassette:
    return Cassette.from_entries(
        Entry(i + 1, "search", {"q": i}, {"top": f"{salt}-{i}"}) for i in range(n)
    )


def test_rows_and_first_divergence_run_no_deepdiff(monkeypatch) -> None:
    calls = []
    real_fast, real_deep = drift_mod._fast_reports, drift_mod._deep_reports

    def counting(real):
        def count(*args, **kwargs):
            calls.append(1)
            return real(*args, **kwargs)

        return count

    monkeypatch.setattr(drift_mod, "_fast_reports", counting(real_fast))
    monkeypatch.setattr(drift_mod, "_deep_reports", counting(real_deep))
    result = diff_cassettes(many(2000, "a"), many(2000, "b"))
    assert result.first_divergence == 0
    assert result.counts[Status.RESPONSE_DRIFT] == 2000
    assert calls == []
    result.drift(5)
    assert len(calls) == 1


def test_drift_is_cached_and_thread_safe() -> None:
    result = diff_cassettes(many(50, "a"), many(50, "b"))
    out: list = []

    def work() -> None:
        out.append([result.drift(i) for i in range(50)])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(50):
        first = out[0][i]
        assert all(o[i] is first for o in out)  # one cached list per row
        assert first[0].path == "$.top" and first[0].a == f"a-{i}"


def test_same_and_one_sided_rows_have_no_drift() -> None:
    result = diff_cassettes(many(3, "a"), many(2, "a"))
    assert [r.status for r in result.rows] == [Status.SAME] * 2 + [Status.ONLY_A]
    assert result.drift(0) == [] and result.drift(2) == []


def test_drift_order_does_not_depend_on_string_hashing() -> None:
    """deepdiff reports levels in sets; the drift must read the same in every process."""
    import subprocess
    import sys

    code = (
        "from cassette_tui.core.diff._drift import value_drift;"
        "a={'k%d'%i: i for i in range(30)}; a['l']=list(range(12));"
        "b={'k%d'%i: -i for i in range(30)}; b['l']=list(range(3)); b['new']=1;"
        "print([(d.path, d.change.value) for d in value_drift(a, b)])"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in (1, 2, 3, 4)
    }
    assert len(outputs) == 1
    assert "$.k2" in outputs.pop()
