"""``wrap_dispatcher``: the one call an agent makes to obey the environment contract.

docs/format.md, "Environment contract": ``CASSETTE_MODE`` (``record``, ``replay``, ``live``;
default ``live``), ``CASSETTE_PATH`` (the cassette), ``CASSETTE_REPORT`` (where the
report goes as JSON: written when the wrapper is created and at exit or SIGTERM, each
replayed call appended to its journal as it is served; one file per process, see
``report_sink``), ``CASSETTE_CONFIG``
(normalization config); ``CASSETTE_NEW_CALLS`` and ``CASSETTE_NEW_PATH`` (what a replay
does with a call never recorded: ``new_calls.py``), ``CASSETTE_FIXTURES`` (pinned fixtures
answering their keys first: ``fixtures.py``).
"""

from __future__ import annotations

import atexit
import functools
import os
import threading
from typing import TYPE_CHECKING, Any

from ..format.constants import (
    ENV_CLAIM,
    ENV_CONFIG,
    ENV_FIXTURES,
    ENV_MODE,
    ENV_NEW_CALLS,
    ENV_NEW_PATH,
    ENV_PATH,
    ENV_REPORT,
    MODES,
)

# Importing this module is what an agent pays on every run (``from cassette_tui.core
# import wrap_dispatcher``): the loader, the rules, the redaction, the replayer and the
# recorder load when a wrapper needs them (``_engine``), not here
# (tests/test_import_hygiene.py).
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from ..format.entry import Entry
    from ..keys.config import ProjectConfig
    from .codec import Codec
    from .fixtures import PinnedFixtures
    from .new_calls import LiveNewCalls
    from .recorder import Recorder
    from .replayer import Replayer
    from .report_sink import ReportSink


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


class _Overlay:
    """What a wrapper adds around its mode: the new-calls policy, where ``record`` writes
    the new calls, and the pinned fixtures."""

    __slots__ = ("fixtures", "new_calls", "new_path")

    def __init__(
        self,
        new_calls: str = "error",
        new_path: str | Path | None = None,
        fixtures: tuple[str | Path, ...] = (),
    ) -> None:
        self.new_calls, self.new_path, self.fixtures = new_calls, new_path, fixtures


