"""MCP over Streamable HTTP: ``mcp record --url`` (a loopback HTTP proxy in front of a remote
server) and ``mcp replay --http`` (a cassette served on a loopback port).

The transport (MCP spec, "Streamable HTTP"): one endpoint; the host POSTs one JSON-RPC
message (or a batch); a POST of notifications or answers gets ``202 Accepted``; a POST of
requests gets either one ``application/json`` answer or a ``text/event-stream`` whose
events carry the server's messages for it (notifications, server requests) and then its
answer. The server may name a session in the ``Mcp-Session-Id`` header of its answer to
``initialize``; the host sends it back on every later request, and a DELETE ends it.

Record: each POST body is read as a line of the stdio transport is (``RecordingProxy``'s
``_from_host``), forwarded to the remote with the host's headers, and each answer body
(JSON) or each event's data (SSE) as a line from the server (``_from_server``): the same
entries, exchanges and server messages as over stdio. Bytes go back to the host as the
remote sent them (an event's data is rewritten only to give back an aliased id). GET
streams and DELETE are forwarded too: a stream resumed with ``Last-Event-ID`` (an event
sent again on it is recorded once), and the standalone GET stream, whose messages are
kept with ``stream: "standalone"``.

Replay: a ``ReplaySession`` answers each POST: a stream of events when the recording holds
server messages or progress for the answer (each event with an ``id``), else one JSON
answer; ``initialize`` opens a session (a new ``Mcp-Session-Id``), a request naming another
is ``404``, a DELETE ends it. A GET without ``Last-Event-ID`` opens the standalone stream
when the recording had one (its messages, ``stream: "standalone"``, go on it), else gets
``405`` (every recorded server message goes on the stream of the request it was recorded
around); one with it resumes the stream that event was on.

Both listen on 127.0.0.1 only, print their URL on stdout as their first line, and stop on
SIGINT or SIGTERM, writing the report then.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import signal
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any, TextIO

from ..format.allocator import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, mallopt
from . import _loop
from ._facts import STANDALONE
from ._spans import LongStringWatch
from ._upstream import Upstream, UpstreamError
from ._upstream import usable as upstream_usable
from ._wire import read_line
from .record import STREAM_FROM, AnswerAhead, RecordingProxy
from .replay import ReplayServer, ReplaySession

#: the path both serve the MCP endpoint on
ENDPOINT = "/mcp"
SESSION_HEADER = "mcp-session-id"
NO_SESSION = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"session not found"}}'
#: request headers not passed on to the remote (hop-by-hop, or set by the client)
_HOP = {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "upgrade"}


def listen(port: int) -> socket.socket:
    """A socket bound to ``127.0.0.1:port`` (0: a free port), listening."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it: a small answer written in two pieces (headers,
    # body) would otherwise wait ~40 ms for a delayed ACK (Nagle)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


async def _serve(
    app: Any, sock: socket.socket, out: TextIO, on_stop: Any = None, lean: Any = None
) -> None:
    """Serve ``app`` on ``sock`` until SIGINT/SIGTERM; the URL goes to ``out`` first.
    ``on_stop``: called at the signal (ends the streams that would hold the shutdown).
    ``lean``: the handler of a small POST, given it straight (``_lean_post``); given (the
    recorder), no ``date`` or ``server`` of uvicorn's is added to the answers, which carry
    the remote's own (they came twice)."""
    import uvicorn

    from ._listener import http_protocol

    config = uvicorn.Config(
        app,
        http=http_protocol(lean, ENDPOINT, RELAY_FROM),
        log_level="warning",
        lifespan="off",
        access_log=False,
        proxy_headers=False,
        server_header=lean is None,
        date_header=lean is None,
    )
    server = uvicorn.Server(config)
    loop = asyncio.get_running_loop()

    def stop() -> None:
        server.should_exit = True
        if on_stop is not None:
            on_stop()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(ValueError, RuntimeError):
            loop.add_signal_handler(sig, stop)
    host, port = sock.getsockname()[:2]
    print(f"http://{host}:{port}{ENDPOINT}", file=out, flush=True)
    # the signals are ours (above): uvicorn would raise them again once it has stopped
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    # the modules loaded so far (the SDK's, starlette's, uvicorn's: 100,000s of objects)
    # left out of the collector's full passes, which a big body's per-piece work triggers
    gc.freeze()
    _keep_heap()
    await server.serve(sockets=[sock])


