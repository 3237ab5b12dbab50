"""A big body through ``mcp record --url`` recorded while it streams (issue 31): the
answer's pieces go to the host as they came (the last one held until the entry is
written) and the request's to the remote, both byte for byte, and the cassette is byte
for byte what reading the body whole at its end writes (main's path before), for any
answer or call shape and any split of the body into pieces, whether the entry's start
written while it streamed was kept or taken back (``HttpRecordingProxy``'s
``_answer_as_it_comes`` and ``_body_as_it_comes``, fed by stand-ins for the remote's
answer and the host's request)."""

from __future__ import annotations

import asyncio
import io
import json
import re
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from cassette_tui.core.mcp._spans import SPANS_FROM
from cassette_tui.core.mcp._wire import read_line
from cassette_tui.core.mcp.http import HttpRecordingProxy, _Gathered
from cassette_tui.core.mcp.record import PREPARE_FROM, _Pending
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.core.mcp.test_answer_ahead import ARGS, answers, same_time


class _Pieces:
    """The remote's answer (``aiter_bytes``) or the host's request (``stream``): the
    given pieces, in order."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def _each(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            await asyncio.sleep(0)
            yield piece

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        return self._each()

    def stream(self) -> AsyncIterator[bytes]:
        return self._each()

    async def aclose(self) -> None:
        return None


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    pieces, pos = [], 0
    for size in [*cuts, len(data)]:
        if pos >= len(data):
            break
        pieces.append(data[pos : pos + size])
        pos += size
    return pieces


def proxy_in(tmp: str) -> HttpRecordingProxy:
    proxy = HttpRecordingProxy(
        "http://127.0.0.1:9/mcp", Path(tmp) / "c.jsonl", log=io.StringIO(), out=io.StringIO()
    )
    proxy.sock.close()
    return proxy


def cassette(proxy: HttpRecordingProxy, tmp: str) -> bytes:
    proxy.writer.close()
    proxy.journal.close()
    return (Path(tmp) / "c.jsonl").read_bytes()


def record_answer(line: bytes, cuts: list[int], args: dict[str, Any], *, streamed: bool):
    """The cassette and the bytes the host got for one call answered by ``line``."""
    with tempfile.TemporaryDirectory() as tmp:
        proxy = proxy_in(tmp)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "t", "arguments": args}
        frame = read_line(json.dumps(call).encode()).frames[0]
        proxy._pending[frame.key] = _Pending(
            "tools/call", frame.params, 1_700_000_000.0, time.perf_counter(), host_id=1
        )

        async def run() -> bytes:
            if not streamed:  # main's path: the body read whole, then recorded
                if line.strip():
                    await proxy._from_server(line, forwarded=True)
                return line
            remote = _Pieces(split(line, cuts))
            return b"".join([p async for p in proxy._answer_as_it_comes(remote, len(line))])

        sent = asyncio.run(run())
        return cassette(proxy, tmp), sent


@settings(max_examples=300, deadline=None)
@given(answers(), st.lists(st.integers(1, SPANS_FROM), max_size=6), ARGS)
def test_a_streamed_answer_reaches_the_host_whole_and_is_recorded_as_read_whole(
    line: bytes, cuts: list[int], args: dict[str, Any]
) -> None:
    streamed, sent = record_answer(line, cuts, args, streamed=True)
    whole, _ = record_answer(line, cuts, args, streamed=False)
    event(f"entry: {bool(whole)}")
    assert sent == line
    assert same_time(streamed) == same_time(whole)


ANSWER = b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]}}'


@st.composite
def calls(draw: st.DrawFn) -> bytes:
    """A big tools/call line: its long string among other args, or spoilt; from
    ``PREPARE_FROM`` its entry's start is written ahead and kept when the guess holds."""
    size = draw(
        st.integers(SPANS_FROM, 3 * SPANS_FROM) | st.integers(PREPARE_FROM, PREPARE_FROM + 4096)
    )
    text = bytearray((b"abcXYZ 0123-_/:.,{}[]" * (size // 21 + 1))[:size])
    if draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(text)))
        text[at:at] = draw(st.sampled_from([b"\\n", b"\\u00e9", b"\x01", "é".encode(), b'\\"']))
    before = draw(st.sampled_from([b"", b'"a":1,', b'"z":[1,2],', b'"k":"short",']))
    after = draw(st.sampled_from([b"", b',"b":null', b',"a":1.5', b',"t":"x"']))
    head = draw(
        st.sampled_from(
            [
                b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big",',
                b'{"method": "tools/call", "jsonrpc": "2.0", "id": 7, "params": {"name": "b",',
            ]
        )
    )
    line = head + b'"arguments":{' + before + b'"text":"' + bytes(text) + b'"' + after + b"}}}"
    return line + draw(st.sampled_from([b"", b"\n", b" \n"]))


def record_request(line: bytes, cuts: list[int], *, streamed: bool, held: bool = False):
    """The cassette and the bytes the remote got for one big call, answered small;
    ``held``: its pieces recorded once the last has gone (``RELAY_FIRST_BELOW``)."""
    with tempfile.TemporaryDirectory() as tmp:
        proxy = proxy_in(tmp)

        async def run() -> bytes:
            if not streamed:  # main's path: the body whole, then noted
                got = line
                gathered = _Gathered()
                gathered.add(line)
                proxy._note_body(gathered, None)
            else:
                body = _Gathered()
                host = _Pieces(split(line, cuts))
                pieces = proxy._body_as_it_comes(
                    host, body, proxy_watch(proxy), note=True, held=held
                )
                got = b"".join([p async for p in pieces])
            await proxy._from_server(ANSWER)
            return got

        sent = asyncio.run(run())
        return cassette(proxy, tmp), sent


def proxy_watch(proxy: HttpRecordingProxy) -> Any:
    from cassette_tui.core.mcp._spans import LongStringWatch

    return LongStringWatch() if proxy.redactor is None else None


@settings(max_examples=200, deadline=None)
@given(calls(), st.lists(st.integers(1, 4 * SPANS_FROM), max_size=6), st.booleans())
def test_a_streamed_request_reaches_the_remote_whole_and_is_recorded_as_read_whole(
    line: bytes, cuts: list[int], held: bool
) -> None:
    streamed, sent = record_request(line, cuts, streamed=True, held=held)
    whole, _ = record_request(line, cuts, streamed=False)
    entry = whole.startswith(b'{"seq"')
    event(f"entry: {entry}")
    assert sent == line
    assert same_clock(streamed) == same_clock(whole)


def same_clock(text: bytes) -> bytes:
    """``same_time``, and the call's ``recorded_at`` (the clock when it was noted) the same."""
    return re.sub(rb'"recorded_at":"[^"]*"', b'"recorded_at":""', same_time(text))


def record_answers(lines: list[bytes], cuts: list[int], args: dict[str, Any], *, streamed: bool):
    """The cassette and the bytes the host got for calls answered by ``lines`` in turn,
    through one proxy: each streamed body gathered on the buffer of one gone by
    (``_Spares``)."""
    with tempfile.TemporaryDirectory() as tmp:
        proxy = proxy_in(tmp)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "t", "arguments": args}
        frame = read_line(json.dumps(call).encode()).frames[0]

        async def run() -> list[bytes]:
            sent = []
            for line in lines:
                proxy._pending[frame.key] = _Pending(
                    "tools/call", frame.params, 1_700_000_000.0, time.perf_counter(), host_id=1
                )
                if not streamed:
                    if line.strip():
                        await proxy._from_server(line, forwarded=True)
                    sent.append(line)
                    continue
                remote = _Pieces(split(line, cuts))
                pieces = proxy._answer_as_it_comes(remote, len(line))
                sent.append(b"".join([p async for p in pieces]))
                del pieces
            return sent

        sent = asyncio.run(run())
        return cassette(proxy, tmp), sent


