"""A real TCP server for the network-blocking tests: it answers ``hello`` to whoever
connects, in a thread, until the test ends."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def tcp_listener(host: str = "127.0.0.1") -> Iterator[int]:
    """Listen on ``host`` (``"0.0.0.0"``: every IPv4 address of the machine) at a free
    port; yield the port; stop and close at the end."""
    server = socket.create_server((host, 0))
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            conn.sendall(b"hello")
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()
