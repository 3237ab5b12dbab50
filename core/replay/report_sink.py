"""Where a process's replay (or record) report goes: one file per process, and its journal.

The ``CASSETTE_REPORT`` contract: the report is written "when the process exits"; an exit hook alone
loses the report when the process is killed (SIGTERM), leaves by ``os._exit``, or wraps
several dispatchers (each hook overwrote the last). A ``ReportSink`` instead:

- is opened when the wrapper is created, and writes an initial report at once, so an
  unwritable path is an error there (``ReportPathError``), not a lost report at exit; a
  missing folder is such an error too (never created: ``CASSETTE_REPORT=/tmp/x1/x2/r.json``
  made both folders, a typo made ``/nonexistent``; and a runs folder removed by the loop
  is not made again by a straggler's exit hook);
- stores every call a replay serves, as it is served (synchronously, one JSON line under
  the replayer's lock, so in call order), in the report's journal ``PATH.journal``: every
  process of the run stores its lines there, each replayer in regions of the file it
  claims and maps (``_Region``: no system call a line; the pages are the kernel's, so a
  forked child's calls, an agent that ends with ``os._exit`` right after its calls, and
  one killed with ``SIGKILL`` all leave their calls there). Zero bytes a region did not
  fill lie between lines (a clean exit cuts the last region to its lines); each line's
  ``t`` (``CLOCK_MONOTONIC`` ns) gives the order of the lines of several regions.
  ``ReplayReport.read_run`` reads the report and its journal back as the report of the
  whole run, at any moment. Lines: ``{"pid", "engine", "t", "header": {"cassette",
  "entries", "seqs"}}`` once per replayer, then ``{"pid", "engine", "t", "call": {"n",
  "tool", "digest", "seq", "outcome"}, "recorded": int, "miss": {...}}`` per call
  (``miss`` for a miss only), then, at exit or SIGTERM, ``{"pid", "engine", "t", "end":
  {"calls", "used", "unused_seqs"}}`` (the replayer ended in order: a killed one has none);
- so the report file of a replay is not rewritten after each call (rewriting the whole
  call log at each call made a long run's cost grow with its length): it is written at
  creation and again at exit and on SIGTERM (then the signal is handed on to the handler
  that was there before, or to the default one), as JSON (``report.py``). A recorder's
  or a live counter's report, a few counts, is rewritten atomically (temporary file +
  rename) as the run goes: at once when the last write was cheap, else from a timer, so
  writing costs at most about a tenth of the run's time (``_BUDGET``) and the file lags
  the run by at most ``_MAX_DELAY`` seconds;
- holds every engine wrapped with the same report path: one engine writes its report as
  it is; several write ``{"mode", "wrappers": [report, ...], "misses": [...]}`` (the
  misses of all of them, each with its ``cassette``).

Which process writes ``PATH`` itself: the first process of the run that wraps a
dispatcher (it starts the journal afresh and sets ``CASSETTE_REPORT_OWNER`` to
``PID:PATH``); the processes it starts (a ``fork``, a ``subprocess``) only append to the
journal, never overwrite its report. The loop sets ``0:PATH``: the journal is never
started afresh, and the last process to write ``PATH`` wins (the journal has every call).

The file is strict JSON (non-finite numbers as ``{"$numberDouble": ...}``, see
``jsonvalue``).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import mmap
import os
import signal
import stat
import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from ..format.atomic import write_atomic
from ..format.constants import ENV_REPORT_OWNER
from ..format.errors import CassetteError
from ..format.jsonvalue import dumps_strict, has_nonfinite
from .report import Miss, journal_path

if TYPE_CHECKING:
    from .replayer import LoggedCall

#: writing may take at most this share of the time between two writes
_BUDGET = 0.1
#: a pending report is written at most this many seconds after the call that changed it
_MAX_DELAY = 1.0


class ReportPathError(CassetteError, OSError):
    """The report path cannot be written (raised when the wrapper is created).
    Attributes: ``path``."""

    def __init__(self, path: Path, why: str) -> None:
        self.path = path
        super().__init__(f"{path}: cannot write the report there: {why}")


class _Engine(Protocol):
    def report(self) -> dict[str, Any]: ...


class ReportSink:
    """The report file of one path, for every engine that reports to it, and its journal
    (see the module doc). ``open_journal`` before the first ``add``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.engines: list[_Engine] = []
        self._lock = threading.RLock()
        self._last_write = 0.0
        self._last_cost = 0.0
        self._timer: threading.Timer | None = None
        self._dirty = False
        #: the process that made the sink: a forked child never writes the report itself
        self.pid = os.getpid()
        #: this process writes ``path`` (else a process that started it does)
        self.owns_report = True
        self._journal: int | None = None
        #: the journal is a regular file: lines go to mapped regions (``_Region``)
        self._regular = False
        #: ``id(engine)`` -> its name in the journal, for the engines journaled (replayers)
        self._journaled: dict[int, str] = {}
        #: ``id(engine)`` -> where its lines go in the journal
        self._regions: dict[int, _Region] = {}

    def open_journal(self) -> None:
        """Open the journal for appending (started afresh unless a process that started
        this one, or the loop, said otherwise in ``CASSETTE_REPORT_OWNER``).

        Raises:
            ReportPathError: it cannot be opened (the report's folder is missing, say).
        """
        key = os.path.realpath(self.path)
        owner, _, where = os.environ.get(ENV_REPORT_OWNER, "").partition(":")
        inherited = where == key and owner != str(self.pid)
        self.owns_report = not inherited or owner == "0"
        journal = journal_path(self.path)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        flags |= os.O_NONBLOCK  # a FIFO: no wait
        try:
            if not inherited:
                # started afresh as a new file, not truncated in place: a process of an
                # earlier run still storing into its map of the old one must not find its
                # pages past the end of the file (SIGBUS); it goes on in the old file
                with contextlib.suppress(FileNotFoundError):
                    if stat.S_ISREG(os.lstat(journal).st_mode):
                        os.unlink(journal)
            self._journal = os.open(journal, flags, 0o666)
            self._regular = stat.S_ISREG(os.fstat(self._journal).st_mode)
        except FileNotFoundError:
            raise _no_folder(self.path) from None
        except OSError as exc:
            raise ReportPathError(journal, exc.strerror or str(exc)) from None
        os.environ[ENV_REPORT_OWNER] = f"{self.pid}:{key}"  # for the processes it starts

    def close_journal(self) -> None:
        """Close the journal; remove it when it is empty (a report path refused at once
        leaves no file next to it)."""
        fd, self._journal = self._journal, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_size == 0:
                os.unlink(journal_path(self.path))
        os.close(fd)

    def add(self, engine: _Engine) -> None:
        """Report ``engine`` here too (a replayer's calls also go to the journal); write
        the report at once. Raises ``ReportPathError`` when it cannot be written."""
        with self._lock:
            self.engines.append(engine)
            number = len(self.engines)
        self.write()  # first: a path that cannot be written is refused before any journal
        listeners = getattr(engine, "listeners", None)
        cassette = getattr(engine, "cassette", None)
        if isinstance(listeners, list) and cassette is not None:
            ident = f"{self.pid}.{number}"
            header = {
                "cassette": str(cassette.path) if cassette.path is not None else None,
                "entries": len(cassette),
                "seqs": list(cassette.seqs),
            }
            region = _Region(self, getattr(engine, "_lock", None))
            self._regions[id(engine)] = region
            region.put(_strict_line(_event(ident, header=header)))
            self._journaled[id(engine)] = ident
            dumps, newline, now = orjson.dumps, orjson.OPT_APPEND_NEWLINE, time.monotonic_ns

            # a served call's line from one object filled in place (under the replayer's
            # lock: one call at a time), not two dicts made a call
            row: dict[str, Any] = dict.fromkeys(_CALL_KEYS)
            line: dict[str, Any] = {"pid": 0, "engine": ident, "t": 0, "call": row}
            line["recorded"] = 0

            def journal(call: LoggedCall, miss: Miss | None, recorded: int) -> None:
                if miss is not None:
                    event = _event(ident, call=dict(zip(_CALL_KEYS, call, strict=True)))
                    event["recorded"] = recorded
                    event["miss"] = miss.to_json()
                    region.put(_strict_line(event))
                    return
                row["n"], row["tool"], row["digest"], row["seq"], row["outcome"] = call
                line["pid"] = _PID[0]
                line["t"] = now()
                line["recorded"] = recorded
                try:  # no float in a call: orjson's text is exact
                    data = dumps(line, option=newline)
                except TypeError:  # a lone surrogate in the tool name
                    data = _strict_line(line)
                # stored into the map at its position (a served call is the common case:
                # no system call); ``put`` when there is no map or no room left in it
                try:
                    region.map.write(data)  # type: ignore[union-attr]
                except (AttributeError, ValueError):
                    region.put(data)

            listeners.append(journal)

    def journals(self, engine: _Engine) -> bool:
        """Whether ``engine``'s calls go to the journal as they are served (a replayer):
        the report file is then not rewritten after its calls, only at the end."""
        return id(engine) in self._journaled

    def _append_line(self, data: bytes) -> None:
        """Append ``data`` (whole lines) to the journal in one ``write`` (a full disk
        loses it, never raises: a tool call must not fail for its report): where no mapped
        region can be had (``_Region``)."""
        fd = self._journal
        if fd is None:
            return
        # under ``flock``: never in the middle of a region another process claims
        locked = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            locked = True
        except OSError:
            pass
        try:
            while data:
                data = data[os.write(fd, data) :]
        except OSError:
            pass
        finally:
            if locked:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_UN)

    def end(self) -> None:
        """Append each journaled engine's summary to the journal (``{"pid", "engine",
        "end": {"calls", "used", "unused_seqs"}}``): the engine ended in order, and how
        its cassette was used. Once per engine; nothing in a process that did not make
        the sink (a forked child's calls are in the journal already)."""
        if os.getpid() != self.pid:
            return
        with self._lock:
            for engine in self.engines:
                ident = self._journaled.pop(id(engine), None)
                region = self._regions.get(id(engine))
                if ident is None or region is None:
                    continue
                summary = getattr(engine, "summary", None)
                if not callable(summary):
                    continue
                end = _strict_line(_event(ident, end=summary()))
                # no call stored meanwhile, nor after the cut; a lock held too long (a
                # SIGTERM handler run in the middle of a call) leaves the region as it is
                # and writes the line at the file's end
                if not region.lock.acquire(timeout=1.0):
                    self._append_line(end)
                    continue
                try:
                    region.put(end)
                    region.close()
                finally:
                    region.lock.release()

    def document(self) -> dict[str, Any]:
        """The report: the one engine's, or the combined form for several."""
        reports = [e.report() for e in self.engines]
        if len(reports) == 1:
            return reports[0]
        modes = {r.get("mode") for r in reports}
        misses = [
            {"cassette": r.get("cassette"), **m} for r in reports for m in r.get("misses", [])
        ]
        return {
            "mode": modes.pop() if len(modes) == 1 else "mixed",
            "wrappers": reports,
            "misses": misses,
        }

    def write(self) -> None:
        """Write the report now (nothing in a process that does not own it: a forked
        child, a process started by the owner). Raises ``ReportPathError`` when it cannot
        be written."""
        if not self.owns_report or os.getpid() != self.pid:
            return
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._dirty = False
            t0 = time.perf_counter()
            data = _report_bytes(self.document())
            try:
                write_atomic(
                    self.path,
                    [data],
                    overwrite=True,
                    fsync=False,
                    make_parents=False,  # a folder is never made (nor made again at exit)
                )
            except FileNotFoundError:
                raise _no_folder(self.path) from None
            except OSError as exc:
                raise ReportPathError(self.path, str(exc)) from None
            now = time.perf_counter()
            self._last_cost = now - t0
            self._last_write = now

    def changed(self) -> None:
        """A call changed the report: write it now if that is cheap, else soon (nothing
        where this process does not write it: its calls are in the journal)."""
        if not self.owns_report or os.getpid() != self.pid:
            return
        with self._lock:
            since = time.perf_counter() - self._last_write
            wait = self._last_cost / _BUDGET - since
            if wait <= 0:
                self._write_quietly()
                return
            self._dirty = True
            if self._timer is None:
                self._timer = threading.Timer(min(wait, _MAX_DELAY), self._flush_pending)
                self._timer.daemon = True
                self._timer.start()

    def flush(self) -> None:
        """Write the report if calls changed it since the last write."""
        with self._lock:
            if self._dirty:
                self._write_quietly()

    def _flush_pending(self) -> None:
        with self._lock:
            self._timer = None
            if self._dirty:
                self._write_quietly()

    def _write_quietly(self) -> None:
        # after creation the path was writable; a later failure (disk full) must not
        # turn a tool call into an exception: the next write tries again
        with contextlib.suppress(ReportPathError):
            self.write()


