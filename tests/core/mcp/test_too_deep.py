"""The nesting check of a recorded call and answer without walking short lines
(``_recording._too_deep``, issue 31): it agrees with walking both values
(``depth_of``), whatever their nesting and the lines' lengths, the shortest line too deep
included."""

from __future__ import annotations

import json
from typing import Any

from cassette_tui.core.format.depth import MAX_DEPTH, depth_of
from cassette_tui.core.mcp._recording import _too_deep
from hypothesis import given
from hypothesis import strategies as st


def _nested(depth: int, kinds: list[bool], pad: str) -> Any:
    value: Any = pad
    for level in range(depth):
        value = {"k": value} if kinds[level % len(kinds)] else [value]
    return value


_values = st.builds(
    _nested,
    st.one_of(st.integers(0, 40), st.integers(MAX_DEPTH - 20, MAX_DEPTH + 20)),
    st.lists(st.booleans(), min_size=1, max_size=5),
    st.text(max_size=30),
)


@given(_values, _values, st.booleans())
def test_agrees_with_walking_both(call: Any, answer: Any, spaced: bool) -> None:
    separators = (", ", ": ") if spaced else (",", ":")
    request = json.dumps(call, separators=separators).encode()
    line = json.dumps(answer, separators=separators).encode() + b"\n"
    walked = depth_of(call) > MAX_DEPTH or depth_of(answer) > MAX_DEPTH
    assert _too_deep(request, line, call, answer) == walked


def test_the_shortest_line_too_deep() -> None:
    deepest = _nested(MAX_DEPTH + 1, [False], "")
    text = json.dumps(deepest, separators=(",", ":")).replace('""', "0").encode()
    assert len(text) == 2 * (MAX_DEPTH + 1) + 1
    assert _too_deep(text, b"", deepest, None)
    assert not _too_deep(text, b"", _nested(MAX_DEPTH, [False], ""), None)
