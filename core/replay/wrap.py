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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.cassette import load
from ..format.constants import ENV_CLAIM, ENV_CONFIG, ENV_MODE, ENV_PATH, ENV_REPORT, MODES
from ..keys.config import ProjectConfig
from ..scan.redact import Redactor, record_redactor
from ..scan.redact_config import load_secret_config
from . import recorder_registry
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
            Default: ``CASSETTE_MODE``, else ``"live"``; then the wrapper follows the
            environment: it reads the ``CASSETTE_*`` variables again at every call and,
            when they changed since its engine was made, makes the engine they ask for
            (a wrapper made at import time, before a pytest ``cassette`` marker set them,
            replays inside the marked test instead of staying live).
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

    Record mode joins the recording of the same file already open in this process
    (``recorder_registry``: an agent and its sub-agent wrapping their own dispatchers, or
    the recording the pytest plugin opened for the test): one file, one ``seq`` counter,
    calls in order; the first wrapper's ``overwrite``, rules, redaction and codec hold, and the
    file is finished when the last wrapper is closed (or at exit).

    The returned dispatcher has ``.mode`` and ``.engine`` (as of creation or, following
    the environment, of the last call), ``.report()`` (the report as a dict: the replay
    report in replay mode, ``{"mode", "cassette", "entries", "errors"}`` when recording,
    ``{"mode", "cassette", "calls"}`` live) and ``.close()`` (flushes a recording; also
    run at exit).

    Raises:
        ValueError: an unknown mode or repeat policy, or no path for record/replay.
        FileExistsError: record mode on an existing cassette without ``overwrite``.
        CassetteFormatError: replay of a missing or malformed cassette, or a bad config.
        ReportPathError: the report file cannot be written.
    """
    is_async = _is_async(dispatch)
    # no mode given: the wrapper follows the environment, read again at each call
    follows = mode is None
    binding = _Binding(dispatch, mode, path, report, config, repeat, overwrite, is_async, codec)
    bound = binding.bind(binding.wanted())  # at once: a bad setting raises here

    if is_async:

        async def wrapped_async(tool: str, args: Any) -> Any:
            __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
            return await (binding.current() if follows else bound).call(tool, args)

        wrapped: Any = wrapped_async
    else:

        def wrapped_sync(tool: str, args: Any) -> Any:
            __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
            return (binding.current() if follows else bound).call(tool, args)

        wrapped = wrapped_sync
    functools.update_wrapper(wrapped, dispatch, updated=())
    binding.outer = wrapped
    binding.show(bound)
    wrapped.report = lambda: binding.bound.engine.report()
    wrapped.close = lambda: binding.bound.close()
    return wrapped


#: what an engine is made of: mode, path, report, config (from the arguments or the
#: environment); a following wrapper makes a new engine when this changes
_Wanted = tuple[str, "str | Path | None", "str | Path | None", "str | Path | None"]


@dataclass
class _Bound:
    """One engine of a wrapper and the dispatcher it makes (reporting, when asked)."""

    wanted: _Wanted
    mode: str
    engine: Any
    call: Any
    close: Callable[[], None]


class _Binding:
    """A wrapper's settings and its current engine. A wrapper made without ``mode`` follows
    the environment contract: at each call it reads ``CASSETTE_MODE``, ``CASSETTE_PATH``,
    ``CASSETTE_REPORT`` and ``CASSETTE_CONFIG`` again (those not given as arguments), and
    when they changed (a pytest test marked with a cassette began after the wrapper was
    made at import time, or the next test names another cassette) it closes its engine
    and makes the one they now ask for."""

    def __init__(
        self,
        dispatch: Callable[[str, Any], Any],
        mode: str | None,
        path: str | Path | None,
        report: str | Path | None,
        config: str | Path | None,
        repeat: str,
        overwrite: bool,
        is_async: bool,
        codec: Codec | None = None,
    ) -> None:
        self.dispatch = dispatch
        self.codec = codec
        self.mode, self.path, self.report, self.config = mode, path, report, config
        self.repeat, self.overwrite, self.is_async = repeat, overwrite, is_async
        self.outer: Any = None
        self.bound: _Bound
        self._token = _environment_token()
        self._lock = threading.Lock()

    def wanted(self) -> _Wanted:
        env = os.environ
        mode = (self.mode or env.get(ENV_MODE) or "live").strip().lower()
        path = self.path if self.path is not None else env.get(ENV_PATH) or None
        report = self.report if self.report is not None else env.get(ENV_REPORT) or None
        config = self.config if self.config is not None else env.get(ENV_CONFIG) or None
        return mode, path, report, config

    def bind(self, wanted: _Wanted) -> _Bound:
        mode, path, report, config = wanted
        if mode not in MODES:
            raise ValueError(f"unknown {ENV_MODE} {mode!r}; expected one of: record, replay, live")
        engine, call, close = _engine(
            self.dispatch, mode, path, config, self.repeat, self.overwrite, self.is_async,
            self.codec,
        )  # fmt: skip
        if report is not None:
            try:
                sink = attach(report, engine)
            except BaseException:
                close()
                raise
            call = _reporting(call, sink, self.is_async)
        atexit.register(_close_at_exit, close, engine)  # before the sink's final write (LIFO)
        self.bound = _Bound(wanted, mode, engine, call, close)
        return self.bound

    def current(self) -> _Bound:
        """The engine the environment asks for now (made anew when it changed)."""
        token = _environment_token()
        bound = self.bound
        if token == self._token and token is not None:
            return bound  # nothing changed: no environment look-up (a miss costs ~3 us each)
        wanted = self.wanted()
        with self._lock:
            if self.bound.wanted != wanted:
                old = self.bound
                new = self.bind(wanted)  # a bad setting raises, and is tried again next call
                self.show(new)
                old.close()
            self._token = token
            return self.bound

    def show(self, bound: _Bound) -> None:
        """Keep the wrapper's ``.mode`` and ``.engine`` those of ``bound``."""
        if self.outer is not None:
            self.outer.mode = bound.mode
            self.outer.engine = bound.engine


