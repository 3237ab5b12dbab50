"""The proxy's fast texts of a big call's args (orjson) are the engine's texts exactly, or
not used: the digest the cassette stores is ``digest()``'s, and the line ``dump_line``'s
(a wrong digest would make every replay of the call miss)."""

from __future__ import annotations

import json

from cassette_tui.core.format.digest import canonical_json, digest
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.mcp.record import _prepare_args, fast_texts
from hypothesis import given, settings
from hypothesis import strategies as st

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.text(alphabet=st.characters(max_codepoint=0x7F))
)
VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400)
@given(VALUES)
def test_fast_texts_are_the_engines_or_none(value: object) -> None:
    fast = fast_texts(value)
    if fast is not None:
        assert fast[0] == canonical_json(value)
        assert fast[1] == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    prepared = _prepare_args(NormalizationRules(), "tool", value)
    assert prepared.digest == digest(value)


def test_plain_ascii_values_take_the_fast_path() -> None:
    value = {"b": "x" * 1000, "a": [1, None, True, {"k": '\n\t"\\'}]}
    assert fast_texts(value) is not None
    assert fast_texts({"f": 1.5}) is None  # floats print another shortest form
    assert fast_texts({"u": "é"}) is None  # the canonical text escapes non-ASCII
