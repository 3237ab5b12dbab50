"""An answer's head written with its body (``_head_with_body.HeadWithBody``, issue 31): the
head held until the next write and joined to a small body, written alone once the loop's
turn ends when no body follows (a stream waiting for its first event), and before a
close; the bytes on the wire the same, in order. Then through the listener
(``_listener.http_protocol``) on a real socket: a small JSON answer leaves in one write."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from cassette_tui.core.mcp._head_with_body import JOIN_BELOW, HeadWithBody
from hypothesis import given, settings
from hypothesis import strategies as st


class _Transport:
    """What the wrapper writes, each ``write`` kept apart."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "written after close"
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str) -> Any:
        return f"info {name}"


HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"


def test_a_small_body_goes_with_its_head_in_one_write() -> None:
    async def run() -> list[bytes]:
        raw = _Transport()
        wrapped = HeadWithBody(raw)
        wrapped.write(HEAD)
        assert raw.writes == []  # held
        wrapped.write(b"hello")
        await asyncio.sleep(0)  # the flush at the turn's end finds nothing held
        return raw.writes

    assert asyncio.run(run()) == [HEAD + b"hello"]


def test_a_head_with_no_body_yet_goes_at_the_end_of_the_turn() -> None:
    async def run() -> tuple[list[bytes], list[bytes]]:
        raw = _Transport()
        wrapped = HeadWithBody(raw)
        wrapped.write(HEAD)
        await asyncio.sleep(0)
        first = list(raw.writes)
        wrapped.write(b"data: 1\n\n")  # a stream's first event, later
        return first, raw.writes

    first, after = asyncio.run(run())
    assert first == [HEAD]
    assert after == [HEAD, b"data: 1\n\n"]


def test_a_big_body_follows_its_head_in_a_write_of_its_own() -> None:
    async def run() -> list[bytes]:
        raw = _Transport()
        wrapped = HeadWithBody(raw)
        wrapped.write(HEAD)
        wrapped.write(b"x" * JOIN_BELOW)
        return raw.writes

    assert asyncio.run(run()) == [HEAD, b"x" * JOIN_BELOW]


def test_a_close_writes_the_held_head_first_and_the_rest_is_the_transports() -> None:
    async def run() -> tuple[_Transport, HeadWithBody]:
        raw = _Transport()
        wrapped = HeadWithBody(raw)
        wrapped.write(HEAD)
        wrapped.close()
        await asyncio.sleep(0)  # the turn's flush: nothing left, nothing written twice
        return raw, wrapped

    raw, wrapped = asyncio.run(run())
    assert raw.writes == [HEAD] and raw.closed
    assert wrapped.is_closing() and wrapped.get_extra_info("peername") == "info peername"


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.binary(max_size=3 * JOIN_BELOW // 2), min_size=1, max_size=5),
    st.integers(0, 5),
)
def test_the_bytes_written_are_the_same_in_order(pieces: list[bytes], turn_after: int) -> None:
    """Whatever is written, and wherever the loop's turn ends, the transport gets the same
    bytes in the same order, the head never alone when a small body followed it within
    the turn."""

    async def run() -> list[bytes]:
        raw = _Transport()
        wrapped = HeadWithBody(raw)
        for index, piece in enumerate(pieces):
            wrapped.write(piece)
            if index == turn_after:
                await asyncio.sleep(0)
        await asyncio.sleep(0)
        return raw.writes

    writes = asyncio.run(run())
    assert b"".join(writes) == b"".join(pieces)
    if len(pieces) > 1 and turn_after != 0 and len(pieces[1]) < JOIN_BELOW:
        assert writes[0] == pieces[0] + pieces[1]


def test_the_listener_writes_a_small_answer_in_one_piece() -> None:
    """uvicorn on the listener's protocol, a starlette app answering 5 bytes, two requests
    on one connection: the first puts a counter in front of the connection's transport,
    the second's answer is then one write (uvicorn's own: two, the head then the body)."""
    import uvicorn
    from cassette_tui.core.mcp._listener import http_protocol
    from cassette_tui.core.mcp.http import listen
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    writes: list[bytes] = []

    class Counted:
        def __init__(self, transport: Any) -> None:
            self.transport = transport

        def write(self, data: bytes) -> None:
            writes.append(bytes(data))
            self.transport.write(data)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.transport, name)

    server: Any = None

    async def hello(request: Any) -> Response:
        for protocol in server.server_state.connections:
            if not isinstance(protocol.transport, Counted):
                protocol.transport = Counted(protocol.transport)
        return Response(b"hello", media_type="application/json")

    app = Starlette(routes=[Route("/mcp", hello, methods=["POST"])])

    async def run() -> list[bytes]:
        nonlocal server
        sock = listen(0)
        port = sock.getsockname()[1]
        config = uvicorn.Config(app, http=http_protocol(), log_level="warning", lifespan="off")
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        loop = asyncio.get_running_loop()
        got = []
        with socket.create_connection(("127.0.0.1", port)) as host:
            host.setblocking(False)
            request = b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}"
            for _ in range(2):
                await loop.sock_sendall(host, request)
                answer = b""
                while not answer.endswith(b"hello"):
                    answer += await loop.sock_recv(host, 65536)
                got.append(answer)
        server.should_exit = True
        await serving
        return got

    answers = asyncio.run(run())
    assert all(a.startswith(b"HTTP/1.1 200 OK\r\n") for a in answers)
    assert writes == [answers[1]]  # the second answer, head and body, in one write
