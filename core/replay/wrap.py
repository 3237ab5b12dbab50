"""``wrap_dispatcher``: the one call an agent makes to obey the environment contract.

docs/format.md, "Environment contract": ``CASSETTE_MODE`` (``record``, ``replay``, ``live``;
default ``live``), ``CASSETTE_PATH`` (the cassette), ``CASSETTE_REPORT`` (where the
report goes as JSON: written when the wrapper is created, kept current as the run goes,
and at exit or SIGTERM; one file per process, see ``report_sink``), ``CASSETTE_CONFIG``
(normalization config).
"""

from __future__ import annotations

import atexit
import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.cassette import load
from ..format.constants import ENV_CLAIM, ENV_MODE, ENV_PATH, ENV_REPORT, MODES
from ..keys.config import ProjectConfig
from ..scan.redact import Redactor, record_redactor
from ..scan.redact_config import load_secret_config
from .recorder import Recorder, _is_async
from .replayer import Replayer
from .report_sink import ReportSink, attach, warn_at_exit

if TYPE_CHECKING:
    from .codec import Codec


class _LiveCounter:
    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def count(self) -> None:
        with self._lock:
            self.calls += 1

    def report(self) -> dict[str, Any]:
        return {"mode": "live", "cassette": None, "calls": self.calls}


def wrap_dispatcher(
    dispatch: Callable[[str, Any], Any],
    *,
    mode: str | None = None,
    path: str | Path | None = None,
    report: str | Path | None = None,
    config: str | Path | None = None,
    repeat: str = "error",
    overwrite: bool = False,
    codec: Codec | None = None,
) -> Callable[[str, Any], Any]:
    """Wrap a tool dispatcher ``dispatch(tool, args) -> response`` for record, replay or
    live use. A coroutine function gives a coroutine function back.

    Args:
        mode: ``"live"`` (pass through), ``"record"`` (call live, append each call to
            ``path``) or ``"replay"`` (serve calls from ``path``, never call ``dispatch``).
            Default: ``CASSETTE_MODE``, else ``"live"``.
        path: the cassette; default ``CASSETTE_PATH``. Required for record and replay.
        report: file for the JSON report; default ``CASSETTE_REPORT``; ``None`` writes
            nothing. Written at once (an unwritable path raises here), then as the run
            goes, at exit and on SIGTERM; wrappers of one process that name the same file
            share it (see ``report_sink``).
        config: normalization config file; default ``CASSETTE_CONFIG``, else the project's
            ``cassette.toml`` / ``pyproject.toml`` (see ``keys.config.ProjectConfig``). Its
            redaction settings apply too (``secrets.load_secret_config``): live args that
            miss are looked up again redacted, and ``record = true`` redacts as it writes.
        repeat: replay policy past the last recording of a key, ``"error"`` or ``"last"``.
        overwrite: record mode only: replace an existing cassette (else an error).
        codec: record and replay typed values (a dataclass, a pydantic model, a
            ``datetime``...): ``codec.BUILTIN_CODEC``, or a ``TypeCodec`` with the user's
            types (docs/format.md, "Typed values"); ``None``: only JSON is recorded.

    The returned dispatcher has ``.mode``, ``.report()`` (the report as a dict: the replay
    report in replay mode, ``{"mode", "cassette", "entries", "errors"}`` when recording,
    ``{"mode", "cassette", "calls"}`` live) and ``.close()`` (flushes a recording; also
    run at exit).

    Raises:
        ValueError: an unknown mode or repeat policy, or no path for record/replay.
        FileExistsError: record mode on an existing cassette without ``overwrite``.
        CassetteFormatError: replay of a missing or malformed cassette, or a bad config.
        ReportPathError: the report file cannot be written.
    """
    mode = (mode or os.environ.get(ENV_MODE) or "live").strip().lower()
    if mode not in MODES:
        raise ValueError(f"unknown {ENV_MODE} {mode!r}; expected one of: record, replay, live")
    path = path if path is not None else os.environ.get(ENV_PATH) or None
    report = report if report is not None else os.environ.get(ENV_REPORT) or None
    is_async = _is_async(dispatch)
    engine, wrapped = _engine(dispatch, mode, path, config, repeat, overwrite, is_async, codec)
    return _finished(wrapped, dispatch, mode, engine, report, is_async)


