"""A big answer recorded while it streams (issue 31): its entry's start guessed from the
first piece and written to the cassette, its long string's bytes written as they pass
(``RecordingProxy._answer_ahead``, ``_watched``), the rest at its end. The cassette is
byte for byte what reading the answer whole at its end writes (the path before), for
any answer shape and any split into pieces, wrong guesses included: a later duplicate
key, a float, an error beside the result, another id, bad JSON, a line cut mid-string,
a control character or an escape in the long string."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from cassette_tui.core.format.cassette import load
from cassette_tui.core.mcp import record as record_module
from cassette_tui.core.mcp._spans import SPANS_FROM, LongStringWatch
from cassette_tui.core.mcp._wire import read_line
from cassette_tui.core.mcp.record import RecordingProxy, _closers, _Pending
from hypothesis import event, given, settings
from hypothesis import strategies as st

HEADS = [
    b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"',
    b'{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "',
    b'{"id":1,"jsonrpc":"2.0","result":{"structuredContent":{"a":[1,{"b":null}]},"t":"',
    b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"',  # the id after
    b'{"jsonrpc":"2.0","id":1,"result":"',
    b'{"jsonrpc":"2.0","id":1,"result":{"k":"short","k2":[true,false],"text":"',
    b'{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"',
    b'[{"jsonrpc":"2.0","id":1,"result":{"text":"',  # a batch
    b'{"jsonrpc":"2.0","id":1,"result":{"',  # the long string is a key
    b'{"jsonrpc":"2.0","id":1,"result":{"x":"' + b"s" * 5000 + b'","text":"',  # 2 long
    b'{"jsonrpc":"2.0","id":1,"result":{"t\xc3\xa9":"',  # non-ASCII before it
]
#: put in the innermost object or array around the long string
INNER = [b"", b',"isError":false', b',"x":1.5', b',"text":"short"', b',"t":"' + b"l" * 5000 + b'"']
#: put in the message's object, after the result
OUTER = [b"", b',"id":1', b',"id":2', b',"error":{"code":1,"message":"m"}', b',"result":{}']
#: the line's end
ENDS = [b"\n", b"   \n", b', "more"\n', b""]
SPOILERS = [b"\\n", b"\\u00e9", b"\x01", b"\x7f", "é".encode(), b"\xff", b'"', b"\t"]


@st.composite
def answers(draw: st.DrawFn) -> bytes:
    head = draw(st.sampled_from(HEADS))
    size = draw(
        st.integers(SPANS_FROM // 2, 3 * SPANS_FROM) | st.integers(SPANS_FROM, 2 * SPANS_FROM)
    )
    body = bytearray((b"abcXYZ 0123-_/:.,{}[]" * (size // 21 + 1))[:size])
    if draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(body)))
        body[at:at] = draw(st.sampled_from(SPOILERS))
    closers = _closers(head[: head.rindex(b'"')]) or b""
    inner = draw(st.sampled_from(INNER)) if draw(st.booleans()) else b""
    if closers[:1] == b"]":  # in an array: values only
        inner = inner.partition(b":")[2] and b"," + inner.partition(b":")[2]
    outer = draw(st.sampled_from(OUTER)) if closers.endswith(b"}") and draw(st.booleans()) else b""
    tail = b'"' + inner + closers[:-1] + outer + closers[-1:] + draw(st.sampled_from(ENDS))
    if draw(st.integers(0, 5)) == 0:  # cut anywhere after the long string's start
        tail = tail[: draw(st.integers(0, len(tail)))]
    return head + bytes(body) + tail


ARGS = st.dictionaries(
    st.sampled_from(["a", "b", "z", "é"]),
    st.none() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    max_size=3,
)


def record(line: bytes, cuts: list[int], args: dict[str, Any], *, streamed: bool) -> bytes:
    """The cassette a proxy writes for one call (``args``) answered by ``line``, its
    pieces recorded as they pass (``streamed``) or the line read whole at its end; the
    line given to the loop as ``_server_to_host`` gives it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.jsonl"
        proxy = RecordingProxy(["true"], path, log=io.StringIO())
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "t", "arguments": args}
        frame = read_line(json.dumps(call).encode()).frames[0]
        proxy._pending[frame.key] = _Pending(
            "tools/call", frame.params, 1_700_000_000.0, time.perf_counter(), host_id=1
        )
        truncated = _truncations(proxy)  # a guess taken back
        loop = asyncio.new_event_loop()  # not run: every host line is noted here
        watch, ahead = LongStringWatch(), None
        pos = 0
        if streamed:
            for size in [*cuts, len(line)]:
                piece = line[pos : pos + size]
                if not piece:
                    break
                if pos == 0:
                    ahead = proxy._answer_ahead(loop, piece, watch)
                else:
                    proxy._watched(watch, ahead, piece)
                pos += len(piece)
        asyncio.run(proxy._from_server(line, forwarded=True, checked=watch.checked, ahead=ahead))
        if ahead is not None:
            proxy.writer.take_back(ahead)
        proxy.writer.close()
        proxy.journal.close()
        text = path.read_bytes()
        if streamed:
            kept = ahead is not None and not truncated and bool(text)
            event(f"guessed: {ahead is not None}, kept: {kept}")
        return text


