"""The live tools ``verify`` re-issues recorded calls to: a Python dispatcher
(``--dispatcher module:function``, the shape ``wrap_dispatcher`` wraps: ``dispatch(tool,
args) -> response``) or an MCP server over stdio (``--mcp "CMD ARGS"``) or Streamable HTTP
(``--url``): ``mcp/client.py``.

Each answers one call as an ``Answer``: the response, or the error as a cassette records
it (``format.errors.error_record`` for a Python exception; ``{"type": "MCPError",
"message", "code", "data"?}`` for a JSON-RPC error, as ``mcp record`` writes it), so a live
answer compares with a recorded one field for field. ``read_only`` says which tools the
live side itself marks safe to call again: an MCP server's ``tools/list`` annotations
(``readOnlyHint: true``); a dispatcher marks none.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..format.errors import CassetteError, error_record
from ..format.jsonvalue import json_copy, roundtrip_change

__all__ = [
    "Answer",
    "DispatcherSpecError",
    "DispatcherTools",
    "LiveGone",
    "LiveTools",
    "McpTools",
    "load_dispatcher",
    "read_only_tools",
    "handshake_of_responses",
    "recorded_handshake",
]


@dataclass
class Answer:
    """One live answer: ``response``, or ``error`` (an entry's ``error`` field) when the
    call raised; ``duration_ms``: how long it took, in milliseconds."""

    response: Any = None
    error: dict[str, Any] | None = None
    duration_ms: int = 0


class LiveTools(Protocol):
    """What ``verify_job`` calls. ``kind``: ``"mcp"`` or ``"dispatcher"``; ``target``:
    the server command or the ``module:function`` spec, as given."""

    @property
    def kind(self) -> str: ...

    @property
    def target(self) -> str: ...

    def read_only(self) -> dict[str, bool]:
        """Tool name -> whether the live side annotates it read-only (``{}``: no
        annotations)."""
        ...

    def call(self, tool: str, args: Any) -> Answer:
        """Re-issue one call. Raises ``mcp.client.ServerGone`` when an MCP server exited
        (the session cannot go on); every tool failure is an ``Answer`` with ``error``."""
        ...


class LiveGone(CassetteError):
    """The live side cannot answer any more (the MCP server exited): the message says
    how it ended."""


class DispatcherSpecError(CassetteError, ValueError):
    """A ``--dispatcher`` spec that cannot be used: not ``module:function``, a module that
    cannot be imported (or raises when imported), a missing attribute, or one that is not
    callable. The message names the spec."""


def load_dispatcher(spec: str, paths: list[str] | None = None) -> Any:
    """The callable ``spec`` (``module:function``; the function may be dotted,
    ``module:Class.method``) names, imported with ``paths`` put first on ``sys.path`` and
    the current folder last (as ``python -m`` finds a module beside you).

    Raises:
        DispatcherSpecError: see the class.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise DispatcherSpecError(
            f"--dispatcher {spec!r}: expected MODULE:FUNCTION (e.g. agent:live_dispatch)"
        )
    for folder in reversed(paths or []):
        resolved = str(Path(folder).resolve())
        if resolved not in sys.path:
            sys.path.insert(0, resolved)
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.append(str(Path.cwd()))
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the command's (--json)
            module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        where = f" (looked in {', '.join(paths)} and the current folder)" if paths else ""
        raise DispatcherSpecError(
            f"--dispatcher {spec!r}: cannot import {module_name!r}: {exc}{where}; "
            "pass --path DIR for the folder that holds it"
        ) from None
    except Exception as exc:  # noqa: BLE001 - the user's module raised while importing
        raise DispatcherSpecError(
            f"--dispatcher {spec!r}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from None
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise DispatcherSpecError(
                f"--dispatcher {spec!r}: {module_name!r} has no attribute {attr!r}"
            )
        target = getattr(target, part)
    if not callable(target):
        raise DispatcherSpecError(
            f"--dispatcher {spec!r}: {module_name}.{attr} is a {type(target).__name__}, "
            "not callable (expected dispatch(tool, args) -> response)"
        )
    return target


@dataclass
class DispatcherTools:
    """A Python dispatcher as the live tools. A coroutine function is run to its end in a
    new event loop per call; the args are a copy (the dispatcher cannot change the
    recording); what it prints goes to stderr (stdout holds the command's output); a
    response that JSON would change (a ``set``, a ``datetime``) is an error answer naming
    the path, as the recorder without a codec cannot write it."""

    target: str
    dispatch: Any
    kind: str = "dispatcher"

    def read_only(self) -> dict[str, bool]:
        return {}

    def call(self, tool: str, args: Any) -> Answer:
        t0 = time.perf_counter()
        try:
            # what the tool prints goes to stderr: stdout is the command's (--json)
            with contextlib.redirect_stdout(sys.stderr):
                value = self.dispatch(tool, json_copy(args))
                if inspect.isawaitable(value):
                    value = asyncio.run(_awaited(value))
        except Exception as exc:  # noqa: BLE001 - the tool's failure is its answer
            return Answer(error=error_record(exc), duration_ms=_ms(t0))
        change = roundtrip_change(value)
        if change is not None:
            path, what = change
            error = {
                "type": "TypeError",
                "message": f"the dispatcher's answer is not JSON at {path}: {what}",
            }
            return Answer(error=error, duration_ms=_ms(t0))
        return Answer(response=value, duration_ms=_ms(t0))


async def _awaited(value: Any) -> Any:
    return await value


@dataclass
class McpTools:
    """An MCP server over stdio as the live tools (``mcp.client.LiveServer``, started by
    ``open``). ``tools``: the live ``tools/list``."""

    command: list[str]
    server: Any = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    kind: str = "mcp"

    @property
    def target(self) -> str:
        """The server command line, or the URL of a remote server."""
        if len(self.command) == 1 and self.command[0].startswith(("http://", "https://")):
            return self.command[0]
        return shlex.join(self.command)

    @classmethod
    def open(
        cls,
        command: list[str],
        *,
        timeout: float,
        protocol_version: str | None = None,
        handshake: str = "initialize",
        url: str | None = None,
    ) -> McpTools:
        """Start the server ``command`` over stdio (or, with ``url``, reach the remote one
        over Streamable HTTP), shake hands (``handshake``, in ``protocol_version``: the
        recording's, ``recorded_handshake``) and list its tools.

        Raises:
            mcp.client.ServerGone: it cannot start (or be reached), or ends before
                answering.
            mcp.client.CallTimeout: it does not answer within ``timeout``.
        """
        from ..mcp.client import HttpLiveServer, LiveServer

        server: Any
        if url is not None:
            server = HttpLiveServer(
                url, timeout=timeout, protocol_version=protocol_version, handshake=handshake
            )
        else:
            server = LiveServer(
                command, timeout=timeout, protocol_version=protocol_version, handshake=handshake
            )
        try:
            server.start()
            tools = server.list_tools()
        except BaseException:
            server.close()
            raise
        return cls(list(server.command), server, tools)

    def read_only(self) -> dict[str, bool]:
        return read_only_tools(self.tools)

    def call(self, tool: str, args: Any) -> Answer:
        from ..mcp.client import CallTimeout, ServerGone

        t0 = time.perf_counter()
        try:
            result, error = self.server.call(tool, args)
        except ServerGone as exc:
            raise LiveGone(str(exc)) from None
        except CallTimeout as exc:
            return Answer(error={"type": "TimeoutError", "message": str(exc)}, duration_ms=_ms(t0))
        if error is not None:
            record: dict[str, Any] = {
                "type": "MCPError",
                "message": str(error.get("message", "")),
                "code": error.get("code"),
            }
            if error.get("data") is not None:
                record["data"] = error["data"]
            return Answer(error=record, duration_ms=_ms(t0))
        return Answer(response=result, duration_ms=_ms(t0))

    def close(self) -> None:
        if self.server is not None:
            self.server.close()

    def facts(self, cassette_name: str) -> dict[str, Any]:
        """The live session as an ``mcp record`` server-facts sidecar (``mcp/_facts.py``):
        the ``initialize`` and ``tools/list`` exchanges, for ``diff``'s contract check."""
        from ..mcp._facts import Exchange, ServerFacts

        server = self.server
        exchanges = [
            Exchange(server.handshake, server.initialize_params, server.initialize_result),
            Exchange("tools/list", {}, {"tools": list(self.tools)}),
        ]
        return ServerFacts(list(self.command), cassette_name, exchanges).to_dict()


def recorded_handshake(facts: Any) -> tuple[str, str | None]:
    """``(handshake, protocol version)`` a recording's server facts (``mcp/_facts.py``'s
    ``ServerFacts``, or ``None``) show the host used: ``server/discover`` and the newest
    version the server said it supports, or ``initialize`` and the negotiated version
    (``("initialize", None)`` when unknown: the version ``LiveServer`` offers)."""
    for exchange in facts.exchanges if facts is not None else []:
        result = exchange.result if isinstance(exchange.result, dict) else {}
        if exchange.method == "server/discover":
            versions = [v for v in result.get("supportedVersions") or [] if isinstance(v, str)]
            return "server/discover", max(versions) if versions else None
        if exchange.method == "initialize":
            version = result.get("protocolVersion")
            if not isinstance(version, str) and isinstance(exchange.params, dict):
                version = exchange.params.get("protocolVersion")
            return "initialize", version if isinstance(version, str) else None
    return "initialize", None


#: the first protocol version whose results carry ``resultType`` (the SDK's stateless
#: sessions, opened by ``server/discover``)
DISCOVER_VERSION = "2026-07-28"


def handshake_of_responses(responses: Any) -> tuple[str, str | None]:
    """``(handshake, version)`` read from recorded ``CallToolResult``s when the recording
    has no sidecar: a result with ``resultType`` was answered in a ``server/discover``
    session (``DISCOVER_VERSION``), else ``("initialize", None)``. Spoken in the other
    version, a server wraps the same answer otherwise, which would read as stale."""
    for response in responses:
        if isinstance(response, dict) and "resultType" in response and "content" in response:
            return "server/discover", DISCOVER_VERSION
    return "initialize", None


def read_only_tools(tools: list[Any]) -> dict[str, bool]:
    """Tool name -> ``annotations.readOnlyHint is True`` for each tool of a ``tools/list``
    result (the MCP spec's tool annotations; ``idempotentHint`` is not enough: an
    idempotent write still writes)."""
    out: dict[str, bool] = {}
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        notes = tool.get("annotations")
        out[tool["name"]] = isinstance(notes, dict) and notes.get("readOnlyHint") is True
    return out


def _ms(t0: float) -> int:
    return round((time.perf_counter() - t0) * 1000)
