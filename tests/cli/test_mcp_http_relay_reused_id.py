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
from typing import Any, ClassVar

import pytest
from cassette_tui.core.mcp.http import RELAY_FROM
from cassette_tui.core.mcp.record import STREAM_FROM
from support.mcp_session import TIMEOUT
from support.raw_request import echo_result, post_head, read_body, read_head, served, write_json

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, call
from tests.cli.test_mcp_http_relay_first import _answer

#: between the relay's floor and ``STREAM_FROM``: held whole before session 19
SIZE = 3 * RELAY_FROM


class _HoldsCalls(socketserver.StreamRequestHandler):
    """Each POST read by its ``content-length`` (``began`` set at a big body's first
    bytes), counted in ``arrived``, then answered with its args' ``who`` once
    ``released``."""

    began: ClassVar[threading.Event] = threading.Event()
    released: ClassVar[threading.Event] = threading.Event()
    arrived: ClassVar[threading.Semaphore] = threading.Semaphore(0)

    def handle(self) -> None:
        fields = read_head(self.rfile)
        if fields is None:
            return
        size = int(fields[b"content-length"])
        first = self.rfile.read1(size)
        if size >= RELAY_FROM:
            self.began.set()
        body = read_body(self.rfile, size, first)
        if body is None:
            return
        request = json.loads(body)
        self.arrived.release()
        self.released.wait(TIMEOUT)
        who = json.dumps(request["params"]["arguments"]["who"])
        write_json(self.wfile, echo_result(request, who))


def _send_cut(url: str, body: bytes) -> socket.socket:
    """A raw host's connection to ``url`` on which a POST of ``body`` is sent but for
    its second half."""
    address, head = post_head(url, len(body))
    sock = socket.create_connection(address, timeout=TIMEOUT)
    sock.sendall(head + body[: len(body) // 2])
    return sock


def _reuse(url: str, first: bytes, second: str) -> dict[str, Any]:
    """``first`` half sent, ``second`` posted by another host, ``first``'s rest sent once
    the second is in the proxy; each host's answer."""
    import httpx2

    answers: dict[str, Any] = {}
    with _send_cut(url, first) as sock:
        assert _HoldsCalls.began.wait(TIMEOUT), "the first body did not go on as it came"

        def post_second() -> None:
            with httpx2.Client(timeout=TIMEOUT) as client:
                answers["second"] = client.post(url, content=second, headers=HEADERS).json()

        other = threading.Thread(target=post_second)
        other.start()
        # the second in the proxy while the first still comes (before the fix it went on
        # at once: in the remote's hands, counted)
        if _HoldsCalls.arrived.acquire(timeout=0.3):
            _HoldsCalls.arrived.release()
        sock.sendall(first[len(first) // 2 :])
        for _ in range(2):
            assert _HoldsCalls.arrived.acquire(timeout=TIMEOUT), "a call never came"
        _HoldsCalls.released.set()
        answers["first"] = json.loads(_answer(sock))
        other.join(TIMEOUT)
    return answers


@pytest.mark.parametrize("second_size", [0, SIZE], ids=["small", "big"])
def test_an_id_reused_while_a_relayed_body_comes_is_aliased(
    tmp_path: Path, second_size: int
) -> None:
    assert RELAY_FROM <= SIZE < STREAM_FROM
    _HoldsCalls.began.clear()
    _HoldsCalls.released.clear()
    _HoldsCalls.arrived = threading.Semaphore(0)
    run = tmp_path / "reused.jsonl"
    first = json.dumps(call(7, "echo", {"who": "first", "pad": "f" * SIZE})).encode()
    second = json.dumps(call(7, "echo", {"who": "second", "pad": "s" * second_size}))
    with served(_HoldsCalls) as remote:
        recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
        try:
            answers = _reuse(url, first, second)
        finally:
            _HoldsCalls.released.set()
            status = stop(recorder)
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
    calls: list[tuple[int, dict[str, Any]]] = [(8, {"n": 8}), (9, {"n": 9, "pad": "p" * SIZE})]
    try:
        with _send_cut(url, first), httpx2.Client(timeout=TIMEOUT) as client:
            got = [
                client.post(url, content=json.dumps(call(n, "echo", args)), headers=HEADERS)
                for n, args in calls
            ]
    finally:
        status = stop(recorder)
    assert status == 0
    assert [(g.status_code, g.json()["id"]) for g in got] == [(200, 8), (200, 9)]
    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert [e["args"]["n"] for e in entries] == [8, 9]
