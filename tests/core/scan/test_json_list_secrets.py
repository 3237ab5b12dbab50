"""A long JSON list's secrets found from the bytes of its items (``json_list_secrets``:
msgspec's items, parts of them asked of the prefilter as written, the others parsed and
scanned, what each part holds kept with the text's layout, B reading A's) are those of
the parse and the scan of every node; ``mask_long_text`` through it gives what the old
way gave (a copy of it kept here) and what ``mask_value`` gives; it answers only for a
text orjson parses."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from cassette_tui.core.scan import json_list_secrets as module
from cassette_tui.core.scan import masking
from cassette_tui.core.scan._secret_detectors import is_secret_key, scan_string
from cassette_tui.core.scan.json_list_secrets import json_list_secrets
from cassette_tui.core.scan.json_text_secrets import json_text_secrets
from cassette_tui.core.scan.masking import mask_json_text, mask_value
from cassette_tui.core.scan.string_secrets import (
    PROVE_FREE_MIN,
    json_container,
    prefilter_free,
    text_secrets,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.core.scan.test_json_text_secrets import values


@pytest.fixture(autouse=True)
def _no_parts_kept() -> None:
    module._SEEN.clear()


def _old_mask_long_text(text: str, key: str | None) -> str | None:
    """``masking.mask_long_text`` before the lists' items were read by msgspec (main at
    1ab12af): the whole text asked of the prefilter, then parsed, then its parts asked."""
    if key is not None and is_secret_key(key):
        return None
    inner: Any = None
    if json_container(text):
        if prefilter_free(text, key):
            return text
        try:
            inner = orjson.loads(text)
        except orjson.JSONDecodeError:
            inner = None
    if isinstance(inner, dict | list):
        return mask_json_text(text, inner, key, asked=True)
    pairs = text_secrets(text, key) if len(text) >= PROVE_FREE_MIN else None
    if pairs is None:
        masked: str = mask_value(text, key)
        return masked
    secrets = [s for s, _ in pairs if not masking._MASKED.fullmatch(s)]
    return masking._mask_long_text(text, secrets) if secrets else text


def _scanned(text: str) -> set[str]:
    return {secret for secret, _, _ in scan_string(text, None)}


#: the layouts a JSON text may have: compact, json's default, indented, blank space
LAYOUTS = [
    {"separators": (",", ":")},
    {},
    {"indent": 2},
    {"separators": (" ,\n", " :\t")},
]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inner=st.lists(values, min_size=2, max_size=40),
    parts=st.sampled_from([2, 3, 16, 100]),
    layout=st.sampled_from(range(len(LAYOUTS))),
    ascii_only=st.booleans(),
    key=st.sampled_from([None, "text", "request_id", "content", "pass word"]),
    tail=st.sampled_from(["", " (changed)", "x"]),
)
@example(  # a key named so among many free objects, the last object changed (B's text)
    inner=[{"n": i, "text": "the quick brown fox"} for i in range(30)]
    + [{"text": "changed", "api_key": "sk-proj-aB3_dE-9aB3_dE-9aB3_dE-9"}],
    parts=16,
    layout=1,
    ascii_only=False,
    key="text",
    tail="",
)
@example(  # an object key found by its high-entropy run alone (no pattern of the prefilter hits)
    inner=[None, {"Q2hhbmdlIHRoaXMgcGFzc3dvcmQgc29vbiE9kZ3xY7pW": None}],
    parts=2,
    layout=0,
    ascii_only=False,
    key=None,
    tail="",
)
def test_the_items_give_the_secrets_of_the_parse(
    inner: list[Any], parts: int, layout: int, ascii_only: bool, key: str | None, tail: str
) -> None:
    try:
        text = json.dumps(inner, ensure_ascii=ascii_only, allow_nan=False, **LAYOUTS[layout])
    except ValueError:
        return
    found = json_list_secrets(text, parts)
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        parsed = None
    if found is not None:  # only a list orjson parses, with the parse's secrets
        assert isinstance(parsed, list)
        assert found == json_text_secrets(parsed, first_parts=parts) == _scanned(text)
        assert json_list_secrets(text, parts) == found  # its parts kept: the same again
    text += tail
    masked = masking.mask_long_text(text, key)
    assert masked == _old_mask_long_text(text, key)
    if masked is not None:
        assert masked == mask_value(text, key)


#: bits of JSON and of what is almost JSON: numbers orjson refuses (past a float's
#: range), blank space JSON has not, nesting, strings with and without escapes
_BITS = ["[", "]", "{", "}", ",", ":", " ", "\n", "\t", "\x0c", "\u00a0", '"a"', '"k"',
         '"\\u00e9"', '"\\ud800"', '"é"', "1", "-", "0", ".", "5", "e", "E", "+", "1e999",
         "1e308", "9" * 310, "9" * 40, "true", "nul", "null", "NaN", "[" * 1100, "]" * 1100,
         '"x"', "01"]  # fmt: skip


@settings(max_examples=1000, deadline=None)
@given(bits=st.lists(st.sampled_from(_BITS), max_size=30), wrap=st.booleans())
def test_an_answer_only_for_a_list_orjson_parses(bits: list[str], wrap: bool) -> None:
    text = "".join(bits)
    if wrap:
        text = f"[{text}, 1]"
    found = json_list_secrets(text, 2)
    if found is not None:
        parsed = orjson.loads(text)  # raises if msgspec took what orjson refuses
        assert isinstance(parsed, list) and len(parsed) >= 2
        assert found == json_text_secrets(parsed, first_parts=2)


@pytest.mark.parametrize(
    "text",
    [
        '[{"a": 1e999}, 2]',  # orjson refuses the float; msgspec does not
        "[" + "9" * 310 + ", 2]",
        "[" + "[" * 1010 + "]" * 1010 + ", 2]",  # msgspec refuses the depth; orjson not
        '[{"note": "caf\\u00e9"}, 2]',  # an escape: its text is not its bytes
        '{"a": [1, 2]}',  # an object, not a list
    ],
)
def test_no_answer_where_the_parse_must_decide(text: str) -> None:
    assert json_list_secrets(text, 2) is None
    named = text.replace("[", '[{"password": "hunter2-rocks-42"}, ', 1)
    assert json_list_secrets(named, 2) is None
    assert masking.mask_long_text(named, None) == _old_mask_long_text(named, None)


def test_no_answer_for_a_list_of_one_item() -> None:
    assert json_list_secrets('[{"password": "hunter2-rocks-42"}]', 2) is None


def _answer(n: int, tail: str = "") -> str:
    nodes: list[dict[str, Any]] = [
        {"n": i, "text": f"line {i}: the quick brown fox jumps over the lazy dog, ok"}
        for i in range(n)
    ]
    nodes[-1]["text"] += tail
    for at in (0, n // 2, n - 1):
        nodes[at]["api_key"] = f"sk-proj-{'aB3_dE-9' * 5}{at}"
    return json.dumps(nodes)


def test_b_reads_the_parts_a_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two sides of a drift: B's parts are A's but for its last, which alone is asked
    of the prefilter again; both masked as the old way masked them."""
    a, b = _answer(4_000), _answer(4_000, " (changed)")
    asked: list[bytes] = []
    part_secrets = module._part_secrets
    monkeypatch.setattr(
        module, "_part_secrets", lambda doc: (asked.append(doc), part_secrets(doc))[1]
    )
    masked_a = masking.mask_long_text(a, "text")
    first = len(asked)
    masked_b = masking.mask_long_text(b, "text")
    assert first == masking._parts(a) and len(asked) == first + 1
    assert b"(changed)" in asked[-1]
    module._SEEN.clear()
    assert masked_a == _old_mask_long_text(a, "text") == mask_value(a, "text")
    assert masked_b == _old_mask_long_text(b, "text") == mask_value(b, "text")
    assert "sk-proj-aB3" not in masked_a and "sk-proj-aB3" not in masked_b


