"""An id reused across two POSTs through ``mcp record --url`` while the first, of 64 KB to
1 MB, is still coming (it goes on to the remote as it comes, ``http.RELAY_FROM``): the
second is held until the first is noted and goes on under an alias, both calls recorded,
as when both were read whole (before session 19). Before the fix the second was noted
first (or went on as it came too) and both calls were kept aside, the cassette empty.
Against a socket remote that notes a body's first bytes and holds each call until both
are in; a raw socket host for the first call, ``httpx2`` for the second."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from pathlib import Path
from typing import ClassVar

import pytest
from cassette_tui.core.mcp.http import RELAY_FROM
from cassette_tui.core.mcp.record import STREAM_FROM
from support.mcp_session import TIMEOUT

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, call
from tests.cli.test_mcp_http_relay_first import _answer

#: between the relay's floor and ``STREAM_FROM``: held whole before session 19
SIZE = 3 * RELAY_FROM


class _HoldsCalls(socketserver.StreamRequestHandler):
    """Each POST read by its ``content-length`` (``began`` set at a big body's first
    bytes), counted in ``arrived``, then answered with its own args once ``released``."""

    began: ClassVar[threading.Event] = threading.Event()
    released: ClassVar[threading.Event] = threading.Event()
    arrived: ClassVar[threading.Semaphore] = threading.Semaphore(0)

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
        while len(body) < size:
            more = self.rfile.read1(size - len(body))
            if not more:
                return
            if size >= RELAY_FROM:
                self.began.set()
            body += more
        request = json.loads(body)
        self.arrived.release()
        self.released.wait(TIMEOUT)
        text = json.dumps(request["params"]["arguments"]["who"])
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        self.wfile.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%b" % (len(answer), answer)
        )


@pytest.mark.parametrize("second_size", [0, SIZE], ids=["small", "big"])
def test_an_id_reused_while_a_relayed_body_comes_is_aliased(
    tmp_path: Path, second_size: int
) -> None:
    import httpx2

    assert RELAY_FROM <= SIZE < STREAM_FROM
    _HoldsCalls.began.clear()
    _HoldsCalls.released.clear()
    _HoldsCalls.arrived = threading.Semaphore(0)
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _HoldsCalls)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    remote = f"http://127.0.0.1:{server.server_address[1]}/mcp"
    run = tmp_path / "reused.jsonl"
    recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
    first = json.dumps(call(7, "echo", {"who": "first", "pad": "f" * SIZE})).encode()
    second = json.dumps(call(7, "echo", {"who": "second", "pad": "s" * second_size}))
    answers: dict[str, dict] = {}
    try:
        host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
        with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
            head = (
                f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\n"
                "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
                f"content-length: {len(first)}\r\n\r\n"
            ).encode()
            sock.sendall(head + first[: len(first) // 2])
            assert _HoldsCalls.began.wait(TIMEOUT), "the first body did not go on as it came"

            def post_second() -> None:
                with httpx2.Client(timeout=TIMEOUT) as client:
                    answers["second"] = client.post(url, content=second, headers=HEADERS).json()

            other = threading.Thread(target=post_second)
            other.start()
            # the second in the proxy while the first still comes (before the fix it went
            # on at once: in the remote's hands, counted)
            if _HoldsCalls.arrived.acquire(timeout=0.3):
                _HoldsCalls.arrived.release()
            sock.sendall(first[len(first) // 2 :])
            for _ in range(2):
                assert _HoldsCalls.arrived.acquire(timeout=TIMEOUT), "a call never came"
            _HoldsCalls.released.set()
            answers["first"] = json.loads(_answer(sock))
            other.join(TIMEOUT)
    finally:
        _HoldsCalls.released.set()
        status = stop(recorder)
        server.shutdown()
        server.server_close()
    assert status == 0
    assert recorder.stderr is not None
    said = recorder.stderr.read().decode()
    assert "kept aside" not in said, said
    assert "the server got 'cassette-tui-reused-id-1'" in said, said
    got = {
        who: (a["id"], json.loads(a["result"]["content"][0]["text"])) for who, a in answers.items()
    }
    assert got == {"first": (7, "first"), "second": (7, "second")}
    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert sorted(e["args"]["who"] for e in entries) == ["first", "second"]


def test_a_host_stalling_mid_body_holds_up_another_call_a_bounded_while(
    tmp_path: Path, raw_remote: str
) -> None:
    """The wait for a body still coming is bounded (``RELAY_NOTED_WITHIN``) and made once:
    another host's calls are served while the first stalls, then leaves."""
    import httpx2

    run = tmp_path / "stalled.jsonl"
    recorder, url = started([*CLI, "mcp", "record", "--url", raw_remote, "-o", str(run)])
    first = json.dumps(call(7, "echo", {"pad": "f" * SIZE})).encode()
    try:
        host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
        with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
            head = (
                f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\n"
                "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
                f"content-length: {len(first)}\r\n\r\n"
            ).encode()
            sock.sendall(head + first[: len(first) // 2])
            with httpx2.Client(timeout=TIMEOUT) as client:
                got = [
                    client.post(url, content=json.dumps(call(n, "echo", args)), headers=HEADERS)
                    for n, args in [(8, {"n": 8}), (9, {"n": 9, "pad": "p" * SIZE})]
                ]
    finally:
        status = stop(recorder)
    assert status == 0
    assert [(g.status_code, g.json()["id"]) for g in got] == [(200, 8), (200, 9)]
    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert [e["args"]["n"] for e in entries] == [8, 9]
