"""A key repeated at the top level of a line is a format error at load (file, line, field),
whatever the layout, the spacing and where the repeat is; keys nested in the args or the
response, or written inside string values, never are (hypothesis). The load's fast check
(see ``cassette._FRAME4``) and its exact fallback (``jsontext.check_top_level_keys``) are
both exercised: compact and spaced lines, unknown fields, odd whitespace."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import CassetteFormatError, load
from cassette_tui.core.format.digest import digest
from cassette_tui.core.format.jsontext import (
    DuplicateKey,
    check_top_level_keys,
    may_have_duplicates,
    parse_json_checked,
)
from cassette_tui.core.keys.normalize import NormalizationRules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

KNOWN = ["seq", "tool", "args", "response", "args_digest"]
#: key names that look like the top-level ones, to hide inside values
TRICKY = KNOWN + ["error", "x", 'to"ol', "seq:", "\u00e9"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(TRICKY).map(lambda k: f'"{k}": 1'),  # a key's text inside a string
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(TRICKY) | st.text(max_size=4), inner, max_size=4),
    ),
    max_leaves=12,
)
#: the text between tokens: compact, json.dumps' spaces, or anything JSON allows
spacing = st.sampled_from(["compact", "spaced", "odd"])


def _sep(style: str, draw: Any, before: str, after: str) -> str:
    if style == "compact":
        return before
    if style == "spaced":
        return before + after
    return (
        draw(st.sampled_from(["", " ", "  ", "\t"]))
        + before
        + draw(st.sampled_from(["", " ", "\t "]))
    )


@st.composite
def lines(draw: Any) -> tuple[str, bool, str | None]:
    """``(line, has_duplicate, repeated_key)``: one cassette line as text."""
    args = draw(st.dictionaries(st.sampled_from(TRICKY) | st.text(max_size=4), values))
    record: dict[str, Any] = {
        "seq": draw(st.integers(1, 10**7)),
        "tool": draw(st.sampled_from(["search_docs", "t", "read_file", "é_tool"])),
        "args": args,
        "response": draw(values),
    }
    if draw(st.booleans()):
        record["args_digest"] = digest(args)
    for name in draw(st.lists(st.sampled_from(["recorded_at", "x", "tool_"]), max_size=2)):
        record[name] = draw(values)
    items = [(k, json.dumps(v, ensure_ascii=draw(st.booleans()))) for k, v in record.items()]
    items = draw(st.permutations(items))
    repeated = None
    if draw(st.booleans()):
        repeated = draw(st.sampled_from([k for k, _ in items]))
        if repeated == "seq":
            again = json.dumps(draw(st.integers(-5, 10**7)))
        elif repeated in ("tool", "args_digest"):
            again = json.dumps(draw(st.text(max_size=6)))
        else:
            again = json.dumps(draw(values))
        items.insert(draw(st.integers(0, len(items))), (repeated, again))
    style = draw(spacing)
    parts = [json.dumps(k) + _sep(style, draw, ":", " ") + v for k, v in items]
    text = (
        "{"
        + "".join(p if i == 0 else _sep(style, draw, ",", " ") + p for i, p in enumerate(parts))
        + "}"
    )
    return text, repeated is not None, repeated


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines())
def test_a_top_level_key_twice_always_errors_and_nested_keys_never_do(
    case: tuple[str, bool, str | None],
) -> None:
    text, has_duplicate, repeated = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one.jsonl"
        path.write_text(text + "\n", encoding="utf-8")
        if has_duplicate:
            with pytest.raises(CassetteFormatError) as info:
                load(path)
            assert (info.value.path, info.value.line) == (str(path), 1)
            assert "duplicate key" in str(info.value)
            assert info.value.field == repeated
        else:
            cassette = load(path)
            assert cassette[0].to_record(None)["args"] == json.loads(text)["args"]


@given(lines())
@settings(max_examples=100, deadline=None)
def test_the_exact_check_agrees_with_the_parser(case: tuple[str, bool, str | None]) -> None:
    text, has_duplicate, repeated = case
    if has_duplicate:
        with pytest.raises(DuplicateKey) as info:
            check_top_level_keys(text.encode())
        assert (info.value.key, info.value.parts) == (repeated, ())
    else:
        check_top_level_keys(text.encode())


@pytest.mark.parametrize(
    "line",
    [
        # json.dumps' sorted, spaced layout: a repeated seq fits in the spaces it saves
        '{"args": {},"seq":3,"args_digest":"sha256:44136fa355b3678a","response":1,"seq":2,"tool":"t"}',
        '{"args": {},"args":0,"args_digest":"sha256:44136fa355b3678a","response":1,"seq":2,"tool":"t"}',
        '{"seq":2,"tool":"t","args":{},"response":{"hits":2},"tool":"delete_all"}',
        '{"seq": 2, "tool": "t", "args": {}, "response": 1, "t\\u006fol": "x"}',
        # seq first and spaced, repeated with a longer last value: the space the length
        # check looks for falls inside the tool's string unless the first seq is the kept one
        '{"seq": 1,"tool":"abcdefghij klm","args":{},"response":{},"args_digest":"d",'
        '"seq":1000000000000000000}',
    ],
)
def test_repeats_hidden_in_the_spacing_or_escaped_are_found(tmp_path: Path, line: str) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(CassetteFormatError, match="duplicate key") as info:
        load(path)
    assert info.value.line == 1


@pytest.mark.parametrize("where", ["args", "response"])
def test_a_key_repeated_inside_a_value_is_refused_by_every_reader_of_that_value(
    tmp_path: Path, where: str
) -> None:
    """The load indexes the line (its top level is sound); every reader of the value that
    holds the repeat refuses it, naming the line and the field: the entry, and the key
    pass for the args (so no replay key is ever made from a value the entry refuses)."""
    path = tmp_path / "nested.jsonl"
    inner = '{"q": "a", "opts": {"k": 1, "k": 2}}'
    args = inner if where == "args" else '{"q": "a"}'
    response = inner if where == "response" else '{"hits": 1}'
    path.write_text(
        '{"seq": 1, "tool": "t", "args": {}, "response": 1}\n'
        f'{{"seq": 2, "tool": "t", "args": {args}, "response": {response}}}\n',
        encoding="utf-8",
    )
    cassette = load(path)
    assert len(cassette) == 2
    with pytest.raises(CassetteFormatError, match=r"duplicate key 'k' in \$\.") as info:
        cassette[1]
    assert (info.value.line, info.value.field) == (2, where)
    if where == "args":
        with pytest.raises(CassetteFormatError, match="duplicate key 'k'") as info:
            cassette.digests()
        assert (info.value.line, info.value.field) == (2, "args")
    else:
        assert len(cassette.digests()) == 2  # the key pass does not read responses
        with pytest.raises(CassetteFormatError):
            cassette.fingerprint(1)


@pytest.mark.parametrize("rules", [None, "uuid"])
def test_a_repeat_hidden_by_an_escaped_colon_is_found_by_the_key_pass(
    tmp_path: Path, rules: str | None
) -> None:
    """The colon-count pre-test (``jsontext.may_have_duplicates``, the one helper of the
    parser, the top-level check and the key pass): a ``\\u003a`` in the kept value
    balances the lost key's colon, so the escape sends the args to the exact check, with
    or without normalization rules (the two branches of the key pass)."""
    path = tmp_path / "escaped.jsonl"
    path.write_text(
        '{"seq": 1, "tool": "t", "args": {"s": 1, "s": "\\u003a"}, "response": 1}\n',
        encoding="utf-8",
    )
    cassette = load(
        path, rules=None if rules is None else NormalizationRules.from_presets(["uuid"])
    )
    with pytest.raises(CassetteFormatError, match="duplicate key 's'") as info:
        cassette.digests()
    assert (info.value.line, info.value.field) == (1, "args")
    hidden = b'{"s": 1, "s": "\\u003a"}'  # the kept value re-encodes as one more colon
    assert may_have_duplicates(hidden, {"s": ":"}, b'{"s":":"}')
    assert not may_have_duplicates(b'{"s": ":", "t": 1}', {"s": ":", "t": 1}, b'{"s":":","t":1}')
    assert may_have_duplicates(b'{"s": 1, "s": 2}', {"s": 2}, b'{"s":2}')


@pytest.mark.parametrize(
    "args", ['{"x":1,"x":2}', '{"a":{"x":1,"x":2}}', '{"a":[{"x":1,"x":2}]}', '{"x": 1, "x": 2}']
)
def test_the_key_pass_and_the_entry_name_a_repeat_in_the_args_alike(
    tmp_path: Path, args: str
) -> None:
    """``diff`` meets a key repeated in the args in the key pass, ``check`` in the entry
    parse: both say where it is in the entry (``$.args...``), in the same words (a tester
    saw ``the top-level object`` from one and ``$.args`` from the other)."""
    path = tmp_path / "c.jsonl"
    path.write_text('{"seq":1,"tool":"t","args":' + args + ',"response":{}}\n', encoding="utf-8")
    with pytest.raises(CassetteFormatError) as keys:
        load(path).digests()
    with pytest.raises(CassetteFormatError) as entries:
        list(load(path).entries_read())
    assert str(keys.value) == str(entries.value)
    assert "duplicate key 'x' in $.args" in str(keys.value)


_RECORDED = (
    '{"seq":1,"tool":"t","args":{"q":"a"},"args_digest":"sha256:44136fa355b3678a",'
    '"response":{"b":1,"a":2},"recorded_at":"2026-12-03T19:02:59.271509Z","duration_ms":0.25'
)


@pytest.mark.parametrize(
    "extra",
    [
        ',"recorded_at":"x"',  # the recorder's own field, twice
        ',"duration_ms":1',
        ',"seq":1',  # a known field after the recorder's
        ',"zz":1,"zz":2',  # an unknown field, twice
    ],
)
def test_a_recorded_line_on_the_fast_path_still_refuses_a_repeated_key(
    tmp_path: Path, extra: str
) -> None:
    """The writer's compact layout with ``recorded_at``/``duration_ms`` is indexed without
    the exact check (its length proves it holds each key once); any repeat breaks that
    proof and is refused as before."""
    path = tmp_path / "rec.jsonl"
    path.write_text(_RECORDED + "}\n" + _RECORDED.replace('"seq":1', '"seq":2') + extra + "}\n")
    with pytest.raises(CassetteFormatError, match="duplicate key") as info:
        load(path)
    assert info.value.line == 2


def test_a_recorded_line_loads_with_its_fields_and_key_order(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text(_RECORDED + "}\n")
    entry = load(path)[0]
    assert list(entry.response) == ["b", "a"]  # the tool's order, not sorted
    assert entry.extra == {"recorded_at": "2026-12-03T19:02:59.271509Z", "duration_ms": 0.25}


# -- the parse of a whole line: a line that is orjson's own writing of its value ------------
class _Object(list):  # type: ignore[type-arg]
    """An object as its ``(key, value)`` pairs, written in that order."""


#: objects as their pairs, so that a key can be written twice; keys from a short list
_pair_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(st.tuples(st.sampled_from(["a", "b", "é", 'q"', "a:"]), inner), max_size=3).map(
            _Object
        )
    ),
    max_leaves=10,
)


def _compact(node: Any) -> str:
    """``node`` as compact JSON, each pair of an ``_Object`` written as it is (a repeat too)."""
    if isinstance(node, _Object):
        return "{" + ",".join(_dumps(k) + ":" + _compact(v) for k, v in node) + "}"
    if isinstance(node, list):
        return "[" + ",".join(_compact(v) for v in node) + "]"
    return _dumps(node)


def _dumps(node: Any) -> str:
    return json.dumps(node, ensure_ascii=False, separators=(",", ":"))


def _repeats(node: Any) -> bool:
    if isinstance(node, _Object):
        keys = [k for k, _ in node]
        return len(set(keys)) != len(keys) or any(_repeats(v) for _, v in node)
    if isinstance(node, list):
        return any(_repeats(v) for v in node)
    return False


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node=_pair_values, end=st.sampled_from(["", "\n", "\r\n"]))
def test_the_parse_refuses_a_repeat_at_any_depth_in_the_writers_layout(node: Any, end: str) -> None:
    """``parse_json_checked`` takes a line that is orjson's writing of its value (the
    writer's compact layout) without counting colons: a key repeated anywhere still
    stops it, and any other line reads as the standard library reads it."""
    raw = (_compact(node) + end).encode("utf-8", "surrogatepass")
    if _repeats(node):
        with pytest.raises(DuplicateKey):
            parse_json_checked(raw)
    else:
        assert parse_json_checked(raw)[0] == json.loads(raw)
