"""``check --json`` writes its document with orjson (``_output.plain_json_text``): the
same text as ``json_text`` (the standard library's encoder with an indent, the path it
replaced, issue 31) for any document of dicts, lists, tuples, text, integers, booleans and
null, including control, bidi, tag and non-ASCII characters and integers past 64 bits; a
document with a float or another type takes ``json_text`` itself (hypothesis)."""

from __future__ import annotations

from typing import Any

from cassette_tui.tui.commands._output import json_text, plain_json_text
from hypothesis import given, settings
from hypothesis import strategies as st

#: text from every plane, with the characters ``json_text`` escapes itself made likely
texts = st.text() | st.text(
    st.sampled_from(list('\x00\x1f\x7f\x85\u200e\u2028\u2029\ufeff\U000e0041"\\é😀a\n\t'))
)
leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | texts
    | st.floats(allow_nan=True)
)
documents = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(texts, inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(documents)
def test_plain_json_text_is_json_text(doc: Any) -> None:
    assert plain_json_text(doc) == json_text(doc)


def test_a_findings_document_is_written_by_orjson_the_same() -> None:
    """The shape ``check --json`` prints: nested rows of text and integers."""
    doc = {
        "file": "c.jsonl",
        "entries": 2,
        "rows": [
            {"kind": "repeated_key", "seq": 1, "seqs": [1, 2], "message": "t é\u202e"},
            {"kind": "secret", "seq": 2, "secret": {"detector": "x", "inner_path": None}},
        ],
        "rules": [],
    }
    assert plain_json_text(doc) == json_text(doc)