def check_report_folder(path: str | Path) -> None:
    """Raise ``ReportPathError`` unless ``path``'s folder exists (a report's folder is
    never created); for writers that write their report only at the end (``mcp``)."""
    parent = Path(path).parent
    if not parent.is_dir():
        why = "is not a folder" if parent.exists() else "does not exist"
        raise ReportPathError(
            Path(path), f"its folder {parent} {why} (a report's folder is never created)"
        )


_SINKS: dict[str, ReportSink] = {}
_SINKS_LOCK = threading.Lock()
_HOOKED = False


def attach(path: str | Path, engine: _Engine) -> ReportSink:
    """The process's sink for ``path`` (one per resolved path) with ``engine`` added;
    opens the journal and writes the report at once.

    Raises:
        ReportPathError: the path cannot be written (a missing folder: never created;
            no permission, a directory or special file there).
    """
    p = Path(path)
    key = os.path.realpath(p)
    with _SINKS_LOCK:
        sink = _SINKS.get(key)
        if sink is None or sink.pid != os.getpid():  # a forked child appends as itself
            sink = ReportSink(p)
            sink.open_journal()
            _SINKS[key] = sink
        _install_hooks()
    try:
        sink.add(engine)
    except ReportPathError:
        with _SINKS_LOCK, sink._lock:  # never written at exit either: the error said it
            sink.engines.remove(engine)
            if not sink.engines and _SINKS.get(key) is sink:
                del _SINKS[key]
                sink.close_journal()
        raise
    return sink


