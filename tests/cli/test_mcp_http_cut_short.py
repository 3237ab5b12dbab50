"""A request or an answer cut short through ``mcp record --url``: a host that leaves in the
middle of its request (its body cut short, big or small), or a remote that closes in the
middle of a big answer (its ``content-length`` a lie). The proxy says so in one line and
in the report's ``problems``, not in a traceback of uvicorn's, records nothing of it, and
serves the next call. Against the hand-written server on loopback
(``support/mcp_raw_http_server.py``), or a socket server here that answers short; and
``mcp replay --http`` left by a host mid-request."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time
from pathlib import Path

from support.mcp_session import TIMEOUT
from support.raw_request import read_request

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, call


def _cut_request(url: str, body: bytes, sent: int) -> None:
    """A POST of ``body`` whose first ``sent`` bytes only are sent, then the host leaves."""
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
        head = (
            f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\n"
            "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode()
        sock.sendall(head + body[:sent])
        time.sleep(0.2)  # the proxy reads what came (a big body: sends it on) first


def test_a_host_that_leaves_mid_request_is_said_in_one_line(
    tmp_path: Path, raw_remote: str
) -> None:
    import httpx2

    run, report = tmp_path / "left.jsonl", tmp_path / "report.json"
    command = [*CLI, "mcp", "record", "--url", raw_remote, "-o", str(run)]
    recorder, url = started([*command, "--report", str(report)])
    try:
        big = json.dumps(call(1, "echo", {"x": "a" * (2 << 20)})).encode()
        _cut_request(url, big, len(big) // 2)  # past STREAM_FROM: sent on as it comes
        small = json.dumps(call(2, "echo", {"x": "b"})).encode()
        _cut_request(url, small, len(small) // 2)
        with httpx2.Client(timeout=TIMEOUT) as client:
            after = client.post(url, content=json.dumps(call(3, "echo", {"n": 3})), headers=HEADERS)
        assert after.status_code == 200
    finally:
        status = stop(recorder)
    assert status == 0
    assert recorder.stderr is not None
    said = recorder.stderr.read().decode()
    # main: uvicorn's "Exception in ASGI application" and a traceback to ClientDisconnect
    assert "Traceback" not in said and "ClientDisconnect" not in said
    left = "the host left in the middle of its POST request"
    assert said.count(left) == 2
    assert json.loads(report.read_text(encoding="utf-8"))["mcp"]["problems"].count(left) == 2
    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert [(e["seq"], e["args"]) for e in entries] == [(1, {"n": 3})]


class _ShortAnswers(socketserver.BaseRequestHandler):
    """Answers each POST with a JSON head announcing 1,000 bytes more than the 2 MB body
    it sends, then closes: a big answer cut short."""

    def handle(self) -> None:
        read = read_request(self.request.makefile("rb"))
        if read is None:
            return
        request = read[1]
        text = {"content": [{"type": "text", "text": "y" * (2 << 20)}]}
        body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": text}).encode()
        self.request.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n%b" % (len(body) + 1000, body)
        )


def test_a_big_answer_the_remote_cuts_short_is_said_in_one_line(tmp_path: Path) -> None:
    import httpx2

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _ShortAnswers)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    remote = f"http://127.0.0.1:{server.server_address[1]}/mcp"
    run, report = tmp_path / "cut.jsonl", tmp_path / "report.json"
    command = [*CLI, "mcp", "record", "--url", remote, "-o", str(run)]
    recorder, url = started([*command, "--report", str(report)])
    try:
        with httpx2.Client(timeout=TIMEOUT) as client:
            body = json.dumps(call(1, "fill", {}))
            try:
                got = client.post(url, content=body, headers=HEADERS)
            except httpx2.HTTPError:
                pass  # the host sees its connection cut: what it read is not the answer
            else:
                raise AssertionError(f"a cut answer reached the host whole: {got.status_code}")
    finally:
        status = stop(recorder)
        server.shutdown()
        server.server_close()
    assert status == 0
    assert recorder.stderr is not None
    said = recorder.stderr.read().decode()
    # main: uvicorn's "Exception in ASGI application" and a traceback to UpstreamError,
    # and no problem said
    assert "Traceback" not in said
    broke = f"the remote server at {remote} broke its answer"
    assert said.count(broke) == 1
    problems = json.loads(report.read_text(encoding="utf-8"))["mcp"]["problems"]
    assert [p for p in problems if p.startswith(broke)] == [
        f"{broke}: the remote server closed the connection mid-answer"
    ]
    assert not run.exists()  # nothing recorded: the session's empty files removed


def test_replay_over_http_says_a_host_that_leaves_mid_request_in_one_line(
    tmp_path: Path,
) -> None:
    import httpx2

    run = tmp_path / "one.jsonl"
    run.write_text(
        json.dumps({"seq": 1, "tool": "echo", "args": {}, "response": {"content": []}}) + "\n"
    )
    replay, url = started([*CLI, "mcp", "replay", "--http", str(run)])
    try:
        _cut_request(url, json.dumps(call(1, "echo", {})).encode(), 20)
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        with httpx2.Client(timeout=TIMEOUT) as client:
            assert client.post(url, json=init, headers=HEADERS).status_code == 200
    finally:
        status = stop(replay)
    assert replay.stderr is not None
    said = replay.stderr.read().decode()
    # main: uvicorn's "Exception in ASGI application" and a traceback to ClientDisconnect
    assert "Traceback" not in said and "ClientDisconnect" not in said
    assert said.count("the host left in the middle of its POST request") == 1
    assert status in (0, 1)  # (1: the recorded call was left unused)
