"""``iter_leaves(..., only=types)`` gives exactly the leaves of those types that the full
walk gives, with the same paths, in the same order, envelopes skipped alike (hypothesis):
the secret scan and lint's volatile walk read strings and numbers through it."""

from __future__ import annotations

from typing import Any

from cassette_tui.core.format.jsonpath import iter_leaves, leaf_values
from cassette_tui.core.scan._secret_detectors import is_envelope
from hypothesis import given, settings
from hypothesis import strategies as st

keys = st.sampled_from(["token", "id", "data", "_binary", "a.b", ""]) | st.text(max_size=3)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5) | st.just(True),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=15,
)
kinds = st.sampled_from([(str,), (int,), (str, int, float), (dict,), (list, str), (type(None),)])


@settings(max_examples=400, deadline=None)
@given(values, st.sampled_from([(), ("args",), ("response",), ("args", 0)]), kinds, st.booleans())
def test_only_is_the_full_walk_filtered(
    value: Any, prefix: tuple[Any, ...], only: tuple[type, ...], skip: bool
) -> None:
    how = is_envelope if skip else None
    expected = [
        (parts, leaf)
        for parts, leaf in iter_leaves(value, prefix, skip=how)
        if isinstance(leaf, only)
    ]
    assert list(iter_leaves(value, prefix, skip=how, only=only)) == expected


def test_only_strings_of_a_deep_value() -> None:
    deep: Any = "leaf"
    for _ in range(5000):
        deep = [deep, 1]
    assert list(iter_leaves(deep, only=(str,))) == [((0,) * 5000, "leaf")]


def _key(leaf: Any) -> tuple[str, str]:
    return type(leaf).__name__, repr(leaf)  # NaN, 1 and True kept apart


@settings(max_examples=300, deadline=None)
@given(values)
def test_leaf_values_are_the_scalar_leaves_in_any_order(value: Any) -> None:
    """``leaf_values`` (no paths, no set order: lint's question "is any arg volatile?")
    gives the scalar leaves the full walk gives, each once."""
    expected = [leaf for _, leaf in iter_leaves(value) if not isinstance(leaf, dict | list)]
    assert sorted(map(_key, leaf_values(value))) == sorted(map(_key, expected))


def test_leaf_values_of_a_deep_value() -> None:
    deep: Any = "leaf"
    for _ in range(5000):
        deep = {"k": [deep, 1]}
    assert sorted(map(_key, leaf_values(deep))) == sorted(
        [("str", "'leaf'")] + [("int", "1")] * 5000
    )
