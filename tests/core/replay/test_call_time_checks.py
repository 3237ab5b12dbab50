"""A replayed call parses its entry's line at the call, by the engine's rules: the load
checks every line's top level, not what a response holds (a key repeated in a nested
object, nesting past the depth limit), so the call refuses such a line, naming the file,
the line and the field, and serves every other call (core/format/_view.py ``owned_entry``,
jsontext ``parse_json_checked``: orjson's re-encoding proves the depth up to 254 levels,
the exact checks run past it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core import CassetteFormatError, Replayer, load
from cassette_tui.core.format.depth import MAX_DEPTH


def _nested(depth: int, leaf: str = "1") -> str:
    return "[" * (depth - 1) + leaf + "]" * (depth - 1)


#: (name, response as written in the line, error expected at its call or None)
CASES = [
    ("nested repeat", '{"a": {"k": 1, "k": 2}}', r"duplicate key 'k' in \$\.response\.a"),
    ("repeat hidden by an escaped colon", '{"s": 1, "s": "\\u003a"}', "duplicate key 's'"),
    ("too deep", _nested(MAX_DEPTH + 5), "nested too deeply"),
    ("past orjson's 254 levels, within the limit", _nested(300), None),
    ("past orjson's 254 levels, a repeat inside", _nested(300, '{"k": 1, "k": 2}'), "dup"),
    ("an integer past 64 bits", '{"n": 18446744073709551617}', None),
    ("past 64 bits and a repeat", '{"n": 18446744073709551617, "n": 1}', "duplicate key 'n'"),
]


def _write(path: Path, response: str) -> None:
    """Three calls, compact as the recorder writes them; the middle one answers
    ``response`` (written as given: the JSON text may repeat a key)."""
    lines = []
    for seq, body in ((1, '{"ok": 1}'), (2, response), (3, '{"ok": 3}')):
        args = json.dumps({"q": seq}, separators=(",", ":"))
        lines.append(f'{{"seq":{seq},"tool":"t","args":{args},"response":{body}}}\n')
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize(("name", "response", "error"), CASES, ids=[c[0] for c in CASES])
def test_a_call_refuses_its_bad_line_and_serves_the_others(
    tmp_path: Path, name: str, response: str, error: str | None
) -> None:
    path = tmp_path / "c.jsonl"
    _write(path, response)
    cassette = load(path)  # the top level of every line is sound: the load indexes it
    replay = Replayer(cassette)
    assert replay("t", {"q": 1}) == {"ok": 1}
    if error is None:
        assert replay("t", {"q": 2}) == json.loads(response)
    else:
        with pytest.raises(CassetteFormatError, match=error) as info:
            replay("t", {"q": 2})
        assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, "response")
    assert replay("t", {"q": 3}) == {"ok": 3}


def test_a_big_integer_is_served_exact(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    _write(path, '{"n": 18446744073709551617}')
    replay = Replayer(load(path))
    replay("t", {"q": 1})
    got = replay("t", {"q": 2})["n"]
    assert type(got) is int and got == 2**64 + 1