def _overlay(
    new_calls: str | None, new_path: str | Path | None, fixtures: Sequence[str | Path] | None
) -> _Overlay:
    """The arguments, else ``CASSETTE_NEW_CALLS``, ``CASSETTE_NEW_PATH``,
    ``CASSETTE_FIXTURES`` (``os.pathsep``-joined, empty parts skipped)."""
    from .new_calls import check_policy

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
            Default: ``CASSETTE_MODE``, else ``"live"``; then the wrapper follows the
            environment: it reads the ``CASSETTE_*`` variables again at every call and,
            when they changed since its engine was made, makes the engine they ask for
            (a wrapper made at import time, before a pytest ``cassette`` marker set them,
            replays inside the marked test instead of staying live).
        path: the cassette; default ``CASSETTE_PATH``. Required for record and replay.
        report: file for the JSON report; default ``CASSETTE_REPORT``; ``None`` writes
            nothing. Written at once (an unwritable path raises here), then at exit and
            on SIGTERM; a replay appends each call to ``PATH.journal`` as it is served
            (``ReplayReport.read_run`` reads both); wrappers of one process that name the
            same file share it (see ``report_sink``).
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
        ValueError: an unknown mode, repeat or new-calls policy, or no path for
            record/replay.
        FileExistsError: record mode on an existing cassette without ``overwrite``; (at
            the first new call) ``new_path`` exists.
        CassetteFormatError: replay of a missing or malformed cassette, a fixture that
            cannot be loaded, or a bad config.
        ReportPathError: the report file cannot be written.
    """
    from .recorder import _is_async

    is_async = _is_async(dispatch)
    # no mode given: the wrapper follows the environment, read again at each call
    follows = mode is None
    binding = _Binding(dispatch, mode, path, report, config, repeat, overwrite, is_async, codec)
    binding.overlay_args = (new_calls, new_path, fixtures)
    bound = binding.bind(binding.wanted())  # at once: a bad setting raises here

    current, call = binding.current, bound.call  # a wrapper given its mode keeps ``bound``
    if is_async:

        async def wrapped_async(tool: str, args: Any) -> Any:
            __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
            return await (current().call if follows else call)(tool, args)

        wrapped: Any = wrapped_async
    elif follows and _ENV_DATA is not None:
        # the environment's raw values looked at inline, each against the one the engine
        # was made for (``_environment_token`` without its frame and tuple: a third of a
        # microsecond on every call); anything else asks ``current``
        get, (m, p, r, c) = _ENV_DATA.get, _ENV_NAMES

        def wrapped_following(tool: str, args: Any) -> Any:
            __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
            t = binding._token
            if (
                t is not None
                and get(m) is t[0]
                and get(p) is t[1]
                and get(r) is t[2]
                and get(c) is t[3]
            ):
                return binding.bound.call(tool, args)
            return current().call(tool, args)

        wrapped = wrapped_following
    else:

        def wrapped_sync(tool: str, args: Any) -> Any:
            __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
            return (current().call if follows else call)(tool, args)

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


class _Bound:
    """One engine of a wrapper and the dispatcher it makes (reporting, when asked)."""

    __slots__ = ("call", "close", "engine", "mode", "wanted")

    def __init__(
        self, wanted: _Wanted, mode: str, engine: Any, call: Any, close: Callable[[], None]
    ) -> None:
        self.wanted, self.mode, self.engine, self.call, self.close = (
            wanted, mode, engine, call, close
        )  # fmt: skip


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
        #: ``new_calls``, ``new_path``, ``fixtures`` as given (``None``: the environment)
        self.overlay_args: tuple[Any, Any, Any] = (None, None, None)
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
        overlay = _overlay(*self.overlay_args)
        engine, call, close = _engine(
            self.dispatch, mode, path, config, self.repeat, self.overwrite, self.is_async,
            overlay, self.codec,
        )  # fmt: skip
        if report is not None:
            from .report_sink import attach

            try:
                sink = attach(report, engine)
            except BaseException:
                close()
                raise
            if not sink.journals(engine):  # a replay's calls go to the journal as served
                call = _reporting(call, sink, self.is_async)
        atexit.register(_close_at_exit, close, engine)  # before the sink's final write (LIFO)
        self.bound = _Bound(wanted, mode, engine, call, close)
        return self.bound

    def current(self) -> _Bound:
        """The engine the environment asks for now (made anew when it changed)."""
        token = _environment_token()
        bound = self.bound
        if token == self._token and token is not None:
            # nothing changed: no environment look-up (a miss costs ~3 us each); the values
            # kept as they are now, for the wrapper's look by identity
            self._token = token
            return bound
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
#: the mapping ``os.environ`` keeps its raw values in (bytes keys: POSIX), else ``None``
_ENV_DATA: dict[bytes, bytes] | None = (
    getattr(os.environ, "_data", None) if os.name == "posix" else None
)
if not isinstance(_ENV_DATA, dict):
    _ENV_DATA = None


def _environment_token() -> tuple[Any, ...] | None:
    """The raw values of the variables a following wrapper reads, cheaply (the mapping
    ``os.environ`` keeps in sync with every change made through it), or ``None`` where
    that mapping is not there (then the wrapper reads the variables at each call)."""
    data = _ENV_DATA
    if data is None:  # keys are bytes on POSIX only
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
    overlay: _Overlay | None = None,
    codec: Codec | None = None,
) -> tuple[Any, Any, Callable[[], None]]:
    """The engine of ``mode`` (a live call counter, a recorder, a replayer), the
    dispatcher it makes of ``dispatch`` (pinned fixtures first, when given) and what
    closes them. Record mode joins the recording of ``path`` open in this process, if any
    (``recorder_registry``)."""
    overlay = overlay if overlay is not None else _Overlay()
    if mode != "replay" and overlay.new_calls != "error":
        raise ValueError(f"new_calls={overlay.new_calls!r} applies to replay mode only")
    if mode == "live" and not overlay.fixtures:
        counter = _LiveCounter()
        return counter, _counted(dispatch, counter, is_async), _nothing
    if path is None and mode != "live":
        raise ValueError(f"{ENV_MODE}={mode} needs a cassette: pass path= or set {ENV_PATH}")
    from ..format.cassette import load
    from ..keys.config import ProjectConfig
    from ..scan.redact import Redactor, record_redactor
    from ..scan.redact_config import load_secret_config
    from . import recorder_registry
    from .fixtures import PinnedFixtures
    from .new_calls import LiveNewCalls, new_cassette_path
    from .replayer import Replayer

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
        claim = os.environ.get(ENV_CLAIM) or None  # the file the record job made for it

        def open_new() -> Recorder:
            return open_recorder(path, project, overwrite=overwrite, claim=claim, codec=codec)

        recording = recorder_registry.acquire(path, open_new)
        # the pinned answers are recorded too: the recording is what the agent saw
        return (
            recording,
            recording.wrap(_pinned_first(dispatch, pinned, is_async)),
            functools.partial(recorder_registry.release, path, recording),
        )
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
        live = LiveNewCalls(overlay.new_calls, target, rules, record_redactor(redaction), codec)
        replayer.new_cassette = str(target) if overlay.new_calls == "record" else None
    close = live.close if live is not None else _nothing
    return replayer, _replayed(replayer, is_async, dispatch, pinned, live), close


def _nothing() -> None:
    """Nothing to close."""


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
    from ..keys.config import ProjectConfig
    from ..scan.redact import record_redactor
    from ..scan.redact_config import load_secret_config
    from .recorder import Recorder

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
        from .report_sink import warn_at_exit

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

    from .new_calls import NewCall

    if pinned is None and live is None and not is_async:
        return replayer  # nothing around it: one frame less on every call

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
