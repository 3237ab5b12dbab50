"""``wrap_dispatcher``: the one call an agent makes to obey the environment contract.

docs/format.md, "Environment contract": ``CASSETTE_MODE`` (``record``, ``replay``, ``live``;
default ``live``), ``CASSETTE_PATH`` (the cassette), ``CASSETTE_REPORT`` (where the
report goes as JSON: written when the wrapper is created, kept current as the run goes,
and at exit or SIGTERM; one file per process, see ``report_sink``), ``CASSETTE_CONFIG``
(normalization config); ``CASSETTE_NEW_CALLS`` and ``CASSETTE_NEW_PATH`` (what a replay
does with a call never recorded: ``new_calls.py``), ``CASSETTE_FIXTURES`` (pinned fixtures
answering their keys first: ``fixtures.py``).
"""

from __future__ import annotations

import atexit
import functools
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.cassette import load
from ..format.constants import (
    ENV_CLAIM,
    ENV_FIXTURES,
    ENV_MODE,
    ENV_NEW_CALLS,
    ENV_NEW_PATH,
    ENV_PATH,
    ENV_REPORT,
    MODES,
)
from ..format.entry import Entry
from ..keys.config import ProjectConfig
from ..scan.redact import Redactor, record_redactor
from ..scan.redact_config import load_secret_config
from .fixtures import PinnedFixtures
from .new_calls import LiveNewCalls, NewCall, check_policy, new_cassette_path
from .recorder import Recorder, _is_async
from .replayer import Replayer
from .report_sink import ReportSink, attach, warn_at_exit

if TYPE_CHECKING:
    from .codec import Codec


class _LiveCounter:
    def __init__(self, pinned: PinnedFixtures | None = None) -> None:
        self.calls = 0
        self.pinned = pinned
        self._lock = threading.Lock()

    def count(self) -> None:
        with self._lock:
            self.calls += 1

    def report(self) -> dict[str, Any]:
        """``{"mode": "live", "cassette": None, "calls"}``, and ``"pinned"`` (calls the
        fixtures answered) when there are fixtures."""
        report: dict[str, Any] = {"mode": "live", "cassette": None, "calls": self.calls}
        if self.pinned is not None:
            report["pinned"] = self.pinned.served
        return report


@dataclass(frozen=True)
class _Overlay:
    """What a wrapper adds around its mode: the new-calls policy, where ``record`` writes
    the new calls, and the pinned fixtures."""

    new_calls: str = "error"
    new_path: str | Path | None = None
    fixtures: tuple[str | Path, ...] = ()


