"""Benchmark: small MCP tool calls through ``mcp record --url`` with the SDK's own client,
before and after in the same run (issue 31: the proxy within 1.5x of a direct connection,
for small calls too).

    .venv/bin/python benchmarks/bench_mcp_http_calls.py --calls 300 --rounds 12
    .venv/bin/python benchmarks/bench_mcp_http_calls.py --baseline /tmp/main-export --floor

The SDK's server (``bench_mcp.SERVER``) serves Streamable HTTP on a loopback port; one SDK
client session per round and case makes ``--calls`` ``echo`` calls (after 10 warm-up
ones) with a ``--size``-byte answer: straight to the server (``direct``), through ``mcp
record --url`` of this tree (``after``), of an older tree (``--baseline DIR``, a ``git
archive``: ``before``), and through a byte relay (``--floor``: ``floor_byte_relay.py``,
the two hops any proxy adds and nothing else). The cases take turns within each round,
the order reversed every other round. Reported per case: the median over rounds of each
round's median ms a call, its ratio to ``direct``'s in the same round (median, least and
most over rounds), and the proxy's CPU a call (ms; every thread's
``/proc/PID/task/*/schedstat``, in ns: the steadier figure on a shared machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mcp import CLI, SERVER  # noqa: E402
from bench_mcp_http import free_port, stop_all  # noqa: E402

WARMUP = 10


def cpu_ns(pid: int) -> int:
    """Every thread's CPU time so far (ns; Linux ``schedstat``; 0 elsewhere)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total


async def session(url: str, calls: int, size: int, proxy: int | None) -> tuple[float, float]:
    """``(median seconds a call, the proxy's CPU seconds a call)`` of one SDK session."""
    times: list[float] = []
    async with Client(url, read_timeout_seconds=60) as client:
        await client.list_tools()
        for i in range(WARMUP):
            await client.call_tool("echo", {"text": f"warm {i}", "size": size})
        used = cpu_ns(proxy) if proxy else 0
        for i in range(calls):
            t = time.perf_counter()
            result = await client.call_tool("echo", {"text": f"call {i}", "size": size})
            times.append(time.perf_counter() - t)
            assert not result.is_error, result
        spent = (cpu_ns(proxy) - used) / calls / 1e9 if proxy else 0.0
    return statistics.median(times), spent


def started(command: list[str], env: dict[str, str] | None = None) -> tuple[Any, str]:
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().decode().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls a session")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--size", type=int, default=0, help="answer bytes (0: about 60 B)")
    parser.add_argument("--baseline", type=Path, help="an older tree of the project to run too")
    parser.add_argument("--floor", action="store_true", help="add a byte relay (two hops)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "server.py").write_text(SERVER)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, str(tmp / "server.py"), str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        remote = f"http://127.0.0.1:{port}/mcp"
        trees: dict[str, dict[str, str]] = {"after": dict(os.environ)}
        if args.baseline is not None:
            site = tmp / "baseline"
            (site / "cassette_tui").mkdir(parents=True)
            for part in ("core", "tui", "pytest_plugin"):
                (site / "cassette_tui" / part).symlink_to(args.baseline.resolve() / part)
            trees["before"] = {**os.environ, "PYTHONPATH": str(site)}
        proxies: dict[str, Any] = {}
        urls = {"direct": remote}
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    anyio.run(session, remote, 1, 0, None)
                    break
                except Exception:  # not listening yet
                    time.sleep(0.1)
            for name, env in trees.items():
                command = [*CLI, "mcp", "record", "--url", remote, "-o", str(tmp / f"{name}.jsonl")]
                proxies[name], urls[name] = started(command, env)
            if args.floor:
                relay = Path(__file__).resolve().with_name("floor_byte_relay.py")
                proxies["floor"], urls["floor"] = started([sys.executable, str(relay), str(port)])
            medians: dict[str, list[float]] = {name: [] for name in urls}
            spent: dict[str, list[float]] = {name: [] for name in urls}
            order = list(urls)
            for round_ in range(args.rounds):
                for name in order if round_ % 2 == 0 else order[::-1]:
                    proc = proxies.get(name)
                    try:
                        median, cpu = anyio.run(
                            session, urls[name], args.calls, args.size, proc.pid if proc else None
                        )
                    except Exception as exc:
                        raise SystemExit(f"round {round_ + 1}, {name}: {exc!r}") from exc
                    medians[name].append(median)
                    spent[name].append(cpu)
            print(
                f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average "
                f"{os.getloadavg()[0]:.2f}, {args.rounds} rounds of {args.calls} calls, "
                f"answers of {args.size or 60} B"
            )
            print(
                f"{'case':<7} {'median ms':>9} {'x direct':>8} {'least':>6} {'most':>6} "
                f"{'proxy cpu ms':>12}"
            )
            for name in urls:
                ratios = [m / d for m, d in zip(medians[name], medians["direct"], strict=True)]
                cpu = f"{statistics.median(spent[name]) * 1e3:>12.3f}" if name in proxies else ""
                print(
                    f"{name:<7} {statistics.median(medians[name]) * 1e3:>9.2f} "
                    f"{statistics.median(ratios):>8.2f} {min(ratios):>6.2f} {max(ratios):>6.2f} "
                    f"{cpu}",
                    flush=True,
                )
        finally:
            stop_all(list(proxies.values()), server)


if __name__ == "__main__":
    main()