def flush_all() -> None:
    """Write every pending report now (at exit, on SIGTERM); a report that cannot be
    written (a full disk) is one warning line on stderr (``warn_at_exit``)."""
    with _SINKS_LOCK:
        sinks = list(_SINKS.values())
    for sink in sinks:
        try:
            sink.write()
        except ReportPathError as exc:
            warn_at_exit(f"the report was not written at exit: {exc}")


def end_all() -> None:
    """At exit and on SIGTERM: each journal's summary lines (``ReportSink.end``), every
    region of this process cut to its lines (``_Region.close``), then every report written
    (``flush_all``)."""
    with _SINKS_LOCK:
        sinks = list(_SINKS.values())
    for sink in sinks:
        sink.end()
    for region in list(_REGIONS):
        if region.lock.acquire(timeout=1.0):  # else left uncut: its zeros are skipped
            try:
                region.close()
            finally:
                region.lock.release()
    flush_all()


def warn_at_exit(message: str) -> None:
    """Print ``cassette-tui: warning: MESSAGE`` as one line on stderr (never raises: stderr
    may be closed or full too)."""
    line = "cassette-tui: warning: " + " ".join(message.split()) + "\n"
    with contextlib.suppress(Exception):
        os.write(2, line.encode("utf-8", "replace"))


