"""Benchmark: one big MCP message through ``mcp record --url`` against a direct connection,
before and after in the same run (issue 31: the proxy within 1.5x of a direct connection).

    .venv/bin/python benchmarks/bench_mcp_http.py --big 1,10,50 --rounds 5
    .venv/bin/python benchmarks/bench_mcp_http.py --baseline /tmp/main-export

A raw HTTP server (``bench_mcp.RAW_HTTP_SERVER``: starlette on uvicorn, ``json.loads`` of
each POST) and one ``httpx2`` client that POSTs one ``tools/call``: ``request``, its
argument that big, answered small; ``answer``, a small call answered that big. Each round
sends it straight to the server, then through ``mcp record --url`` of this tree, then (with
``--baseline DIR``, a ``git archive`` of an older tree: its ``core/``, ``tui/``,
``pytest_plugin/`` first on ``PYTHONPATH``) through the older tree's recorder, so that
before and after alternate within the same seconds. Reported per size and direction: the
best and the median wall time of each (ms), their ratio to ``direct``'s (best against
best, median against median), and each recorder's CPU time a call (ms, user + system,
from ``/proc`` in 10 ms ticks: on a shared machine the steadier figure).
``--baseline-h11`` runs the older recorder without ``httptools`` (it was not a dependency
then: uvicorn fell back to h11). ``--same-body`` builds each case's body once, not before
each call.
``--floor`` adds ``floor_recording_proxy.py``: the least a recording proxy can do (each
byte sent on, hashed and written once; no JSON read, no framework), as a floor.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mcp import CLI, RAW_HTTP_SERVER  # noqa: E402

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def cpu_seconds(pid: int) -> float:
    """A process's user + system CPU time so far (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_all(proxies: Iterable[subprocess.Popen[bytes]], server: subprocess.Popen[bytes]) -> None:
    """Each proxy stopped by SIGINT (its cassette and report written), then the server."""
    for proc in proxies:
        proc.send_signal(signal.SIGINT)
    for proc in proxies:
        proc.wait(timeout=120)
    server.terminate()
    server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big", default="1,10,50", help="message sizes in MB (0.1: 100 KB)")
    parser.add_argument(
        "--same-body",
        action="store_true",
        help="build each case's body once, not before each call (the client's burst of CPU "
        "before each call, which changes where the kernel runs the three, left out)",
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="an older tree of the project to run too")
    parser.add_argument(
        "--baseline-h11", action="store_true", help="the older recorder without httptools"
    )
    parser.add_argument(
        "--floor", action="store_true", help="add the least a recording proxy can do"
    )
    parser.add_argument(
        "--server-loop",
        default="asyncio",
        choices=("asyncio", "uvloop"),
        help="the raw server's event loop (uvicorn's loop setting)",
    )
    args = parser.parse_args()
    sizes = [float(x) for x in args.big.split(",") if x.strip()]
    import httpx2

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server_py = tmp / "raw_http_server.py"
        server_py.write_text(RAW_HTTP_SERVER)
        port = free_port()
        server = subprocess.Popen([sys.executable, str(server_py), str(port), args.server_loop])
        remote = f"http://127.0.0.1:{port}/mcp"
        trees: dict[str, dict[str, str]] = {"after": dict(os.environ)}
        if args.baseline is not None:
            site = tmp / "baseline"
            (site / "cassette_tui").mkdir(parents=True)
            for part in ("core", "tui", "pytest_plugin"):
                (site / "cassette_tui" / part).symlink_to(args.baseline.resolve() / part)
            if args.baseline_h11:  # httptools hidden: uvicorn's "auto" takes h11
                (site / "httptools").mkdir()
                (site / "httptools" / "__init__.py").write_text("raise ImportError('hidden')\n")
            trees["before"] = {**os.environ, "PYTHONPATH": str(site)}
        recorders: dict[str, subprocess.Popen[bytes]] = {}
        urls = {"direct": remote}
        try:
            for name, env in trees.items():
                proc = subprocess.Popen(
                    [*CLI, "mcp", "record", "--url", remote, "-o", str(tmp / f"{name}.jsonl")],
                    stdout=subprocess.PIPE,
                    env=env,
                )
                recorders[name] = proc
                assert proc.stdout is not None
                urls[name] = proc.stdout.readline().decode().strip()
            if args.floor:
                floor = Path(__file__).resolve().with_name("floor_recording_proxy.py")
                command = [sys.executable, str(floor), str(free_port()), str(port)]
                proc = subprocess.Popen([*command, str(tmp / "floor.out")], stdout=subprocess.PIPE)
                recorders["floor"] = proc
                assert proc.stdout is not None
                urls["floor"] = proc.stdout.readline().decode().strip()
            print(
                f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
                f"load average {os.getloadavg()[0]:.2f}, {args.rounds} rounds"
            )
            print(
                f"{'size':>8}  {'direction':<9} {'case':<7} {'best ms':>8} {'median ms':>9} "
                f"{'x best':>7} {'x median':>8} {'proxy cpu ms':>12}"
            )
            with httpx2.Client(timeout=300) as client:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    try:
                        client.post(remote, content=b'{"jsonrpc":"2.0","method":"x"}')
                        break
                    except httpx2.TransportError:
                        time.sleep(0.05)
                n = 0
                body, body_of = b"", (-1.0, -1.0)
                for mb in sizes:
                    for direction, (req, ans) in (("request", (mb, 0)), ("answer", (0, mb))):
                        times: dict[str, list[float]] = {name: [] for name in urls}
                        cpu: dict[str, float] = dict.fromkeys(urls, 0.0)
                        for _ in range(args.rounds):
                            for name, url in urls.items():
                                n += 1
                                if not (args.same_body and n > 1 and body_of == (req, ans)):
                                    text = "x" * int(req * (1 << 20))
                                    call_args = {"text": text, "answer": int(ans * (1 << 20))}
                                    call = {
                                        "jsonrpc": "2.0",
                                        "id": n,
                                        "method": "tools/call",
                                        "params": {"name": "big", "arguments": call_args},
                                    }
                                    body = json.dumps(call).encode()
                                    body_of = (req, ans)
                                proc = recorders.get(name)
                                used = cpu_seconds(proc.pid) if proc else 0.0
                                t = time.perf_counter()
                                answer = client.post(url, content=body, headers=HEADERS)
                                times[name].append(time.perf_counter() - t)
                                if proc:
                                    cpu[name] += cpu_seconds(proc.pid) - used
                                assert answer.status_code == 200, answer.status_code
                                assert answer.content.endswith(b"}")
                        best = min(times["direct"])
                        median = statistics.median(times["direct"])
                        for name, taken in times.items():
                            b, m = min(taken), statistics.median(taken)
                            spent = cpu[name] / args.rounds * 1e3
                            shown = f"{spent:>12.1f}" if name != "direct" else ""
                            print(
                                f"{mb:>5g} MB  {direction:<9} {name:<7} "
                                f"{b * 1e3:>8.2f} {m * 1e3:>9.2f} "
                                f"{b / best:>7.2f} {m / median:>8.2f} {shown}",
                                flush=True,
                            )
        finally:
            stop_all(list(recorders.values()), server)


if __name__ == "__main__":
    main()
