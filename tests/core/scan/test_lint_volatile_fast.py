"""Lint's volatile-args gate (``lint._has_volatile``) asks ``volatile_kind`` only of strings
that start as a volatile value can (``lint._VOLATILE_START``), and walks the args inline
(issue 31: the walk was a generator step a leaf, and a string with a ``/`` or ``-`` that
was not seen before, a relative path, went through every volatile pattern). The plain
definitions are the oracle: ``volatile_kind`` over every leaf ``leaf_values`` yields.
"""

from __future__ import annotations

from typing import Any

from cassette_tui.core.format.jsonpath import leaf_values
from cassette_tui.core.keys.volatile import EPOCH_MIN_S, volatile_kind
from cassette_tui.core.scan import lint
from hypothesis import example, given, settings
from hypothesis import strategies as st

#: pieces volatile values are made of, and look-alikes (case variants, the characters
#: Python's case-insensitive matching folds onto ASCII letters: long s, Kelvin sign,
#: dotted and dotless i), so that the strings drawn reach every volatile pattern
_PIECES = [
    "/",
    "\\",
    "\\\\",
    ":",
    "-",
    "_",
    "%",
    "%TEMP%",
    "%temp%",
    "tmp",
    "/tmp",
    "/var/folders",
    "C:",
    "c:\\",
    "Users",
    "AppData",
    "Local",
    "Temp",
    "urn:uuid:",
    "URN:UUID:",
    "urn:uu\u0130d:",
    "req",
    "REQ",
    "request",
    "rid",
    "trace",
    "\u017fpan",
    "span",
    "corr",
    "correlation",
    "x-",
    "X-",
    "id",
    "2024",
    "-05-15",
    "T15:00:03Z",
    "1700000000",
    "1700000000123",
    "\u0661\u0667\u0660\u0660\u0660\u0660\u0660\u0660\u0660\u0660",
    "\u0662\u0660\u0662\u0664-\u0660\u0665-\u0661\u0665",
    "550e8400",
    "550e8400-e29b-41d4-a716-446655440000",
    "e29b",
    "abc123",
    "a1b2c3",
    "\u212a",
    "\u0131",
    " ",
    "token/request/write",
    "page.md",
]
_strings = st.lists(st.sampled_from(_PIECES), max_size=6).map("".join) | st.text(max_size=24)


@settings(max_examples=1000, deadline=None)
@given(text=_strings)
@example(text="/tmp/run-3/out.json")
@example(text="C:\\Users\\me\\AppData\\Local\\Temp\\x")
@example(text="\\\\server\\share\\x")
@example(text="urn:uuid:550e8400-e29b-41d4-a716-446655440000")
@example(text="req_8f3a9c01")
@example(text="X-Request-Id-1234abcd")
@example(text="2024-05-15T15:00:03Z")
@example(text="1700000000")
def test_a_string_volatile_kind_names_starts_as_the_prefix_says(text: str) -> None:
    if volatile_kind(text) is not None:
        assert lint._VOLATILE_START.match(text) is not None
    lint._KIND_SEEN.clear()  # the cache must not decide: the definition is compared
    assert lint._string_kind(text) == (
        volatile_kind(text) if lint._MAY_BE_VOLATILE.search(text) is not None else None
    )


def _plain_has_volatile(value: Any) -> bool:
    """``_has_volatile`` as it was before issue 31: ``leaf_values`` and the definition."""
    for leaf in leaf_values(value):
        kind_of = type(leaf)
        if kind_of is str:
            text_kind = (
                volatile_kind(leaf) if lint._MAY_BE_VOLATILE.search(leaf) is not None else None
            )
            if text_kind is not None:
                return True
        elif kind_of is int or kind_of is float:
            if leaf >= EPOCH_MIN_S and volatile_kind(leaf) is not None:
                return True
        elif kind_of is not bool and leaf is not None:
            return True
    return False


class _Text(str):
    """A ``str`` subclass: not plain JSON data, the full walk decides."""


_leaves = (
    _strings
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([EPOCH_MIN_S, 1_700_000_000, 1_700_000_000_123, 4_102_444_800])
    | st.floats(allow_nan=True)
    | st.booleans()
    | st.none()
    | st.builds(_Text, _strings)
)
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
    ),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None)
@given(value=_values)
@example(value={"path": "token/request/write/x.py", "range": {"start": 1, "end": 9}})
@example(value={"dir": "/tmp/x", "n": [1, 2.5, None, True]})
@example(value={"at": 1_700_000_000.5})
def test_the_inline_walk_answers_as_the_definition(value: Any) -> None:
    lint._KIND_SEEN.clear()
    assert lint._has_volatile(value) == _plain_has_volatile(value)
    # and again with every string remembered, as a long pass has them
    assert lint._has_volatile(value) == _plain_has_volatile(value)
