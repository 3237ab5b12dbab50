"""Issue 31's fifth round of ``check``: the engine's one-byte ``in`` tests of a line or an
encoding written as ints, and its ``b"null"`` test as ``find`` (``bytes in bytes`` first
tries its operand as an int and clears the TypeError). ``parse_json_checked``,
``fast_digest`` and ``sorted_json_bytes`` answer as copies of main's (9fa9b9b) do, for
lines with and without backslashes, repeated keys, non-finite floats and their marks,
written compact, spaced or as orjson writes them (hypothesis)."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
from cassette_tui.core.format import digest as D
from cassette_tui.core.format import jsontext as J
from cassette_tui.core.format.jsonvalue import NONFINITE_MARK, has_nonfinite
from hypothesis import example, given, settings
from hypothesis import strategies as st


def _reference_parse_json_checked(raw: bytes) -> tuple[Any, bool]:
    """``parse_json_checked`` of bytes as it was on main at 9fa9b9b (names qualified)."""
    try:
        value = J._decode(raw)
    except J.msgspec.DecodeError:
        value = J._parse_std(raw)
        J._check_depth(raw, value)
        return value, True
    except RecursionError:
        raise J.JSONTooDeep() from None
    try:
        encoded: bytes | None = J._orjson_encode(value)
    except TypeError:
        encoded = None
        if len(raw) > J._SHALLOW_LEN:
            J._check_depth(raw, value)
    if encoded is not None and raw.startswith(encoded):
        return value, False
    colons = raw.count(b":")
    if colons:
        if encoded is not None and b"\\" not in raw:
            if encoded.count(b":") != colons:
                J._parse_std(raw)
        elif J.may_have_duplicates(raw, value, encoded, colons):
            J._parse_std(raw)
    return value, False


def _reference_fast_digest(value: Any) -> str | None:
    """``fast_digest(value)`` as it was on main at 9fa9b9b."""
    out = D.sorted_json(value)
    if out is None:
        return None
    if D._may_not_be_canonical(out):
        return None
    if b"null" in out and has_nonfinite(value):
        return None
    return D.DIGEST_PREFIX + D._sha256(out).hexdigest()[:16]


def _reference_sorted_json_bytes(value: Any) -> bytes:
    """``sorted_json_bytes(value)`` as it was on main at 9fa9b9b."""
    try:
        out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(value, sort_keys=True).encode("utf-8", "backslashreplace")
    if b"null" in out and J.has_non_finite(value):
        return json.dumps(value, sort_keys=True).encode("utf-8", "backslashreplace")
    return out


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(),
    st.text(max_size=6),
    st.sampled_from(["\\", '"', ":", "null", "a\\u003a", "$numberDouble", "\x7f"]),
)
values = st.recursive(
    scalars,
    lambda kids: (
        st.lists(kids, max_size=3)
        | st.dictionaries(st.text(max_size=4) | st.sampled_from(["a:", "\\"]), kids, max_size=3)
    ),
    max_leaves=12,
)


def _outcome(f: Any, *args: Any) -> Any:
    try:
        result = f(*args)
    except Exception as exc:  # noqa: BLE001 - the same error, or the same value
        return ("raised", type(exc).__name__, str(exc))
    return ("value", json.dumps(result, sort_keys=True, default=repr), repr(result))


@st.composite
def _lines(draw: Any) -> bytes:
    """A JSON text as orjson, the standard library compact or spaced writes it, maybe with
    a key repeated by hand."""
    value = draw(values)
    how = draw(st.sampled_from(["orjson", "compact", "spaced"]))
    if how == "orjson":
        try:
            text = orjson.dumps(value)
        except TypeError:  # an integer past 64 bits
            text = json.dumps(value, separators=(",", ":")).encode()
    elif how == "compact":
        text = json.dumps(value, separators=(",", ":")).encode()
    else:
        text = json.dumps(value).encode()
    if draw(st.booleans()) and text.startswith(b"{") and len(text) > 2:
        text = b'{"k":1,"k":2,' + text[1:]  # a repeated key
    return text


@settings(max_examples=500, deadline=None)
@given(raw=_lines())
@example(raw=b'{"a":"x\\\\","a":1}')
@example(raw=b'{"a":"\\u003a","b":{"c":1,"c":2}}')
@example(raw=b'{"n":{"$numberDouble":"NaN"}}')
def test_the_parse_answers_as_main_s(raw: bytes) -> None:
    assert _outcome(J.parse_json_checked, raw) == _outcome(_reference_parse_json_checked, raw)


@settings(max_examples=500, deadline=None)
@given(value=values)
@example(value={"x": math.nan, "y": None})
@example(value=[None, math.inf])
@example(value={"a": None})
def test_the_digest_and_the_sorted_bytes_answer_as_main_s(value: Any) -> None:
    assert D.fast_digest(value) == _reference_fast_digest(value)
    assert J.sorted_json_bytes(value) == _reference_sorted_json_bytes(value)


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=30) | _lines())
@example(raw=NONFINITE_MARK)
@example(raw=b"$")
def test_the_nonfinite_mark_test_answers_as_main_s(raw: bytes) -> None:
    # ``_view.Cassette._checked_record``'s test of a line for a non-finite float's mark
    assert (0x24 in raw and raw.find(NONFINITE_MARK) >= 0) == (
        b"$" in raw and NONFINITE_MARK in raw
    )
