"""A live MCP client over stdio, for ``cassette-tui verify``: the recorded calls re-issued
to the real server, with no agent and no model.

The server is started as the recording proxy starts it (``_stdio.spawn_server``: its own
process group, widened pipes) and stopped as the proxy stops it (``stop_server``). The
client speaks the stdio transport line by line and keeps each answer as the server sent
it (``_wire.read_line``), so a live ``CallToolResult`` compares with a recorded one field
for field (the proxy records the raw result too; the SDK's typed client would add and
drop fields). A request the server sends the client (``roots/list``, sampling) is
answered with JSON-RPC error -32601: verify has no host to ask.

Two handshakes, the one the recording used (its sidecar says: ``_facts``): ``initialize``
then the ``initialized`` notification (protocol versions up to 2025), or ``server/discover``
with the protocol version, client info and capabilities in every request's ``_meta``
(2026-07-28, the SDK's stateless sessions). A server answers in the shape of the version
it is spoken to in (2026-07-28 results carry ``resultType`` and the server's info in
``_meta``), so speaking the recorded version keeps a fresh answer equal to the recorded one.

``LiveServer`` is synchronous (a private event loop), so a job generator can call it
between its progress events. ``HttpLiveServer`` speaks the same protocol to a remote
server over Streamable HTTP (``verify --url``). Imported only by ``core/why/_live.py`` when
``--mcp`` or ``--url`` is given: the SDK (``_wire``'s message types) is loaded then and
never by the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import tempfile
from collections import deque
from typing import Any

from cassette_tui.core.format.errors import CassetteError

from ._stdio import spawn_server, stop_server
from ._wire import dump_doc, read_line

__all__ = [
    "HANDSHAKES",
    "PROTOCOL_VERSION",
    "CallTimeout",
    "HttpLiveServer",
    "LiveServer",
    "ServerGone",
]

#: the protocol version offered at ``initialize`` when the recording names none
PROTOCOL_VERSION = "2025-06-18"
#: the handshakes ``LiveServer`` speaks (see the module doc)
HANDSHAKES = ("initialize", "server/discover")
#: the reserved request ``_meta`` keys of a ``server/discover`` session (2026-07-28)
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CLIENT = "io.modelcontextprotocol/clientInfo"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_CLIENT_INFO = {"name": "cassette-tui verify", "version": "1"}
#: JSON-RPC "method not found": the answer to a request the server sends the client
_METHOD_NOT_FOUND = -32601
#: lines of the server's stderr quoted when it exits
_STDERR_LINES = 5


class ServerGone(CassetteError):
    """The MCP server could not be started, or exited (or closed its stdout) before it
    answered. The message names the command, the request it did not answer, its exit
    status and the last lines of its stderr. Attributes: ``command``, ``status`` (``None``
    when it never started or is still running)."""

    def __init__(self, command: list[str], message: str, status: int | None = None) -> None:
        self.command = command
        self.status = status
        super().__init__(f"the MCP server `{shlex.join(command)}` {message}")


class CallTimeout(CassetteError):
    """The server did not answer one request within the timeout (it is still running)."""


class _Session:
    """The protocol side of a live session, whatever carries it: the handshake, the
    ``_meta`` of a ``server/discover`` session, ``tools/list`` pages, ``tools/call``. A
    transport gives ``_open`` (start, before the handshake), ``_roundtrip`` (one request,
    its answer), ``_notify`` (one notification) and ``close``."""

    def __init__(
        self,
        command: list[str],
        *,
        timeout: float = 60.0,
        protocol_version: str | None = None,
        handshake: str = "initialize",
    ) -> None:
        if not command:
            raise ValueError("no MCP server command")
        if handshake not in HANDSHAKES:
            raise ValueError(f"unknown handshake {handshake!r}: one of {', '.join(HANDSHAKES)}")
        self.handshake = handshake
        self.command = list(command)
        self.timeout = timeout
        self.protocol_version = protocol_version or PROTOCOL_VERSION
        self.initialize_params: dict[str, Any] = {}
        self.initialize_result: dict[str, Any] = {}
        self._next_id = 0
        self._gone: ServerGone | None = None

    def __enter__(self) -> _Session:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> dict[str, Any]:
        """Start the server (or reach it) and shake hands: ``initialize``, then the
        ``initialized`` notification; or ``server/discover``. Returns the handshake's
        result.

        Raises:
            ServerGone: the server cannot start (or be reached), or it ended before
                answering, or it refused the handshake.
            CallTimeout: no answer within ``timeout``.
        """
        self._open()
        if self.handshake == "initialize":
            self.initialize_params = {
                "protocolVersion": self.protocol_version,
                "capabilities": {},
                "clientInfo": dict(_CLIENT_INFO),
            }
        result, error = self.request(self.handshake, dict(self.initialize_params))
        if error is not None:
            why = f"refused {self.handshake}: {error.get('message')} (code {error.get('code')})"
            raise ServerGone(self.command, why)
        self.initialize_result = result or {}
        if self.handshake == "initialize":
            self._notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self.initialize_result

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool of ``tools/list`` (all pages), as the server sent them.

        Raises:
            ServerGone, CallTimeout: as ``request``; ServerGone too when the server
            answers ``tools/list`` with an error.
        """
        tools: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        for _page in range(1000):
            result, error = self.request("tools/list", params)
            if error is not None:
                raise ServerGone(self.command, f"refused tools/list: {error.get('message')}")
            page = (result or {}).get("tools")
            tools.extend(t for t in page or [] if isinstance(t, dict))
            cursor = (result or {}).get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
            params = {"cursor": cursor}
        return tools

    def call(self, tool: str, args: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """``tools/call`` ``tool`` with ``args``: ``(result, None)`` with the
        ``CallToolResult`` as sent, or ``(None, error)`` with the JSON-RPC error object.

        Raises:
            ServerGone: the server ended (or went away) before answering.
            CallTimeout: no answer within ``timeout``.
        """
        return self.request("tools/call", {"name": tool, "arguments": args})

    def request(
        self, method: str, params: Any
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """Send one request and wait for its answer (see ``call``)."""
        if self._gone is not None:
            raise self._gone
        self._next_id += 1
        request_id = self._next_id
        if self.handshake == "server/discover" and isinstance(params, dict):
            meta = {_META_VERSION: self.protocol_version, _META_CLIENT: dict(_CLIENT_INFO),
                    _META_CAPABILITIES: {}}  # fmt: skip
            params = {**params, "_meta": {**meta, **(params.get("_meta") or {})}}
        doc = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return self._roundtrip(method, doc, request_id)

    def close(self) -> None:
        """End the session."""

    def _open(self) -> None:
        raise NotImplementedError

    def _roundtrip(
        self, method: str, doc: dict[str, Any], request_id: int
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        raise NotImplementedError

    def _notify(self, doc: dict[str, Any]) -> None:
        raise NotImplementedError


def _answer_of(doc: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(result, None)`` or ``(None, error)`` of one JSON-RPC answer object."""
    if "error" in doc:
        error = doc.get("error")
        return None, error if isinstance(error, dict) else {"message": str(error)}
    result = doc.get("result")
    return (result if isinstance(result, dict) else {"result": result}), None


class LiveServer(_Session):
    """One live session with an MCP server over stdio.

    Args:
        command: the server command and its arguments.
        timeout: seconds each request may take (the handshake included).
        grace: seconds the server gets to exit once its stdin is closed, and again after
            SIGTERM, before SIGKILL (as ``mcp record --grace``).
        protocol_version: the version spoken (the recorded one, when known).
        handshake: ``"initialize"`` or ``"server/discover"`` (see the module doc).

    Use: ``start()`` (the handshake's result), ``list_tools()``, ``call(tool, args)``,
    ``close()``; or as a context manager around the three.
    """

    def __init__(
        self,
        command: list[str],
        *,
        timeout: float = 60.0,
        grace: float = 2.0,
        protocol_version: str | None = None,
        handshake: str = "initialize",
    ) -> None:
        super().__init__(
            command, timeout=timeout, protocol_version=protocol_version, handshake=handshake
        )
        self.grace = grace
        self._loop = asyncio.new_event_loop()
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()

    def _open(self) -> None:
        try:
            self._proc = self._loop.run_until_complete(
                spawn_server(self.command, stderr=self._stderr)
            )
        except OSError as exc:
            raise ServerGone(self.command, f"cannot start: {exc.strerror or exc}") from None

    def _roundtrip(
        self, method: str, doc: dict[str, Any], request_id: int
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        self._send(doc)
        return self._loop.run_until_complete(self._answer(method, request_id))

    def _notify(self, doc: dict[str, Any]) -> None:
        self._send(doc)

    def close(self) -> None:
        """Stop the server (stdin closed, then SIGTERM, then SIGKILL) and free the loop."""
        proc, self._proc = self._proc, None
        try:
            if proc is not None:
                self._loop.run_until_complete(stop_server(proc, self.grace))
        finally:
            self._loop.close()
            self._stderr.close()

    # -- the wire -------------------------------------------------------------------------
    def _send(self, doc: dict[str, Any]) -> None:
        self._loop.run_until_complete(self._write(doc))

    async def _write(self, doc: dict[str, Any]) -> None:
        """One line to the server; awaited inside ``_answer`` too (the refusal of a
        server request sent while a call is pending), where the loop is running."""
        proc = self._proc
        assert proc is not None and proc.stdin is not None, "not started"
        try:
            proc.stdin.write(dump_doc(doc))
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise self._ended(f"closed its stdin before {doc.get('method')}") from None

    async def _answer(
        self, method: str, request_id: int
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        deadline = self._loop.time() + self.timeout
        while True:
            left = deadline - self._loop.time()
            try:
                line = await asyncio.wait_for(proc.stdout.readline(), max(left, 0.0))
            except TimeoutError:
                raise CallTimeout(
                    f"the MCP server `{shlex.join(self.command)}` did not answer {method} "
                    f"within {self.timeout:g} s"
                ) from None
            except ValueError:  # a line past LINE_LIMIT
                why = f"sent a line too long to read while answering {method}"
                raise self._ended(why) from None
            if not line:
                await self._wait_exit(proc)
                raise self._ended(f"exited before answering {method}")
            for frame in read_line(line).frames:
                if frame.kind == "request":  # the server asks its host: there is none
                    refusal = f"cassette-tui verify has no host to answer {frame.method}"
                    error = {"code": _METHOD_NOT_FOUND, "message": refusal}
                    await self._write({"jsonrpc": "2.0", "id": frame.id, "error": error})
                elif frame.kind in ("response", "error") and frame.id == request_id:
                    return _answer_of(frame.doc)

    async def _wait_exit(self, proc: asyncio.subprocess.Process) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), self.grace)

    def _ended(self, what: str) -> ServerGone:
        proc = self._proc
        status = proc.returncode if proc is not None else None
        said = f"{what} (exit status {status})" if status is not None else what
        tail = self._stderr_tail()
        if tail:
            said += "; its stderr ends: " + " | ".join(tail)
        self._gone = ServerGone(self.command, said, status)
        return self._gone

    def _stderr_tail(self) -> list[str]:
        try:
            self._stderr.flush()
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 4096))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return []
        lines: deque[str] = deque(maxlen=_STDERR_LINES)
        for line in text.splitlines():
            if line.strip():
                lines.append(line.strip()[:200])
        return list(lines)


class HttpLiveServer(_Session):
    """One live session with a remote MCP server over Streamable HTTP (``url``, the MCP
    spec's "Streamable HTTP": each request POSTed, answered as one JSON object or as a
    ``text/event-stream`` whose events end with the answer; the ``Mcp-Session-Id`` the
    server names at ``initialize`` sent back; ``MCP-Protocol-Version`` on every request
    after the handshake). Server requests on a stream go unanswered (verify has no host);
    a DELETE ends a named session. Same use as ``LiveServer``."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 60.0,
        protocol_version: str | None = None,
        handshake: str = "initialize",
    ) -> None:
        super().__init__(
            [url], timeout=timeout, protocol_version=protocol_version, handshake=handshake
        )
        self.url = url
        self._client: Any = None
        self._session_id: str | None = None

    def _open(self) -> None:
        import httpx2

        self._client = httpx2.Client(timeout=httpx2.Timeout(self.timeout))

    def _headers(self, doc: dict[str, Any] | None) -> dict[str, str]:
        """The request's headers: the session, the protocol version after the handshake;
        in a ``server/discover`` session also the routing headers the 2026-07-28 spec
        asks of every request (``Mcp-Method``, ``Mcp-Name`` for a named target)."""
        from mcp.shared.inbound import (
            MCP_METHOD_HEADER,
            MCP_NAME_HEADER,
            NAME_BEARING_METHODS,
            encode_header_value,
        )

        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        method = doc.get("method") if doc is not None else None
        discover = self.handshake == "server/discover"
        if discover or method != self.handshake:
            headers["mcp-protocol-version"] = self.protocol_version
        if discover and isinstance(method, str):
            headers[MCP_METHOD_HEADER] = method
            key = NAME_BEARING_METHODS.get(method)
            params = doc.get("params") if doc is not None else None
            name = params.get(key) if key is not None and isinstance(params, dict) else None
            if isinstance(name, str):
                headers[MCP_NAME_HEADER] = encode_header_value(name)
        if self._session_id is not None:
            headers["mcp-session-id"] = self._session_id
        return headers

    def _post(self, doc: dict[str, Any]) -> Any:
        import httpx2

        try:
            return self._client.post(self.url, content=dump_doc(doc), headers=self._headers(doc))
        except httpx2.TimeoutException:
            raise CallTimeout(
                f"the MCP server at {self.url} did not answer {doc.get('method')} within "
                f"{self.timeout:g} s"
            ) from None
        except httpx2.HTTPError as exc:
            self._gone = ServerGone(self.command, f"cannot be reached: {exc}")
            raise self._gone from None

    def _roundtrip(
        self, method: str, doc: dict[str, Any], request_id: int
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        from .http import SESSION_HEADER, _event_data, _split_events

        response = self._post(doc)
        if response.status_code >= 400:
            body = response.text.strip().splitlines()[:1]
            why = f"answered {method} with HTTP {response.status_code}"
            raise ServerGone(self.command, why + (f": {body[0][:200]}" if body else ""))
        session = response.headers.get(SESSION_HEADER)
        if session:
            self._session_id = session
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            events, rest = _split_events(response.content + b"\n\n")
            bodies = [_event_data(e) for e in [*events, rest]]
        else:
            bodies = [response.content]
        for body in bodies:
            for frame in read_line(body).frames if body.strip() else []:
                if frame.kind in ("response", "error") and frame.id == request_id:
                    return _answer_of(frame.doc)
        raise ServerGone(self.command, f"sent no answer to {method}")

    def _notify(self, doc: dict[str, Any]) -> None:
        self._post(doc)

    def close(self) -> None:
        """End the session (a DELETE when the server named one) and the connection."""
        client, self._client = self._client, None
        if client is None:
            return
        try:
            if self._session_id is not None:
                with contextlib.suppress(Exception):
                    client.delete(self.url, headers=self._headers(None))
        finally:
            client.close()
