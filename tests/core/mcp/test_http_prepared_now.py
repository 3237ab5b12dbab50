"""A big call through ``mcp record --url`` alone in flight, its body gone whole to the
remote by the proxy's own client (``after_body``): its args digest and entry start are
prepared at once in the loop (``RecordingProxy._prepare(gone=True)``, issue 31 session 17:
a thread's wake-up cost more than hashing the 1 MB call; from ``PREPARE_GONE_FROM``, 64 KB,
since session 19), and the cassette is byte for
byte what the whole-body path, prepared in a thread, writes, for any call shape and any
split of the body into pieces."""

from __future__ import annotations

import asyncio
import tempfile

from cassette_tui.core.mcp.http import _Gathered
from cassette_tui.core.mcp.record import PREPARE_FROM, PREPARE_GONE_FROM, SPLIT_FROM
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.core.mcp.test_http_streamed import (
    ANSWER,
    _Pieces,
    calls,
    cassette,
    proxy_in,
    proxy_watch,
    record_request,
    same_clock,
    split,
)


def record_gone(line: bytes, cuts: list[int]) -> tuple[bytes, bytes, list[bool]]:
    """The cassette, the bytes the remote got, and for each request noted whether its
    recording was ready once noted (``None`` futures left out: not a big call)."""
    with tempfile.TemporaryDirectory() as tmp:
        proxy = proxy_in(tmp)
        ready: list[bool] = []

        async def run() -> bytes:
            body = _Gathered()
            watch = proxy_watch(proxy)
            host = _Pieces(split(line, cuts))
            pieces = proxy._body_as_it_comes(host, body, watch, note=False)
            got = b"".join([p async for p in pieces])
            proxy._note_body(body, watch, gone=True)  # as ``Upstream.send``'s after_body
            ready.extend(p.prepared.done() for p in proxy._pending.values() if p.prepared)
            await proxy._from_server(ANSWER)
            return got

        sent = asyncio.run(run())
        return cassette(proxy, tmp), sent, ready


@settings(max_examples=150, deadline=None)
@given(calls(), st.lists(st.integers(1, 1 << 18), max_size=6))
def test_a_call_noted_once_gone_is_prepared_at_once_and_recorded_as_read_whole(
    line: bytes, cuts: list[int]
) -> None:
    now, sent, ready = record_gone(line, cuts)
    whole, _ = record_request(line, cuts, streamed=False)
    event(f"prepared: {ready}")
    assert sent == line
    assert same_clock(now) == same_clock(whole)
    assert all(ready)  # never a future left to a thread
    if PREPARE_GONE_FROM <= len(line) < SPLIT_FROM and now.startswith(b'{"seq"'):
        assert ready == [True]


def started_once_noted(line: bytes) -> bytes:
    """The cassette's bytes once ``line``, a call alone whose body has gone whole, is
    noted (before any answer); its recording must be ready then."""
    with tempfile.TemporaryDirectory() as tmp:
        proxy = proxy_in(tmp)

        async def run() -> bytes:
            body = _Gathered()
            body.add(line)
            proxy._note_body(body, None, gone=True)
            (pending,) = proxy._pending.values()
            assert pending.prepared is not None and pending.prepared.done()
            proxy.writer._fh.flush()
            return (proxy.writer.path).read_bytes()

        return asyncio.run(run())


def test_a_call_noted_once_gone_has_its_entry_started_before_its_answer() -> None:
    """The entry's line up to its args is in the cassette once the body is noted, before
    any answer (the thread's start came some time after, on main)."""
    text = b"abcdefgh" * (PREPARE_FROM // 8 + 16)
    line = (
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big",'
        b'"arguments":{"text":"' + text + b'","answer":0}}}'
    )
    started = started_once_noted(line)
    assert started.startswith(b'{"seq":1,')
    assert text in started
    assert b'"answer":0' in started


def test_a_100kb_call_noted_once_gone_has_its_entry_started_before_its_answer() -> None:
    """From ``PREPARE_GONE_FROM`` (64 KB), not ``PREPARE_FROM`` (1 MB): before session 19 a
    100 KB call was prepared only at its answer."""
    text = b"abcdefgh" * (100_000 // 8)
    line = (
        b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"mid",'
        b'"arguments":{"text":"' + text + b'"}}}'
    )
    assert PREPARE_GONE_FROM <= len(line) < PREPARE_FROM
    started = started_once_noted(line)
    assert started.startswith(b'{"seq":1,"tool":"mid"')
    assert text in started
