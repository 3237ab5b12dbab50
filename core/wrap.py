"""``wrap_dispatcher``: the one call an agent makes to obey the environment contract.

DESIGN.md, "Environment contract": ``CASSETTE_MODE`` (``record``, ``replay``, ``live``;
default ``live``), ``CASSETTE_PATH`` (the cassette), ``CASSETTE_REPORT`` (where the
report goes as JSON when the process exits), ``CASSETTE_CONFIG`` (normalization config).
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .atomic import write_atomic
from .cassette import load
from .normalize import load_rules
from .record import Recorder, _is_async
from .replay import Replayer

MODES = ("live", "record", "replay")
ENV_MODE, ENV_PATH, ENV_REPORT = "CASSETTE_MODE", "CASSETTE_PATH", "CASSETTE_REPORT"


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
) -> Callable[[str, Any], Any]:
    """Wrap a tool dispatcher ``dispatch(tool, args) -> response`` for record, replay or
    live use. A coroutine function gives a coroutine function back.

    Args:
        mode: ``"live"`` (pass through), ``"record"`` (call live, append each call to
            ``path``) or ``"replay"`` (serve calls from ``path``, never call ``dispatch``).
            Default: ``CASSETTE_MODE``, else ``"live"``.
        path: the cassette; default ``CASSETTE_PATH``. Required for record and replay.
        report: file for the JSON report, written at process exit (atexit); default
            ``CASSETTE_REPORT``; ``None`` writes nothing.
        config: normalization config file; default ``CASSETTE_CONFIG``, else the project's
            ``cassette.toml`` / ``pyproject.toml`` (see ``normalize.load_rules``).
        repeat: replay policy past the last recording of a key, ``"error"`` or ``"last"``.
        overwrite: record mode only: replace an existing cassette (else an error).

    The returned dispatcher has ``.mode``, ``.report()`` (the report as a dict: the replay
    report in replay mode, ``{"mode", "cassette", "entries", "errors"}`` when recording,
    ``{"mode", "cassette", "calls"}`` live) and ``.close()`` (flushes a recording; also
    run at exit).

    Raises:
        ValueError: an unknown mode or repeat policy, or no path for record/replay.
        FileExistsError: record mode on an existing cassette without ``overwrite``.
        CassetteFormatError: replay of a missing or malformed cassette, or a bad config.
    """
    mode = (mode or os.environ.get(ENV_MODE) or "live").strip().lower()
    if mode not in MODES:
        raise ValueError(f"unknown {ENV_MODE} {mode!r}; expected one of: record, replay, live")
    if path is None:
        path = os.environ.get(ENV_PATH) or None
    if report is None:
        report = os.environ.get(ENV_REPORT) or None
    is_async = _is_async(dispatch)

    engine: Any
    if mode == "live":
        engine = counter = _LiveCounter()
        if is_async:

            async def wrapped_async(tool: str, args: Any) -> Any:
                counter.count()
                return await dispatch(tool, args)

            wrapped: Any = wrapped_async
        else:

            def wrapped_sync(tool: str, args: Any) -> Any:
                counter.count()
                return dispatch(tool, args)

            wrapped = wrapped_sync
    else:
        if path is None:
            raise ValueError(f"{ENV_MODE}={mode} needs a cassette: pass path= or set {ENV_PATH}")
        rules = load_rules(config)
        if mode == "record":
            engine = Recorder(path, overwrite=overwrite, rules=rules)
            wrapped = engine.wrap(dispatch)
        else:
            engine = Replayer(load(path, rules=rules), repeat=repeat)
            replayer = engine
            if is_async:

                async def replayed_async(tool: str, args: Any) -> Any:
                    return replayer(tool, args)

                wrapped = replayed_async
            else:

                def replayed(tool: str, args: Any) -> Any:
                    return replayer(tool, args)

                wrapped = replayed

    functools.update_wrapper(wrapped, dispatch, updated=())
    wrapped.mode = mode
    wrapped.engine = engine
    wrapped.report = engine.report
    wrapped.close = getattr(engine, "close", lambda: None)
    atexit.register(_at_exit, engine, Path(report) if report else None)
    return wrapped  # type: ignore[no-any-return]


def _at_exit(engine: Any, report: Path | None) -> None:
    close = getattr(engine, "close", None)
    if close is not None:
        close()
    if report is not None:
        data = json.dumps(engine.report(), indent=2, ensure_ascii=False, default=repr)
        write_atomic(report, [data.encode("utf-8") + b"\n"], overwrite=True)
