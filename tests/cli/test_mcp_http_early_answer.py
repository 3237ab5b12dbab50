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

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, call

SIZE = 3 * RELAY_FROM
TOO_BIG = b'{"error":"too big"}'


class _RefusesBig(socketserver.StreamRequestHandler):
    """A body from ``RELAY_FROM``: its first half read, then a ``413`` and the connection
    closed (``refused`` set); a smaller one answered with its call's args."""

    refused: ClassVar[threading.Event] = threading.Event()

    def handle(self) -> None:
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            line = self.rfile.readline()
            if not line:
                return
            head += line
        size = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        body = b""
        while len(body) < (size // 2 if size >= RELAY_FROM else size):
            more = self.rfile.read1(size - len(body))
            if not more:
                return
            body += more
        if size >= RELAY_FROM:
            self.wfile.write(
                b"HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\n"
                b"connection: close\r\ncontent-length: %d\r\n\r\n%b" % (len(TOO_BIG), TOO_BIG)
            )
            self.wfile.flush()
            self.connection.close()
            self.refused.set()
            return
        request = json.loads(body)
        text = json.dumps(request["params"]["arguments"])
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        self.wfile.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%b" % (len(answer), answer)
        )


def test_an_early_413_comes_back_to_the_host(tmp_path: Path) -> None:
    import httpx2

    assert RELAY_FROM <= SIZE < STREAM_FROM
    _RefusesBig.refused.clear()
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _RefusesBig)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    remote = f"http://127.0.0.1:{server.server_address[1]}/mcp"
    run = tmp_path / "early.jsonl"
    recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
    body = json.dumps(call(1, "echo", {"pad": "p" * SIZE})).encode()
    try:
        host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
        with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
            head = (
                f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\n"
                "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
                f"content-length: {len(body)}\r\n\r\n"
            ).encode()
            sock.sendall(head + body[: len(body) // 2])
            assert _RefusesBig.refused.wait(TIMEOUT), "the body did not go on as it came"
            sock.sendall(body[len(body) // 2 :])
            stream = sock.makefile("rb")
            status = stream.readline()
            while stream.readline() not in (b"\r\n", b""):
                pass
            # before the fix: 502, the proxy's own words on the remote's close
            assert status.startswith(b"HTTP/1.1 413"), status + stream.read1(200)
            assert stream.read(len(TOO_BIG)) == TOO_BIG
        with httpx2.Client(timeout=TIMEOUT) as client:
            got = client.post(url, content=json.dumps(call(2, "echo", {"n": 2})), headers=HEADERS)
    finally:
        code = stop(recorder)
        server.shutdown()
        server.server_close()
    assert code == 0
    assert got.status_code == 200 and got.json()["id"] == 2
    (entry,) = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert (entry["seq"], entry["args"]) == (1, {"n": 2})
