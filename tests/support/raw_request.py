"""A raw HTTP/1.1 request read off a socket by a hand-written test remote (one that must
answer in ways no server library would: a lying length, a 401, a close mid-answer), and
what such a remote and a raw socket host share: the remote served on a free loopback
port, a call's answer written, a POST's head."""

from __future__ import annotations

import contextlib
import json
import socketserver
import threading
from collections.abc import Iterator
from io import BufferedIOBase
from typing import Any, BinaryIO

#: a socket's reading or writing side (``makefile``, a ``StreamRequestHandler``'s)
Stream = BinaryIO | BufferedIOBase


def read_head(stream: Stream) -> dict[bytes, bytes] | None:
    """The head fields (names lower-cased) of the next request (or answer) on
    ``stream``, its start line under ``b""``; ``None`` when the other end closed first."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = stream.readline()
        if not line:
            return None
        head += line
    start, *lines = head.strip().split(b"\r\n")
    fields = dict(line.split(b":", 1) for line in lines if b":" in line)
    return {b"": start, **{k.strip().lower(): v.strip() for k, v in fields.items()}}


def read_request(stream: Stream) -> tuple[dict[bytes, bytes], Any] | None:
    """The head fields (names lower-cased) and the JSON body of the next request on
    ``stream`` (read by its ``content-length``); ``None`` when the host closed first."""
    fields = read_head(stream)
    if fields is None:
        return None
    return fields, json.loads(stream.read(int(fields[b"content-length"])))


def read_body(stream: BufferedIOBase, size: int, got: bytes = b"") -> bytes | None:
    """A body's first ``size`` bytes (``got`` of them read already), each read taking
    what has come; ``None`` when the host closed first."""
    while len(got) < size:
        more = stream.read1(size - len(got))
        if not more:
            return None
        got += more
    return got


def write_json(out: Stream, doc: Any, status: bytes = b"200 OK") -> None:
    """``doc`` written to ``out`` as one JSON answer (its ``content-length`` given, the
    connection closed after it)."""
    data = json.dumps(doc).encode()
    out.write(
        b"HTTP/1.1 %b\r\ncontent-type: application/json\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n%b" % (status, len(data), data)
    )
    out.flush()


def echo_result(request: dict[str, Any], text: str) -> dict[str, Any]:
    """The answer to the ``tools/call`` ``request``: ``text`` as its one text block."""
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


@contextlib.contextmanager
def served(handler: type[socketserver.BaseRequestHandler]) -> Iterator[str]:
    """``handler`` served on a free loopback port while the block runs, a thread a
    connection (daemons); yields its URL (``http://127.0.0.1:PORT/mcp``)."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


def post_head(url: str, size: int) -> tuple[tuple[str, int], bytes]:
    """The address of ``url``'s listener and the head of a JSON POST of ``size`` bytes
    to it, as a raw socket host writes it."""
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\n"
        "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
        f"content-length: {size}\r\n\r\n"
    ).encode()
    return (host, int(port)), head
