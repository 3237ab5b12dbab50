"""The detail pane's lines of a value are built from the lines shown only
(``tui/text/shown.py``), and are the lines the whole value gives: the whole value masked
(``mask_value``), pretty-printed and cut (``pretty_lines``), as the pane built them before."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from cassette_tui.core.scan.masking import mask_value
from cassette_tui.tui.text import shown
from cassette_tui.tui.text.safe import pretty_lines
from cassette_tui.tui.text.shown import SCAN_MARGIN, shown_lines
from hypothesis import given, settings
from hypothesis import strategies as st

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"

texts = st.one_of(
    st.text(max_size=30),
    st.sampled_from([GITHUB, f"token {GITHUB} here", "hunter2-pw", '{"password": "x1y2z3w4"}']),
)
keys = st.one_of(st.text(max_size=8), st.sampled_from(["password", "api_key", "_binary", "q"]))
values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(keys, inner, max_size=6)),
    max_leaves=40,
)


def whole(value: Any, max_lines: int, max_chars: int, reveal: bool) -> tuple[list[str], int]:
    return pretty_lines(
        value if reveal else mask_value(value), max_lines=max_lines, max_chars=max_chars
    )


@settings(max_examples=300, deadline=None)
@given(values, st.integers(1, 30), st.integers(1, 40), st.booleans())
def test_the_lines_shown_are_those_of_the_whole_value(
    value: Any, max_lines: int, max_chars: int, reveal: bool
) -> None:
    assert shown_lines(value, max_lines=max_lines, max_chars=max_chars, reveal=reveal) == whole(
        value, max_lines, max_chars, reveal
    )


def test_a_long_list_is_masked_in_the_lines_shown_and_counts_the_rest() -> None:
    value = {"content": [{"type": "text", "text": f"line {i}"} for i in range(40_000)]}
    value["content"][1]["text"] = f"key {GITHUB}"
    lines, cut = shown_lines(value, max_lines=12, max_chars=160, reveal=False)
    assert (lines, cut) == whole(value, 12, 160, False)
    assert GITHUB not in "\n".join(lines) and "ghp_…(40 chars)" in "\n".join(lines)
    assert cut == len(json.dumps(value, indent=2).split("\n")) - 12


def test_a_long_string_is_scanned_around_the_part_shown(monkeypatch: Any) -> None:
    """A secret across the cut is masked; the count of characters cut is the string's."""
    monkeypatch.setattr(shown, "SCAN_MARGIN", 100)
    text = "x " * 60 + GITHUB + " y" * 5_000
    lines, cut = shown_lines(text, max_lines=12, max_chars=130, reveal=False)
    assert GITHUB[:10] not in lines[0] and "«ghp_" in lines[0]
    masked = mask_value(text)
    assert lines[0].endswith(f'…(+{len(masked) - 130} chars)"') and cut == 0
    assert SCAN_MARGIN >= 4096  # a PEM key that starts in the part shown ends in the scan


def test_a_binary_envelope_cut_short_is_still_not_scanned() -> None:
    envelope = {"data": GITHUB, "other": 1, "_binary": True}
    value = {"a": list(range(5)), "blob": envelope}
    assert shown_lines(value, max_lines=9, max_chars=80, reveal=False) == whole(value, 9, 80, False)


