"""Where a process's replay (or record) report goes: one file per process, and its journal.

The ``CASSETTE_REPORT`` contract: the report is written "when the process exits"; an exit hook alone
loses the report when the process is killed (SIGTERM), leaves by ``os._exit``, or wraps
several dispatchers (each hook overwrote the last). A ``ReportSink`` instead:

- is opened when the wrapper is created, and writes an initial report at once, so an
  unwritable path is an error there (``ReportPathError``), not a lost report at exit; a
  missing folder is such an error too (never created: ``CASSETTE_REPORT=/tmp/x1/x2/r.json``
  made both folders, a typo made ``/nonexistent``; and a runs folder removed by the loop
  is not made again by a straggler's exit hook);
- appends every call a replay serves, as it is served (synchronously, one ``write`` of
  one JSON line under the replayer's lock, so in call order), to the report's journal
  ``PATH.journal``: every process of the run appends to it (``O_APPEND``: lines from
  several processes never mix), so a forked child's calls, an agent that ends with
  ``os._exit`` right after its calls, and one killed with ``SIGKILL`` all leave their
  calls there. ``ReplayReport.read_run`` reads the report and its journal back as the
  report of the whole run, at any moment. Lines: ``{"pid", "engine", "header":
  {"cassette", "entries", "seqs"}}`` once per replayer, then ``{"pid", "engine", "call":
  {"n", "tool", "digest", "seq", "outcome"}, "recorded": int, "miss": {...}}`` per call
  (``miss`` for a miss only), then, at exit or SIGTERM, ``{"pid", "engine", "end":
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
import os
import signal
import threading
import time
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
        #: ``id(engine)`` -> its name in the journal, for the engines journaled (replayers)
        self._journaled: dict[int, str] = {}

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
        flags |= os.O_NONBLOCK | (0 if inherited else os.O_TRUNC)  # a FIFO: no wait
        try:
            self._journal = os.open(journal, flags, 0o666)
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
            self._append({"pid": self.pid, "engine": ident, "header": header})
            self._journaled[id(engine)] = ident
            write, dumps, newline = os.write, orjson.dumps, orjson.OPT_APPEND_NEWLINE

            def journal(call: LoggedCall, miss: Miss | None, recorded: int) -> None:
                n, tool, dig, seq, outcome = call
                event: dict[str, Any] = {
                    "pid": _PID[0],
                    "engine": ident,
                    "call": {
                        "n": n,
                        "tool": tool,
                        "digest": dig,
                        "seq": seq,
                        "outcome": outcome,
                    },  # fmt: skip
                    "recorded": recorded,
                }
                if miss is not None:
                    event["miss"] = miss.to_json()
                    self._append(event)
                    return
                # ``_append_line`` inline (a served call is the common case)
                try:  # no float in a call: orjson's text is exact
                    data = dumps(event, option=newline)
                except TypeError:  # a lone surrogate in the tool name
                    data = _strict_line(event)
                fd = self._journal
                if fd is None:
                    return
                try:  # not ``contextlib.suppress``: a quarter of a microsecond a call
                    while data:
                        data = data[write(fd, data) :]
                except OSError:
                    pass

            listeners.append(journal)

    def journals(self, engine: _Engine) -> bool:
        """Whether ``engine``'s calls go to the journal as they are served (a replayer):
        the report file is then not rewritten after its calls, only at the end."""
        return id(engine) in self._journaled

    def _append_line(self, data: bytes) -> None:
        """Append ``data`` (whole lines) to the journal in one ``write`` (a full disk
        loses it, never raises: a tool call must not fail for its report)."""
        if self._journal is None:
            return
        try:  # not ``contextlib.suppress``: a quarter of a microsecond on every call
            while data:
                data = data[os.write(self._journal, data) :]
        except OSError:
            pass

    def _append(self, event: dict[str, Any]) -> None:
        """One journal line of ``event`` (strict JSON), in one ``write``."""
        self._append_line(_strict_line(event))

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
                if ident is None:
                    continue
                summary = getattr(engine, "summary", None)
                if callable(summary):
                    self._append({"pid": self.pid, "engine": ident, "end": summary()})

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
    """At exit and on SIGTERM: each journal's summary lines (``ReportSink.end``), then every
    report written (``flush_all``)."""
    with _SINKS_LOCK:
        sinks = list(_SINKS.values())
    for sink in sinks:
        sink.end()
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
