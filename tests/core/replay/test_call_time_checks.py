"""A replayer checks every line of its cassette fully when it starts, by the engine's
rules: the load checks every line's top level, not what an entry's values hold (a key
repeated in a nested object, nesting past the depth limit, integers past 64 bits), so the
replayer's start (``Replayer``, ``wrap_dispatcher`` in replay mode) refuses such a line,
naming the file, the line and the field, before any call (core/format/_answers.py
``check_every_line``, jsontext ``parse_json_checked``: orjson's re-encoding proves the
depth up to 254 levels, the exact checks run past it). A call then decodes its answer's
bytes afresh (or, the first time, the value the start parsed: test_answers_held_once.py);
bytes that no longer read as checked (the file written over since) send the
call to the entry's full parse, which refuses them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cassette_tui.core import Cassette, CassetteFormatError, Replayer, load, wrap_dispatcher
from cassette_tui.core.format import _answers
from cassette_tui.core.format.depth import MAX_DEPTH
from cassette_tui.core.keys.normalize import NormalizationRules


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
def test_the_replayers_start_refuses_a_bad_line_and_a_good_one_serves(
    tmp_path: Path, name: str, response: str, error: str | None
) -> None:
    path = tmp_path / "c.jsonl"
    _write(path, response)
    cassette = load(path)  # the top level of every line is sound: the load indexes it
    if error is not None:
        with pytest.raises(CassetteFormatError, match=error) as info:
            Replayer(cassette)
        assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, "response")
        return
    replay = Replayer(cassette)
    assert replay("t", {"q": 1}) == {"ok": 1}
    assert replay("t", {"q": 2}) == json.loads(response)
    assert replay("t", {"q": 3}) == {"ok": 3}


@pytest.mark.parametrize(("name", "response", "error"), [c for c in CASES if c[2]])
def test_a_replaying_wrapper_refuses_a_bad_line_when_it_is_made(
    tmp_path: Path, name: str, response: str, error: str
) -> None:
    path = tmp_path / "c.jsonl"
    _write(path, response)

    def live(tool: str, args: object) -> object:
        raise AssertionError("replay called the live tool")

    with pytest.raises(CassetteFormatError, match=error) as info:
        wrap_dispatcher(live, mode="replay", path=path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, "response")


def test_the_first_bad_line_in_the_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    lines = [
        '{"seq":1,"tool":"t","args":{"q":1},"response":1}',
        '{"seq":2,"tool":"t","args":{"q":2,"o":{"k":1,"k":2}},"response":1}',
        '{"seq":3,"tool":"t","args":{"q":3},"response":{"k":1,"k":2}}',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CassetteFormatError, match=r"duplicate key 'k' in \$\.args\.o") as info:
        Replayer(load(path))
    assert (info.value.line, info.value.field) == (2, "args")


@pytest.mark.parametrize("kept", [True, False], ids=["answers kept", "past the cap"])
def test_a_line_written_over_after_the_start_is_refused_at_its_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: bool
) -> None:
    """What the start could not check (bytes written in place of a checked line since)
    is refused at the call that reads them, by the entry's full parse; the other calls
    are served. A small cassette's first serve of an entry is the value the start
    parsed (``_answers.HELD_ANSWER_BYTES``, as the article's load): its bytes are read
    at the next serve."""
    if not kept:
        monkeypatch.setattr(_answers, "HELD_ANSWER_BYTES", 0)
    path = tmp_path / "c.jsonl"
    _write(path, '{"ok": 2}')
    replay = Replayer(load(path), repeat="last")
    text = path.read_bytes()
    at = text.index(b'{"ok": 2}')
    with open(path, "r+b") as fh:
        fh.seek(at)
        fh.write(b'{"ok": [}')  # the same length: the offsets still fall on lines
    assert replay("t", {"q": 1}) == {"ok": 1}
    if kept:
        assert replay("t", {"q": 2}) == {"ok": 2}  # checked at the start
    with pytest.raises(CassetteFormatError, match="changed on disk"):
        replay("t", {"q": 2})
    assert replay("t", {"q": 3}) == {"ok": 3}


def test_each_call_gets_its_own_objects(tmp_path: Path) -> None:
    """Each call gets an object of its own (bugcase 23: an agent that edits a replayed
    answer changes nothing another call gets; test_answers_held_once.py holds the kept
    answers of a small cassette)."""
    path = tmp_path / "c.jsonl"
    _write(path, '{"items": [{"sku": "PEN"}]}')
    replay = Replayer(load(path), repeat="last")
    first = replay("t", {"q": 2})
    first["items"].append("edited")
    again = replay("t", {"q": 2})
    assert again == {"items": [{"sku": "PEN"}]} and again is not first


def _keys(cassette: Cassette) -> tuple[list[str], list[int | None]]:
    return cassette.digests(), cassette.response_hashes()


@pytest.mark.parametrize("rules", [None, {"drop": ["$.q"]}], ids=["no rules", "drop q"])
def test_the_start_computes_the_same_keys_as_the_key_pass(
    tmp_path: Path, rules: dict | None
) -> None:
    """The start computes the replay keys and response hashes in its own read: the same
    values as the cassette's key pass, whatever the line (non-finite numbers written both
    ways, non-ASCII text, a big integer, an error entry, a stale stored digest)."""
    path = tmp_path / "c.jsonl"
    lines = [
        '{"seq":1,"tool":"t","args":{"q":1},"response":{"ok":1}}',
        '{"seq":2,"tool":"t","args":{"q":NaN,"x":1},"response":2}',
        '{"seq":3,"tool":"t","args":{"q":{"$numberDouble":"Infinity"}},"response":3}',
        '{"seq":4,"tool":"t","args":{"q":"caf\u00e9 東京"},"response":"ü"}',
        '{"seq":5,"tool":"t","args":{"q":18446744073709551617},"response":[1, 2]}',
        '{"seq":6,"tool":"t","args":{"q":6},"error":{"type":"E","message":"m"}}',
        '{"seq":7,"tool":"t","args":{"q":7},"args_digest":"sha256:0000000000000000",'
        '"response":{"n":NaN}}',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    normalize = NormalizationRules.from_mapping(rules) if rules else None
    want = _keys(load(path, rules=normalize))
    started = Replayer(load(path, rules=normalize))
    assert _keys(started.cassette) == want


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


@pytest.mark.parametrize(
    ("body", "want"),
    [
        ('{"n": NaN, "m": -Infinity}', {"n": math.nan, "m": -math.inf}),
        ('{"n": {"$numberDouble": "Infinity"}}', {"n": math.inf}),
        ('{"big": -9223372036854775809, "u": 18446744073709551615}', None),
        ('{"s": "\\ud800 lone", "t": "caf\\u00e9 \\n"}', None),
        ('{"f": [1e-7, 1.7976931348623157e308, 5e-324, -0.0, 1E400]}', None),
    ],
    ids=["bare NaN", "$numberDouble", "past 64 bits", "escapes", "floats"],
)
def test_every_answer_is_served_as_the_entry_parse_reads_it(
    tmp_path: Path, body: str, want: dict | None
) -> None:
    """Whatever the start read fast or left to the entry parse, a call is served what
    the entry parse reads (the view's ``owned_entry``: the engine's one reader)."""
    path = tmp_path / "c.jsonl"
    _write(path, body)
    expected = load(path).owned_entry(1).response
    got = Replayer(load(path))("t", {"q": 2})
    if want is not None:
        assert got.keys() == want.keys()
        for key, value in want.items():
            assert math.isnan(got[key]) if math.isnan(value) else got[key] == value
    assert repr(got) == repr(expected)  # NaN != NaN: compared by their text
    assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]


def test_only_plain_answers_are_read_from_their_bytes(tmp_path: Path) -> None:
    """The start keeps where a plain answer is (read and decoded at its call, orjson); an
    error, a ``$numberDouble``, an integer past 64 bits, a bare NaN or nesting past
    orjson's 254 levels is left to the entry parse at the call (exact)."""
    path = tmp_path / "c.jsonl"
    bodies = [
        ('"response":{"ok":[1,2.5,"x"]}', True),
        ('"error":{"type":"E","message":"m"}', False),
        ('"response":{"n":{"$numberDouble":"NaN"}}', False),
        ('"response":{"n":-9223372036854775809}', False),
        ('"response":{"n":NaN}', False),
        (f'"response":{_nested(300)}', False),
        ('"response":{"u":18446744073709551615}', True),
    ]
    path.write_text(
        "".join(
            f'{{"seq":{i},"tool":"t","args":{{"q":{i}}},{body}}}\n'
            for i, (body, _) in enumerate(bodies, 1)
        ),
        encoding="utf-8",
    )
    answers = load(path).checked_answers()
    assert answers is not None
    assert [answers.offsets[i] >= 0 for i in range(len(bodies))] == [p for _, p in bodies]
    assert answers.read(0) == {"ok": [1, 2.5, "x"]}
    assert answers.read(6) == {"u": 18446744073709551615}
