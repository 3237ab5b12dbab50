"""``mcp record --url http://user:pass@host/mcp``: the credentials reach the remote as
Basic auth (as ``httpx2`` sends them; the proxy's own client sent none), and are never
said whole: a problem naming the remote masks them on stderr and in the report."""

from __future__ import annotations

import base64
import json
import socket
import socketserver
import threading
from pathlib import Path

from support.mcp_session import TIMEOUT
from support.raw_request import read_request

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, call

PASSWORD = "s3cretPassw0rd"
BASIC = b"Basic " + base64.b64encode(f"user:{PASSWORD}".encode())


class _AuthOnly(socketserver.BaseRequestHandler):
    """Answers a POST with an empty tool result when it carries ``BASIC``, else ``401``."""

    def handle(self) -> None:
        read = read_request(self.request.makefile("rb"))
        if read is None:
            return
        fields, request = read
        if fields.get(b"authorization") != BASIC:
            self.request.sendall(
                b"HTTP/1.1 401 No\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            return
        body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}})
        self.request.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%b" % (len(body), body.encode())
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_url_credentials_reach_the_remote_and_are_never_said(tmp_path: Path) -> None:
    import httpx2

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _AuthOnly)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    for remote_port, expected in ((port, 200), (_free_port(), 502)):  # the second: no one
        remote = f"http://user:{PASSWORD}@127.0.0.1:{remote_port}/mcp"
        run, report = tmp_path / f"{expected}.jsonl", tmp_path / f"{expected}.json"
        command = [*CLI, "mcp", "record", "--url", remote, "-o", str(run)]
        recorder, url = started([*command, "--report", str(report)])
        try:
            with httpx2.Client(timeout=TIMEOUT) as client:
                body = json.dumps(call(1, "echo", {}))
                # main: 401 from the remote (no credentials sent by the own client)
                assert client.post(url, content=body, headers=HEADERS).status_code == expected
        finally:
            stop(recorder)
        assert recorder.stderr is not None
        said = recorder.stderr.read().decode()
        written = report.read_text(encoding="utf-8")
        # main: "the remote server at http://user:s3cretPassw0rd@127.0.0.1:P/mcp did not ..."
        assert PASSWORD not in said and PASSWORD not in written
        if expected == 502:
            assert "the remote server at http://«user…(19 chars)»@127.0.0.1:" in said
    server.shutdown()
    server.server_close()
