"""The loader's read-ahead thread (core/format/_readahead.py) against hostile files and callers, on
real files on disk: the same load with the thread and without it, nothing left behind
(thread, descriptor) whatever ends the load, Ctrl-C at any point, a job left suspended
at interpreter exit, special files, a failing read, the file changing under the load,
and the peak memory of a large load.

The thread is forced on small files by setting ``readahead.READ_AHEAD_MIN`` to 0, and
``readahead.CHUNK`` is made tiny so that a cassette of a few hundred bytes is many chunks
(lines across chunks, lines longer than a chunk, a BOM or CRLF cut by a chunk end).
"""

from __future__ import annotations

import _thread
import dataclasses
import gc
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import load
from cassette_tui.core.format import _readahead as readahead
from cassette_tui.core.format.cassette import load_job
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.format.jobs import Cancelled, CancelToken, run_job
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# -- helpers -----------------------------------------------------------------------------


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "cassette-read-ahead"]


def _fds() -> int:
    """Open descriptors, once cassettes no longer referenced are gone (one keeps a
    descriptor for entry access until collected)."""
    gc.collect()
    return len(os.listdir("/proc/self/fd"))


def _no_reader_left(wait: float = 1.0) -> list[threading.Thread]:
    """The reader threads still alive after ``wait`` seconds (a stopped reader may take
    one poll, 50 ms, to see its stop event)."""
    deadline = time.monotonic() + wait
    while _readers() and time.monotonic() < deadline:
        time.sleep(0.01)
    return _readers()


@pytest.fixture
def ahead(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The thread on for every file, 64-byte chunks; no reader left before or after."""
    assert not _readers()
    monkeypatch.setattr(readahead, "READ_AHEAD_MIN", 0)
    monkeypatch.setattr(readahead, "CHUNK", 64)
    yield
    left = _no_reader_left()
    assert not left, f"reader threads left after the test: {left}"


def _good(seq: int, pad: int = 30) -> str:
    return json.dumps(
        {"seq": seq, "tool": f"t{seq % 3}", "args": {"q": seq}, "response": "r" * pad}
    )


def _write(path: Path, lines: list[str], nl: str = "\n") -> Path:
    path.write_bytes((nl.join(lines) + nl).encode())
    return path


def _snapshot(load_fn: Callable[..., Any], path: Path, lenient: bool) -> Any:
    """Everything a caller can see of a load, as plain comparable values (repr: NaN)."""
    try:
        c = load_fn(path, lenient=lenient)
    except CassetteFormatError as exc:
        return ("error", str(exc), exc.line, exc.field, exc.truncated, exc.reason)
    rows = []
    for i in range(len(c)):
        row: list[Any] = [c.line(i), c.seq(i), c.tool(i), c.stored_digest(i), c.raw_line(i)]
        try:
            row.append(repr(c[i]))
        except CassetteFormatError as exc:
            row.append(("entry error", str(exc), exc.line, exc.field))
        rows.append(tuple(row))
    report = dataclasses.astuple(c.report)
    c.close()
    return (len(c), report, rows)


def _stop_leaked_readers() -> None:
    """Stop reader threads nobody will stop (their ``stop`` event is a local of the
    generator that raised): set the event found in the reader's frame, and join."""
    frames = sys._current_frames()
    for thread in _readers():
        frame = frames.get(thread.ident or -1)
        while frame is not None and "stop" not in frame.f_locals:
            frame = frame.f_back
        if frame is not None:
            frame.f_locals["stop"].set()
        thread.join(5)


# -- equality: thread on == thread off ----------------------------------------------------

_ODD_LINES = [
    "",
    " ",
    "\t  ",
    "\r",
    '{"seq":',
    '{"seq":3,"tool":"t","args":{},"error":{"type":"X","message":"m"}}',
    '{"seq": 4, "tool": "t", "args": {}, "error": {"type": "X", "message": "m"}}',
    '{"seq":5,"seq":6,"tool":"t","args":{},"response":1}',
    '{"seq":7,"tool":"t","args":{},"response":1,"response":2}',
    '{"seq":8,"tool":"t","args":{},"response":1,"error":{"type":"X","message":"m"}}',
    '{"tool":"t","args":{},"response":1}',
    '{"seq":0,"tool":"t","args":{},"response":1}',
    '{"seq":9,"tool":"","args":{},"response":1}',
    '{"seq":10,"tool":"t","args":{},"response":NaN}',
    '{"seq":11,"tool":"t","args":{"a":1,"a":2},"response":1}',
    '{"seq":12,"tool":"t","args":{},"response":{"x":1,"x":2}}',
    '{"args": {"q": 13}, "args_digest": "sha256:abc", "response": "rr", "seq": 13, "tool": "t"}',
    '{"seq":14,"tool":"t","args":{},"response":"' + "x" * 300 + '"}',  # > a chunk
    '{"seq":15,"tool":"t","args":{},"response":{"a":[1,2',
    '{"seq":16,"tool":"t","args":{},"error":null}',
    '{"seq":17,"tool":"t","args":{},"response":null}',
    '{"seq":18,"tool":"t","args":{},"response":1,"extra":{"z":1}}',
    '{"seq":19,"tool":"t\\u00e9","args":{},"response":"\\ud800"}',
    '{"seq":20,"tool":"t","args":{},"error":{"type":"X"}}',
    '{"seq":21,"tool":"t","args":{}}',
    "[1, 2]",
    "\ufeff" + _good(22),  # a BOM on a later line
]

_files = st.builds(
    lambda lines, nl, end, bom, cut, junk: (lines, nl, end, bom, cut, junk),
    st.lists(
        st.one_of(
            st.sampled_from(_ODD_LINES), st.builds(_good, st.integers(1, 40), st.integers(0, 90))
        ),
        max_size=14,
    ),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),  # a newline after the last line
    st.booleans(),  # a BOM
    st.one_of(st.none(), st.floats(0, 1)),  # the file cut at this fraction (a crash)
    st.booleans(),  # an invalid UTF-8 byte somewhere
)


