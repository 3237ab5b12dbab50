"""The args digest is the article's formula, byte for byte (core/format/digest.py)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest
from cassette_tui.core import canonical_json
from cassette_tui.core.format.digest import _may_not_be_canonical, digest, fast_digest
from hypothesis import example, given
from hypothesis import strategies as st


def article_digest(args: Any) -> str:
    """The article's reference, written out here on purpose (not imported)."""
    text = json.dumps(args, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize(
    "args",
    [
        {"q": "retry budget", "top_k": 5},
        {"q": "café ☕ 日本語 🎉"},
        {"n": 150},
        {"n": 150.0},
        {"deep": [[1, [2, [3, []]]], {"x": [None, True, False]}]},
        {},
        {"empty": {}, "list": []},
        {"del": "\x7f", "nul": "\x00"},
        {"big": 2**80},
        {"tiny": 1e-300},
    ],
)
def test_digest_matches_the_article_formula(args: Any) -> None:
    assert digest(args) == article_digest(args)
    assert digest(args).startswith("sha256:")
    assert len(digest(args)) == len("sha256:") + 16


def test_int_and_float_are_different_calls() -> None:
    assert digest({"n": 150}) != digest({"n": 150.0})


def test_key_order_does_not_matter_but_list_order_does() -> None:
    assert digest({"a": 1, "b": {"c": 2, "d": 3}}) == digest({"b": {"d": 3, "c": 2}, "a": 1})
    assert digest({"a": [1, 2]}) != digest({"a": [2, 1]})


def test_non_ascii_is_escaped_in_canonical_json() -> None:
    assert canonical_json({"q": "é"}) == '{"q":"\\u00e9"}'


def test_known_digest_of_the_real_bugcase() -> None:
    # 05_repeated_identical_calls stores this digest for {"job_id": "J-7"}
    assert digest({"job_id": "J-7"}) == "sha256:d3e0185d0125ee5b"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_digest_equals_formula_on_any_json(value: Any) -> None:
    assert digest(value) == article_digest(value)


_NOT_CANONICAL = re.compile(rb"[\x7f-\xff]|\d[eE]|0\.0000")


@given(
    st.binary(max_size=40)
    | st.text(alphabet="0123456789eE.x\x7f\xe9 ", max_size=20).map(lambda t: t.encode("utf-8"))
)
@example(b"1e5")
@example(b"0E")
@example(b"0.00001")
@example(b"\x7f")
@example(b"e1")
def test_the_canonical_guard_is_the_regex_it_replaced(out: bytes) -> None:
    """``_may_not_be_canonical`` (byte tests, session 6) says what the regex did."""
    assert _may_not_be_canonical(out) == (_NOT_CANONICAL.search(out) is not None)


@given(json_values)
def test_the_fast_digest_is_the_digest_or_declines(value: Any) -> None:
    assert fast_digest(value) in (None, digest(value))