def _install_hooks() -> None:
    global _HOOKED
    if _HOOKED:
        return
    _HOOKED = True
    atexit.register(end_all)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN:
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        end_all()
        if callable(previous):
            previous(signum, frame)
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGTERM, on_sigterm)


def _no_folder(path: Path) -> ReportPathError:
    """The error for a report whose folder is missing: a report's folder is never made."""
    return ReportPathError(
        path,
        f"its folder {path.parent} does not exist (a report's folder is never created: "
        "make it first)",
    )


def _strict_line(event: dict[str, Any]) -> bytes:
    """``event`` as one strict JSON line (non-finite numbers as ``jsonvalue`` writes them)."""
    text = dumps_strict(event, ensure_ascii=False, default=repr) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, the line still reads back
        return (dumps_strict(event, default=repr) + "\n").encode("ascii")


#: this process's id, for the journal's lines (``os.getpid`` is a system call, a tenth of a
#: microsecond on every call); a forked child sets its own
_PID = [os.getpid()]


def _forked() -> None:
    _PID[0] = os.getpid()
    for region in list(_REGIONS):
        region.forked()


#: a call's fields in its journal line (``replayer.LoggedCall``'s order)
_CALL_KEYS = ("n", "tool", "digest", "seq", "outcome")


def _event(ident: str, **what: Any) -> dict[str, Any]:
    """A journal line's object other than a served call's: ``{"pid", "engine", "t", ...}``."""
    return {"pid": _PID[0], "engine": ident, "t": time.monotonic_ns(), **what}