def _file_bytes(spec: tuple[Any, ...]) -> bytes:
    lines, nl, end, bom, cut, junk = spec
    data = nl.join(lines).encode("utf-8", "surrogatepass") + (nl.encode() if end else b"")
    if bom:
        data = b"\xef\xbb\xbf" + data
    if cut is not None and data:
        data = data[: int(len(data) * cut)]
    if junk and data:
        at = len(data) // 2
        data = data[:at] + b"\xff" + data[at:]
    return data


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(spec=_files, chunk=st.sampled_from([3, 5, 16, 64, 1 << 22]), lenient=st.booleans())
def test_a_load_is_the_same_with_the_thread_and_without_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spec: tuple[Any, ...],
    chunk: int,
    lenient: bool,
) -> None:
    """Holds (3 x 3000 random cassettes tried while writing this; 150 here): same length,
    line, seq, tool, stored digest, raw line, entry (or entry error), report, and the same
    ``CassetteFormatError`` (str, line, field, truncated)."""
    path = tmp_path / "c.jsonl"
    path.write_bytes(_file_bytes(spec))
    with monkeypatch.context() as m:
        m.setattr(readahead, "CHUNK", chunk)
        m.setattr(readahead, "READ_AHEAD_MIN", 1 << 60)
        off = _snapshot(load, path, lenient)
        m.setattr(readahead, "READ_AHEAD_MIN", 0)
        on = _snapshot(load, path, lenient)
    assert on == off
    assert not _no_reader_left()


