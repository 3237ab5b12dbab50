"""Benchmark: what a replayed tool call costs inside the agent, against the article's
``Cassette.call``, and what importing the wrapper costs.

    .venv/bin/python benchmarks/bench_replay.py                  # every part
    .venv/bin/python benchmarks/bench_replay.py --calls 2000 --rounds 5 --scale 1000,10000,100000
    .venv/bin/python benchmarks/bench_replay.py --parts import --import-repeat 20

Everything is measured in one process and one run, each figure against a baseline taken
right beside it (this machine's speed varies up to 2x from minute to minute):

* ``per call`` (issue 31: within 2x of the article): for each shape of call, a cassette of
  ``--calls`` distinct calls written as the article's ``record()`` writes them (sorted keys,
  ``args_digest``), then every call made once, in order, through

  - ``article``: the article's reference re-implemented as the article sketches it
    (``bench_load.py``'s loader is the same): ``json.loads`` of every line into a dict
    keyed by ``(tool, args_digest)`` (a key recorded twice keeps its last response);
    ``call`` digests the live args with ``json.dumps(sort_keys=True, separators=(",",
    ":"))`` and SHA-256, counts a hit, collects a miss and raises on it, and returns the
    stored response (the dict itself, no copy);
  - ``ours``: ``wrap_dispatcher(f, mode="replay", path=...)``, no report;
  - ``ours+report``: ``wrap_dispatcher(f)`` as an agent under the loop runs it: mode, path
    and report from ``CASSETTE_MODE``/``CASSETTE_PATH``/``CASSETTE_REPORT`` (the wrapper
    follows the environment), a report file written.

  ``--clock cpu`` times the calls by this thread's CPU time and the loads by the
  process's (on a machine shared with other work, wall times vary 2x from minute to
  minute; the CPU time is what the calls cost).
  Loading and indexing are outside the timing on both sides (the article's ``__init__``;
  our ``load`` and the digests of the recorded args, computed before the first call).
  What is timed is the calls, nothing else: the per-call µs is the best of ``--rounds``
  rounds, the ratio the median of each round's ratio.
  Shapes: ``small`` (the article's ``search_docs`` call), ``search`` (a filter object, ten
  ranked hits of small values back, ~2.5 KB), ``read_file`` (a path, 4 KB of text back),
  ``messages`` (six chat messages as args, ~1.3 KB, a completion back), ``unicode``
  (non-ASCII args: off orjson's fast digest, onto the exact one).
* ``scale`` (the report is appended, not rewritten): ``ours+report`` on cassettes of each
  size of ``--scale`` calls of the ``small`` shape; the per-call µs should stay flat from the
  smallest to the largest. The article on the same file in the same run, for scale.
* ``floor``: per shape, the decode of each answer's bytes alone (orjson, as a call
  decodes them; msgspec beside it) and the live args' digest, against the article's call:
  what a replayed call that hands each call its own objects cannot go below.
* ``start``: a replayer's start on ``--start-file`` (the shared generator's 100k-entry
  cassette, say): ``wrap_dispatcher(f, mode="replay", path=...)`` (the load, every line
  checked fully, the replay keys) against the article's load of the same file
  (``ArticleCassette``), each side in a fresh interpreter, ``--rounds`` times in turn;
  the fastest of each, and each side's peak memory (``ru_maxrss``).
* ``import`` (target: under 30 ms): the wall time of a fresh interpreter running
  ``from cassette_tui.core import wrap_dispatcher`` against ``python -c pass``, alternated,
  ``--import-repeat`` pairs; the median and the smallest difference.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


# -- the article's reference, as sketched ------------------------------------------------
def article_digest(args: Any) -> str:
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


class ArticleCassette:
    """The article's ``Cassette``: every line parsed into a dict by key (last one wins),
    hits counted, misses collected, a miss raises."""

    def __init__(self, path: str | Path) -> None:
        self.entries: dict[tuple[str, str], dict[str, Any]] = {}
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    entry = json.loads(line)
                    self.entries[(entry["tool"], entry["args_digest"])] = entry
        self.hits = 0
        self.misses: list[tuple[str, str]] = []

    def call(self, tool: str, args: Any) -> Any:
        key = (tool, article_digest(args))
        if key not in self.entries:
            self.misses.append(key)
            raise KeyError(f"cassette miss: {key}")
        self.hits += 1
        return self.entries[key]["response"]


def article_record(fh: Any, seq: int, tool: str, args: Any, response: Any) -> None:
    """The article's ``record()``: one sorted-keys JSON line per call."""
    entry = {"seq": seq, "tool": tool, "args": args, "args_digest": article_digest(args),
             "response": response}  # fmt: skip
    fh.write(json.dumps(entry, sort_keys=True) + "\n")


