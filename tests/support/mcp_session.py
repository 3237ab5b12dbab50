"""Helpers of the MCP record/replay tests: commands, a git repository, an MCP client built
with the official SDK, and a raw line client that sees the stdio transport byte for byte.

Every helper is bounded by a timeout: a proxy that hangs fails the test instead of the
suite.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio

TOY_SERVER = Path(__file__).resolve().parent / "mcp_toy_server.py"
#: the CLI as a module of the running interpreter (no console script on PATH needed)
CLI = [sys.executable, "-m", "cassette_tui.tui.cli"]
TIMEOUT = 60.0


def toy_server(*extra: str) -> list[str]:
    return [sys.executable, str(TOY_SERVER), *extra]


@contextlib.contextmanager
def http_toy_server(*extra: str) -> Iterator[str]:
    """The toy server serving Streamable HTTP on a free loopback port while the block
    runs; yields its URL (``http://127.0.0.1:PORT/mcp``); stopped (SIGINT) at the end."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    proc = subprocess.Popen(
        toy_server("--http", str(port), *extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"the toy server never listened on 127.0.0.1:{port}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def installed(script: str) -> str:
    """The path of a console script installed next to the interpreter (the test extras
    install ``mcp-server-git`` and ``mcp-server-time`` there)."""
    path = Path(sys.executable).parent / script
    found = str(path) if path.exists() else shutil.which(script)
    if found is None:
        raise RuntimeError(f"{script} is not installed: pip install -e '.[test]'")
    return found


def record_cmd(cassette: Path, server: Sequence[str], *opts: str) -> list[str]:
    return [*CLI, "mcp", "record", "-o", str(cassette), *opts, "--", *server]


def replay_cmd(cassette: Path, *opts: str) -> list[str]:
    return [*CLI, "mcp", "replay", str(cassette), *opts]


def git_repo(root: Path) -> Path:
    """A git repository with two commits and an unstaged change, fixed dates and author,
    so every server run over it answers the same."""
    repo = root / "repo"
    repo.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z",
        "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "notes.txt").write_text("retry budget\n")
    git("add", "notes.txt")
    git("commit", "-q", "-m", "first note")
    (repo / "notes.txt").write_text("retry budget\nbackoff\n")
    git("commit", "-q", "-am", "second note")
    (repo / "notes.txt").write_text("retry budget\nbackoff\njitter\n")
    return repo


# -- an MCP client from the official SDK -------------------------------------------------


def sdk_session(
    command: Sequence[str],
    calls: Sequence[tuple[str, dict[str, Any]]],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = TIMEOUT,
) -> dict[str, Any]:
    """Connect the SDK's ``Client`` to ``command`` over stdio, list the tools and make
    ``calls``; return ``{"tools": [tool as JSON], "calls": [result as JSON, or
    {"error": {"code", "message", "data"}}]}``."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.shared.exceptions import MCPError

    params = StdioServerParameters(
        command=command[0], args=list(command[1:]), env=env, cwd=str(cwd) if cwd else None
    )
    out: dict[str, Any] = {"tools": [], "calls": []}

    async def main() -> None:
        with anyio.fail_after(timeout):
            async with Client(params, read_timeout_seconds=timeout) as client:
                tools = await client.list_tools()
                out["tools"] = [t.model_dump(mode="json", by_alias=True) for t in tools.tools]
                for name, args in calls:
                    try:
                        result = await client.call_tool(name, args)
                    except MCPError as exc:
                        out["calls"].append(
                            {
                                "error": {
                                    "code": exc.error.code,
                                    "message": exc.error.message,
                                    "data": exc.error.data,
                                }
                            }
                        )
                    else:
                        out["calls"].append(result.model_dump(mode="json", by_alias=True))

    anyio.run(main)
    return out


# -- a raw line client --------------------------------------------------------------------


class RawSession:
    """A process spoken to line by line over stdio, every line it writes kept as bytes."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        preexec_fn: Callable[[], Any] | None = None,
    ) -> None:
        self.proc = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            preexec_fn=preexec_fn,  # noqa: PLW1509 - a test's limits (setrlimit) only
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.received: list[bytes] = []
        self.stderr = b""
        self._readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._read_err, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, message: dict[str, Any], timeout: float = TIMEOUT) -> dict[str, Any]:
        """Send a request and read lines up to its answer (notifications before it are kept
        in ``received`` too); the answer as JSON."""
        self.send(message)
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                raise EOFError(f"the process closed its stdout before answering {message}")
            self.received.append(line)
            doc = json.loads(line)
            if doc.get("id") == message["id"] and ("result" in doc or "error" in doc):
                return dict(doc)

    def close(self, timeout: float = TIMEOUT) -> int:
        """Close stdin and wait for the exit status (a hang fails the test)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.wait(timeout)

    def wait(self, timeout: float = TIMEOUT) -> int:
        """The exit status, once the process has exited and its output is all read (``stderr``
        complete); a hang fails the test."""
        status = self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=timeout)
        return status

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=TIMEOUT)


HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test-client", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def tool_call(request_id: Any, name: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def raw_script(session: RawSession, messages: Sequence[dict[str, Any]]) -> list[bytes]:
    """Send ``messages`` in order (a request waits for its answer) and return every line
    received."""
    for message in messages:
        if "id" in message:
            session.request(message)
        else:
            session.send(message)
    return list(session.received)