def _posts_straight(handle: Any, app: Any) -> Any:
    """``app``, a POST to ``ENDPOINT`` handed to ``handle`` straight."""
    from starlette.requests import Request

    async def posts_straight(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == ENDPOINT:
            response = await handle(Request(scope, receive))
            await response(scope, receive, send)
        else:
            await app(scope, receive, send)

    return posts_straight


#: a block this big or bigger is mapped on its own (a big body's buffer: ``_Gathered``,
#: whose growth ``realloc`` then does by moving pages, not bytes)
_MAP_FROM = 1 << 20
#: free memory at the heap's top kept up to this, not given back to the system
_KEEP_TOP = 32 << 20


def _keep_heap() -> None:
    """The heap's free top kept (glibc only; elsewhere nothing). Each read's body piece is
    a fresh ``bytes`` of up to 256 KB (httptools' copy, ``_read_into``); by default glibc
    gives the heap's top back to the system once more than twice its mapping threshold
    is free, and the next pieces fault the same pages in again: about 200 page faults
    (0.3-0.8 ms of the proxy's CPU) per 1 MB answer (perf, session 17), 26-52 with it kept.
    Setting one threshold turns off glibc's moving ones, so both are set: blocks of
    ``_MAP_FROM`` bytes and more still get mappings of their own. For the recorder and
    the replay alike (both serve by ``_serve``); at most ``_KEEP_TOP`` bytes kept idle."""
    if mallopt(M_MMAP_THRESHOLD, _MAP_FROM):
        mallopt(M_TRIM_THRESHOLD, _KEEP_TOP)


def _split_events(buffer: bytes) -> tuple[list[bytes], bytes]:
    """Complete SSE events (each without its blank line) and the rest."""
    buffer = buffer.replace(b"\r\n", b"\n")
    *events, rest = buffer.split(b"\n\n")
    return events, rest


def _event_id(event: bytes) -> bytes | None:
    ids = [ln[3:].strip() for ln in event.split(b"\n") if ln.startswith(b"id:")]
    return ids[-1] if ids else None


def _event_data(event: bytes) -> bytes:
    lines = [ln[5:].removeprefix(b" ") for ln in event.split(b"\n") if ln.startswith(b"data:")]
    return b"\n".join(lines)


class HttpRecordingProxy(RecordingProxy):
    """``RecordingProxy`` with the remote server at ``url`` and the host on a loopback
    port (see the module docstring). ``run()`` serves until SIGINT/SIGTERM."""

    def __init__(
        self, url: str, cassette: Any, *, port: int = 0, out: TextIO | None = None, **kwargs: Any
    ) -> None:
        super().__init__([url], cassette, **kwargs)
        self.url = url
        #: the URL as said on stderr and in the report: its credentials masked
        self.shown_url = _shown_url(url)
        #: the ids of the events already recorded (a resumed stream sends some again)
        self._recorded: set[bytes] = set()
        #: the stream of each event id seen (``"standalone"``: the GET stream, else
        #: ``None``): a GET resuming from it resumes that stream
        self._relayed: dict[bytes, str | None] = {}
        self.sock = listen(port)
        self.out = out or sys.stdout
        #: big bodies' buffers lent again (their pages mapped: no page faults)
        self._spares = _Spares()
        #: the bodies under ``STREAM_FROM`` going on as they come, each done once noted
        #: (or cut short): a line read whole meanwhile is noted after them
        #: (``_after_relays``), so that an id it reuses can still be aliased
        self._relaying: set[asyncio.Future[None]] = set()

    async def _session(self) -> None:
        import httpx2
        from starlette.applications import Starlette
        from starlette.routing import Route

        # a plain http:// remote through the proxy's own client (``_upstream``: httptools,
        # the body's pieces passed as they come); else (https, a proxy) through httpx2
        self._upstream = Upstream(self.url) if upstream_usable(self.url) else None
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(None)) as client:
            self._client = client
            app = Starlette(
                routes=[Route(ENDPOINT, self._handle, methods=["GET", "POST", "DELETE"])]
            )
            try:
                app = _posts_straight(self._handle, app)
                await _serve(app, self.sock, self.out, lean=self._handle)
            finally:
                if self._upstream is not None:
                    self._upstream.close()
        self.summary.server_exit = 0
        self.summary.unanswered.extend(p.method for p in self._pending.values())

    async def _handle(self, request: Any) -> Any:
        from starlette.requests import ClientDisconnect
        from starlette.responses import Response

        try:
            return await self._handled(request)
        except ClientDisconnect:
            # the host left before its request's end (uvicorn printed a traceback of it):
            # the remote got part of it at most, and nothing of it is recorded
            self._problem(f"the host left in the middle of its {request.method} request")
            return Response(status_code=400)  # nobody reads it: uvicorn drops it

    async def _handled(self, request: Any) -> Any:
        import httpx2
        from starlette.responses import Response, StreamingResponse

        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        size = request.headers.get("content-length", "")
        content: Any
        noted: Any = None
        whole_first: Any = None
        relay: asyncio.Future[None] | None = None
        if request.method == "POST" and size.isdigit() and self._streamed(int(size)):
            # a big body goes on as it comes (the remote reads it meanwhile), read for the
            # recording once whole and gone (its last bytes are not held up by the
            # reading), before any answer to it can be read
            headers["content-length"] = size
            body = self._spares.gathered()
            # its long string checked as it passes (``LongStringWatch``), not after its end
            watch = LongStringWatch() if self.redactor is None else None
            held = int(size) < RELAY_FIRST_BELOW
            if int(size) < STREAM_FROM:  # (held whole before: lines read meanwhile wait)
                relay = asyncio.get_running_loop().create_future()
                self._relaying.add(relay)
            content = self._body_as_it_comes(
                request, body, watch, note=self._upstream is None, held=held, relay=relay
            )
            noted = functools.partial(self._note_body, body, watch, gone=True, relay=relay)
        else:
            whole = await request.body()
            if request.method == "POST" and whole.strip():
                if self._relay_first(whole):
                    # nothing in flight: no id of it can need an alias, so it goes on as it
                    # came and is noted once gone (the remote reads it meanwhile)
                    relay = asyncio.get_running_loop().create_future()
                    self._relaying.add(relay)
                    noted = whole_first = functools.partial(self._note_whole, whole, relay)
                else:
                    await self._after_relays()
                    whole = self._from_host(whole.rstrip(b"\n"))
            content = whole
        try:
            remote = await self._send(request.method, headers, content, noted)
        except (httpx2.HTTPError, UpstreamError) as exc:
            if whole_first is not None and relay is not None and not relay.done():
                whole_first()  # never gone: the host asked it all the same (unanswered)
            self._problem(f"the remote server at {self.shown_url} did not answer: {exc}")
            return Response(f"cassette-tui mcp record: {exc}\n", status_code=502)
        finally:
            self._relay_done(relay)  # (cut short, or the remote failed: never noted)
        back = {k: v for k, v in remote.headers.items() if k.lower() not in _HOP}
        back.pop("content-encoding", None)
        kind = remote.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            stream = None  # a POST's answer stream
            if request.method == "GET":  # the standalone stream, or one resumed
                last = request.headers.get("last-event-id")
                stream = STANDALONE if last is None else self._relayed.get(last.encode())
            return StreamingResponse(
                self._relay_events(remote, stream), status_code=remote.status_code, headers=back
            )
        size = remote.headers.get("content-length", "")
        recorded = kind.startswith("application/json") and remote.status_code < 400
        if (
            recorded
            and size.isdigit()
            and int(size) >= STREAM_FROM
            and not any(p.alias is not None for p in self._pending.values())
        ):
            if remote.headers.get("content-encoding", "").strip().lower() in ("", "identity"):
                # its length as the remote gave it (passed on as it came): the host reads
                # no chunk heads, and uvicorn copies no piece into a chunk
                back["content-length"] = size
            return _Relayed(self._answer_as_it_comes(remote, int(size)), remote.status_code, back)
        try:
            data = await remote.aread()
        except (httpx2.HTTPError, UpstreamError) as exc:  # cut short, or undecodable
            await remote.aclose()
            self._problem(f"the remote server at {self.shown_url} broke its answer: {exc}")
            return Response(f"cassette-tui mcp record: {exc}\n", status_code=502)
        await remote.aclose()
        if recorded and data.strip():
            data = bytes((await self._from_server(data.rstrip(b"\n") + b"\n")).rstrip(b"\n"))
        return Response(data, status_code=remote.status_code, headers=back)

    def _relay_first(self, line: bytes) -> bool:
        """Whether a POST body read whole goes on before it is noted: one message (a
        batch may reuse an id within itself), nothing in flight nor coming, through our
        own client (which says when the body has gone: ``after_body``)."""
        return (
            self._upstream is not None
            and not self._pending
            and not self._relaying
            and line.lstrip()[:1] == b"{"
        )

    def _note_whole(self, line: bytes, relay: asyncio.Future[None]) -> None:
        """A POST body gone on whole before it was noted (``_relay_first``), noted."""
        try:
            self._from_host(line.rstrip(b"\n"), forwarded=True, gone=True)
        finally:
            self._relay_done(relay)

    def _streamed(self, size: int) -> bool:
        """Whether a POST body of ``size`` bytes goes on as it comes: from ``STREAM_FROM``,
        and from ``RELAY_FROM`` while no request is in flight nor another such body
        coming (an id the host reuses could then need an alias, which needs the whole line
        before it goes on)."""
        return size >= STREAM_FROM or (
            size >= RELAY_FROM and not self._pending and not self._relaying
        )

    async def _after_relays(self) -> None:
        """Wait until the bodies under ``STREAM_FROM`` going on as they come are noted (up
        to ``RELAY_NOTED_WITHIN`` seconds): a line read whole meanwhile that reuses one's
        id is then the one aliased, as when both were read whole (that body cannot be:
        it went on as it came). One still coming then is not waited for again (its host
        stalls: the next calls are not held up each)."""
        if self._relaying:
            waited = set(self._relaying)
            await asyncio.wait(waited, timeout=RELAY_NOTED_WITHIN)
            self._relaying -= waited

    def _relay_done(self, relay: asyncio.Future[None] | None) -> None:
        """``relay``'s body noted, or cut short: the lines waiting for it go on."""
        if relay is not None:
            self._relaying.discard(relay)
            if not relay.done():
                relay.set_result(None)

    async def _send(
        self, method: str, headers: dict[str, str], content: Any, noted: Any = None
    ) -> Any:
        """One request to the remote, its answer's head read (its body still to come).
        ``noted``: called once a streamed body has gone whole (by our own client; through
        ``httpx2`` the body's iterator notes it)."""
        if self._upstream is not None:
            return await self._upstream.send(method, headers, content, after_body=noted)
        outgoing = self._client.build_request(method, self.url, headers=headers, content=content)
        return await self._client.send(outgoing, stream=True)

    async def _body_as_it_comes(
        self,
        request: Any,
        body: _Gathered,
        watch: LongStringWatch | None,
        *,
        note: bool,
        held: bool = False,
        relay: asyncio.Future[None] | None = None,
    ) -> AsyncIterator[bytes]:
        """A big POST body passed on chunk by chunk, gathered into ``body`` and watched by
        ``watch`` once each chunk has gone, its call's entry started in the cassette and
        its long string written there as it passes when nothing else is in flight
        (``_call_ahead``: ended when the call is noted, or taken back); noted at its end
        when ``note`` (else by ``_note_body``, called once it has gone). ``held``: the
        chunks are only passed on while they come, and gathered, watched and written
        once the last has gone (``RELAY_FIRST_BELOW``). ``relay``: done once noted
        (``_relay_done``)."""
        call: AnswerAhead | None = None
        kept: list[bytes] = []
        try:
            async for chunk in request.stream():
                if chunk:
                    yield chunk
                    if held:
                        kept.append(chunk)
                    else:
                        call = self._took(body, watch, call, chunk)
            for chunk in kept:
                call = self._took(body, watch, call, chunk)
        except BaseException:
            if call is not None:  # cut short: not an entry
                self.writer.take_back(call)
            raise
        if note:
            self._note_body(body, watch, relay=relay)

    def _took(
        self,
        body: _Gathered,
        watch: LongStringWatch | None,
        call: AnswerAhead | None,
        chunk: bytes,
    ) -> AnswerAhead | None:
        """One chunk of a big POST body gone on: gathered into ``body``, watched, its
        long string's bytes written ahead; the call's entry begun at the first chunk
        (``_call_ahead``). Gives the entry begun, if any."""
        first = not body.size
        body.add(chunk)
        if watch is None:
            return call
        if first:
            return self._call_ahead(chunk, watch)
        self._watched(watch, call, chunk)
        return call

    def _note_body(
        self,
        body: _Gathered,
        watch: LongStringWatch | None,
        *,
        gone: bool = False,
        relay: asyncio.Future[None] | None = None,
    ) -> None:
        """The host's big POST body noted as a line is (an id it reuses while in flight
        cannot be aliased then: both calls are kept aside, as for a long stdio line); its
        long string not checked again when ``watch`` checked it as it passed. ``gone``:
        its last bytes are in the kernel's hands (our own client's ``after_body``), so its
        call's recording may be prepared at once (``RecordingProxy._prepare``). ``relay``:
        done then (``_relay_done``)."""
        line = body.whole()
        try:
            if not _blank(line):
                text = _without_newline(line)
                checked = watch.checked if watch is not None else None
                self._from_host(text, forwarded=True, checked=checked, gone=gone)
        finally:
            self._relay_done(relay)

    async def _answer_as_it_comes(self, remote: Any, size: int) -> AsyncIterator[bytes]:
        """A big JSON answer (``size`` bytes announced) passed on as it comes, its last
        chunk held back until it is recorded (the host cannot read a JSON body before its
        end). Raises ``_Broken`` when the remote cut it short or broke it (said as a
        problem; not recorded)."""
        import httpx2

        self.writer.reserve(2 * size)  # the disk for its entry, while it comes
        body = self._spares.gathered()
        # its long string checked, and its entry written, as it passes (as over stdio)
        watch = LongStringWatch() if self.redactor is None else None
        ahead: AnswerAhead | None = None
        last = b""
        try:
            async for chunk in remote.aiter_bytes():
                if not chunk:
                    continue
                if last:
                    yield last
                body.add(chunk)
                if watch is not None:
                    if not last:  # the first piece
                        ahead = self._answer_ahead(asyncio.get_running_loop(), chunk, watch)
                    else:
                        self._watched(watch, ahead, chunk)
                last = chunk
        except (httpx2.HTTPError, UpstreamError) as exc:
            if ahead is not None:  # cut short: its entry is not kept
                self.writer.take_back(ahead)
            self._problem(f"the remote server at {self.shown_url} broke its answer: {exc}")
            raise _Broken from exc
        except BaseException:
            if ahead is not None:  # cut short: its entry is not kept
                self.writer.take_back(ahead)
            raise
        finally:
            await remote.aclose()
        data = body.whole()  # read as a line is (no newline needed: no copy made)
        if not _blank(data):
            checked = watch.checked if watch is not None else None
            await self._from_server(data, forwarded=True, checked=checked, ahead=ahead)
        if ahead is not None:  # not its entry after all: not kept
            self.writer.take_back(ahead)
        if last:
            yield last

    async def _relay_events(self, remote: Any, stream: str | None) -> AsyncIterator[bytes]:
        """The remote's events, each recorded (its data as a line from the server) and
        passed on as it came (rewritten only to give back an aliased id). Each is
        recorded before it goes on: a host that drops the stream and resumes it from an
        earlier event gets the events between again, recorded once."""
        rest = b""
        try:
            async for chunk in remote.aiter_raw():
                events, rest = _split_events(rest + chunk)
                for event in events:
                    yield await self._relay_event(event, stream) + b"\n\n"
            if rest.strip():
                yield await self._relay_event(rest, stream) + b"\n\n"
        finally:
            await remote.aclose()

    async def _relay_event(self, event: bytes, stream: str | None) -> bytes:
        data = _event_data(event)
        event_id = _event_id(event)
        if not data.strip():  # a priming event (an id, no data), a comment
            if event_id is not None:
                self._relayed.setdefault(event_id, stream)
            return event
        if event_id is not None:
            if event_id in self._recorded:  # sent again on a resumed stream: kept once
                return event
            self._recorded.add(event_id)
            self._relayed.setdefault(event_id, stream)
        out = await self._from_server(data + b"\n", stream=stream)
        if out.rstrip(b"\n") == data:
            return event
        kept = [ln for ln in event.split(b"\n") if not ln.startswith(b"data:")]
        return b"\n".join([*kept, b"data: " + out.rstrip(b"\n")])


