"""A remote that answers a POST before its body's end and closes (an early ``413``) while
the body of 64 KB to 1 MB goes on through ``mcp record --url`` as it comes
(``http.RELAY_FROM``): the host gets the remote's answer, as when the body was read whole
first (before session 19), not the proxy's ``502``; nothing of it is recorded and the
next call is served. Against a socket remote and a raw socket host."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from pathlib import Path
from typing import ClassVar

from cassette_tui.core.mcp.http import RELAY_FROM
from cassette_tui.core.mcp.record import STREAM_FROM
from support.mcp_session import TIMEOUT
from support.raw_request import echo_result, post_head, read_body, read_head, served, write_json

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, call

SIZE = 3 * RELAY_FROM
TOO_BIG = {"error": "too big"}


class _RefusesBig(socketserver.StreamRequestHandler):
    """A body from ``RELAY_FROM``: its first half read, then a ``413`` and the connection
    closed (``refused`` set); a smaller one answered with its call's args."""

    refused: ClassVar[threading.Event] = threading.Event()

    def handle(self) -> None:
        fields = read_head(self.rfile)
        if fields is None:
            return
        size = int(fields[b"content-length"])
        body = read_body(self.rfile, size // 2 if size >= RELAY_FROM else size)
        if body is None:
            return
        if size >= RELAY_FROM:
            write_json(self.wfile, TOO_BIG, b"413 Payload Too Large")
            self.connection.close()
            self.refused.set()
            return
        request = json.loads(body)
        write_json(self.wfile, echo_result(request, json.dumps(request["params"]["arguments"])))


def _refused(url: str, body: bytes) -> tuple[bytes, bytes]:
    """A raw host's POST of ``body``: its first half, its rest once the remote refused
    it; the answer's status line and body."""
    address, head = post_head(url, len(body))
    with socket.create_connection(address, timeout=TIMEOUT) as sock:
        sock.sendall(head + body[: len(body) // 2])
        assert _RefusesBig.refused.wait(TIMEOUT), "the body did not go on as it came"
        sock.sendall(body[len(body) // 2 :])
        stream = sock.makefile("rb")
        fields = read_head(stream)
        assert fields is not None, "the proxy closed before answering"
        return fields[b""], stream.read(int(fields.get(b"content-length", b"200")))


def test_an_early_413_comes_back_to_the_host(tmp_path: Path) -> None:
    import httpx2

    assert RELAY_FROM <= SIZE < STREAM_FROM
    _RefusesBig.refused.clear()
    run = tmp_path / "early.jsonl"
    body = json.dumps(call(1, "echo", {"pad": "p" * SIZE})).encode()
    with served(_RefusesBig) as remote:
        recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
        try:
            status, answer = _refused(url, body)
            with httpx2.Client(timeout=TIMEOUT) as client:
                after = json.dumps(call(2, "echo", {"n": 2}))
                got = client.post(url, content=after, headers=HEADERS)
        finally:
            code = stop(recorder)
    assert code == 0
    # before the fix: 502, the proxy's own words on the remote's close
    assert (status.split(b" ")[1], answer) == (b"413", json.dumps(TOO_BIG).encode())
    assert got.status_code == 200 and got.json()["id"] == 2
    (entry,) = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert (entry["seq"], entry["args"]) == (1, {"n": 2})
