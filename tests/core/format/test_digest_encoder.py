"""``canonical_json`` (and so ``digest``) calls the standard library's C encoder directly,
made once: its text is ``json.dumps(value, sort_keys=True, separators=(",", ":"))``, the
article's canonical form (docs/format.md), for every JSON value, and it raises what that
raises (a circular value: ``ValueError``; a type JSON cannot write: ``TypeError``)."""

from __future__ import annotations

import enum
import hashlib
import json
import uuid
from typing import Any

import pytest
from cassette_tui.core.format.digest import canonical_json, digest, live_digest
from hypothesis import given, settings
from hypothesis import strategies as st

texts = st.text(st.characters(codec="utf-8"), max_size=8) | st.sampled_from(
    ["é", "東京", "\x7f", "\x00", "\ud800", "a\nb", "\u2028", "\U0001f600", '"\\']
)
numbers = (
    st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**64 + 2)
    | st.integers(min_value=10**30, max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([1e-7, 1e16, 1.5e300, -0.0, 0.1, 5e-324, 123456789.0])
)
keys = texts | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
values = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(texts, inner, max_size=4)
        | st.dictionaries(keys, inner, max_size=3)  # non-text keys, as json writes them
    ),
    max_leaves=20,
)


def reference(value: Any) -> str:
    """The article's canonical JSON: ``json.dumps`` as it writes it."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _outcome(fn: Any, value: Any) -> Any:
    try:
        return fn(value)
    except (TypeError, ValueError) as exc:
        return type(exc)


@settings(max_examples=400, deadline=None)
@given(values)
def test_the_canonical_text_and_digest_are_json_dumps(value: Any) -> None:
    expected = _outcome(reference, value)
    assert _outcome(canonical_json, value) == expected
    if isinstance(expected, str):
        want = "sha256:" + hashlib.sha256(expected.encode()).hexdigest()[:16]
        assert digest(value) == want
        assert live_digest(value) == want


def test_a_circular_value_raises_value_error_as_json_does() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    inner: dict[str, Any] = {}
    inner["self"] = {"again": inner}
    for value in (loop, inner):
        with pytest.raises(ValueError, match="Circular reference"):
            canonical_json(value)
        with pytest.raises(ValueError, match="Circular reference"):
            digest(value)


def test_a_value_nested_too_deep_raises_recursion_error_as_json_does() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        reference(deep)
    with pytest.raises(RecursionError):
        canonical_json(deep)


class Colour(enum.Enum):
    RED = "red"


@pytest.mark.parametrize(
    "value", [{"id": uuid.UUID(int=7)}, {"c": Colour.RED}, {1j: 2}, {"s": {1}}]
)
def test_what_json_refuses_is_refused_with_its_message(value: Any) -> None:
    with pytest.raises(TypeError) as want:
        reference(value)
    with pytest.raises(TypeError) as got:
        canonical_json(value)
    assert str(got.value) == str(want.value)
