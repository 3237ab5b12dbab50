"""The proxy's own HTTP/1.1 client (``core/mcp/_upstream.py``, issue 31) reads what
``httpx2`` reads, and sends what the host sent: against real loopback servers that write
hand-made answers (content-length, chunked, to the connection's end, gzip, cut short) in
arbitrary pieces, and that keep the raw requests they got."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import h11
import httpx2
import pytest
from cassette_tui.core.mcp._upstream import Upstream, UpstreamError, usable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("httptools")

Answer = Callable[[bytes], list[bytes]]


class Server:
    """A loopback server: each request (read whole with h11) is kept, and answered by
    ``answer(body)``'s pieces, each written apart; ``close_after`` closes the connection
    after each answer."""

    def __init__(self, answer: Answer, *, close_after: bool = False) -> None:
        self.answer = answer
        self.close_after = close_after
        self.requests: list[tuple[h11.Request, bytes]] = []
        self.connections = 0

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/mcp"

    async def __aexit__(self, *exc: Any) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                head, body = None, b""
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        data = await reader.read(65536)
                        conn.receive_data(data)
                        if not data and conn.their_state is h11.DONE:
                            break
                        if not data:
                            return
                        continue
                    if isinstance(event, h11.Request):
                        head = event
                    elif isinstance(event, h11.Data):
                        body += bytes(event.data)
                    elif isinstance(event, h11.EndOfMessage):
                        break
                    elif isinstance(event, h11.ConnectionClosed):
                        return
                assert head is not None
                self.requests.append((head, body))
                for piece in self.answer(body):
                    writer.write(piece)
                    await writer.drain()
                if self.close_after:
                    break
                conn = h11.Connection(h11.SERVER)  # the next request (raw answers: no state)
        finally:
            writer.close()


def pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def framed(kind: str, body: bytes, splits: list[int]) -> tuple[bytes, bool]:
    """A raw answer holding ``body`` framed as ``kind``; whether it ends the connection."""
    if kind == "length":  # after an interim answer (103 Early Hints), which is skipped
        head = b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n"
        head += b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        return head + b"content-length: %d\r\n\r\n" % len(body) + body, False
    if kind == "chunked":
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        out = head + b"Transfer-Encoding: chunked\r\n\r\n"
        for part in pieces(body, splits):
            out += b"%x\r\n%b\r\n" % (len(part), part)
        return out + b"0\r\n\r\n", False
    if kind == "gzip":
        packed = gzip.compress(body)
        head = b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\n"
        return head + b"content-length: %d\r\n\r\n" % len(packed) + packed, False
    if kind == "deflate":
        packed = zlib.compress(body)
        head = b"HTTP/1.1 200 OK\r\ncontent-encoding: deflate\r\n"
        return head + b"content-length: %d\r\n\r\n" % len(packed) + packed, False
    assert kind == "close"
    return b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n" + body, True


async def through_upstream(url: str, content: bytes | AsyncIterator[bytes], **kw: Any) -> Any:
    upstream = Upstream(url)
    try:
        remote = await upstream.send("POST", kw.get("headers", {}), content)
        data = await remote.aread()
        await remote.aclose()
        return remote.status_code, remote.headers.items(), data
    finally:
        upstream.close()


async def through_httpx2(url: str, content: bytes) -> Any:
    async with httpx2.AsyncClient() as client:
        remote = await client.post(url, content=content)
        return remote.status_code, list(remote.headers.items()), remote.content


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.sampled_from(["length", "chunked", "gzip", "deflate", "close"]),
    body=st.binary(max_size=3000) | st.sampled_from([b"", b"y" * 300_000]),
    splits=st.lists(st.integers(min_value=0, max_value=400_000), max_size=6),
    writes=st.lists(st.integers(min_value=0, max_value=400_000), max_size=6),
)
def test_an_answer_reads_as_httpx2_reads_it(
    kind: str, body: bytes, splits: list[int], writes: list[int]
) -> None:
    raw, closes = framed(kind, body, splits)

    async def both() -> tuple[Any, Any]:
        server = Server(lambda _: pieces(raw, writes), close_after=closes)
        async with server as url:
            ours = await through_upstream(url, b'{"id":1}')
            theirs = await through_httpx2(url, b'{"id":1}')
        return ours, theirs

    ours, theirs = asyncio.run(both())
    assert ours[0] == theirs[0] == 200
    assert ours[2] == theirs[2] == body
    assert dict(ours[1]) == dict(theirs[1])


@settings(max_examples=25, deadline=None)
@given(
    body=st.binary(min_size=1, max_size=2000) | st.sampled_from([b"x" * 2_000_000]),
    cuts=st.lists(st.integers(min_value=0, max_value=2_000_000), max_size=5),
    announced=st.booleans(),
)
def test_a_body_sent_as_it_comes_arrives_whole(
    body: bytes, cuts: list[int], announced: bool
) -> None:
    """Streamed with the host's ``content-length``, or chunked without one: the server
    gets the same bytes; the host's own headers go on, the framing ones are ours."""
    ok = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"

    async def run() -> Server:
        async def parts() -> AsyncIterator[bytes]:
            for part in pieces(body, cuts):
                yield part

        headers = {"x-host": "kept", "accept-encoding": "br", "connection": "close"}
        headers["expect"] = "100-continue"
        if announced:
            headers["content-length"] = str(len(body))
        server = Server(lambda _: [ok])
        async with server as url:
            status, _, data = await through_upstream(url, parts(), headers=headers)
            assert (status, data) == (200, b"{}")
        return server

    server = asyncio.run(run())
    [(head, received)] = server.requests
    assert received == body
    names = dict(head.headers)
    assert names[b"x-host"] == b"kept"
    assert not {b"accept-encoding", b"connection", b"expect"} & set(names)
    assert (b"content-length" in names) is announced
    assert (names.get(b"transfer-encoding") == b"chunked") is not announced


