"""A host that leaves ``mcp record --url`` in the middle of its request (its body cut
short, big or small): the proxy says so in one line and in the report's ``problems``, not
in a traceback of uvicorn's, records nothing of it, and serves the next call. Against the
hand-written server on loopback (``support/mcp_raw_http_server.py``)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from support.mcp_session import TIMEOUT

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
