"""A JSON parse error reads as words with its position (``unterminated string starting at
column 51``), never the standard library's phrase cut from its position (``Unterminated
string starting at (column 51)``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core import CassetteFormatError, load
from cassette_tui.core.format.jsontext import JSONTooDeep, json_error_text
from cassette_tui.core.importers.detect import import_file

GOOD = '{"seq":1,"tool":"t","args":{},"response":1}\n'


def _error(text: str) -> json.JSONDecodeError:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc
    raise AssertionError(f"{text!r} parsed")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"q": "abc', "unterminated string starting at column 7"),
        ('{"q": "a\tb"}', "invalid control character at column 9"),
        ('{"q": }', "expecting value at column 7"),
        ('{"q": 1 "r": 2}', "expecting ',' delimiter at column 9"),
        ("{1: 2}", "expecting property name enclosed in double quotes at column 2"),
        ('{"q": 1} x', "extra data at column 10"),
        ('"\\x"', "invalid \\escape at column 2"),
    ],
)
def test_the_phrase_and_its_column(text: str, words: str) -> None:
    assert json_error_text(_error(text)) == words


def test_the_line_is_named_for_a_text_of_several_lines() -> None:
    error = _error('{\n  "q": 1,\n  "r": }')
    assert json_error_text(error, line=True) == "expecting value at line 3, column 8"
    assert json_error_text(error) == "expecting value at column 8"


def test_another_error_is_its_own_words() -> None:
    assert json_error_text(JSONTooDeep()) == str(JSONTooDeep())
    assert json_error_text(ValueError("bad")) == "bad"


def _load_error(path: Path) -> str:
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    return str(info.value)


def test_a_line_cut_in_the_middle_of_a_file(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text(GOOD + GOOD.replace("1", "2") + '{"seq":3,"tool":"t","args":{"q":"abc\n' + GOOD)
    message = _load_error(path)
    assert message.startswith(f"{path}:3: not valid JSON: "), message
    # the line's own newline is not "a control character" in the string: it was cut there
    assert message.endswith("not valid JSON: unterminated string starting at column 33"), message
    assert "(column" not in message and " at (" not in message


def test_a_cut_last_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text(GOOD + '{"seq":2,"tool":"t","args":{"q":"abc')
    message = _load_error(path)
    assert message.endswith("not valid JSON: unterminated string starting at column 33"), message


def test_an_import_names_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('[{"task_id": 1,\n  "reward": }]')
    with pytest.raises(CassetteFormatError) as info:
        import_file(path, "tau-bench")
    assert "not valid JSON (expecting value at line 2, column 13)" in str(info.value)
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"role": "user", "content": "x"}\n{"role": tr\n')
    with pytest.raises(CassetteFormatError) as info:
        import_file(chat, "openai")
    assert str(info.value) == f"{chat}:2: not valid JSON: expecting value at column 10"


def test_a_too_long_integer_is_named_by_its_field_not_by_a_string_or_float() -> None:
    from cassette_tui.core.format.jsontext import NumberTooLong, parse_json
    from cassette_tui.core.format.lines import error_field, json_reason

    long_int = "9" * 4301
    # digits in a string and in floats (no digit limit) come first and are passed over
    raw = (
        '{"seq": 1, "tool": "t", "note": "'
        + long_int
        + '", "f": [1.'
        + long_int
        + ", 1e-"
        + long_int
        + ", "
        + long_int
        + '.5], "args": {"k": [-'
        + long_int
        + "]}, "
        '"response": 1}\n'
    ).encode()
    with pytest.raises(NumberTooLong) as caught:
        parse_json(raw)
    assert caught.value.digits == 4301 and caught.value.limit == 4300
    assert error_field(caught.value, raw) == "args"
    reason = json_reason(caught.value, raw)
    assert "4301 digits" in reason and "set_int_max_str_digits" not in reason
    # at the limit it is read, exactly
    assert parse_json(('{"n": ' + "9" * 4300 + "}").encode())["n"] == int("9" * 4300)


def test_a_too_long_integer_is_named_by_its_top_level_key_property() -> None:
    from cassette_tui.core.format.jsontext import NumberTooLong, parse_json
    from cassette_tui.core.format.lines import error_field
    from hypothesis import given, settings
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=8,
    )
    marker = "@@LONG-INT@@"  # longer than any drawn text

    @settings(max_examples=60, deadline=None)
    @given(
        st.dictionaries(st.text(max_size=6), values, min_size=1, max_size=4),
        st.data(),
    )
    def check(record: dict, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(record)))
        record[key] = [record[key], marker]  # the long integer inside the key's value
        raw = json.dumps(record).replace(f'"{marker}"', "-" + "3" * 4400).encode()
        with pytest.raises(NumberTooLong) as caught:
            parse_json(raw)
        assert error_field(caught.value, raw) == key

    check()


@pytest.mark.parametrize("where", [1, 2])
def test_the_apps_open_names_a_too_long_integer_in_args(tmp_path: Path, where: int) -> None:
    # the app opens files through ``open_cassette`` (detection, then the load)
    from cassette_tui.core.importers.sources import open_cassette

    lines = [
        json.dumps({"seq": seq, "tool": "t", "args": {"n": seq}, "response": 1}) for seq in (1, 2)
    ]
    lines[where - 1] = lines[where - 1].replace(f'"n": {where}', '"n": ' + "5" * 4500)
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CassetteFormatError) as caught:
        cassette = open_cassette(path)
        list(cassette.entries_read())  # the response and args of every entry read
    assert (caught.value.line, caught.value.field) == (where, "args")
    assert "4500 digits" in str(caught.value)