def test_error_entries_and_missing_responses_load_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The required ``response`` of ``_Header``: error entries (compact and spaced, with an
    args_digest, response before error...) still load, and a line with neither field still
    names the field and the line."""
    ok = _write(
        tmp_path / "ok.jsonl",
        [
            _good(1),
            '{"seq":2,"tool":"t","args":{},"error":{"type":"X","message":"m"}}',
            (
                '{"args": {}, "args_digest": "sha256:0", "error": {"message": "m", "type": "X"}, '
                '"seq": 3, "tool": "t"}'
            ),
            '{"error":{"type":"X","message":"m"},"seq":4,"tool":"t","args":{"a":[1]}}',
            _good(5),
        ],
    )
    bad = _write(tmp_path / "bad.jsonl", [_good(1), '{"seq":2,"tool":"t","args":{}}', _good(3)])
    for path in (ok, bad):
        for lenient in (False, True):
            monkeypatch.setattr(readahead, "READ_AHEAD_MIN", 1 << 60)
            off = _snapshot(load, path, lenient)
            monkeypatch.setattr(readahead, "READ_AHEAD_MIN", 0)
            assert _snapshot(load, path, lenient) == off
    c = load(ok)
    assert [e.error for e in c][1:4] == [{"type": "X", "message": "m"}] * 3
    with pytest.raises(CassetteFormatError) as info:
        load(bad)
    assert (info.value.line, info.value.field) == (2, "response")


# -- threads and file descriptors after every way a load can end ---------------------------


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    return _write(tmp_path / "c.jsonl", [_good(i) for i in range(1, 201)])  # ~16 KB


def test_success_error_and_lenient_loads_leave_nothing(
    ahead: None, tmp_path: Path, cassette: Path
) -> None:
    bad = _write(
        tmp_path / "bad.jsonl", [_good(i) for i in range(1, 100)] + ['{"seq":'] + [_good(1)] * 50
    )
    fds = _fds()
    for _ in range(20):
        c = load(cassette)
        assert len(c) == 200
        c.close()
        with pytest.raises(CassetteFormatError):
            load(bad)
        assert len(load(bad, lenient=True)) == 99
    gc.collect()
    assert _fds() == fds
    assert not _no_reader_left()


def test_cancel_close_drop_and_a_failing_consumer_leave_nothing(
    ahead: None, cassette: Path
) -> None:
    fds = _fds()
    # cancelled through the token after a few chunks
    token = CancelToken()
    job = load_job(cassette, cancel=token)
    for _ in range(5):
        next(job)
    token.cancel()
    with pytest.raises(Cancelled):
        for _ in job:
            pass
    assert not _no_reader_left()
    # the generator closed half-way
    job = load_job(cassette)
    for _ in range(5):
        next(job)
    assert len(_readers()) == 1
    job.close()
    assert not _readers()  # close joins the reader: at once
    # the generator dropped half-way (no close)
    job = load_job(cassette)
    next(job)
    del job
    assert not _readers()
    # the consumer raises: run_job closes the job
    seen = []

    def on_progress(event: Any) -> None:
        seen.append(event)
        if len(seen) == 3:
            raise RuntimeError("the UI went away")

    with pytest.raises(RuntimeError, match="UI went away"):
        run_job(load_job(cassette), on_progress)
    assert not _readers()
    # an exception thrown into the job at a progress event
    job = load_job(cassette)
    next(job)
    with pytest.raises(ValueError, match="thrown"):
        job.throw(ValueError("thrown"))
    assert not _readers()
    assert _fds() == fds


def test_many_loads_in_parallel_threads(ahead: None, tmp_path: Path, cassette: Path) -> None:
    crlf = _write(tmp_path / "crlf.jsonl", [_good(i, i) for i in range(1, 120)], nl="\r\n")
    expected = {p: _snapshot(load, p, False) for p in (cassette, crlf)}
    fds = _fds()
    failures: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for j in range(8):
                p = (cassette, crlf)[(k + j) % 2]
                assert _snapshot(load, p, False) == expected[p]
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not failures
    assert not _no_reader_left()
    assert _fds() == fds


def test_ctrl_c_in_the_middle_of_a_load_leaves_no_thread(ahead: None, cassette: Path) -> None:
    """Holds: KeyboardInterrupt (``_thread.interrupt_main``) raised while the index works
    or waits for a chunk: the load stops at once, the reader is joined. Python's own
    SIGINT handler is put in place: ``interrupt_main`` does nothing when SIGINT is ignored,
    as it is under a runner a non-interactive shell started in the background."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _interrupted_loads(cassette)
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupted_loads(cassette: Path) -> None:
    fds = _fds()
    for at in (1, 2, 5, 20, 60):
        count = 0

        def on_progress(event: Any, at: int = at) -> None:
            nonlocal count
            count += 1
            if count == at:
                _thread.interrupt_main()

        with pytest.raises(KeyboardInterrupt):
            run_job(load_job(cassette), on_progress)
            time.sleep(1)  # the interrupt lands after the load: still a KeyboardInterrupt
        assert not _no_reader_left()
    assert _fds() == fds


