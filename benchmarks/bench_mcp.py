"""Benchmark: what the MCP proxy adds per tool call.

    .venv/bin/python benchmarks/bench_mcp.py              # 300 calls per case
    .venv/bin/python benchmarks/bench_mcp.py --calls 1000

One MCP client (the official SDK, stdio) makes the same ``echo`` calls in one session
against three servers: the server itself (``direct``, the baseline), the server behind
``cassette-tui mcp record`` (two pipe hops more, each answer parsed and written to the
cassette and flushed), and ``cassette-tui mcp replay`` of that recording (no server at
all). Two payloads: a small answer (about 60 bytes) and a 100 KB one. Reported: the
median and the 95th percentile of the wall time per call (ms) after 20 warm-up calls,
and the median as a multiple of ``direct``'s in the same run. Session start-up (the
processes, the handshake) is not in the per-call figures; it is printed apart.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SERVER = '''
from mcp.server.mcpserver import MCPServer
server = MCPServer("bench", version="1")

@server.tool()
def echo(text: str, size: int = 0) -> str:
    """Echo the text, padded to size characters."""
    return text + "x" * max(size - len(text), 0)

server.run("stdio")
'''
CLI = [sys.executable, "-m", "cassette_tui.tui.cli"]
WARMUP = 20


async def session(command: list[str], calls: int, size: int) -> tuple[float, list[float]]:
    params = StdioServerParameters(command=command[0], args=command[1:])
    t0 = time.perf_counter()
    times: list[float] = []
    async with Client(params, read_timeout_seconds=60) as client:
        await client.list_tools()
        startup = time.perf_counter() - t0
        for i in range(WARMUP + calls):
            t = time.perf_counter()
            result = await client.call_tool("echo", {"text": f"call {i}", "size": size})
            if i >= WARMUP:
                times.append(time.perf_counter() - t)
            assert not result.is_error, result
    return startup, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, {args.calls} calls a case")
    print(
        f"{'payload':>8}  {'case':<8} {'median ms':>9} {'p95 ms':>7} {'x direct':>8} {'start s':>7}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        server_py = Path(tmp) / "server.py"
        server_py.write_text(SERVER)
        server = [sys.executable, str(server_py)]
        for size in (0, 100_000):
            run = Path(tmp) / f"bench-{size}.jsonl"
            cases = {
                "direct": server,
                "record": [*CLI, "mcp", "record", "-o", str(run), "--", *server],
                "replay": [*CLI, "mcp", "replay", str(run), "--repeat", "last"],
            }
            base = None
            for name, command in cases.items():
                startup, times = anyio.run(session, command, args.calls, size)
                median = statistics.median(times) * 1000
                p95 = statistics.quantiles(times, n=20)[-1] * 1000
                base = base or median
                label = "60 B" if size == 0 else f"{size // 1000} KB"
                print(
                    f"{label:>8}  {name:<8} {median:>9.2f} {p95:>7.2f} {median / base:>8.2f} "
                    f"{startup:>7.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
