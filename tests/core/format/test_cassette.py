"""Reading and writing cassette files (core/format/cassette.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import CassetteFormatError, Entry, load, save
from cassette_tui.core.format.digest import digest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GOOD = '{"seq":1,"tool":"t","args":{"q":1},"response":{"ok":true}}'


def write(tmp_path: Path, *lines: str, name: str = "c.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "field", "reason"),
    [
        ("[1, 2]", None, "not a JSON object"),
        ('{"tool":"t","args":{},"response":1}', "seq", "missing"),
        ('{"seq":1,"args":{},"response":1}', "tool", "missing"),
        ('{"seq":1,"tool":"t","response":1}', "args", "missing"),
        ('{"seq":0,"tool":"t","args":{},"response":1}', "seq", "positive integer"),
        ('{"seq":1.0,"tool":"t","args":{},"response":1}', "seq", "positive integer"),
        ('{"seq":1,"tool":"","args":{},"response":1}', "tool", "non-empty string"),
        ('{"seq":1,"tool":"t","args":{},"response":1,"error":{}}', "response", "both"),
        ('{"seq":1,"tool":"t","args":{}}', "response", "neither"),
        ('{"seq":1,"tool":"t","args":{},"error":"boom"}', "error", "expected an object"),
        ('{"seq":1,"tool":"t","args":{},"error":{"type":"E"}}', "error", "'message'"),
        ('{"seq":1,"tool":"t","args":{},"args_digest":5,"response":1}', "args_digest", "string"),
        ('{"seq":1,"tool":"t",', None, "not valid JSON"),
    ],
)
def test_every_format_error_names_file_line_and_field(
    tmp_path: Path, line: str, field: str | None, reason: str
) -> None:
    path = write(tmp_path, GOOD, "", line, GOOD.replace('"seq":1', '"seq":3'))
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    err = info.value
    assert (err.path, err.line, err.field) == (str(path), 3, field)
    assert reason in str(err)
    assert str(err).startswith(f"{path}:3: ")
    assert not err.truncated


def test_empty_file_is_a_valid_cassette(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert len(load(path)) == 0
    path.write_bytes(b"\n  \n")
    assert len(load(path)) == 0


@pytest.mark.parametrize(
    ("last", "cut"),
    [
        (b'{"seq":2,"tool":"t","args":{},"response":{"a":"xy', True),  # inside a string
        (b'{"seq":2,"tool":"t","args":{},"response":{"a":1}', True),  # a close missing
        (b'{"seq":2,"tool":"t","args":{},"response":', True),  # a value expected at the end
        (b'{"seq":2,"tool":"t","args":{},"response":tru}', False),  # whole, a bad value
        (b'{"seq":2,"tool":"t","args":{},"response":{"a":1}}}', False),  # whole, one close too many
    ],
)
def test_only_a_last_line_that_runs_out_is_cut_mid_write(
    tmp_path: Path, last: bytes, cut: bool
) -> None:
    """A last line with no line end is "cut mid-write" only when its JSON runs out before
    it is complete; a whole line with a bad value in it is a plain bad line."""
    path = tmp_path / "c.jsonl"
    path.write_bytes(GOOD.encode() + b"\n" + last)
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    assert info.value.line == 2
    assert info.value.truncated is cut
    assert ("cut mid-write" in str(info.value)) is cut


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteFormatError, match="no such file") as info:
        load(tmp_path / "nope.jsonl")
    assert info.value.line is None


def test_truncated_last_line_strict_and_lenient(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_bytes((GOOD + "\n" + GOOD.replace("1", "2", 1) + "\n").encode() + b'{"seq":3,"to')
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    assert info.value.line == 3 and info.value.truncated
    assert "cut mid-write" in str(info.value)
    cassette = load(path, lenient=True)
    assert [e.seq for e in cassette] == [1, 2]
    assert cassette.report.dropped_lines == 1
    assert cassette.report.first_dropped_line == 3
    assert cassette.report.truncated


def test_a_bad_line_in_the_middle_is_not_a_truncation(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD, "{oops", GOOD.replace('"seq":1', '"seq":2'))
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    assert info.value.line == 2 and not info.value.truncated
    lenient = load(path, lenient=True)
    assert len(lenient) == 1 and lenient.report.dropped_lines == 2


def test_a_bad_response_is_reported_when_the_entry_is_read(tmp_path: Path) -> None:
    # the load indexes lines without parsing responses; a broken one is caught on access
    path = write(tmp_path, '{"args":{},"response":{"a":[1,},"seq":1,"tool":"t"}')
    try:
        cassette = load(path)
    except CassetteFormatError as exc:
        assert exc.line == 1  # parsed in full: also fine
        return
    with pytest.raises(CassetteFormatError) as info:
        cassette[0]
    assert (info.value.line, info.value.field) == (1, "response")


def test_unknown_fields_round_trip_unchanged(tmp_path: Path) -> None:
    line = {
        "seq": 1,
        "tool": "t",
        "args": {"q": "é"},
        "response": [1, 2.5, None],
        "recorded_at": "2024-05-15T15:00:03Z",
        "duration_ms": 12.5,
        "x_vendor": {"nested": [True]},
    }
    src = write(tmp_path, json.dumps(line))
    entry = load(src)[0]
    assert entry.extra == {
        "recorded_at": "2024-05-15T15:00:03Z",
        "duration_ms": 12.5,
        "x_vendor": {"nested": [True]},
    }
    out = save(load(src), tmp_path / "out.jsonl")
    again = json.loads(out.read_text(encoding="utf-8"))
    assert again == {**line, "args_digest": digest({"q": "é"})}


def test_save_refuses_to_overwrite_without_the_flag(tmp_path: Path) -> None:
    src = write(tmp_path, GOOD)
    target = write(tmp_path, GOOD.replace('"q":1', '"q":2'), name="target.jsonl")
    before = target.read_bytes()
    with pytest.raises(FileExistsError, match="overwrite"):
        save(load(src), target)
    assert target.read_bytes() == before
    save(load(src), target, overwrite=True)
    assert load(target)[0].args == {"q": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl", "target.jsonl"]


def test_utf8_whatever_the_locale(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from cassette_tui.core import load, save\n"
        "c = load(sys.argv[1])\n"
        "assert c[0].args == {'q': 'caf\\u00e9 \\u2615 \\U0001f389'}, c[0].args\n"
        "save(c, sys.argv[2])\n"
    )
    src = tmp_path / "u.jsonl"
    src.write_bytes('{"seq":1,"tool":"t","args":{"q":"café ☕ 🎉"},"response":"日本"}\n'.encode())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIO"))}
    env.update(LC_ALL="C", LANG="C", PYTHONUTF8="0")
    out = tmp_path / "out.jsonl"
    subprocess.run([sys.executable, "-c", code, str(src), str(out)], env=env, check=True)
    assert load(out)[0].response == "日本"
    assert "café ☕ 🎉" in out.read_bytes().decode("utf-8")


def test_sorted_keys_and_response_last_lines_index_the_same(tmp_path: Path) -> None:
    resp = {"hits": [{"seq": 9, "response": "x", "t": 'a,"seq":'}], "n": 2}
    args = {"q": "x", "response": {"seq": 1}}
    lines = [
        json.dumps({"seq": 1, "tool": "t", "args": args, "response": resp}, sort_keys=True),
        json.dumps({"seq": 2, "tool": "t", "args": args, "response": resp}),
        json.dumps({"response": resp, "seq": 3, "tool": "t", "args": args}),
        json.dumps({"seq": 4, "tool": "t", "args": args, "error": {"type": "E", "message": "m"}}),
    ]
    cassette = load(write(tmp_path, *lines))
    assert [cassette.seq(i) for i in range(4)] == [1, 2, 3, 4]
    assert {cassette.digest(i) for i in range(4)} == {digest(args)}
    assert [e.response for e in cassette][:3] == [resp] * 3
    assert cassette[3].error == {"type": "E", "message": "m"}


json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_value = st.recursive(
    json_leaf,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
    max_leaves=10,
)
entries = st.lists(
    st.builds(
        lambda tool, args, resp, err, extra: (tool, args, resp, err, extra),
        st.text(min_size=1, max_size=8),
        json_value,
        json_value,
        st.booleans(),
        st.dictionaries(st.sampled_from(["recorded_at", "duration_ms", "x"]), json_value),
    ),
    max_size=6,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries)
def test_load_save_round_trip(tmp_path: Path, items: list[Any]) -> None:
    made = [
        Entry(
            seq,
            tool,
            args,
            response=None if err else resp,
            error={"type": "E", "message": str(resp)} if err else None,
            extra=extra,
        )
        for seq, (tool, args, resp, err, extra) in enumerate(items, 1)
    ]
    path = save(made, tmp_path / "rt.jsonl", overwrite=True)
    loaded = load(path)
    assert len(loaded) == len(made)
    for i, (a, b) in enumerate(zip(made, loaded, strict=True)):
        assert (b.seq, b.tool, b.args, b.response, b.error, b.extra) == (
            a.seq,
            a.tool,
            a.args,
            a.response,
            a.error,
            a.extra,
        )
        assert loaded.digest(i) == digest(a.args) == b.args_digest


@pytest.mark.parametrize("seq", [2**63, 2**64 - 1, 2**64, 10**23])
def test_a_seq_past_64_bits_is_a_format_error_naming_the_line(tmp_path: Path, seq: int) -> None:
    """Found by a tester (session 6): a seq of 2**63 or more crashed the load with an
    ``OverflowError`` traceback (the index keeps seqs as 64-bit integers)."""
    path = tmp_path / "big.jsonl"
    first = {"seq": 1, "tool": "t", "args": {}, "response": 1}
    path.write_text(json.dumps(first) + "\n" + json.dumps({**first, "seq": seq}) + "\n")
    with pytest.raises(CassetteFormatError) as err:
        load(path)
    assert err.value.line == 2 and err.value.field == "seq"
    assert "at most 9223372036854775807" in str(err.value)
    path.write_text(json.dumps({**first, "seq": 2**63 - 1}) + "\n")
    assert load(path).seqs == [2**63 - 1]


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    layout=st.lists(st.sampled_from(["entry", "blank", "spaces", "error"]), max_size=30),
    last_newline=st.booleans(),
)
def test_line_numbers_and_raw_lines_are_where_the_entries_are_in_the_file(
    tmp_path: Path, layout: list[str], last_newline: bool
) -> None:
    """The line numbers are built from the blank lines seen (``_line_numbers``); each must
    be the entry's line in the file, counted from its bytes, and its raw line that line."""
    text = {
        "blank": "",
        "spaces": " \t ",
        "entry": '{{"seq": {n}, "tool": "t", "args": {{"n": {n}}}, "response": {n}}}',
        "error": '{{"seq":{n},"tool":"t","args":{{}},"error":{{"type":"E","message":"m"}}}}',
    }
    lines = [text[kind].format(n=i + 1) for i, kind in enumerate(layout)]
    data = ("\n".join(lines) + ("\n" if last_newline else "")).encode()
    path = tmp_path / "c.jsonl"
    path.write_bytes(data)
    c = load(path)
    assert len(c) == sum(kind in ("entry", "error") for kind in layout)
    file_lines = data.split(b"\n")
    for i in range(len(c)):
        raw = c.raw_line(i).rstrip(b"\n")
        assert file_lines[c.line(i) - 1] == raw
        assert c[i].seq == c.line(i)  # each entry's seq is its line number here