@settings(max_examples=100, deadline=None)
@given(
    st.lists(answers(), min_size=2, max_size=4),
    st.lists(st.integers(1, SPANS_FROM), max_size=6),
    ARGS,
)
def test_answers_streamed_in_turn_on_lent_buffers_are_recorded_as_read_whole(
    lines: list[bytes], cuts: list[int], args: dict[str, Any]
) -> None:
    streamed, sent = record_answers(lines, cuts, args, streamed=True)
    whole, _ = record_answers(lines, cuts, args, streamed=False)
    assert sent == lines
    assert same_time(streamed) == same_time(whole)


def record_requests(lines: list[bytes], cuts: list[int], *, streamed: bool):
    """The cassette and the bytes the remote got for big calls in turn, each answered
    small, through one proxy (each body on a lent buffer)."""
    with tempfile.TemporaryDirectory() as tmp:
        proxy = proxy_in(tmp)

        async def run() -> list[bytes]:
            got = []
            for line in lines:
                if not streamed:
                    gathered = _Gathered()
                    gathered.add(line)
                    proxy._note_body(gathered, None)
                    got.append(line)
                else:
                    host = _Pieces(split(line, cuts))
                    body = proxy._spares.gathered()
                    pieces = proxy._body_as_it_comes(host, body, proxy_watch(proxy), note=True)
                    got.append(b"".join([p async for p in pieces]))
                    del body, pieces  # the line's buffer held by nothing past its call
                await proxy._from_server(ANSWER)
            return got

        sent = asyncio.run(run())
        return cassette(proxy, tmp), sent


@settings(max_examples=60, deadline=None)
@given(
    st.lists(calls(), min_size=2, max_size=3), st.lists(st.integers(1, 4 * SPANS_FROM), max_size=6)
)
def test_requests_streamed_in_turn_on_lent_buffers_are_recorded_as_read_whole(
    lines: list[bytes], cuts: list[int]
) -> None:
    streamed, sent = record_requests(lines, cuts, streamed=True)
    whole, _ = record_requests(lines, cuts, streamed=False)
    assert sent == lines
    assert same_clock(streamed) == same_clock(whole)
