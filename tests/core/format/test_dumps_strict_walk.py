"""``dumps_strict`` walking a value for NaN and the infinities only when the encoder
refuses one (issue 31): the same text as walking it first, as it did before, for any
value (floats of every kind, tuples, nesting) and options, or the same error."""

from __future__ import annotations

import json
from typing import Any

from cassette_tui.core.format.jsonvalue import dumps_strict, encode_nonfinite
from hypothesis import given
from hypothesis import strategies as st


def _dumps_strict_before(value: Any, **kwargs: Any) -> str:
    """``dumps_strict`` as it was (main at d0c7a6c), the reference."""
    return json.dumps(encode_nonfinite(value), allow_nan=False, **kwargs)


_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), "\ud800"]),
)  # fmt: skip
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)
_options = st.fixed_dictionaries(
    {},
    optional={"ensure_ascii": st.booleans(), "sort_keys": st.booleans(),
              "separators": st.sampled_from([(",", ":"), (", ", ": ")])},
)  # fmt: skip


def _outcome(dump: Any, value: Any, options: dict[str, Any]) -> tuple[str, str]:
    try:
        return "text", dump(value, **options)
    except (TypeError, ValueError) as exc:
        return type(exc).__name__, str(exc)


@given(_values, _options)
def test_same_text_as_walking_first(value: Any, options: dict[str, Any]) -> None:
    assert _outcome(dumps_strict, value, options) == _outcome(_dumps_strict_before, value, options)


def test_a_nan_beside_a_value_json_cannot_hold() -> None:
    value = {"a": float("nan"), "b": {1, 2}}
    assert _outcome(dumps_strict, value, {}) == _outcome(_dumps_strict_before, value, {})