#: a POST body this long or longer goes on to the remote as it comes when no request is in
#: flight (``HttpRecordingProxy._streamed``; from ``STREAM_FROM`` always): read whole
#: first, a 0.5 MB call took 2.2x a direct one against the raw server, 1.6-1.8x so
#: (issue 31, session 19)
RELAY_FROM = 1 << 16
#: how long a POST read whole waits for such bodies coming meanwhile to be noted
#: (``_after_relays``; under 1 MB from a loopback host: milliseconds), so that a host
#: that stalls one mid-body holds up another's call no longer, and only once
RELAY_NOTED_WITHIN = 1.0
#: a POST body shorter than this (``content-length``, bytes) is only passed on while it
#: comes, its recording's work (gathering, the long string's check, its write ahead) done
#: once its last piece has gone. On 2 cores shared by the host, the proxy and the server,
#: 1-16 MB requests took 0.5-10 ms less so, 32 and 50 MB the same; the pieces are held
#: meanwhile (the body twice in memory, hence the bound). Issue 31, session 19.
RELAY_FIRST_BELOW = 24 << 20


def _shown_url(url: str) -> str:
    """``url`` to be said (stderr, the report's ``problems``): the credentials of
    ``http://user:pass@host/`` masked whole (``masking.mask``: a token may stand as the
    user name), then any other secret in it (a token in the query) as ``mask_text``
    masks a message."""
    from urllib.parse import urlsplit, urlunsplit

    from ..scan.masking import mask, mask_text

    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if at:
        parts = parts._replace(netloc=f"«{mask(userinfo)}»@{host}")
    return str(mask_text(urlunsplit(parts)))


