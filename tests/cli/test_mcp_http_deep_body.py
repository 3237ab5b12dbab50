"""A POST body of 64 KB or more nested past the JSON reader's depth (a long string, then
2,000 nested arrays) through ``mcp record --url``: the remote's own answer comes back and
the next call is recorded. Before the fix the proxy's reading of the long string
(``_spans.read_spans``) raised ``RecursionError``: the host got the proxy's 500 and a
traceback went to stderr, though the remote had the body. Against a socket remote that
answers every POST without reading it as JSON but the last call's."""

from __future__ import annotations

import json
import socketserver
import threading
from pathlib import Path

from cassette_tui.core.mcp.http import RELAY_FROM
from support.mcp_session import TIMEOUT

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, call

REFUSED = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "nested too deep"}}


class _Refuses(socketserver.StreamRequestHandler):
    """Each POST read by its ``content-length``; a deep one refused, else its call
    answered with its args."""

    def handle(self) -> None:
        while True:
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
            body = self.rfile.read(size)
            if b"[[[[" in body:
                answer = json.dumps(REFUSED).encode()
            else:
                request = json.loads(body)
                text = json.dumps(request["params"]["arguments"])
                result = {"content": [{"type": "text", "text": text}], "isError": False}
                answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})
                answer = answer.encode()
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n%b" % (len(answer), answer)
            )


def test_a_body_nested_too_deep_gets_the_remotes_answer(tmp_path: Path) -> None:
    import httpx2

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Refuses)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    remote = f"http://127.0.0.1:{server.server_address[1]}/mcp"
    run = tmp_path / "deep.jsonl"
    recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
    deep = json.dumps(call(1, "echo", {"text": "x" * 2 * RELAY_FROM, "d": []}))
    deep = deep.replace("[]", "[" * 2000 + "]" * 2000)
    try:
        with httpx2.Client(timeout=TIMEOUT) as client:
            refused = client.post(url, content=deep, headers=HEADERS)
            after = client.post(url, content=json.dumps(call(2, "echo", {"n": 2})), headers=HEADERS)
    finally:
        status = stop(recorder)
        server.shutdown()
        server.server_close()
    assert status == 0
    assert recorder.stderr is not None
    said = recorder.stderr.read().decode()
    assert "Traceback" not in said, said
    assert (refused.status_code, refused.json()) == (200, REFUSED)
    assert after.json()["id"] == 2
    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert [e["args"] for e in entries] == [{"n": 2}]
