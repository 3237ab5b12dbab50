"""The secret scan's string walk gives exactly the strings ``iter_leaves`` gives, with the
same paths and keys, in the same order (hypothesis)."""

from __future__ import annotations

from typing import Any

from cassette_tui.core.jsonpath import iter_leaves
from cassette_tui.core.secrets import _is_envelope, _last_key, _string_leaves
from hypothesis import given, settings
from hypothesis import strategies as st

keys = st.sampled_from(["token", "id", "data", "_binary", "a.b", ""]) | st.text(max_size=3)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.just(True),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=15,
)


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from([(), ("args",), ("response",), ("args", 0)]))
def test_the_string_walk_is_iter_leaves_strings(value: Any, prefix: tuple[Any, ...]) -> None:
    expected = [
        (parts, _last_key(parts), leaf)
        for parts, leaf in iter_leaves(value, prefix, skip=_is_envelope)
        if isinstance(leaf, str)
    ]
    assert list(_string_leaves(value, prefix)) == expected