def _engine(
    dispatch: Callable[[str, Any], Any],
    mode: str,
    path: str | Path | None,
    config: str | Path | None,
    repeat: str,
    overwrite: bool,
    is_async: bool,
    codec: Codec | None = None,
) -> tuple[Any, Any]:
    """The engine of ``mode`` (a live call counter, a recorder, a replayer) and the
    dispatcher it makes of ``dispatch``."""
    if mode == "live":
        counter = _LiveCounter()
        return counter, _counted(dispatch, counter, is_async)
    if path is None:
        raise ValueError(f"{ENV_MODE}={mode} needs a cassette: pass path= or set {ENV_PATH}")
    project = ProjectConfig.load(config)
    rules = project.rules()
    redaction = load_secret_config(project)
    if mode == "record":
        redactor = record_redactor(redaction)
        claim = os.environ.get(ENV_CLAIM) or None  # the file the record job made for it
        recorder = Recorder(
            path, overwrite=overwrite, rules=rules, redactor=redactor, claim=claim, codec=codec
        )
        return recorder, recorder.wrap(dispatch)
    replayer = Replayer(
        load(path, rules=rules), repeat=repeat, redactor=Redactor(redaction), codec=codec
    )
    return replayer, _replayed(replayer, is_async)


def _finished(
    wrapped: Any,
    dispatch: Callable[[str, Any], Any],
    mode: str,
    engine: Any,
    report: str | Path | None,
    is_async: bool,
) -> Any:
    """``wrapped`` reporting to ``report`` (when given), looking like ``dispatch``, with
    ``.mode``, ``.engine``, ``.report()`` and ``.close()`` (also run at exit)."""
    close = getattr(engine, "close", lambda: None)
    if report is not None:
        try:
            sink = attach(report, engine)
        except BaseException:
            close()
            raise
        wrapped = _reporting(wrapped, sink, is_async)
    functools.update_wrapper(wrapped, dispatch, updated=())
    wrapped.mode = mode
    wrapped.engine = engine
    wrapped.report = engine.report
    wrapped.close = close
    atexit.register(_close_at_exit, close, engine)  # before the sink's final write (LIFO)
    return wrapped


def _close_at_exit(close: Callable[[], None], engine: Any) -> None:
    """``close`` at exit; a failure to finish the file (a full disk) is one warning line on
    stderr, not Python's "Exception ignored in atexit callback" with a traceback."""
    try:
        close()
    except OSError as exc:
        where = getattr(engine, "path", None)
        what = f"the cassette {where}" if where is not None else "the recording"
        warn_at_exit(f"{what} could not be finished at exit: {exc}")


def _counted(dispatch: Callable[[str, Any], Any], counter: _LiveCounter, is_async: bool) -> Any:
    """``dispatch`` called live, each call counted."""
    if is_async:

        async def wrapped_async(tool: str, args: Any) -> Any:
            __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
            counter.count()
            return await dispatch(tool, args)

        return wrapped_async

    def wrapped_sync(tool: str, args: Any) -> Any:
        __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
        counter.count()
        return dispatch(tool, args)

    return wrapped_sync


def _replayed(replayer: Replayer, is_async: bool) -> Any:
    """A dispatcher served by ``replayer`` (a coroutine function when ``is_async``)."""
    if is_async:

        async def replayed_async(tool: str, args: Any) -> Any:
            __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
            return await replayer.acall(tool, args)  # a recorded cancellation waits for one

        return replayed_async

    def replayed(tool: str, args: Any) -> Any:
        __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
        return replayer(tool, args)

    return replayed


def _reporting(inner: Any, sink: ReportSink, is_async: bool) -> Any:
    """``inner`` that tells ``sink`` after every call (hit, miss, error alike)."""
    if is_async:

        async def reported_async(tool: str, args: Any) -> Any:
            __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
            try:
                return await inner(tool, args)
            finally:
                sink.changed()

        return reported_async

    def reported(tool: str, args: Any) -> Any:
        __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
        try:
            return inner(tool, args)
        finally:
            sink.changed()

    return reported
