"""The proxy's fast texts of a big call's args (orjson) are the engine's texts exactly, or
not used: the digest the cassette stores is ``digest()``'s, and the line ``dump_line``'s
(a wrong digest would make every replay of the call miss)."""

from __future__ import annotations

import json

from cassette_tui.core.format.cassette import dump_record
from cassette_tui.core.format.digest import canonical_json, digest
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.mcp.record import _prepare_args, fast_compact, fast_texts
from hypothesis import given, settings
from hypothesis import strategies as st

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.text(alphabet=st.characters(max_codepoint=0x7F))
)
VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400)
@given(VALUES)
def test_fast_texts_are_the_engines_or_none(value: object) -> None:
    fast = fast_texts(value)
    if fast is not None:
        assert fast[0] == canonical_json(value)
        assert fast[1] == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    prepared = _prepare_args(NormalizationRules(), "tool", value)
    assert prepared.digest == digest(value)


@settings(max_examples=400)
@given(VALUES | st.dictionaries(st.text(), st.text() | st.integers()))
def test_fast_compact_is_the_writers_text_or_none(value: object) -> None:
    """A big answer or argument spliced into a cassette line reads as ``dump_record``
    writes it: the same bytes, non-ASCII, control characters and DEL included."""
    fast = fast_compact(value)
    written = dump_record({"v": value})
    if fast is not None:
        assert written == b'{"v":' + fast + b"}\n"


def test_plain_ascii_values_take_the_fast_path() -> None:
    value = {"b": "x" * 1000, "a": [1, None, True, {"k": '\n\t"\\'}]}
    assert fast_texts(value) is not None
    assert fast_texts({"f": 1.5}) is None  # floats print another shortest form
    assert fast_texts({"u": "é"}) is None  # the canonical text escapes non-ASCII


@settings(max_examples=150, deadline=None)
@given(VALUES, VALUES)
def test_a_spliced_line_is_the_engines_line(args: object, result: object) -> None:
    """The writer's line for a big call (args and answer spliced in as orjson's texts) is
    ``dump_line``'s byte for byte, whatever the values."""
    import tempfile
    from pathlib import Path

    from cassette_tui.core.format.cassette import dump_line
    from cassette_tui.core.format.entry import Entry
    from cassette_tui.core.mcp.record import FAST_RESPONSE_FROM, CassetteWriter

    rules = NormalizationRules()
    extra = {"recorded_at": "2026-12-03T00:00:00Z", "duration_ms": 1.5}
    with tempfile.TemporaryDirectory() as tmp:
        writer = CassetteWriter(Path(tmp) / "run.jsonl", rules)
        prepared = _prepare_args(rules, "tool", args)
        writer.write("tool", args, result, None, extra, prepared, FAST_RESPONSE_FROM)
        writer.close()
        written = (Path(tmp) / "run.jsonl").read_bytes()
    assert written == dump_line(Entry(1, "tool", args, response=result, extra=extra), rules)