#: the first region an engine claims in the journal (a short run, a forked child: little
#: padding left); each next one twice the last, up to ``_REGION_MAX``
_REGION_MIN = 1 << 14
_REGION_MAX = 1 << 20
_PAGE = mmap.ALLOCATIONGRANULARITY
#: the regions of this process (at a fork the child drops its parent's; at exit each is cut)
_REGIONS: weakref.WeakSet[_Region] = weakref.WeakSet()


class _Region:
    """Where one engine's journal lines go in this process: a region of the journal file
    claimed for it (at the file's end, under ``flock``, its blocks allocated by
    ``posix_fallocate``, so a full disk fails the claim, never a store) and mapped
    shared; each line is stored into the map, no system call. The pages are the
    kernel's: a process killed (``SIGKILL``) right after a call leaves its line in the
    file. What a region does not fill stays zero bytes, which the reader skips
    (``report.journal_events``); at a clean exit the region that ends the file is cut to
    its lines. Each line holds ``t`` (``CLOCK_MONOTONIC``, ns, shared by the processes of
    the machine): the reader puts the lines of several processes' regions back in the
    order they were served. Where no region can be had (the journal is not a regular
    file, the disk is full, no ``mmap``), a line is ``write``n as before.

    Not thread-safe: stored into under the engine's lock (``lock``)."""

    __slots__ = ("__weakref__", "base", "end", "fd", "lock", "map", "next_size", "sink",
                 "writes")  # fmt: skip

    def __init__(self, sink: ReportSink, lock: Any) -> None:
        self.sink = sink
        self.lock = lock if lock is not None else threading.Lock()
        #: the region's map; its position (``tell``) is where the next line goes
        self.map: mmap.mmap | None = None
        #: the map's place in the file (a page's start) and the region's end in the file
        self.base = self.end = 0
        self.fd = -1  # this process's own description of the file (its own ``flock``)
        self.next_size = _REGION_MIN
        self.writes = not sink._regular  # no region: each line written
        _REGIONS.add(self)

    def put(self, data: bytes) -> None:
        """Store ``data`` (whole lines) after the last line; a new region when it does not
        fit; written with ``write`` when none can be had (never raises)."""
        m = self.map
        if m is not None and len(m) - m.tell() >= len(data):  # ``size()`` is the file's
            m.write(data)
            return
        if self.writes or not self._claim(len(data)):
            self.writes = True
            self.sink._append_line(data)
            return
        self.map.write(data)  # type: ignore[union-attr]

    def _claim(self, need: int) -> bool:
        """A new region of at least ``need`` bytes, mapped; ``False`` when none can be had."""
        self.close()
        size = max(self.next_size, -(-need // _PAGE) * _PAGE)
        self.next_size = min(self.next_size * 2, _REGION_MAX)
        try:
            if self.fd < 0:
                self.fd = _reopen(self.sink)
            fd = self.fd
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                # right at the file's end (no gap after a region cut to its lines); the
                # map starts on that page, whose first bytes are lines no one stores to
                start = os.fstat(fd).st_size
                os.posix_fallocate(fd, start, size)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
            base = start - start % _PAGE
            m = mmap.mmap(fd, start - base + size, mmap.MAP_SHARED, offset=base)
            m.seek(start - base)
        except (OSError, ValueError, AttributeError):  # no flock/fallocate/mmap here
            return False
        self.map, self.base, self.end = m, base, start + size
        return True

    def close(self) -> None:
        """Unmap the region; when it ends the file, cut the file to its lines (under
        ``flock``: a region claimed meanwhile by another process is never cut)."""
        m = self.map
        if m is None:
            return
        self.map = None
        with contextlib.suppress(OSError, ValueError):
            cut = self.base + m.tell()
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            try:
                if os.fstat(self.fd).st_size == self.end:
                    os.ftruncate(self.fd, cut)
            finally:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
        with contextlib.suppress(BufferError, ValueError):
            m.close()

    def forked(self) -> None:
        """In a forked child: the parent's region and descriptor are the parent's; the
        child's next line claims its own region."""
        m, fd = self.map, self.fd
        self.map, self.fd = None, -1
        self.next_size = _REGION_MIN
        if m is not None:
            with contextlib.suppress(BufferError, ValueError):
                m.close()
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)


def _reopen(sink: ReportSink) -> int:
    """A new description of the sink's journal (read-write, for ``mmap``; its own
    ``flock``, which a forked child's inherited descriptor would share with the parent):
    the very file the sink opened, by ``/proc/self/fd``, else by its path.

    Raises:
        OSError: it cannot be opened.
    """
    fd = sink._journal
    flags = os.O_RDWR | os.O_CLOEXEC
    if fd is not None:
        with contextlib.suppress(OSError):
            return os.open(f"/proc/self/fd/{fd}", flags)
    return os.open(journal_path(sink.path), flags | os.O_NOFOLLOW)


os.register_at_fork(after_in_child=_forked)


#: indented; what the standard library hands to ``default`` goes there too (``repr``)
_REPORT_OPTIONS = (
    orjson.OPT_INDENT_2
    | orjson.OPT_APPEND_NEWLINE
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _report_bytes(document: dict[str, Any]) -> bytes:
    """The report file's bytes: ``document`` as indented strict JSON and a newline. By
    orjson (a long run's report: the standard library indents in Python, 2 s at 100k
    calls), unless it writes a non-finite number (as ``null``) or refuses the document (a
    lone surrogate, an integer past 64 bits): then ``dumps_strict``, as before."""
    try:
        out = orjson.dumps(document, option=_REPORT_OPTIONS, default=repr)
    except TypeError:
        out = None
    if out is not None and not (b"null" in out and has_nonfinite(document)):
        return out
    return (dumps_strict(document, indent=2, ensure_ascii=False, default=repr) + "\n").encode(
        "utf-8"
    )
