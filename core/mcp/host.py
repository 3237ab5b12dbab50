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

A host that reaches its server over Streamable HTTP has no command to wrap: ``server_url``
starts ``cassette-tui mcp record --url URL`` (or ``mcp replay --http``) for the host and
hands it the loopback URL to connect to instead::

    with server_url("http://127.0.0.1:8000/mcp") as url:
        async with streamable_http_client(url) as (read, write): ...
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from cassette_tui.core.format.constants import ENV_MODE, ENV_PATH

__all__ = ["MODES", "server_params", "server_url"]

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
    mode, cassette = _mode_and_cassette(mode, path)
    if mode == "live" or cassette is None:
        return params
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


def _mode_and_cassette(mode: str | None, path: str | Path | None) -> tuple[str, str | None]:
    """``mode`` (default ``$CASSETTE_MODE``, else ``live``) and the cassette (default
    ``$CASSETTE_PATH``; ``None`` for ``live``); ``ValueError`` for a bad mode or none."""
    mode = mode or os.environ.get(ENV_MODE) or "live"
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
    if mode == "live":
        return mode, None
    cassette = path if path is not None else os.environ.get(ENV_PATH)
    if not cassette:
        raise ValueError(f"mcp {mode} needs a cassette: pass path= or set {ENV_PATH}")
    return mode, str(cassette)


@contextlib.contextmanager
def server_url(
    url: str,
    *,
    mode: str | None = None,
    path: str | Path | None = None,
    options: tuple[str, ...] = (),
    grace: float = 10.0,
) -> Iterator[str]:
    """The URL a Streamable HTTP host connects to while the block runs: ``url`` itself
    (``live``), the loopback URL of ``cassette-tui mcp record --url URL -o PATH``
    (``record``), or of ``cassette-tui mcp replay PATH --http`` serving the cassette
    (``replay``; ``url`` is not reached). The command runs with this process's
    environment (``CASSETTE_REPORT``, ``CASSETTE_CONFIG``, ``CASSETTE_FIXTURES`` reach it);
    at the end it gets SIGTERM (it writes its report then) and ``grace`` seconds to exit,
    then SIGKILL.

    Args:
        url: the server's Streamable HTTP endpoint (``https://host/mcp``).
        mode, path, options: as for ``server_params``.
        grace: seconds the command has to exit after SIGTERM.

    Yields:
        ``http://127.0.0.1:PORT/mcp`` (record, replay) or ``url`` (live).

    Raises:
        ValueError: an unknown mode, or no cassette path for record/replay.
        RuntimeError: the command exited before serving (its stderr, passed through,
            says why: a cassette that exists, a sidecar that cannot be read).
    """
    mode, cassette = _mode_and_cassette(mode, path)
    if mode == "live" or cassette is None:
        yield url
        return
    if mode == "record":
        args = ["mcp", "record", "--url", url, "-o", cassette, *options]
    else:
        args = ["mcp", "replay", cassette, "--http", *options]
    env = {**os.environ, ENV_MODE: mode, ENV_PATH: cassette}
    proc = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    try:
        first = proc.stdout.readline().decode("utf-8", "replace").strip()
        if not first.startswith("http"):
            status = proc.wait(timeout=grace)
            raise RuntimeError(f"cassette-tui mcp {mode} exited {status} before serving")
        yield first
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stdout.close()
