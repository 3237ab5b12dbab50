"""A small POST through ``mcp record --url`` goes on to the remote before it is noted when
nothing is in flight (issue 31: the note's work no longer between the host's request and
the remote), and is noted first otherwise: when a call is in flight (an id it reuses
must be aliased before it goes), in a batch (which may reuse an id within itself), or
when a body is still coming. Either way the entry recorded is the same; a call the
remote never got is still noted as unanswered (``HttpRecordingProxy._handled``, fed a
``LeanRequest`` and a stand-in for the proxy's own client)."""

from __future__ import annotations

import asyncio
import json
import tempfile
from typing import Any

import pytest
from cassette_tui.core.mcp._lean_post import LeanRequest
from cassette_tui.core.mcp._upstream import UpstreamError, _Headers
from cassette_tui.core.mcp.http import HttpRecordingProxy

from tests.core.mcp.test_http_streamed import cassette, proxy_in

HEADERS = [(b"content-type", b"application/json"), (b"accept", b"application/json")]


def _call(request_id: Any, n: int = 1) -> dict[str, Any]:
    params = {"name": "echo", "arguments": {"n": n}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _answer_to(line: bytes) -> bytes:
    docs = json.loads(line)
    answers = [
        {"jsonrpc": "2.0", "id": d["id"], "result": {"content": [], "isError": False}}
        for d in (docs if isinstance(docs, list) else [docs])
    ]
    return json.dumps(answers if isinstance(docs, list) else answers[0]).encode()


class _Answer:
    def __init__(self, body: bytes) -> None:
        self.status_code = 200
        self.headers = _Headers([(b"content-type", b"application/json")])
        self.body = body

    async def aread(self) -> bytes:
        return self.body

    async def aclose(self) -> None:
        return None


class _Remote:
    """The proxy's own client: notes what it sends (``log``), says it has gone
    (``after_body``), answers each call; ``down``: refuses to connect."""

    def __init__(self, log: list[Any], down: bool = False) -> None:
        self.log = log
        self.down = down

    async def send(self, method: str, headers: Any, content: Any, after_body: Any = None) -> Any:
        if self.down:
            raise UpstreamError("cannot connect to 127.0.0.1:9: refused")
        self.log.append(("sent", bytes(content)))
        if after_body is not None:
            after_body()
        return _Answer(_answer_to(bytes(content)))


def _recording(proxy: HttpRecordingProxy, log: list[Any]) -> None:
    noted = proxy._from_host

    def from_host(line: Any, *args: Any, **kwargs: Any) -> Any:
        log.append("noted")
        return noted(line, *args, **kwargs)

    proxy._from_host = from_host  # type: ignore[method-assign]


def _post(proxy: HttpRecordingProxy, body: bytes) -> Any:
    size = [(b"content-length", b"%d" % len(body))]
    return proxy._handled(LeanRequest([*HEADERS, *size], body))


@pytest.mark.parametrize("shape", ["alone", "batch", "in flight"])
def test_a_small_call_goes_on_first_only_when_nothing_is_in_flight(shape: str) -> None:
    log: list[Any] = []
    body = json.dumps(_call(1)).encode()
    if shape == "batch":
        body = json.dumps([_call(1), _call(2, 2)]).encode()
    with tempfile.TemporaryDirectory() as tmp:
        proxy = proxy_in(tmp)
        proxy._upstream = _Remote(log)  # type: ignore[assignment]
        _recording(proxy, log)

        async def main() -> None:
            if shape == "in flight":  # another call the remote has not answered yet
                proxy._from_host(json.dumps(_call(9, 9)).encode())
                log.clear()
            await _post(proxy, body)

        asyncio.run(main())
        entries = [json.loads(line) for line in cassette(proxy, tmp).splitlines()]
    first = [("sent", body), "noted"] if shape == "alone" else ["noted", ("sent", body)]
    assert log == first
    assert [e["args"] for e in entries] == (
        [{"n": 1}, {"n": 2}] if shape == "batch" else [{"n": 1}]
    )


def test_an_id_reused_in_flight_is_still_aliased() -> None:
    log: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        proxy = proxy_in(tmp)
        proxy._upstream = _Remote(log)  # type: ignore[assignment]
        proxy._from_host(json.dumps(_call(1, 9)).encode())
        asyncio.run(_post(proxy, json.dumps(_call(1)).encode()))
        cassette(proxy, tmp)
    ((_, sent),) = log
    assert json.loads(sent)["id"] == "cassette-tui-reused-id-1"


def test_a_call_the_remote_never_got_is_noted_unanswered() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        proxy = proxy_in(tmp)
        proxy._upstream = _Remote([], down=True)  # type: ignore[assignment]
        response = asyncio.run(_post(proxy, json.dumps(_call(1)).encode()))
        cassette(proxy, tmp)
    assert response.status_code == 502
    assert [p.method for p in proxy._pending.values()] == ["tools/call"]
    assert not proxy._relaying
