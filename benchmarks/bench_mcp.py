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

Then the same over Streamable HTTP (``--no-http`` skips it): the server serves HTTP on a
loopback port; ``direct`` is the SDK's HTTP client against it, ``record`` the same through
``mcp record --url`` (a loopback proxy), ``replay`` against ``mcp replay --http``.

Then big messages (``--big 1,10,50``, in MB; ``--big ""`` skips them): a raw line client
(no SDK: its own parsing would hide the proxy's) sends one ``tools/call`` whose argument
is that big to a raw server that parses it and answers small (``request``), then a small
call whose answer is that big (``answer``), straight to the server and through
``mcp record``, in the same run; the best and the median of ``--repeats`` rounds each, as
ratios to the direct call's. ``--baseline DIR`` adds ``mcp record`` of an older tree of the
project (``git archive main | tar -x -C DIR``), in turn with ours: before and after in the
same minutes. Target (issue 31): within 1.5x of direct at every size. ``--small-raw N``
(with ``--no-sdk``) runs N small calls a session through ``mcp record`` with the raw
client: the median time and the proxy's CPU a call, against ``--baseline`` when given.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
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

import sys
if len(sys.argv) > 1:
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
else:
    server.run("stdio")
'''
RAW_SERVER = """
import json, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    req = json.loads(line)
    if "id" not in req or req.get("method") != "tools/call":
        if "id" in req:
            empty = {"jsonrpc": "2.0", "id": req["id"], "result": {}}
            out.write(json.dumps(empty).encode() + b"\\n")
            out.flush()
        continue
    for n in range(req["params"]["arguments"].get("notes", 0)):  # a chatty server
        note = {"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": f"step {n}"}}
        out.write(json.dumps(note).encode() + b"\\n")
    size = req["params"]["arguments"].get("answer", 0)
    text = "y" * size
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    answer = {"jsonrpc": "2.0", "id": req["id"], "result": result}
    out.write(json.dumps(answer).encode() + b"\\n")
    out.flush()
"""
RAW_HTTP_SERVER = """
import json, sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

async def endpoint(request):
    req = json.loads(await request.body())
    if "id" not in req:
        return Response(status_code=202)
    size = (req.get("params") or {}).get("arguments", {}).get("answer", 0)
    result = {"content": [{"type": "text", "text": "y" * size}], "isError": False}
    answer = {"jsonrpc": "2.0", "id": req["id"], "result": result}
    return Response(json.dumps(answer).encode(), media_type="application/json")

app = Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])])
# the loop pinned (argv[2], default asyncio's): uvicorn's "auto" takes uvloop when installed
# (the mcp extra has it), which would move "direct" between trees and sessions
loop = sys.argv[2] if len(sys.argv) > 2 else "asyncio"
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", loop=loop)
"""
CLI = [sys.executable, "-m", "cassette_tui.tui.cli"]
WARMUP = 20


async def session(command: list[str] | str, calls: int, size: int) -> tuple[float, list[float]]:
    """One SDK client session: over stdio to ``command``, or over HTTP to a URL."""
    params: StdioServerParameters | str = (
        command
        if isinstance(command, str)
        else StdioServerParameters(command=command[0], args=command[1:])
    )
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


def http_cases(tmp: Path, server_py: Path, calls: int) -> None:
    """The SDK client over Streamable HTTP: direct, through mcp record --url, and against
    mcp replay --http, in the same run."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, str(server_py), str(port)], stderr=subprocess.DEVNULL
    )
    procs: list[subprocess.Popen[bytes]] = []

    def started(command: list[str]) -> str:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        procs.append(proc)
        assert proc.stdout is not None
        return proc.stdout.readline().decode().strip()

    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        remote = f"http://127.0.0.1:{port}/mcp"
        for size in (0, 100_000):
            run = tmp / f"http-{size}.jsonl"
            base = None
            for name in ("direct", "record", "replay"):
                if name == "direct":
                    url = remote
                elif name == "record":
                    url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
                else:
                    procs.pop().send_signal(signal.SIGINT)  # the recording ends
                    url = started([*CLI, "mcp", "replay", "--http", str(run), "--repeat", "last"])
                startup, times = anyio.run(session, url, calls, size)
                median = statistics.median(times) * 1000
                p95 = statistics.quantiles(times, n=20)[-1] * 1000
                base = base or median
                label = "60 B" if size == 0 else f"{size // 1000} KB"
                print(
                    f"{label:>8}  {'http ' + name:<12} {median:>9.2f} {p95:>7.2f} "
                    f"{median / base:>8.2f} {startup:>7.2f}",
                    flush=True,
                )
            procs.pop().send_signal(signal.SIGINT)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGINT)
        server.terminate()
        server.wait(timeout=30)


def big_call(
    command: list[str],
    request_mb: int,
    answer_mb: int,
    notes: int = 0,
    env: dict[str, str] | None = None,
) -> float:
    """Seconds from writing one tools/call (``request_mb`` of argument, asking for
    ``answer_mb`` of answer, after ``notes`` log notifications) to reading its whole
    answer line, in a fresh session (``env``: the command's environment)."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    proc.stdin.write(json.dumps(init).encode() + b"\n")
    proc.stdin.flush()
    proc.stdout.readline()
    args = {"text": "x" * (request_mb << 20), "answer": answer_mb << 20, "notes": notes}
    line = (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "big", "arguments": args},
            }
        ).encode()
        + b"\n"
    )
    t = time.perf_counter()
    proc.stdin.write(line)
    proc.stdin.flush()
    for _ in range(notes):
        proc.stdout.readline()
    answer = proc.stdout.readline()
    took = time.perf_counter() - t
    assert answer.endswith(b"\n") and b'"id": 1' in answer[:40] or b'"id":1' in answer[:40]
    proc.stdin.close()
    proc.wait(timeout=60)
    return took


def baseline_env(tree: Path, tmp: Path) -> dict[str, str]:
    """The environment that runs ``cassette_tui`` from ``tree`` (an older tree of the
    project: ``git archive COMMIT | tar -x -C DIR``; its ``core/``, ``tui/``,
    ``pytest_plugin/`` linked as ``cassette_tui/`` first on ``PYTHONPATH``)."""
    site = tmp / "baseline-site"
    (site / "cassette_tui").mkdir(parents=True, exist_ok=True)
    for part in ("core", "tui", "pytest_plugin"):
        link = site / "cassette_tui" / part
        if not link.exists():
            link.symlink_to(tree.resolve() / part)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return env


def big_messages(tmp: Path, sizes: list[int], repeats: int, baseline: Path | None = None) -> None:
    """Each size, both directions: the best and the median of ``repeats`` fresh sessions,
    straight to the server and through ``mcp record``, alternating; with ``baseline``, a
    third: ``mcp record`` of that older tree, in turn with ours (the order swapped each
    round)."""
    server_py = tmp / "raw_server.py"
    server_py.write_text(RAW_SERVER)
    server = [sys.executable, str(server_py)]
    cases: dict[str, dict[str, str] | None] = {"direct": None, "record": None}
    if baseline is not None:
        cases["baseline"] = baseline_env(baseline, tmp)
    load = os.getloadavg()[0]
    print(f"\nbest and median of {repeats} (load average {load:.1f}): direct in seconds, the")
    print("others as x direct's (best, median), then their median in seconds")
    others = " ".join(f"{k:>23}" for k in cases if k != "direct")
    print(f"{'size':>6}  {'direction':<9} {'direct':>21} {others}")
    n = 0
    for mb in sizes:
        for direction, (req, ans) in (("request", (mb, 0)), ("answer", (0, mb))):
            took: dict[str, list[float]] = {name: [] for name in cases}
            for round_ in range(repeats):
                names = list(cases)
                if round_ % 2:
                    names = [names[0], *reversed(names[1:])]
                for name in names:
                    n += 1
                    run = tmp / f"big-{n}.jsonl"
                    command = (
                        server
                        if name == "direct"
                        else [*CLI, "mcp", "record", "-o", str(run), "--", *server]
                    )
                    took[name].append(big_call(command, req, ans, env=cases[name]))
            best = {name: min(times) for name, times in took.items()}
            mid = {name: statistics.median(times) for name, times in took.items()}
            cells = [f"{best['direct']:>8.3f} {mid['direct']:>8.3f}    "] + [
                f"{best[k] / best['direct']:>6.2f}x {mid[k] / mid['direct']:>6.2f}x {mid[k]:>6.3f}"
                for k in cases
                if k != "direct"
            ]
            print(f"{mb:>4} MB  {direction:<9} " + " ".join(cells), flush=True)


def raw_session(
    command: list[str], calls: int, answer: int, env: dict[str, str] | None
) -> tuple[float, float]:
    """One session of ``calls`` small tools/calls in turn (raw line client, ``answer``
    bytes each): ``(median seconds a call, CPU seconds of the process tree)``."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    proc.stdin.write(json.dumps(init).encode() + b"\n")
    proc.stdin.flush()
    proc.stdout.readline()
    times = []
    for i in range(calls):
        args = {"text": f"call {i}", "answer": answer}
        call = {
            "jsonrpc": "2.0",
            "id": i + 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": args},
        }
        t = time.perf_counter()
        proc.stdin.write(json.dumps(call).encode() + b"\n")
        proc.stdin.flush()
        proc.stdout.readline()
        times.append(time.perf_counter() - t)
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return statistics.median(times), usage.ru_utime + usage.ru_stime


def small_raw(tmp: Path, calls: int, repeats: int, baseline: Path | None) -> None:
    """Small calls through ``mcp record`` without the SDK (whose own work hides the
    proxy's): ``calls`` tools/calls in turn in one session, answers of 60 B and 100 KB;
    the median wall time a call and the proxy's CPU a call (the session's CPU less that of
    a one-call session), ``repeats`` rounds, with ``baseline`` in turn with ours."""
    server_py = tmp / "raw_server.py"
    server_py.write_text(RAW_SERVER)
    server = [sys.executable, str(server_py)]
    cases: dict[str, dict[str, str] | None] = {"record": None}
    if baseline is not None:
        cases["baseline"] = baseline_env(baseline, tmp)
    print(f"\nsmall calls, raw client, {calls} a session (load average {os.getloadavg()[0]:.1f})")
    print(f"{'answer':>8}  {'case':<9} {'median ms a call':>40}  CPU us a call")
    n = 0
    for answer in (0, 100_000):
        rows: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for round_ in range(repeats):
            for name in list(cases) if round_ % 2 == 0 else list(reversed(cases)):
                measured = []
                for count in (calls, 1):
                    n += 1
                    run = tmp / f"small-{n}.jsonl"
                    command = [*CLI, "mcp", "record", "-o", str(run), "--", *server]
                    measured.append(raw_session(command, count, answer, cases[name]))
                (median, cpu), (_, cpu_one) = measured
                rows[name].append((median * 1000, (cpu - cpu_one) / (calls - 1) * 1e6))
        for name, got in rows.items():
            label = "60 B" if answer == 0 else "100 KB"
            medians = " ".join(f"{m:.3f}" for m, _ in got)
            cpus = " ".join(f"{c:.0f}" for _, c in got)
            print(f"{label:>8}  {name:<9} {medians:>40}  {cpus}", flush=True)


def chatty(tmp: Path, counts: list[int], repeats: int) -> None:
    """One tools/call answered after ``n`` ``notifications/message`` (a chatty server's
    log): each is forwarded and kept in the sidecar's ``server_messages``; the time to the
    answer, straight and through ``mcp record`` (best of ``repeats``)."""
    server_py = tmp / "raw_server.py"
    server_py.write_text(RAW_SERVER)
    server = [sys.executable, str(server_py)]
    print(f"\n{'notes':>6}  {'direct s':>8} {'record s':>8} {'x direct':>8}")
    for n in counts:
        direct = record = float("inf")
        for i in range(repeats):
            run = tmp / f"chatty-{n}-{i}.jsonl"
            direct = min(direct, big_call(server, 0, 0, n))
            record = min(
                record, big_call([*CLI, "mcp", "record", "-o", str(run), "--", *server], 0, 0, n)
            )
            kept = json.loads(run.with_suffix(".mcp.json").read_text())
            assert len(kept.get("server_messages", [])) == n, "a notification was lost"
        print(f"{n:>6}  {direct:>8.3f} {record:>8.3f} {record / direct:>8.2f}", flush=True)


def big_http(tmp: Path, sizes: list[int], repeats: int) -> None:
    """The big messages over Streamable HTTP: one POST of a ``tools/call`` (``request``:
    its argument that big; ``answer``: its answer), straight to a raw HTTP server and
    through ``mcp record --url`` (one recorder for all), best of ``repeats``."""
    import socket

    import httpx2

    server_py = tmp / "raw_http_server.py"
    server_py.write_text(RAW_HTTP_SERVER)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, str(server_py), str(port)])
    remote = f"http://127.0.0.1:{port}/mcp"
    recorder = subprocess.Popen(
        [*CLI, "mcp", "record", "--url", remote, "-o", str(tmp / "http-big.jsonl")],
        stdout=subprocess.PIPE,
    )
    assert recorder.stdout is not None
    proxy = recorder.stdout.readline().decode().strip()
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    print(f"\n{'size':>6}  {'direction':<14} {'direct s':>8} {'record s':>8} {'x direct':>8}")
    try:
        with httpx2.Client(timeout=120) as client:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    client.post(remote, content=b'{"jsonrpc":"2.0","method":"x"}', headers=headers)
                    break
                except httpx2.TransportError:
                    time.sleep(0.05)
            n = 0
            for mb in sizes:
                for direction, (req, ans) in (("http request", (mb, 0)), ("http answer", (0, mb))):
                    best = {remote: float("inf"), proxy: float("inf")}
                    for _ in range(repeats):
                        for url in (remote, proxy):
                            n += 1
                            args = {"text": "x" * (req << 20), "answer": ans << 20}
                            params = {"name": "big", "arguments": args}
                            call = {
                                "jsonrpc": "2.0",
                                "id": n,
                                "method": "tools/call",
                                "params": params,
                            }
                            body = json.dumps(call).encode()
                            t = time.perf_counter()
                            answer = client.post(url, content=body, headers=headers)
                            took = time.perf_counter() - t
                            assert answer.status_code == 200 and answer.content.endswith(b"}")
                            best[url] = min(best[url], took)
                    direct, record = best[remote], best[proxy]
                    print(
                        f"{mb:>4} MB  {direction:<14} {direct:>8.3f} {record:>8.3f} "
                        f"{record / direct:>8.2f}",
                        flush=True,
                    )
    finally:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(timeout=60)
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--big", default="1,10,50", help="big-message sizes in MB")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-sdk", action="store_true", help="only the big messages")
    parser.add_argument("--no-http", action="store_true", help="leave out Streamable HTTP")
    parser.add_argument(
        "--small-raw",
        type=int,
        default=0,
        help="this many small calls a session without the SDK, median and CPU a call",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="an older tree (git archive) whose mcp record the big stdio messages also run",
    )
    parser.add_argument(
        "--chatty", default="1000,10000", help="notifications before one answer ('' skips)"
    )
    args = parser.parse_args()
    sizes = [int(x) for x in args.big.split(",") if x.strip()]
    counts = [int(x) for x in args.chatty.split(",") if x.strip()]
    if args.no_sdk:
        with tempfile.TemporaryDirectory() as tmp:
            if args.small_raw:
                small_raw(Path(tmp), args.small_raw, args.repeats, args.baseline)
            if sizes:
                big_messages(Path(tmp), sizes, args.repeats, args.baseline)
            if sizes and not args.no_http:
                big_http(Path(tmp), sizes, args.repeats)
            if counts:
                chatty(Path(tmp), counts, args.repeats)
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, {args.calls} calls a case")
    print(
        f"{'payload':>8}  {'case':<12} {'median ms':>9} {'p95 ms':>7} {'x direct':>8} "
        f"{'start s':>7}"
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
                    f"{label:>8}  {name:<12} {median:>9.2f} {p95:>7.2f} {median / base:>8.2f} "
                    f"{startup:>7.2f}",
                    flush=True,
                )
        if not args.no_http:
            http_cases(Path(tmp), server_py, args.calls)
        if sizes:
            big_messages(Path(tmp), sizes, args.repeats, args.baseline)
            if not args.no_http:
                big_http(Path(tmp), sizes, args.repeats)
        if counts:
            chatty(Path(tmp), counts, args.repeats)


if __name__ == "__main__":
    main()