class _Relayed:
    """The response to the host that passes a big answer on as it comes (an ASGI app):
    its head, then each piece, then its end. Not starlette's ``StreamingResponse``, which
    also waits for the host's disconnect in a task group (about 0.2 ms a call, its cancel
    scope naming its task's ``repr``) and, when the host left mid-answer, cancelled the
    answer's reading: the call the server answered was then not recorded. Here the answer
    is read and recorded whole; what the host no longer takes, uvicorn drops."""

    def __init__(self, pieces: AsyncIterator[bytes], status: int, headers: dict[str, str]) -> None:
        self.pieces = pieces
        self.status = status
        self.headers = [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()
        ]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": self.status, "headers": self.headers})
        try:
            async for piece in self.pieces:
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        except _Broken:
            # the remote broke the answer (said already): left incomplete, so uvicorn cuts
            # the host's connection (one line of its log, not a traceback); ended, the host
            # would read the part as the whole answer when it is not framed by a length
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})


class _Broken(Exception):
    """The remote cut short or broke a big answer being relayed (``_Relayed``)."""


class _Gathered:
    """A big body's pieces gathered as they pass on, into one buffer (no join of 50 MB once
    it is whole: each piece is copied while the rest comes). The buffer is a fresh one
    that grows with the pieces, or ``spare``: the buffer of a body gone by (``_Spares``),
    written over from its start, its pages mapped already (a fresh 50 MB costs 12,800 page
    faults, 30-45 ms here, the kernel handing out zeroed pages one at a time).
    Not sized ahead from ``content-length``: ``bytearray(n)`` zeroes its n bytes before
    the first piece could go on (20 ms for 50 MB here), where growing it spreads that over
    the pieces (glibc's ``realloc`` of a big block moves its pages, not its bytes)."""

    __slots__ = ("buffer", "size")

    def __init__(self, spare: bytearray | None = None) -> None:
        self.buffer = bytearray() if spare is None else spare
        #: the body's bytes gathered so far (the buffer may hold an older body's past them)
        self.size = 0

    def add(self, chunk: bytes | bytearray | memoryview) -> None:
        end = self.size + len(chunk)
        # over an older body's bytes in place, or past the buffer's end (it grows)
        self.buffer[self.size : end] = chunk
        self.size = end

    def whole(self) -> bytearray:
        """The body: the buffer itself, cut to the body's size (no copy; a buffer cut by
        less than half keeps its memory)."""
        del self.buffer[self.size :]
        return self.buffer


