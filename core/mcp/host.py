"""Put any stdio MCP server behind ``cassette-tui mcp record|replay`` from a host written
with the MCP Python SDK, in one call::

    from cassette_tui.core.mcp.host import server_params
    params = server_params(StdioServerParameters(command="mcp-server-time"))
    async with Client(params) as client: ...

The SDK's stdio client starts the server with a few variables of the host's environment
only (``HOME``, ``PATH``, ...) plus the parameters' ``env``, so the ``CASSETTE_*``
variables of the environment contract (docs/format.md, "Environment contract":
``CASSETTE_MODE``, ``CASSETTE_PATH``, ``CASSETTE_REPORT``, ``CASSETTE_CONFIG``) would never
reach the proxy: ``server_params`` puts them in ``env``. Nothing here imports the SDK: it
copies the parameters it is given.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, TypeVar

from cassette_tui.core.format.constants import ENV_MODE, ENV_PATH

__all__ = ["MODES", "server_params"]

#: what ``mode`` may be: ``live`` runs the server itself (the contract's default)
MODES = ("record", "replay", "live")
#: the cassette-tui command line, run by the interpreter this package is installed in
CLI = (sys.executable, "-m", "cassette_tui.tui.cli")

P = TypeVar("P")


def server_params(
    params: P,
    *,
    mode: str | None = None,
    path: str | Path | None = None,
    options: tuple[str, ...] = (),
) -> P:
    """``params`` (the SDK's ``StdioServerParameters``) changed to run its server behind
    ``cassette-tui mcp record -o PATH -- COMMAND ARGS`` (``mode="record"``) or to run
    ``cassette-tui mcp replay PATH`` instead of it (``"replay"``); ``"live"`` returns
    ``params`` as it is. ``cwd`` is kept; ``env`` is the parameters' own plus every
    ``CASSETTE_*`` variable of this process, with ``CASSETTE_MODE`` and ``CASSETTE_PATH``
    set to ``mode`` and ``path``.

    Args:
        params: a ``StdioServerParameters`` (any pydantic model with ``command``, ``args``,
            ``env``).
        mode: ``record``, ``replay`` or ``live``; default ``$CASSETTE_MODE``, else ``live``.
        path: the cassette; default ``$CASSETTE_PATH`` (required for record and replay).
        options: more options of ``mcp record``/``mcp replay`` (``("--repeat", "error")``).

    Raises:
        ValueError: an unknown mode, or no cassette path for record/replay.
    """
    mode = mode or os.environ.get(ENV_MODE) or "live"
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
    if mode == "live":
        return params
    cassette = path if path is not None else os.environ.get(ENV_PATH)
    if not cassette:
        raise ValueError(f"mcp {mode} needs a cassette: pass path= or set {ENV_PATH}")
    source: Any = params
    if mode == "record":
        args = [*CLI[1:], "mcp", "record", "-o", str(cassette), *options, "--"]
        args += [source.command, *source.args]
    else:
        args = [*CLI[1:], "mcp", "replay", str(cassette), *options]
    env = {k: v for k, v in os.environ.items() if k.startswith("CASSETTE_")}
    env |= dict(source.env or {})
    env |= {ENV_MODE: mode, ENV_PATH: str(cassette)}
    return source.model_copy(update={"command": CLI[0], "args": args, "env": env})  # type: ignore[no-any-return]
