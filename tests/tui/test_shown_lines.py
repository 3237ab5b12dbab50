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
@given(values, st.integers(1, 12), st.integers(1, 60), st.booleans(), st.booleans())
def test_a_json_text_is_masked_in_the_part_shown_as_whole(
    inner: Any, max_lines: int, max_chars: int, reveal: bool, pretty: bool
) -> None:
    """An MCP answer whose text is JSON: the nodes that start in the characters shown are
    scanned, not the whole text (any text past the window counts as long here). The
    characters shown are the same; the count of those cut is of the text as stored past
    the part scanned (a secret there is not masked to be counted)."""
    if not isinstance(inner, dict | list):
        inner = [inner]
    try:
        text = json.dumps(inner, ensure_ascii=False, indent=2 if pretty else None, allow_nan=False)
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