class _Spares:
    """The buffers of big bodies gone by (``_Gathered``), up to ``keep`` of them, each
    lent again once nothing else holds it: not the line of a call still in flight, not a
    span or a view of it in a thread or in the cassette's writer. Whether anything does
    is told by its reference count (CPython's: a view of a ``bytearray`` holds a
    reference to it, a slice is a copy), so a body is never written over while any of
    it is in use. A buffer past ``most`` bytes is not kept (the memory goes back to the
    system at once)."""

    def __init__(self, keep: int = 3, most: int = 128 << 20) -> None:
        self.keep = keep
        self.most = most
        self._kept: list[bytearray] = []

    def gathered(self) -> _Gathered:
        """A ``_Gathered`` for the next big body, on a kept buffer nothing holds if any."""
        kept = self._kept
        # sizes past ``most`` let go (a body cut the buffer and its pages freed meanwhile)
        kept[:] = [buf for buf in kept if len(buf) <= self.most]
        for index in range(len(kept)):
            # the list's reference and getrefcount's argument: held by nothing else
            if sys.getrefcount(kept[index]) == 2:
                return _Gathered(kept[index])
        gathered = _Gathered()
        if len(kept) < self.keep:
            kept.append(gathered.buffer)
        return gathered


def _blank(data: bytes | bytearray) -> bool:
    """Whether ``data`` is empty or only white space (without ``strip``'s copy)."""
    return not data or data.isspace()


