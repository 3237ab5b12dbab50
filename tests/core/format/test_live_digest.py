"""``live_digest``, the replay's digest of a live call's args (orjson where exact), is the
article's ``digest`` for every value, and raises where it raises (hypothesis, then the
values orjson writes and the standard library does not)."""

from __future__ import annotations

import datetime
import enum
import math
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from cassette_tui.core.format.digest import digest, live_digest
from hypothesis import given, settings
from hypothesis import strategies as st

#: the texts that part orjson's output from the canonical JSON: non-ASCII, DEL, controls
texts = st.text(max_size=6) | st.sampled_from(["é", "東京", "\x7f", "\x00", "\ud800", "a\nb"])
numbers = (
    st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**64 + 2)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([1e-7, 1e16, 1.5e300, -0.0, 0.1, 123456789.0])
)
values = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(texts, inner, max_size=3)
    ),
    max_leaves=12,
)


def _outcome(fn: Any, value: Any) -> Any:
    try:
        return fn(value)
    except (TypeError, ValueError) as exc:
        return type(exc)


@settings(max_examples=600, deadline=None)
@given(values)
def test_live_digest_is_the_digest(value: Any) -> None:
    assert _outcome(live_digest, value) == _outcome(digest, value)


#: unicode-heavy texts, for the escaped path: astral characters (surrogate pairs),
#: U+2028/9, controls, DEL, quotes and backslashes, mixed with ASCII
unicode_texts = st.text(
    st.characters(codec="utf-8")
    | st.sampled_from(["\u2028", "\u2029", "\U0001f600", "\U0010ffff", "\x7f", '"', "\\"]),
    max_size=12,
)
unicode_values = st.recursive(
    st.none() | st.integers() | st.floats(allow_nan=False) | unicode_texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(unicode_texts, inner, max_size=4),
    max_leaves=16,
)


@settings(max_examples=800, deadline=None)
@given(unicode_values)
def test_live_digest_is_the_digest_for_unicode(value: Any) -> None:
    assert _outcome(live_digest, value) == _outcome(digest, value)


@pytest.mark.parametrize(
    "value",
    [
        {"q": "café über 東京", "top_k": 5},
        {"emoji": "\U0001f600", "line": "a\u2028b\u2029c", "ctl": "\x00\x1f\n"},
        {"é": 1, "e": 2, "東": 3, "\U0001f600": 4},  # non-ASCII keys: the sorted order
        ["\U0010ffff", "\ud7ff", "\ue000", "\uffff"],
    ],
)
def test_non_ascii_takes_the_digest_of_the_canonical_json(value: Any) -> None:
    assert live_digest(value) == digest(value)


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Name(str):
    pass


@dataclass
class Point:
    x: int


@pytest.mark.parametrize(
    "value",
    [
        {"id": uuid.UUID(int=7)},  # orjson writes it, the standard library refuses it
        {"colour": Colour.RED},
        {"level": Level.HIGH},  # an int subclass: the standard library writes it
        {"name": Name("x")},
        {"at": datetime.datetime(2026, 1, 1)},
        {"p": Point(1)},
        {"n": math.nan},
        {"big": 2**70},
        {1: "an int key"},
        {"t": (1, [2, (3,)])},
        ["a", {"b": "é"}],
    ],
    ids=repr,
)
def test_values_orjson_writes_otherwise_take_the_exact_digest(value: Any) -> None:
    assert _outcome(live_digest, value) == _outcome(digest, value)