_ENV_NAMES = tuple(os.fsencode(n) for n in (ENV_MODE, ENV_PATH, ENV_REPORT, ENV_CONFIG))


def _environment_token() -> tuple[Any, ...] | None:
    """The raw values of the variables a following wrapper reads, cheaply (the mapping
    ``os.environ`` keeps in sync with every change made through it), or ``None`` where
    that mapping is not there (then the wrapper reads the variables at each call)."""
    data = getattr(os.environ, "_data", None)
    if os.name != "posix" or not isinstance(data, dict):  # keys are bytes on POSIX only
        return None
    mode, path, report, config = _ENV_NAMES
    return (data.get(mode), data.get(path), data.get(report), data.get(config))


def _engine(
    dispatch: Callable[[str, Any], Any],
    mode: str,
    path: str | Path | None,
    config: str | Path | None,
    repeat: str,
    overwrite: bool,
    is_async: bool,
    codec: Codec | None = None,
) -> tuple[Any, Any, Callable[[], None]]:
    """The engine of ``mode`` (a live call counter, a recorder, a replayer), the dispatcher
    it makes of ``dispatch`` and how to close it. Record mode joins the recording of
    ``path`` open in this process, if any (``recorder_registry``)."""
    if mode == "live":
        counter = _LiveCounter()
        return counter, _counted(dispatch, counter, is_async), lambda: None
    if path is None:
        raise ValueError(f"{ENV_MODE}={mode} needs a cassette: pass path= or set {ENV_PATH}")
    project = ProjectConfig.load(config)
    if mode == "record":
        claim = os.environ.get(ENV_CLAIM) or None  # the file the record job made for it

        def open_new() -> Recorder:
            return open_recorder(path, project, overwrite=overwrite, claim=claim, codec=codec)

        recording = recorder_registry.acquire(path, open_new)
        return (
            recording,
            recording.wrap(dispatch),
            functools.partial(recorder_registry.release, path, recording),
        )
    redaction = load_secret_config(project)
    replayer = Replayer(
        load(path, rules=project.rules()), repeat=repeat, redactor=Redactor(redaction),
        codec=codec,
    )  # fmt: skip
    return replayer, _replayed(replayer, is_async), lambda: None


def open_recorder(
    path: str | Path,
    project: ProjectConfig | None = None,
    *,
    overwrite: bool = False,
    claim: str | None = None,
    codec: Codec | None = None,
) -> Recorder:
    """A ``Recorder`` of ``path`` under the project's normalization rules and record-time
    redaction (``project``: default ``ProjectConfig.load()``, which reads
    ``CASSETTE_CONFIG``), as record mode opens it.

    Raises:
        FileExistsError: ``path`` exists and neither ``overwrite`` nor ``claim`` allow it.
        CassetteFormatError: a bad config.
    """
    project = project if project is not None else ProjectConfig.load(None)
    redactor = record_redactor(load_secret_config(project))
    return Recorder(
        path, overwrite=overwrite, rules=project.rules(), redactor=redactor, claim=claim,
        codec=codec,
    )  # fmt: skip


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