@settings(max_examples=300, deadline=None)
@given(
    values,
    st.integers(1, 12),
    st.integers(1, 60),
    st.booleans(),
    st.sampled_from(["pretty", "spaced", "minified"]),
)
def test_a_json_text_is_masked_in_the_part_shown_as_whole(
    inner: Any, max_lines: int, max_chars: int, reveal: bool, layout: str
) -> None:
    """An MCP answer whose text is JSON: the nodes that start in the characters shown are
    scanned, not the whole text (any text past the window counts as long here), however
    the text is laid out. The characters shown are the same; the count of those cut is of
    the text as stored past the part scanned (a secret there is not masked to be counted)."""
    if not isinstance(inner, dict | list):
        inner = [inner]
    try:
        # minified: the nodes start as soon as a JSON text lets them (``_json_head``'s bound)
        text = json.dumps(
            inner,
            ensure_ascii=False,
            indent=2 if layout == "pretty" else None,
            separators=(",", ":") if layout == "minified" else None,
            allow_nan=False,
        )
    except ValueError:
        return
    value = {"content": [{"type": "text", "text": text}]}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(shown, "SCAN_MARGIN", 0)
        got = shown_lines(value, max_lines=max_lines, max_chars=max_chars, reveal=reveal)
    expected = whole(value, max_lines, max_chars, reveal)
    assert got[1] == expected[1]
    assert [_uncounted(line) for line in got[0]] == [_uncounted(line) for line in expected[0]]


def _uncounted(line: str) -> str:
    return re.sub(r"…\(\+\d+ chars\)", "…(+N chars)", line)


def test_a_long_json_answer_shows_its_start_masked() -> None:
    inner = [{"n": i, "text": f"line {i}"} for i in range(40_000)]
    inner[2]["api_key"] = "sk-live-aBcDeFgHiJkLmNoPqRsT"
    value = {"content": [{"type": "text", "text": json.dumps(inner)}]}
    lines, cut = shown_lines(value, max_lines=12, max_chars=160, reveal=False)
    assert (lines, cut) == whole(value, 12, 160, False)
    assert "aBcDeFgHiJkLmNoPqRsT" not in "\n".join(lines)


def _starts(value: Any, item_sep: str, key_sep: str, ascii_only: bool) -> tuple[str, dict]:
    """``json.dumps(value)`` with these separators, and where each node starts in it (by
    path; an object member at its key)."""
    starts: dict[tuple, int] = {}
    out: list[str] = []
    at = 0

    def put(part: str) -> None:
        nonlocal at
        out.append(part)
        at += len(part)

    def walk(node: Any, path: tuple) -> None:
        if isinstance(node, dict):
            starts.setdefault(path, at)
            put("{")
            for index, (key, item) in enumerate(node.items()):
                put(item_sep if index else "")
                starts[(*path, key)] = at
                put(json.dumps(key, ensure_ascii=ascii_only) + key_sep)
                walk(item, (*path, key))
            put("}")
        elif isinstance(node, list):
            starts.setdefault(path, at)
            put("[")
            for index, item in enumerate(node):
                put(item_sep if index else "")
                walk(item, (*path, index))
            put("]")
        else:
            starts.setdefault(path, at)
            put(json.dumps(node, ensure_ascii=ascii_only))

    walk(value, ())
    return "".join(out), starts


def _paths(value: Any, path: tuple = ()) -> set[tuple]:
    found = {path}
    if isinstance(value, dict):
        for key, item in value.items():
            found |= _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found |= _paths(item, (*path, index))
    return found


@settings(max_examples=300, deadline=None)
@given(values, st.booleans(), st.booleans())
def test_the_head_of_a_json_text_holds_every_node_that_starts_in_it(
    inner: Any, spaced: bool, ascii_only: bool
) -> None:
    """``_json_head`` keeps each node that starts in the first ``upto`` characters of any
    JSON text of the value, the tightest (no whitespace) included."""
    if not isinstance(inner, dict | list):
        inner = [inner]
    item_sep, key_sep = (", ", ": ") if spaced else (",", ":")
    try:
        expected = json.dumps(inner, ensure_ascii=ascii_only, separators=(item_sep, key_sep),
                              allow_nan=False)  # fmt: skip
    except ValueError:
        return
    text, starts = _starts(inner, item_sep, key_sep, ascii_only)
    assert text == expected
    parsed = json.loads(text)
    for upto in range(len(text) + 1):
        head, _ = shown._json_head(parsed, 0, upto)
        assert {path for path, at in starts.items() if at < upto} <= _paths(head), upto