def _without_newline(data: bytes | bytearray) -> bytes | bytearray:
    """``data`` without its final newlines (a copy only when it has one)."""
    return data if not data.endswith(b"\n") else bytes(data).rstrip(b"\n")


def _is_answer(data: bytes) -> bool:
    """Whether one message (or a batch) is an answer, not a server message."""
    frames = read_line(data).frames
    return bool(frames) and all(f.kind in ("response", "error") for f in frames)


class _Stream:
    """The events of one SSE stream of the replay, kept for resumption: every reader
    (the POST's own response, a GET resuming it with ``Last-Event-ID``) reads this log."""

    def __init__(self) -> None:
        self.events: list[tuple[int, bytes]] = []
        self.done = False
        self.grew = asyncio.Event()

    def add(self, event_id: int, data: bytes) -> None:
        self.events.append((event_id, data))
        self.grew.set()

    def close(self) -> None:
        self.done = True
        self.grew.set()

    async def read(self, after: int = 0) -> AsyncIterator[bytes]:
        """The events past id ``after``, as SSE, until the stream is done."""
        index = 0
        while True:
            while index < len(self.events):
                event_id, data = self.events[index]
                index += 1
                if event_id > after:
                    yield b"id: %d\nevent: message\ndata: %s\n\n" % (event_id, data)
            if self.done:
                return
            self.grew.clear()
            await self.grew.wait()