def test_a_part_kept_is_keyed_by_its_bytes() -> None:
    """Two lists whose parts differ by one byte each: none is taken for the other."""
    free = json.dumps([{"text": "the quick brown fox"}] * 40)
    named = free.replace('"text"', '"password"', 1)
    assert json_list_secrets(free, 2) == set()
    assert json_list_secrets(named, 2) == {"the quick brown fox"}
    assert json_list_secrets(free, 2) == set()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inner=st.lists(values, min_size=2, max_size=30),
    other=values,
    at=st.integers(min_value=0, max_value=40),
    how=st.sampled_from(["replace", "insert", "delete", "append", "tail", "same"]),
    parts=st.sampled_from([2, 3, 16]),
    layout=st.sampled_from(range(len(LAYOUTS))),
    key=st.sampled_from([None, "text", "content"]),
)
@example(  # a named key only in B's changed item, past A's first parts
    inner=[{"n": i, "text": "the quick brown fox"} for i in range(30)],
    other={"api_key": "sk-proj-aB3_dE-9aB3_dE-9aB3_dE-9"},
    at=29,
    how="replace",
    parts=16,
    layout=1,
    key=None,
)
def test_b_after_a_as_the_old_way(
    inner: list[Any],
    other: Any,
    at: int,
    how: str,
    parts: int,
    layout: int,
    key: str | None,
) -> None:
    """B read after A (A's parts reused up to where B differs, the rest cut by msgspec)
    gives what B alone gives and what the old way masks, for any change anywhere."""
    changed = list(inner)
    at = min(at, len(changed) - 1)
    if how == "replace":
        changed[at] = other
    elif how == "insert":
        changed.insert(at, other)
    elif how == "delete":
        del changed[at]
    elif how == "append":
        changed.append(other)
    try:
        a, b = (
            json.dumps(v, ensure_ascii=False, allow_nan=False, **LAYOUTS[layout])
            for v in (inner, changed)
        )
    except ValueError:
        return
    if how == "tail":  # blank space or a separator other than A's past A's first parts
        b = b[:-1] + " ,1]"
    module._SEEN.clear()
    alone = json_list_secrets(b, parts)
    module._SEEN.clear()
    json_list_secrets(a, parts)
    assert json_list_secrets(b, parts) == alone
    module._SEEN.clear()
    masking.mask_long_text(a, key)
    assert masking.mask_long_text(b, key) == _old_mask_long_text(b, key)


