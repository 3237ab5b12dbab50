"""The least any proxy can add, as a floor for ``bench_mcp_http_calls.py --floor`` (issue
31: the proxy within 1.5x of a direct connection): not a product, a measure.

Each host connection gets one connection to the remote, and the bytes go across both
ways as they come (asyncio protocols, uvloop when installed): no HTTP read, nothing
recorded. What it costs is the two hops a proxy adds; what is left between this and
``mcp record --url`` is the reading and the recording.

    python benchmarks/floor_byte_relay.py REMOTE_PORT     # prints its URL, runs until killed
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from typing import Any


class _Side(asyncio.Protocol):
    """One end; what it reads goes to its peer's transport."""

    def __init__(self, peer: _Side | None = None) -> None:
        self.peer = peer
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        assert self.peer is not None and self.peer.transport is not None
        self.peer.transport.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()


class _Host(_Side):
    """A host's connection: what it sends before its remote connection is made is held,
    then sent first."""

    def __init__(self, remote_port: int) -> None:
        super().__init__()
        self.remote_port = remote_port
        self.held: list[bytes] = []

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        asyncio.ensure_future(self._connect())

    def data_received(self, data: bytes) -> None:
        if self.peer is None:
            self.held.append(data)
        else:
            super().data_received(data)

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        _, remote = await loop.create_connection(lambda: _Side(self), "127.0.0.1", self.remote_port)
        self.peer = remote
        for data in self.held:
            remote.transport.write(data)
        self.held.clear()


async def main(remote_port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Host(remote_port), "127.0.0.1", 0)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(int(sys.argv[1])))