def test_a_connection_is_kept_between_requests_and_a_closed_one_replaced() -> None:
    ok = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"

    async def run(close_after: bool) -> Server:
        server = Server(lambda _: [ok], close_after=close_after)
        async with server as url:
            upstream = Upstream(url)
            for n in range(3):
                remote = await upstream.send("POST", {}, b'{"id":%d}' % n)
                assert await remote.aread() == b"{}"
                await remote.aclose()
                await asyncio.sleep(0)  # a close from the server is seen
            upstream.close()
        return server

    kept = asyncio.run(run(close_after=False))
    assert kept.connections == 1 and len(kept.requests) == 3
    # the server closes each connection without saying so: each request gets a new one
    dropped = asyncio.run(run(close_after=True))
    assert dropped.connections == 3 and len(dropped.requests) == 3


def test_an_answer_cut_short_or_not_http_is_an_error() -> None:
    cut = b'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"partial"'

    async def read(raw: bytes) -> bytes:
        server = Server(lambda _: [raw], close_after=True)
        async with server as url:
            upstream = Upstream(url)
            remote = await upstream.send("POST", {}, b"{}")
            return await remote.aread()

    with pytest.raises(UpstreamError, match="mid-answer"):
        asyncio.run(read(cut))
    with pytest.raises(UpstreamError, match="not HTTP"):
        asyncio.run(read(b"SSH-2.0-OpenSSH\r\n\r\n"))

    async def refused() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        await Upstream(f"http://127.0.0.1:{port}/mcp").send("POST", {}, b"{}")

    with pytest.raises(UpstreamError, match="cannot connect"):
        asyncio.run(refused())