def same_time(text: bytes) -> bytes:
    """The cassette with its clock readings (``recorded_at``, ``duration_ms``) blanked."""
    text = re.sub(rb'"duration_ms":[0-9.e-]+', b'"duration_ms":0', text)
    return re.sub(rb'"recorded_at":"[^"]*"', b'"recorded_at":""', text)


def _truncations(proxy: RecordingProxy) -> list[int]:
    """The offsets the proxy's writer cuts its file back to from now on (a guess written
    ahead and taken back), recorded as the cuts are made."""
    truncated: list[int] = []
    cut = proxy.writer._truncate

    def spy(offset: int) -> None:
        truncated.append(offset)
        cut(offset)

    proxy.writer._truncate = spy  # type: ignore[method-assign]
    return truncated


@settings(max_examples=400, deadline=None)
@given(answers(), st.lists(st.integers(1, SPANS_FROM), max_size=6), ARGS)
def test_streamed_answer_recorded_as_read_whole(
    line: bytes, cuts: list[int], args: dict[str, Any]
) -> None:
    streamed = record(line, cuts, args, streamed=True)
    whole = record(line, cuts, args, streamed=False)
    event(f"entry: {bool(whole)}")
    assert same_time(streamed) == same_time(whole)
    if whole:
        assert len(load_lines(streamed)) == 1


def load_lines(text: bytes) -> list[Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.jsonl"
        path.write_bytes(text)
        return list(load(path))


def test_closers_close_what_is_open() -> None:
    assert _closers(b'{"a":[1,{"b":') == b"}]}"
    assert _closers(b'{"a":"]}[{",') == b"}"
    assert _closers(b'{"a":"open') is None
    assert _closers(b"{]") is None


CALL_HEADS = [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"text":"',
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {"z": 1, "text": "',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[1.5],"text":"',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"text":"',  # name after
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":["',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"t","arguments":{"text":"',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"t\\u00e9":"',
]


@st.composite
def calls(draw: st.DrawFn) -> bytes:
    head = draw(st.sampled_from(CALL_HEADS))
    size = draw(st.integers(SPANS_FROM, 2 * SPANS_FROM))
    body = bytearray((b"abcXYZ 0123-_/:.,{}[]" * (size // 21 + 1))[:size])
    if draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(body)))
        body[at:at] = draw(st.sampled_from(SPOILERS))
    closers = _closers(head[: head.rindex(b'"')]) or b""
    inner = draw(st.sampled_from(INNER)) if draw(st.booleans()) else b""
    if closers[:1] == b"]":
        inner = inner.partition(b":")[2] and b"," + inner.partition(b":")[2]
    outer = (
        draw(st.sampled_from([b"", b',"name":"u"', b',"arguments":{}']))
        if draw(st.booleans())
        else b""
    )
    # closers: args, params, message
    tail = b'"' + inner + closers[:1] + outer + closers[1:] + b"\n"
    if draw(st.integers(0, 5)) == 0:
        tail = tail[: draw(st.integers(0, len(tail)))]
    return head + bytes(body) + tail


def record_call(line: bytes, cuts: list[int], *, streamed: bool, split: bool) -> bytes:
    """The cassette a proxy writes for a big call line (answered small), its pieces
    recorded as they pass (``streamed``) or the line read whole at its end, as
    ``_pump_host`` and ``_from_host`` hand it on; its recording prepared as a line of
    1 MB or more is (``split``: as one of 8 MB or more, its start written by a second
    thread)."""
    sizes = record_module.PREPARE_FROM, record_module.SPLIT_FROM
    record_module.PREPARE_FROM, record_module.SPLIT_FROM = 0, 0 if split else 1 << 40
    try:
        return _record_call(line, cuts, streamed=streamed)
    finally:
        record_module.PREPARE_FROM, record_module.SPLIT_FROM = sizes


def _record_call(line: bytes, cuts: list[int], *, streamed: bool) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.jsonl"
        proxy = RecordingProxy(["true"], path, log=io.StringIO())
        truncated = _truncations(proxy)
        watch, ahead = LongStringWatch(), None
        pos = 0
        if streamed:
            for size in [*cuts, len(line)]:
                piece = line[pos : pos + size]
                if not piece:
                    break
                if pos == 0:
                    ahead = proxy._call_ahead(piece, watch)
                else:
                    proxy._watched(watch, ahead, piece)
                pos += len(piece)

        async def session() -> None:
            proxy._from_host(line, forwarded=True, checked=watch.checked)
            await asyncio.sleep(0)
            for req in list(proxy._pending.values()):
                if req.prepared is not None:  # the executor's work, waited for
                    with contextlib.suppress(Exception):
                        await req.prepared
            answer = b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n'
            await proxy._from_server(answer)

        asyncio.run(session())
        proxy.writer.close()
        proxy.journal.close()
        text = path.read_bytes()
        if streamed:
            kept = ahead is not None and not truncated and bool(text)
            event(f"guessed: {ahead is not None}, kept: {kept}")
        return text


@settings(max_examples=200, deadline=None)
@given(calls(), st.lists(st.integers(1, SPANS_FROM), max_size=6), st.booleans())
def test_streamed_call_recorded_as_read_whole(line: bytes, cuts: list[int], split: bool) -> None:
    streamed = record_call(line, cuts, streamed=True, split=split)
    whole = record_call(line, cuts, streamed=False, split=split)
    event(f"entry: {bool(whole)}")
    assert same_time(streamed) == same_time(whole)