def test_ctrl_c_while_the_reader_thread_starts_leaves_no_thread(
    ahead: None, cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A KeyboardInterrupt raised inside ``thread.start()`` (which waits for the new thread
    to signal it has started) still stops the reader. Found by a tester: the thread was
    started before the ``try`` whose ``finally`` sets ``stop``, so the reader, its queue
    full, polled for ever holding its chunks (3 x 4 MB). Seen for real with
    ``_thread.interrupt_main()`` from a timer 0-3 ms into the ``load`` of a 39 MB cassette;
    here the interrupt is delivered at that same point deterministically: ``Thread.start``
    runs, then raises KeyboardInterrupt, as the signal handler does when the signal lands
    in ``_started.wait()``."""
    real_start = threading.Thread.start

    def start_then_ctrl_c(self: threading.Thread) -> None:
        real_start(self)
        if self.name == "cassette-read-ahead":
            time.sleep(0.05)  # the reader is ahead by then (it was, in the real runs)
            raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", start_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        load(cassette)
    monkeypatch.undo()  # (the ahead fixture's settings go too: nothing else loads here)
    left = [repr(t) for t in _no_reader_left(wait=1.0)]
    _stop_leaked_readers()  # so that the tests after this one see no reader
    assert not left, f"{len(left)} reader thread(s) still polling 1 s after the interrupt"


def test_a_job_left_suspended_at_exit_does_not_abort_the_interpreter(tmp_path: Path) -> None:
    """A script that keeps a started ``load_job`` of a file of 16 MB or more (the real
    threshold, nothing patched) exits cleanly. Found by a tester: the reader (a daemon)
    read through the caller's buffered file, was frozen at exit holding its lock, and
    closing the file then was a fatal error (exit status 134, SIGABRT) in 5 runs out of 5.
    The reader now reads with ``os.pread`` on the descriptor."""
    big = tmp_path / "big.jsonl"
    line = '{"seq": %d, "tool": "t", "args": {"q": %d}, "response": "' + "x" * 1000 + '"}\n'
    with open(big, "w") as fh:
        fh.writelines(line % (i, i) for i in range(1, 17_500))  # 17.8 MB
    assert big.stat().st_size >= readahead.READ_AHEAD_MIN
    script = textwrap.dedent(
        f"""
        from cassette_tui.core.format.cassette import load_job
        job = load_job({str(big)!r})
        next(job)  # the first 4 MB indexed; the user quits here
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60
    )
    assert "Fatal Python error" not in proc.stderr, proc.stderr[:400]
    assert proc.returncode == 0, proc.stderr[:400]


# -- special files, errors, the file changing under the load ------------------------------


