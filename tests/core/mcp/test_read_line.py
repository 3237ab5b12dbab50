"""``_wire.read_line`` reads every value of a JSON-RPC line as the standard library does:
integers past 64 bits exact (orjson made them floats, so the cassette kept another number
than the host sent), NaN and a lone surrogate escape by the fallback, bad UTF-8 as U+FFFD."""

from __future__ import annotations

import json

from cassette_tui.core.mcp._wire import read_line
from hypothesis import given
from hypothesis import strategies as st

BIG = 123456789012345678901234567890


def test_an_integer_past_64_bits_is_kept_exact() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"n":%d}}}' % BIG
    (frame,) = read_line(line).frames
    assert frame.params["arguments"]["n"] == BIG
    assert isinstance(frame.params["arguments"]["n"], int)


def test_what_msgspec_refuses_is_read_by_the_standard_library() -> None:
    line = b'{"jsonrpc":"2.0","id":2,"result":{"x":NaN,"s":"\\ud800"}}'
    (frame,) = read_line(line).frames
    result = frame.doc["result"]
    assert result["x"] != result["x"] and result["s"] == "\ud800"
    lossy = read_line(b'{"jsonrpc":"2.0","id":3,"result":{"t":"caf\xff"}}')
    assert lossy.lossy and lossy.frames[0].doc["result"]["t"] == "caf\ufffd"


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
        max_leaves=15,
    )
)
def test_a_value_reads_as_json_loads_reads_it(value: object) -> None:
    doc = {"jsonrpc": "2.0", "id": 1, "result": {"v": value}}
    line = json.dumps(doc).encode()
    assert read_line(line).frames[0].doc == json.loads(line)
