"""The bad input of issue 27 through ``mcp record --url`` (Streamable HTTP), as over stdio
(``test_mcp_nothing_lost.py``): a body that is not JSON, a batch array, an id reused while
in flight, a 5 MB message, an answer holding invalid UTF-8, a host that disconnects
mid-call, a server that dies mid-call. Against a hand-written HTTP server on loopback
(``support/mcp_raw_http_server.py``) and a raw ``httpx2`` host; every process bounded."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from support.mcp_session import CLI, TIMEOUT, TOY_SERVER

from tests.cli.test_mcp_http import free_port, started, stop, wait_listening

SERVER = str(Path(TOY_SERVER).with_name("mcp_raw_http_server.py"))
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def call(request_id: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def content(body: bytes, chunked: bool) -> bytes | Iterator[bytes]:
    """What a host posts: ``body`` whole (announced with a length), or in 1 MB pieces
    (sent chunked: the relay reads it whole first)."""
    if not chunked:
        return body
    return (body[at : at + (1 << 20)] for at in range(0, len(body), 1 << 20))


def test_bad_input_over_http_is_forwarded_and_nothing_answered_is_lost(tmp_path: Path) -> None:
    import httpx2

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, SERVER, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    run, report = tmp_path / "bad.jsonl", tmp_path / "report.json"
    try:
        wait_listening(port)
        remote = f"http://127.0.0.1:{port}/mcp"
        recorder, url = started(
            [*CLI, "mcp", "record", "--url", remote, "-o", str(run), "--report", str(report)]
        )
        try:
            with httpx2.Client(timeout=TIMEOUT) as client:

                def post(doc: Any) -> Any:
                    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
                    return client.post(url, content=data, headers=HEADERS)

                init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
                assert post(init).json()["result"]["serverInfo"]["name"] == "raw-http"
                # not JSON: the remote's 400 comes back, the proxy goes on
                bad = post(b"{not json")
                assert bad.status_code == 400 and bad.json()["error"]["code"] == -32700
                # a batch array: one answer array, one entry each
                batch = post([call(1, "echo", {"n": 1}), call(2, "echo", {"n": 2})]).json()
                assert [a["id"] for a in batch] == [1, 2]
                # an answer holding invalid UTF-8: byte for byte
                raw = post(call(4, "bad_utf8", {"t": "caf@"}))
                assert b"\xff" in raw.content
                # 5 MB each way
                big = "x" * (5 << 20)
                answer = post(call(5, "echo", {"big": big})).json()
                assert json.loads(answer["result"]["content"][0]["text"]) == {"big": big}
                # id 7 reused while in flight: each POST gets its own answer, under id 7
                answers: list[Any] = []
                first = {"who": "first", "started": str(tmp_path / "first-in-flight")}
                slow = threading.Thread(
                    target=lambda: answers.append(post(call(7, "slow", first)).json())
                )
                slow.start()
                # the second id 7 goes out only once the first is at the server
                deadline = time.monotonic() + TIMEOUT
                while not Path(first["started"]).exists():
                    assert time.monotonic() < deadline, "the first id 7 never reached the server"
                    time.sleep(0.01)
                answers.append(post(call(7, "echo", {"who": "second"})).json())
                slow.join(TIMEOUT)
                assert sorted(
                    json.loads(a["result"]["content"][0]["text"])["who"] for a in answers
                ) == [
                    "first",
                    "second",
                ]
                assert {a["id"] for a in answers} == {7}
                # a host that gives up on a call mid-way: the proxy goes on
                with contextlib.suppress(httpx2.TimeoutException):
                    client.post(
                        url,
                        content=json.dumps(call(8, "slow", {"who": "gone"})),
                        headers=HEADERS,
                        timeout=0.2,
                    )
                assert post(call(9, "echo", {"after": "drop"})).json()["id"] == 9
                # the server dies mid-call: the host gets 502, what was recorded stays
                died = post(call(10, "die", {}))
                assert died.status_code == 502
        finally:
            assert stop(recorder) == 0
    finally:
        server.kill()
        server.wait(timeout=TIMEOUT)

    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    args = [e["args"] for e in entries]
    for wanted in ({"n": 1}, {"n": 2}, first, {"who": "second"}, {"after": "drop"}):
        assert args.count(wanted) == 1, (wanted, args)
    assert any(
        e["tool"] == "bad_utf8" and "\ufffd" in json.dumps(e["response"], ensure_ascii=False)
        for e in entries
    )
    assert {"big": "x" * (5 << 20)} in args
    done = json.loads(report.read_text(encoding="utf-8"))
    assert "tools/call" in done["mcp"]["unanswered"]  # the call the server died on
    problems = " ".join(done["mcp"]["problems"])
    assert "reused id 7" in problems and "did not answer" in problems
