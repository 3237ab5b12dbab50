"""A cassette line written by one encoder made once (``_writer._encode_strict``, issue 31)
holds the same bytes as ``json.dumps`` with the same options made at each line, as
``dump_record`` wrote before: for any record (unicode, lone surrogates, big integers,
floats, NaN and the infinities, nesting), or the same error."""

from __future__ import annotations

import json
from typing import Any

from cassette_tui.core.format._writer import _COMPACT, dump_record
from cassette_tui.core.format.jsonvalue import encode_nonfinite
from hypothesis import given
from hypothesis import strategies as st


def _dump_record_before(record: dict[str, Any]) -> bytes:
    """``dump_record`` as it was (main at d0c7a6c), the reference."""
    ordered = {k: record[k] for k in ("seq", "tool", "args", "args_digest", "response", "error")
               if k in record}  # fmt: skip
    for k, v in record.items():
        ordered.setdefault(k, v)
    try:
        text = json.dumps(ordered, separators=_COMPACT, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        text = json.dumps(encode_nonfinite(ordered), separators=_COMPACT, ensure_ascii=False)
    return (text + "\n").encode("utf-8", "backslashreplace")


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**80),
    st.floats(),  # NaN and the infinities too
    st.text(),
    st.sampled_from(["\ud800", "a\udfffb", "é\u2028", "\x7f\x00"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)
_records = st.fixed_dictionaries(
    {"seq": st.integers(1, 10**6), "tool": st.text(max_size=10), "args": _values},
    optional={"response": _values, "error": _values, "recorded_at": st.text(max_size=30),
              "duration_ms": st.floats(), "args_digest": st.text(max_size=20)},
)  # fmt: skip


@given(_records)
def test_same_bytes_as_dumps_made_at_each_line(record: dict[str, Any]) -> None:
    try:
        before: bytes | Exception = _dump_record_before(record)
    except (TypeError, ValueError) as exc:
        before = exc
    try:
        after: bytes | Exception = dump_record(record)
    except (TypeError, ValueError) as exc:
        after = exc
    if isinstance(before, Exception):
        assert type(after) is type(before) and str(after) == str(before)
    else:
        assert after == before