def _overlay(
    new_calls: str | None, new_path: str | Path | None, fixtures: Sequence[str | Path] | None
) -> _Overlay:
    """The arguments, else ``CASSETTE_NEW_CALLS``, ``CASSETTE_NEW_PATH``,
    ``CASSETTE_FIXTURES`` (``os.pathsep``-joined, empty parts skipped)."""
    policy = new_calls if new_calls is not None else os.environ.get(ENV_NEW_CALLS) or "error"
    try:
        policy = check_policy(policy)
    except ValueError:
        where = "new_calls=" if new_calls is not None else f"{ENV_NEW_CALLS}="
        raise ValueError(f"{where}{policy!r}: expected one of error, report, record") from None
    if fixtures is None:
        fixtures = [p for p in os.environ.get(ENV_FIXTURES, "").split(os.pathsep) if p]
    return _Overlay(
        policy,
        new_path if new_path is not None else os.environ.get(ENV_NEW_PATH) or None,
        tuple(fixtures),
    )


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
    new_calls: str | None = None,
    new_path: str | Path | None = None,
    fixtures: Sequence[str | Path] | None = None,
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
        new_calls: replay mode: what a call never recorded (or past the last recording
            of its key) gets: ``"error"`` (raise), ``"report"`` (answered by ``dispatch``
            live, written nowhere) or ``"record"`` (answered live and appended to
            ``new_path``); the report lists them as new calls (``new_calls.py``).
            Default: ``CASSETTE_NEW_CALLS``, else ``"error"``.
        new_path: where ``"record"`` writes the new calls (a new file, made at the first
            one); default ``CASSETTE_NEW_PATH``, else ``NAME.new-<UTC>.jsonl`` beside
            the cassette.
        fixtures: pinned fixture cassettes that answer their keys first, in every mode
            (``fixtures.py``); default ``CASSETTE_FIXTURES`` (``os.pathsep``-joined).

    The returned dispatcher has ``.mode``, ``.report()`` (the report as a dict: the replay
    report in replay mode, ``{"mode", "cassette", "entries", "errors"}`` when recording,
    ``{"mode", "cassette", "calls"}`` live) and ``.close()`` (flushes a recording; also
    run at exit).

    Raises:
        ValueError: an unknown mode, repeat or new-calls policy, or no path for
            record/replay.
        FileExistsError: record mode on an existing cassette without ``overwrite``; (at
            the first new call) ``new_path`` exists.
        CassetteFormatError: replay of a missing or malformed cassette, a fixture that
            cannot be loaded, or a bad config.
        ReportPathError: the report file cannot be written.
    """
    mode = (mode or os.environ.get(ENV_MODE) or "live").strip().lower()
    if mode not in MODES:
        raise ValueError(f"unknown {ENV_MODE} {mode!r}; expected one of: record, replay, live")
    path = path if path is not None else os.environ.get(ENV_PATH) or None
    report = report if report is not None else os.environ.get(ENV_REPORT) or None
    is_async = _is_async(dispatch)
    overlay = _overlay(new_calls, new_path, fixtures)
    engine, wrapped, close = _engine(
        dispatch, mode, path, config, repeat, overwrite, is_async, overlay, codec
    )
    return _finished(wrapped, dispatch, mode, engine, report, is_async, close)


def _engine(
    dispatch: Callable[[str, Any], Any],
    mode: str,
    path: str | Path | None,
    config: str | Path | None,
    repeat: str,
    overwrite: bool,
    is_async: bool,
    overlay: _Overlay = _Overlay(),
    codec: Codec | None = None,
) -> tuple[Any, Any, Callable[[], None]]:
    """The engine of ``mode`` (a live call counter, a recorder, a replayer), the
    dispatcher it makes of ``dispatch`` (pinned fixtures first, when given) and what
    closes them."""
    if mode != "replay" and overlay.new_calls != "error":
        raise ValueError(f"new_calls={overlay.new_calls!r} applies to replay mode only")
    if mode == "live" and not overlay.fixtures:
        counter = _LiveCounter()
        return counter, _counted(dispatch, counter, is_async), _nothing
    if path is None and mode != "live":
        raise ValueError(f"{ENV_MODE}={mode} needs a cassette: pass path= or set {ENV_PATH}")
    project = ProjectConfig.load(config)
    rules = project.rules()
    redaction = load_secret_config(project)
    pinned = (
        PinnedFixtures(overlay.fixtures, rules, Redactor(redaction), codec)
        if overlay.fixtures
        else None
    )
    if mode == "live":
        counter = _LiveCounter(pinned)
        return (
            counter,
            _counted(_pinned_first(dispatch, pinned, is_async), counter, is_async),
            _nothing,
        )
    assert path is not None
    if mode == "record":
        redactor = record_redactor(redaction)
        claim = os.environ.get(ENV_CLAIM) or None  # the file the record job made for it
        recorder = Recorder(
            path, overwrite=overwrite, rules=rules, redactor=redactor, claim=claim, codec=codec
        )
        # the pinned answers are recorded too: the recording is what the agent saw
        return recorder, recorder.wrap(_pinned_first(dispatch, pinned, is_async)), recorder.close
    replayer = Replayer(
        load(path, rules=rules),
        repeat=repeat,
        redactor=Redactor(redaction),
        new_calls=overlay.new_calls,
        codec=codec,
    )
    live = None
    if overlay.new_calls != "error":
        target = overlay.new_path if overlay.new_path is not None else new_cassette_path(path)
        redactor = record_redactor(redaction)
        live = LiveNewCalls(overlay.new_calls, target, rules, redactor, codec)
        replayer.new_cassette = str(target) if overlay.new_calls == "record" else None
    close = live.close if live is not None else _nothing
    return replayer, _replayed(replayer, is_async, dispatch, pinned, live), close


def _nothing() -> None:
    """Nothing to close."""


def _finished(
    wrapped: Any,
    dispatch: Callable[[str, Any], Any],
    mode: str,
    engine: Any,
    report: str | Path | None,
    is_async: bool,
    close: Callable[[], None],
) -> Any:
    """``wrapped`` reporting to ``report`` (when given), looking like ``dispatch``, with
    ``.mode``, ``.engine``, ``.report()`` and ``.close()`` (also run at exit)."""
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


def _pinned_first(
    dispatch: Callable[[str, Any], Any], pinned: PinnedFixtures | None, is_async: bool
) -> Any:
    """``dispatch``, but a call a pinned fixture holds gets the pinned answer."""
    if pinned is None:
        return dispatch
    if is_async:

        async def pinned_async(tool: str, args: Any) -> Any:
            __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
            found = pinned.answer(tool, args)
            if found is not None:
                return pinned.value(found[1])  # a pinned error is raised as ToolError
            return await dispatch(tool, args)

        return pinned_async

    def pinned_sync(tool: str, args: Any) -> Any:
        __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
        found = pinned.answer(tool, args)
        if found is not None:
            return pinned.value(found[1])
        return dispatch(tool, args)

    return pinned_sync


def _replayed(
    replayer: Replayer,
    is_async: bool,
    dispatch: Callable[[str, Any], Any],
    pinned: PinnedFixtures | None = None,
    live: LiveNewCalls | None = None,
) -> Any:
    """A dispatcher served by ``replayer`` (a coroutine function when ``is_async``): a
    pinned fixture's key by the fixture (logged ``pinned``), a new call by ``live``
    (``dispatch`` live; logged ``new`` by the replayer), never ``dispatch`` otherwise."""

    def pinned_answer(tool: str, args: Any) -> Entry | None:
        __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
        found = pinned.answer(tool, args) if pinned is not None else None
        if found is None:
            return None
        replayer.note_pinned(tool, found[0][1])
        return found[1]

    if is_async:

        async def replayed_async(tool: str, args: Any) -> Any:
            __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
            entry = pinned_answer(tool, args)
            if entry is not None:
                return pinned.value(entry)  # type: ignore[union-attr]
            try:
                return await replayer.acall(tool, args)  # a recorded cancellation waits
            except NewCall:
                if live is None:
                    raise
            return await live.aanswer(dispatch, tool, args)

        return replayed_async

    def replayed(tool: str, args: Any) -> Any:
        __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
        entry = pinned_answer(tool, args)
        if entry is not None:
            return pinned.value(entry)  # type: ignore[union-attr]
        try:
            return replayer(tool, args)
        except NewCall:
            if live is None:
                raise
        return live.answer(dispatch, tool, args)

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