def test_only_plain_http_without_a_proxy_is_served(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert usable("http://127.0.0.1:8000/mcp")
    assert not usable("https://example.com/mcp")  # TLS: httpx2's certificates
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert not usable("http://example.com/mcp")
    monkeypatch.setenv("NO_PROXY", "example.com")
    assert usable("http://example.com/mcp")


def test_an_answer_in_an_encoding_never_asked_for_is_an_error() -> None:
    raw = b"HTTP/1.1 200 OK\r\ncontent-encoding: br\r\ncontent-length: 2\r\n\r\n{}"

    async def read() -> bytes:
        async with Server(lambda _: [raw]) as url:
            return (await through_upstream(url, b"{}"))[2]

    with pytest.raises(UpstreamError, match="in br"):
        asyncio.run(read())


class RawServer:
    """A loopback server that reads each request on a connection (its head, then its
    ``content-length`` body), keeps the bodies, and answers the n-th request on each
    connection with ``answers[n]``: ``bytes`` written apart and floats slept, then the
    connection closed when the list ends with ``None``."""

    def __init__(self, answers: list[list[bytes | float | None]]) -> None:
        self.answers = answers
        self.bodies: list[bytes] = []

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/mcp"

    async def __aexit__(self, *exc: Any) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for answer in self.answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                )
                self.bodies.append(await reader.readexactly(length))
                for piece in answer:
                    if piece is None:
                        return
                    if isinstance(piece, float):
                        await asyncio.sleep(piece)
                    else:
                        writer.write(piece)
                        await writer.drain()
            await reader.read()  # until the client closes
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()


OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"


async def calls(url: str, n: int) -> list[Any]:
    """``n`` POSTs in turn on one ``Upstream`` (a pause after each, for what the remote
    does meanwhile): each answer's ``(status, body)``, or the error's text."""
    upstream = Upstream(url)
    out: list[Any] = []
    try:
        for i in range(n):
            try:
                remote = await upstream.send("POST", {}, b'{"call":%d}' % i)
                out.append((remote.status_code, await remote.aread()))
                await remote.aclose()
            except UpstreamError as exc:
                out.append(str(exc))
            await asyncio.sleep(0.05)
    finally:
        upstream.close()
    return out


@pytest.mark.parametrize("cut", [[b"HTTP/1.1 200 OK\r\ncontent-le", None], [None]])
def test_a_call_written_whole_is_never_sent_twice(cut: list[bytes | float | None]) -> None:
    """A kept connection the remote closes after reading the next call (half an answer
    written, or none): the call may have run, so it is an error, as with ``httpx2``,
    and not sent once more on a new connection (a ``tools/call`` would run twice)."""

    async def run() -> tuple[list[Any], list[bytes]]:
        server = RawServer([[OK], cut])
        async with server as url:
            return await calls(url, 2), server.bodies

    out, bodies = asyncio.run(run())
    assert out[0] == (200, b"{}")
    assert "closed the connection" in out[1]
    assert bodies == [b'{"call":0}', b'{"call":1}']


@pytest.mark.parametrize(
    "first",
    [
        # a content-length that lies: a second message right behind the first answer
        [OK + b'HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n,"x":1}'],
        # the same a byte at a time: the extra message arrives once the answer was read
        [bytes([b]) for b in OK + b'HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n,"x":1}'],
        # a 408 on the idle connection, which the remote keeps open
        [OK, 0.02, b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 7\r\n\r\ntimeout"],
    ],
)
def test_an_answer_nobody_asked_for_answers_no_call(first: list[bytes | float | None]) -> None:
    """Bytes the remote sends past the end of an answer, or on a kept connection between
    calls, answer no call: not read as the end of this answer, nor as the next call's
    (it was: ``{},"x":1}``, then the next call got the stale message or the ``408``)."""
    second = b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecond"

    async def run() -> list[Any]:
        async with RawServer([first, [second]]) as url:
            return await calls(url, 2)

    out = asyncio.run(run())
    # the second call on the first connection (its own answer: "second"), or on a new one
    assert out[0] == (200, b"{}")
    assert out[1] in ((200, b"second"), (200, b"{}"))


def test_a_url_with_credentials_is_left_to_httpx2(monkeypatch: pytest.MonkeyPatch) -> None:
    """``http://user:pass@host/`` is Basic auth to ``httpx2``; the own client sent no
    credentials (main: the remote answered 401 where ``httpx2`` had been let in)."""
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert usable("http://127.0.0.1:8000/mcp")
    assert not usable("http://user:s3cret@127.0.0.1:8000/mcp")
    assert not usable("http://token@127.0.0.1:8000/mcp")
    assert not usable("http://:s3cret@127.0.0.1:8000/mcp")