class HttpReplay:
    """A ``ReplayServer`` served over Streamable HTTP (see the module docstring)."""

    def __init__(self, server: ReplayServer, *, port: int = 0, log: TextIO | None = None) -> None:
        self.server = server
        self.sock = listen(port)
        self.log = log or sys.stderr
        self.session_id: str | None = None
        self._lock = asyncio.Lock()
        self._session: ReplaySession | None = None
        self._events = 0
        #: every stream of the session by the ids of its events, for resumption
        self._stream_of: dict[int, _Stream] = {}
        self._writing: _Stream | None = None
        #: the host's standalone GET stream, once it opened one (the recording had one)
        self._standalone: _Stream | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def run(self, out: TextIO | None = None) -> None:
        _loop.run(self._serve(out or sys.stdout))

    def _recorded_standalone(self) -> bool:
        """Whether the recording holds messages of a standalone GET stream."""
        return any(m.stream == STANDALONE for m in self.server.server_messages)

    async def _serve(self, out: TextIO) -> None:
        from starlette.applications import Starlette
        from starlette.routing import Route

        app = Starlette(routes=[Route(ENDPOINT, self._handle, methods=["GET", "POST", "DELETE"])])
        await _serve(app, self.sock, out, on_stop=self._end_streams)

    def _end_streams(self) -> None:
        """Every stream ends (the standalone one never would): the shutdown goes on."""
        for stream in {
            *self._stream_of.values(),
            *([self._standalone] if self._standalone else []),
        }:
            stream.close()

    async def _send(self, data: bytes) -> None:
        self._add(self._writing, data)

    async def _send_standalone(self, data: bytes) -> None:
        """A message recorded on the standalone GET stream: on the host's, when it opened
        one, else on the request's stream with the others."""
        self._add(self._standalone or self._writing, data)

    def _add(self, stream: _Stream | None, data: bytes) -> None:
        if stream is not None:
            self._events += 1
            self._stream_of[self._events] = stream
            stream.add(self._events, data.rstrip(b"\n"))

    def _new_session(self) -> ReplaySession:
        session = ReplaySession(self.server, self._send, self.log, lines=False)
        session.send_standalone = self._send_standalone
        return session

    async def _handle(self, request: Any) -> Any:
        from starlette.requests import ClientDisconnect
        from starlette.responses import Response, StreamingResponse

        given = request.headers.get(SESSION_HEADER)
        known = self.session_id is not None and given == self.session_id
        if request.method == "DELETE":
            if not known:
                return Response(status_code=404)
            self.session_id = None
            return Response(status_code=200)
        if request.method == "GET":
            last = request.headers.get("last-event-id")
            if last is None and known and self._recorded_standalone():
                # the standalone stream: what the recording's carried comes on it
                self._standalone = self._standalone or _Stream()
                return StreamingResponse(self._standalone.read(), media_type="text/event-stream")
            stream = self._stream_of.get(int(last)) if last and last.isdigit() else None
            if stream is None or not known or last is None:
                return Response(status_code=405, headers={"allow": "POST, DELETE"})
            return StreamingResponse(stream.read(int(last)), media_type="text/event-stream")
        try:
            body = await request.body()
        except ClientDisconnect:  # (uvicorn printed a traceback of it): nothing to answer
            print(
                f"cassette-tui mcp replay: the host left in the middle of its {request.method} "
                "request; it was not answered",
                file=self.log,
                flush=True,
            )
            return Response(status_code=400)  # nobody reads it: uvicorn drops it
        line = read_line(body)
        line.raw = body
        opening = any(f.kind == "request" and f.method == "initialize" for f in line.frames)
        if opening:
            self.session_id = uuid.uuid4().hex
            self._session = self._new_session()
        elif self.session_id is not None and not known:
            return Response(
                NO_SESSION, status_code=404 if given else 400, media_type="application/json"
            )
        session = self._session or self._new_session()
        self._session = session
        for frame in line.frames:  # the host answering a recorded server request
            if frame.kind in ("response", "error"):
                session.host_answered(frame)
        if line.frames and all(
            f.kind in ("notification", "response", "error") for f in line.frames
        ):
            return Response(status_code=202)  # nothing to answer
        headers = {SESSION_HEADER: self.session_id} if self.session_id else {}
        stream = _Stream()

        async def answer() -> None:
            async with self._lock:
                self._writing = stream
                try:
                    if opening:
                        await session.opening()
                    await session.answer_line(line)
                finally:
                    self._writing = None
                    stream.close()

        # the answer goes on whether the host stays or not (a resumed GET gets the rest)
        task = asyncio.create_task(answer())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        # one answer and nothing else: a plain JSON answer; anything before it (a server
        # request waits for the host's answer on this stream) or after it: a stream
        while not stream.done and (
            len(stream.events) == 0 or (len(stream.events) == 1 and _is_answer(stream.events[0][1]))
        ):
            stream.grew.clear()
            await stream.grew.wait()
        if stream.done and len(stream.events) <= 1:
            data = stream.events[0][1] if stream.events else b""
            return Response(data, media_type="application/json", headers=headers)
        return StreamingResponse(stream.read(), media_type="text/event-stream", headers=headers)