def test_a_fifo_dev_zero_and_a_directory_are_refused_at_once(ahead: None, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    fds = _fds()
    for path, words in (
        (fifo, "FIFO"),
        (Path("/dev/zero"), "character device"),
        (tmp_path, "directory"),
    ):
        started = time.monotonic()
        with pytest.raises(CassetteFormatError, match=words) as info:
            load(path)
        assert info.value.line is None
        assert time.monotonic() - started < 2
    assert _fds() == fds


def test_a_read_error_is_a_cassette_format_error(ahead: None) -> None:
    """A file that stats as a regular file but whose read fails (``/proc/self/mem`` reads
    EIO at offset 0) is a ``CassetteFormatError`` (line ``None``), as ``load`` promises for
    a file that cannot be read, not a bare ``OSError`` (found by a tester; older than the
    read-ahead)."""
    path = Path("/proc/self/mem")
    if not path.exists():
        pytest.skip("no /proc/self/mem")
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    assert info.value.line is None


def test_the_file_truncated_by_another_process_during_the_load(ahead: None, tmp_path: Path) -> None:
    """Holds: a load the cut meets says the file changed while it was read (not a line
    "cut mid-write" that the file no longer has, nor fewer entries without a word); a
    load done before it, entries whose bytes are gone, reported when read; no hang, no
    thread, no descriptor."""
    path = _write(tmp_path / "c.jsonl", [_good(i) for i in range(1, 401)])
    fds = _fds()
    for cut_at in (1, 3, 10):
        _write(path, [_good(i) for i in range(1, 401)])
        count = 0

        def on_progress(event: Any, cut_at: int = cut_at) -> None:
            nonlocal count
            count += 1
            if count == cut_at:
                subprocess.run(["truncate", "-s", "1000", str(path)], check=True)

        try:
            c = run_job(load_job(path), on_progress)
        except CassetteFormatError as exc:
            assert exc.line is None and "changed on disk while it was read (cut from" in str(exc)
        else:
            assert len(c) > 0
            for i in range(len(c)):
                try:
                    c[i]
                except CassetteFormatError as exc:
                    assert exc.line == c.line(i)
            c.close()
        assert not _no_reader_left()
    assert _fds() == fds


def test_the_file_appended_to_by_another_process_during_the_load(
    ahead: None, tmp_path: Path
) -> None:
    """Holds: lines appended while the load runs are read (or not) whole, never half."""
    path = _write(tmp_path / "c.jsonl", [_good(i) for i in range(1, 101)])
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, json\n"
                "with open(sys.argv[1], 'a') as f:\n"
                "    for i in range(101, 3001):\n"
                "        f.write(json.dumps({'seq': i, 'tool': 't', 'args': {}, 'response': i}) + '\\n')\n"
                "        f.flush()\n"
            ),
            str(path),
        ]
    )
    try:
        while writer.poll() is None:
            load(path)  # a line cut mid-write: lenient=False raises
    except CassetteFormatError as exc:
        assert exc.truncated  # the writer's last line, half written
    finally:
        writer.wait(30)
    assert len(load(path)) == 3000
    assert not _no_reader_left()


# -- memory --------------------------------------------------------------------------------


def test_peak_memory_of_a_large_load_with_the_thread(tmp_path: Path) -> None:
    """Holds: a 64 MB cassette (real threshold, real chunk size) loads with the thread in
    a fresh interpreter well under 100 MB above the interpreter (measured 34 MB for the
    171 MB benchmark cassette, 26 MB without the thread)."""
    big = tmp_path / "big.jsonl"
    rng = random.Random(3)
    with open(big, "w") as fh:
        fh.writelines(_good(i, rng.randrange(200, 3000)) + "\n" for i in range(1, 40_001))
    assert big.stat().st_size >= 3 * readahead.READ_AHEAD_MIN
    script = textwrap.dedent(
        f"""
        import resource, threading
        from cassette_tui.core import load
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        seen = []
        real_start = threading.Thread.start
        def start(self):
            seen.append(self.name)
            real_start(self)
        threading.Thread.start = start
        c = load({str(big)!r})
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(len(c), (peak - base) // 1024, seen)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split(maxsplit=2)
    assert int(out[0]) == 40_000
    assert "cassette-read-ahead" in out[2]
    assert int(out[1]) < 100, f"peak {out[1]} MB above the interpreter"
