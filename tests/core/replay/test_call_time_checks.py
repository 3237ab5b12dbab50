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


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"seq":2.0,"tool":"t","args":{"q":2},"response":1}', "seq"),
        ('{"seq":2,"tool":"t","args":{"q":2},"response":1,"error":{"type":"E"}}', "response"),
        ('{"seq":2,"tool":"t","args":{"q":2},"error":{"type":"E"}}', "error"),
        ('{"seq":2,"tool":"t","args":{"q":2},"response":1,"args_digest":7}', "args_digest"),
        ('{"seq":2,"tool":"t","response":1}', "args"),
    ],
)
def test_a_line_changed_since_the_load_is_still_validated_at_its_call(
    tmp_path: Path, line: str, field: str
) -> None:
    """The call skips ``validate_record`` only for the shape the load proved valid (the
    index's seq and tool, args, a response, no error, a string digest or none): a line
    written over the loaded one in place, at the same length, after the file was opened
    for entry access, is refused as before, naming the field."""
    path = tmp_path / "c.jsonl"
    first = '{"seq":1,"tool":"t","args":{"q":1},"response":1}'
    good = '{"seq":2,"tool":"t","args":{"q":2},"response":1}'
    width = 100  # trailing spaces: every line below fits in the loaded one's place
    path.write_text(f"{first}\n{good.ljust(width)}\n", encoding="utf-8")
    cassette = load(path)
    cassette.owned_entry(0)  # entry access opens the file (the guard checks it then)
    with open(path, "r+b") as fh:
        fh.seek(len(first) + 1)
        fh.write(line.ljust(width).encode())
    with pytest.raises(CassetteFormatError) as info:
        cassette.owned_entry(1)
    assert (info.value.line, info.value.field) == (2, field)
