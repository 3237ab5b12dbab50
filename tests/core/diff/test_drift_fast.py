"""The fast drift path for plain JSON trees gives exactly deepdiff's items (deepdiff is the
definition of drift; issue 8), except where a list holds the same items in another order
(one ``reordered`` item) or only gained or lost items (those items alone, issue 28): there
the walk says what happened, where deepdiff compares index by index."""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Any

from cassette_tui.core.diff._drift import MATCH_ITEMS, value_drift
from cassette_tui.core.format.jsontext import sorted_json_bytes
from hypothesis import assume, given, settings
from hypothesis import strategies as st

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.integers(min_value=2**63, max_value=2**65),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-3, max_value=3),
    st.sampled_from(["", "a", "b", "a.b", "x y", "é", "1"]),
)
_keys = st.sampled_from(["a", "b", "c", "a.b", "*", "0", ""])
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=20,
)


def _mutate(data: st.DataObject, value: Any) -> Any:
    """``value`` with a few random edits (a changed leaf, a key or item added or removed)."""
    if isinstance(value, dict):
        out = {k: _mutate(data, v) if data.draw(st.booleans()) else v for k, v in value.items()}
        if data.draw(st.booleans()):
            out[data.draw(_keys)] = data.draw(_json)
        if out and data.draw(st.booleans()):
            out.pop(data.draw(st.sampled_from(sorted(out))))
        return out
    if isinstance(value, list):
        out_list = [_mutate(data, v) if data.draw(st.booleans()) else v for v in value]
        if data.draw(st.booleans()):
            out_list.insert(data.draw(st.integers(0, len(out_list))), data.draw(_json))
        if out_list and data.draw(st.booleans()):
            out_list.pop(data.draw(st.integers(0, len(out_list) - 1)))
        return out_list
    return data.draw(_json) if data.draw(st.booleans()) else value


def _list_rule_applies(a: Any, b: Any) -> bool:
    """Whether the walk's list rules (reordered, only inserted or removed) apply anywhere
    in the two values, following the paths the walk compares."""
    if isinstance(a, dict) and isinstance(b, dict):
        return any(_list_rule_applies(a[k], b[k]) for k in a if k in b)
    if not (isinstance(a, list) and isinstance(b, list)):
        return False
    ka, kb = [sorted_json_bytes(v) for v in a], [sorted_json_bytes(v) for v in b]
    if ka == kb:
        return False
    if len(a) == len(b) and len(a) > 1 and sorted(ka) == sorted(kb):
        return True
    containers = any(isinstance(v, (dict, list)) for v in [*a, *b])
    if not containers:
        return False  # deepdiff's own reports
    if len(a) != len(b) and len(a) + len(b) <= MATCH_ITEMS:
        ops = SequenceMatcher(None, ka, kb, autojunk=False).get_opcodes()
        if not any(tag == "replace" for tag, *_ in ops):
            return True
    return any(_list_rule_applies(x, y) for x, y in zip(a, b, strict=False))


def _items(a: Any, b: Any, fast: bool) -> list[tuple[str, Any, Any, str]]:
    return [(d.path, d.a, d.b, d.change.value) for d in value_drift(a, b, fast=fast)]


@settings(max_examples=200, deadline=None)
@given(st.data(), _json)
def test_fast_drift_equals_deepdiff_on_related_values(data, a) -> None:
    b = _mutate(data, a)
    if not _list_rule_applies(a, b):
        assert _items(a, b, fast=True) == _items(a, b, fast=False)


@settings(max_examples=200, deadline=None)
@given(_json, _json)
def test_fast_drift_equals_deepdiff_on_any_two_values(a, b) -> None:
    if not _list_rule_applies(a, b):
        assert _items(a, b, fast=True) == _items(a, b, fast=False)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(_json, min_size=2, max_size=8, unique_by=lambda v: sorted_json_bytes(v)), st.randoms()
)
def test_a_list_in_another_order_is_one_reordered_item(items: list[Any], rnd: Any) -> None:
    other = items[:]
    rnd.shuffle(other)
    found = _items({"l": items}, {"l": other}, fast=True)
    if other == items:
        assert found == []
    else:
        assert found == [("$.l", items, other, "reordered")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(_keys, _scalars, min_size=1, max_size=3), min_size=1, max_size=8,
                unique_by=lambda v: sorted_json_bytes(v)),
       st.dictionaries(_keys, _scalars, min_size=1, max_size=3), st.data())  # fmt: skip
def test_one_object_inserted_is_one_item_added(items: list[Any], new: Any, data: Any) -> None:
    assume(all(sorted_json_bytes(new) != sorted_json_bytes(v) for v in items))
    at = data.draw(st.integers(0, len(items)))
    other = [*items[:at], new, *items[at:]]
    found = _items({"l": items}, {"l": other}, fast=True)
    assert len(found) == 1 and found[0][3] == "item_added" and found[0][2] == new


def test_fast_drift_examples() -> None:
    a = {"hits": [{"id": 1, "t": "x"}, {"id": 2}], "n": 1, "tags": ["a", "b", "c"]}
    b = {"hits": [{"id": 1, "t": "y"}], "n": 1.0, "tags": ["b", "c", "d"]}
    assert _items(a, b, fast=True) == _items(a, b, fast=False)
    assert [i[0] for i in _items(a, b, fast=True)] == [
        "$.hits[0].t", "$.hits[1]", "$.n", "$.tags[0]", "$.tags[2]"
    ]  # fmt: skip


def test_values_the_fast_walk_leaves_to_deepdiff() -> None:
    nan = float("nan")
    for a, b in [
        ({"a": nan, "b": 1}, {"a": nan, "b": 2}),
        ({"a": [1, (2, 3)]}, {"a": [1, (2, 4)]}),
        ({1: "x"}, {1: "y"}),
        ({"a": float("inf")}, {"a": 1.0}),
    ]:
        assert _items(a, b, fast=True) == _items(a, b, fast=False)