# -- shapes of calls ------------------------------------------------------------------------
WORDS = ["retry", "budget", "backoff", "jitter", "timeout", "quota", "429", "circuit"]


def _words(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def shape_call(shape: str, i: int) -> tuple[str, Any, Any]:
    """``(tool, args, response)`` of call ``i`` of ``shape``."""
    if shape == "small":
        return "search_docs", {"q": f"term-{i}", "top_k": 5}, {"hits": 3, "top": f"doc-{i}.md"}
    if shape == "search":
        filters = {"lang": "en", "since": "2026-01-01", "tags": ["sre", "http"]}
        args = {"q": f"retry budget {i}", "top_k": 10, "filters": filters}
        hits = [
            {
                "doc": f"docs/doc-{i}-{k}.md",
                "id": i * 10 + k,
                "score": round(1 / (k + 1), 4),
                "rank": k + 1,
                "fresh": k % 2 == 0,
                "tags": ["retry", "budget"],
                "span": [k * 10, k * 10 + 80],
                "snippet": _words(i + k, 8),
            }  # fmt: skip
            for k in range(10)
        ]
        return "search_docs", args, {"hits": hits, "total": 10}
    if shape == "read_file":
        text = "\n".join(f"line {k}: {_words(i + k, 9)}" for k in range(64))
        return "read_file", {"path": f"src/pkg/module_{i}.py"}, {"content": text[:4096]}
    if shape == "messages":
        msgs = [
            {"role": ("system", "user", "assistant")[k % 3], "content": _words(i + k, 30)}
            for k in range(6)
        ]
        args = {"model": "small-1", "temperature": 0.2, "messages": msgs, "n": i}
        return "complete", args, {"text": _words(i, 80), "finish": "stop", "tokens": 80}
    if shape == "unicode":
        return "search_docs", {"q": f"café über 東京 {i}", "top_k": 5}, {"hits": 1, "top": "ü.md"}
    raise ValueError(shape)


SHAPES = ("small", "search", "read_file", "messages", "unicode")


def write_cassette(path: Path, shape: str, n: int) -> list[tuple[str, Any]]:
    """A cassette of ``n`` calls of ``shape``; the calls ``(tool, args)`` to replay."""
    calls = []
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            tool, args, response = shape_call(shape, i)
            article_record(fh, i + 1, tool, args, response)
            calls.append((tool, args))
    return calls


# -- timing -----------------------------------------------------------------------------------
def _timed(dispatch: Callable[[str, Any], Any], calls: list[tuple[str, Any]]) -> float:
    """Seconds per call of ``dispatch`` over ``calls`` (the cyclic collector off, as it is
    left to run in neither side's favour: a collection mid-loop is noise)."""
    gc.collect()
    gc.disable()
    try:
        start = CLOCK()
        for tool, args in calls:
            dispatch(tool, args)
        return (CLOCK() - start) / len(calls)
    finally:
        gc.enable()


#: what the calls are timed with: wall time (``--clock wall``), or this thread's CPU time
#: (``--clock cpu``: on a machine shared with other work, the time the calls ran)
CLOCK: Callable[[], float] = time.perf_counter
#: the loads' clock: wall, or the process's CPU time (our load reads ahead in a thread)
LOAD_CLOCK: Callable[[], float] = time.perf_counter


def _refuse(tool: str, args: Any) -> Any:
    raise AssertionError("replay called the live tool")


_ENV = ("CASSETTE_MODE", "CASSETTE_PATH", "CASSETTE_REPORT", "CASSETTE_CONFIG",
        "CASSETTE_REPORT_OWNER")  # fmt: skip


def ours(path: Path, report: Path | None) -> Callable[[str, Any], Any]:
    """Our wrapper over ``path``, ready to serve (loaded, recorded digests computed):
    given its mode and no report, or from the environment with ``report``."""
    from cassette_tui.core import wrap_dispatcher

    for name in _ENV:
        os.environ.pop(name, None)
    if report is None:
        dispatch = wrap_dispatcher(_refuse, mode="replay", path=path)
    else:
        os.environ.update(CASSETTE_MODE="replay", CASSETTE_PATH=str(path),
                          CASSETTE_REPORT=str(report))  # fmt: skip
        dispatch = wrap_dispatcher(_refuse)
    dispatch.engine.cassette.digests()  # the index, as the article's load builds its dict
    return dispatch


def _done(dispatch: Any) -> float:
    """Close ``dispatch`` and write its report as the exit does; the seconds it took."""
    from cassette_tui.core.replay import report_sink

    start = time.perf_counter()
    dispatch.close()
    # as the exit does (``flush_all`` where ``end_all`` is not there: code before issue 31)
    getattr(report_sink, "end_all", report_sink.flush_all)()
    took = time.perf_counter() - start
    report_sink._SINKS.clear()  # the next round's exit writes its own report only
    for name in _ENV:
        os.environ.pop(name, None)
    return took


def per_call(folder: Path, calls_n: int, rounds: int) -> None:
    print(
        f"per call: {calls_n} distinct calls, each made once; best of {rounds} rounds "
        f"(us, {'CPU' if CLOCK is time.thread_time else 'wall'} time); "
        "'run': the load and every call, per call"
    )
    print(
        f"  {'shape':<10} {'article':>8} {'ours':>8} {'ratio':>6} {'+report':>8} {'ratio':>6}"
        f"   {'run: article':>12} {'ours':>8} {'ratio':>6}"
    )
    for shape in SHAPES:
        path = folder / f"{shape}.jsonl"
        calls = write_cassette(path, shape, calls_n)
        art, mine, rep, r1, r2, art_run, our_run, r3 = [], [], [], [], [], [], [], []
        for k in range(rounds):
            start = LOAD_CLOCK()
            cassette = ArticleCassette(path)
            load_a = LOAD_CLOCK() - start
            a = _timed(cassette.call, calls)
            start = LOAD_CLOCK()
            d = ours(path, None)
            load_o = LOAD_CLOCK() - start
            o = _timed(d, calls)
            _done(d)
            d = ours(path, folder / f"{shape}-{k}.report.json")
            r = _timed(d, calls)
            _done(d)
            art.append(a)
            mine.append(o)
            rep.append(r)
            r1.append(o / a)
            r2.append(r / a)
            art_run.append(a + load_a / len(calls))
            our_run.append(o + load_o / len(calls))
            r3.append(our_run[-1] / art_run[-1])
        med = statistics.median
        print(
            f"  {shape:<10} {min(art) * 1e6:8.1f} {min(mine) * 1e6:8.1f} {med(r1):5.2f}x "
            f"{min(rep) * 1e6:8.1f} {med(r2):5.2f}x   {min(art_run) * 1e6:12.1f} "
            f"{min(our_run) * 1e6:8.1f} {med(r3):5.2f}x"
        )


def floor(folder: Path, calls_n: int, rounds: int) -> None:
    """What a call cannot go below, per shape, against the article's call (which returns
    the object its load parsed, shared by every call): the decode of the answer's bytes
    alone (orjson, as a replayed call decodes them; msgspec beside it), and that plus the
    live args' digest (the article digests too); the rest of our call is the ``pread``,
    the lock, the key's next recording and the call log."""
    import msgspec
    import orjson
    from cassette_tui.core.format.digest import live_digest

    print(f"floor: best of {rounds} rounds over {calls_n} calls (us; ratio to the article)")
    print(
        f"  {'shape':<10} {'article':>8} {'orjson':>8} {'ratio':>6} {'msgspec':>8} "
        f"{'digest':>8} {'decode+digest':>14} {'ratio':>6}"
    )
    for shape in SHAPES:
        path = folder / f"floor-{shape}.jsonl"
        calls = write_cassette(path, shape, calls_n)
        answers = [
            json.dumps(shape_call(shape, i)[2], sort_keys=True).encode() for i in range(calls_n)
        ]
        raws = [("", raw) for raw in answers]
        cassette = ArticleCassette(path)
        best: dict[str, float] = {}
        for _ in range(rounds):
            for name, one, over in (
                ("article", cassette.call, calls),
                ("orjson", lambda _t, raw: orjson.loads(raw), raws),
                ("msgspec", lambda _t, raw: msgspec.json.decode(raw), raws),
                ("digest", lambda _t, args: live_digest(args), calls),
            ):
                took = _timed(one, over)
                best[name] = min(took, best.get(name, took))
        a, o, m, d = (best[k] * 1e6 for k in ("article", "orjson", "msgspec", "digest"))
        print(
            f"  {shape:<10} {a:8.2f} {o:8.2f} {o / a:5.2f}x {m:8.2f} {d:8.2f} "
            f"{o + d:14.2f} {(o + d) / a:5.2f}x"
        )


def scale(folder: Path, sizes: list[int]) -> None:
    print("scale: ours+report per call by the length of the run (small shape, us)")
    first = None
    for n in sizes:
        path = folder / f"scale-{n}.jsonl"
        calls = write_cassette(path, "small", n)
        a = _timed(ArticleCassette(path).call, calls)
        d = ours(path, folder / f"scale-{n}.report.json")
        r = _timed(d, calls)
        final = _done(d)
        first = r if first is None else first
        print(
            f"  {n:>7} calls: article {a * 1e6:6.1f}  ours+report {r * 1e6:6.1f} "
            f"({r / a:4.2f}x; {r / first:4.2f}x of the first size); "
            f"the report's final write {final * 1000:6.1f} ms"
        )


_START = """
import resource, sys, time
sys.path.insert(0, {bench!r})
start, cpu = time.perf_counter(), time.process_time()
if {side!r} == "article":
    from bench_replay import ArticleCassette
    held = ArticleCassette({path!r})
else:
    from cassette_tui.core import wrap_dispatcher
    held = wrap_dispatcher(lambda tool, args: None, mode="replay", path={path!r})
    held.engine.cassette.digests()  # known already: the start computed them
took, cpu = time.perf_counter() - start, time.process_time() - cpu
print(took, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def start_time(path: Path, rounds: int) -> None:
    """The replayer's start against the article's load, each in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    size = path.stat().st_size / 1e6
    runs: dict[str, list[tuple[float, float, int]]] = {"article": [], "ours": []}
    for _ in range(rounds):
        for side in ("article", "ours"):
            code = _START.format(bench=str(ROOT / "benchmarks"), side=side, path=str(path))
            out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()  # fmt: skip
            runs[side].append((float(out[0]), float(out[1]), int(out[2])))
    (a, a_cpu, a_kb), (o, o_cpu, o_kb) = (
        (min(r[0] for r in rs), min(r[1] for r in rs), max(r[2] for r in rs))
        for rs in (runs["article"], runs["ours"])
    )
    print(
        f"start: {path.name} ({size:.0f} MB), fastest of {rounds}: article's load {a:.2f} s "
        f"({a_cpu:.2f} s CPU), {a_kb / 1024:.0f} MB; the replayer's start {o:.2f} s "
        f"({o_cpu:.2f} s CPU), {o_kb / 1024:.0f} MB: {o / a:.2f}x the time "
        f"({o_cpu / a_cpu:.2f}x the CPU), {o_kb / a_kb:.2f}x the memory"
    )


def import_time(repeat: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}

    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        return time.perf_counter() - start

    base, imp = [], []
    run("pass")  # warm the file cache
    run("from cassette_tui.core import wrap_dispatcher")
    for i in range(repeat):
        if i % 2:
            imp.append(run("from cassette_tui.core import wrap_dispatcher"))
            base.append(run("pass"))
        else:
            base.append(run("pass"))
            imp.append(run("from cassette_tui.core import wrap_dispatcher"))
    diffs = [b - a for a, b in zip(base, imp, strict=True)]
    med = statistics.median(diffs) * 1000
    ok = "ok" if med <= 30 else "OVER"
    print(
        f"import: python -c pass {statistics.median(base) * 1000:.1f} ms, "
        f"from cassette_tui.core import wrap_dispatcher "
        f"{statistics.median(imp) * 1000:.1f} ms; the import alone {med:+.1f} ms median, "
        f"{min(diffs) * 1000:+.1f} ms smallest ({repeat} pairs; target <= 30 ms: {ok})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scale", default="1000,10000,100000")
    parser.add_argument("--import-repeat", type=int, default=20)
    parser.add_argument(
        "--parts", default="call,scale,import", help="also: floor, start (--start-file)"
    )
    parser.add_argument("--start-file", type=Path, help="the cassette of the start part")
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall",
        help="time the calls and loads by wall time, or by CPU time (a shared machine)",
    )  # fmt: skip
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if args.clock == "cpu":
        global CLOCK, LOAD_CLOCK
        CLOCK, LOAD_CLOCK = time.thread_time, time.process_time
    if args.start_file is not None:
        args.start_file = args.start_file.resolve()  # before the chdir below
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        # the project's own config is not the benchmark's: no normalization rules
        os.chdir(tmp)
        folder = Path(tmp)
        if "call" in parts:
            per_call(folder, args.calls, args.rounds)
        if "floor" in parts:
            floor(folder, args.calls, args.rounds)
        if "scale" in parts:
            scale(folder, [int(s) for s in args.scale.split(",") if s])
        if "start" in parts:
            if args.start_file is None:
                parser.error("--parts start needs --start-file")
            start_time(args.start_file, args.rounds)
        if "import" in parts:
            import_time(args.import_repeat)


if __name__ == "__main__":
    main()
