"""A big line's long strings kept as spans of its bytes (``_spans``, issue 31): the texts the
proxy writes from them are the engine's exactly (the digest ``digest()``'s, the line
``dump_line``'s), and every line where they could differ is read the ordinary way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import dump_line, dump_record, load
from cassette_tui.core.format.digest import digest
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.mcp._spans import BIG_STRING, SPANS_FROM, read_spans
from cassette_tui.core.mcp._wire import read_line
from cassette_tui.core.mcp.record import CassetteWriter, _prepare_args, fast_compact
from hypothesis import event, given, settings
from hypothesis import strategies as st


def repeated(size: int) -> st.SearchStrategy[str]:
    """Printable ASCII text of at least ``size`` characters, no quote nor backslash."""
    return st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1).map(
        lambda s: (s.replace('"', "'").replace("\\", "/") * (size // len(s) + 1))[: size + len(s)]
    )


LONG = repeated(SPANS_FROM) | repeated(BIG_STRING)
SMALL = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.text(alphabet="abc ~{}[]:,", max_size=8)
)
VALUES = st.recursive(
    SMALL | LONG,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)


def call_line(args: object, *, spaced: bool) -> bytes:
    doc = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "arguments": args},
    }
    return (json.dumps(doc) if spaced else json.dumps(doc, separators=(",", ":"))).encode() + b"\n"


@settings(max_examples=300, deadline=None)
@given(VALUES, LONG, st.text(alphabet="abz_", max_size=3), st.booleans())
def test_texts_from_spans_are_the_engines(value: object, long: str, key: str, spaced: bool) -> None:
    args = {key: long, "v": value}
    line = call_line(args, spaced=spaced)
    found = read_spans(line)
    event(f"spans: {found is not None}")
    if found is None:
        return
    skeleton, spans = found
    (frame,) = read_line(skeleton).frames
    skeleton_args = frame.params["arguments"]
    assert spans.real(skeleton_args) == json.loads(line)["params"]["arguments"]
    prepared = _prepare_args(NormalizationRules(), "t", skeleton_args, spans)
    assert prepared.digest == digest(args)
    if prepared.text is not None:
        joined = b"".join(bytes(piece) for piece in prepared.text)
        assert joined == json.dumps(args, separators=(",", ":"), ensure_ascii=False).encode()
    compact = fast_compact(skeleton_args)
    if compact is not None:  # an answer's text, as the writer splices it
        text = b"".join(bytes(piece) for piece in spans.splice(compact))
        assert b'{"v":' + text + b"}\n" == dump_record({"v": args})


def test_a_long_base64_string_is_kept_as_a_span() -> None:
    blob = "QUJD" * (SPANS_FROM // 2)
    line = call_line({"image": blob, "kind": "png"}, spaced=True)
    skeleton, spans = read_spans(line) or (b"", None)
    assert spans is not None and len(skeleton) < 200
    assert bytes(spans.piece(0)) == blob.encode()


@pytest.mark.parametrize(
    "args",
    [
        {"text": "line\n" * SPANS_FROM},  # an escape: the bytes are not the text
        {"text": "é" * SPANS_FROM},  # not ASCII: the canonical text escapes it
        {"text": "\x7f" * SPANS_FROM},  # DEL: escaped by the canonical text
        {"k" * SPANS_FROM: 1},  # a long key: its order decides the canonical text
    ],
    ids=["escape", "non-ascii", "del", "long-key"],
)
def test_lines_whose_texts_could_differ_are_read_whole(args: object) -> None:
    assert read_spans(call_line(args, spaced=False)) is None


def test_a_control_character_or_bad_json_is_read_whole() -> None:
    good = call_line({"text": "x" * SPANS_FROM}, spaced=False)
    assert read_spans(good) is not None
    assert read_spans(good.replace(b"xxxx", b"x\x01xx", 1)) is None  # not JSON
    assert read_spans(good[:-3] + b"\n") is None  # cut short


def test_a_line_nested_too_deep_is_read_whole() -> None:
    """Nested past the JSON reader's depth: read whole (``read_line`` says it is not
    JSON), not a ``RecursionError`` (over HTTP a 500 for the host, over stdio the host's
    later lines never went on)."""
    deep = b"[" * 2000 + b"]" * 2000
    line = call_line({"text": "x" * SPANS_FROM, "d": []}, spaced=False).replace(b"[]", deep)
    assert read_spans(line) is None
    assert read_line(line).frames == [] and "not JSON" in str(read_line(line).problem)


def test_a_line_started_ahead_is_ended_or_taken_back(tmp_path: Path) -> None:
    """``open_entry`` writes a big call's line up to its args while the server works;
    ``write`` ends it, an entry written before takes it back (it is written whole after),
    ``close`` takes back one never answered; until then a crash leaves it cut, which
    ``load`` reports, keeping every line before."""
    rules = NormalizationRules()
    big = {"text": "x" * SPANS_FROM}
    path = tmp_path / "c.jsonl"
    writer = CassetteWriter(path, rules)
    prepared = _prepare_args(rules, "big", big)
    writer.open_entry(1, "big", prepared)
    assert path.read_bytes().startswith(b'{"seq":1,"tool":"big","args":{"text":"xxx')
    writer.write("small", {"n": 1}, {"ok": True}, None, {})  # answered first
    writer.write("big", big, {"ok": 2}, None, {}, prepared)
    writer.open_entry(3, "big", prepared := _prepare_args(rules, "big", big))
    with pytest.raises(CassetteFormatError, match=":3: last line is cut"):
        load(path)  # a crash now: the line is cut
    assert [e.tool for e in load(path, lenient=True)] == ["small", "big"]
    writer.open_entry(3, "big", prepared)  # another line is open: nothing more
    writer.write("big", big, {"ok": 3}, None, {}, prepared)
    writer.open_entry(4, "big", prepared := _prepare_args(rules, "big", big))
    writer.close()  # never answered: not kept
    entries = load(path)
    assert [(e.seq, e.tool, e.response) for e in entries] == [
        (1, "small", {"ok": True}),
        (2, "big", {"ok": 2}),
        (3, "big", {"ok": 3}),
    ]
    assert path.read_bytes() == b"".join(
        dump_line(Entry(e.seq, e.tool, e.args, response=e.response, extra=e.extra)) for e in entries
    )