def test_b_cut_from_where_it_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    """B's items are cut by msgspec only from the part where B first differs from A: the
    parts before are A's, compared byte for byte, not decoded again."""
    a, b = _answer(4_000), _answer(4_000, " (changed)")
    decoded: list[int] = []
    items = module._ITEMS

    class Counting:
        def decode(self, data: bytes) -> Any:
            decoded.append(len(data))
            return items.decode(data)

    monkeypatch.setattr(module, "_ITEMS", Counting())
    assert json_list_secrets(a, 16) == json_list_secrets(b, 16) != set()
    assert decoded[0] == len(a) and decoded[1] < len(b) // 8


def test_other_blank_space_keeps_no_layout() -> None:
    """A text whose separators are not one of ``_SEPS`` throughout keeps no layout: the
    next text is read whole."""
    text = json.dumps([{"text": "the quick brown fox"}] * 40)
    uneven = text.replace(", ", ",", 1)
    assert json_list_secrets(uneven, 4) == set()
    assert not module._SEEN
    named = uneven.replace('"text"', '"password"', 39)
    assert json_list_secrets(named, 4) == {"the quick brown fox"}


@pytest.fixture
def raised_recursion_limit() -> Iterator[None]:
    """The interpreter's recursion limit at 10,000 (as hypothesis raises it) for a test."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


@pytest.mark.parametrize("levels", [1_000, 1_023, 1_024, 1_025, 1_100, 3_000])
@pytest.mark.usefixtures("raised_recursion_limit")
def test_deep_nesting_under_a_raised_recursion_limit_answers_as_orjson_parses(
    levels: int,
) -> None:
    """msgspec's nesting limit is the interpreter's recursion limit: under a raised one
    it took a list nested 1,101 deep that orjson refuses, and the text got an answer (a
    seed-dependent failure of ``test_an_answer_only_for_a_list_orjson_parses``)."""
    text = "[" + "[" * levels + "]" * levels + ', {"n": 1}]'
    found = json_list_secrets(text, 2)
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        assert found is None
    else:
        assert found == json_text_secrets(parsed, first_parts=2)
