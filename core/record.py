"""Record: run an agent's tool calls live and append each one to a cassette as it happens.

One line per call, written and flushed when the call returns or raises, so a crash loses
at most the calls in flight. A tool exception is recorded as an ``error`` entry
(``{"type": class name, "message": str(exc)}``) and raised again unchanged. Each line also
carries ``recorded_at`` (ISO-8601 UTC, when the call started) and ``duration_ms``.

``seq`` numbers are given under a lock when a call completes, so the file is always in
``seq`` order, even with calls from several threads or tasks at once.

An existing file is never overwritten unless ``overwrite=True``. Then the new recording is
written to a temporary file next to it (``.NAME.recording-PID``) and renamed over the old
one by ``close()``: a crash leaves the old cassette intact and every completed call of the
new one in the temporary file.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Self

from .cassette import dump_line
from .entry import Entry
from .errors import CassetteError
from .normalize import NormalizationRules


class NotSerializable(CassetteError, TypeError):
    """A call's args or response cannot be stored as JSON. Names the tool and the part."""


class Recorder:
    """Appends calls to a cassette file.

    Args:
        path: the cassette to write.
        overwrite: replace an existing file (at ``close()``); without it an existing file
            raises ``FileExistsError``.
        rules: normalization rules for the stored ``args_digest`` (default: none).
        fsync: also ``os.fsync`` after every line (survives a power cut, costs a disk
            round trip per call); lines are always flushed.

    Use as a context manager, or call ``close()``; ``wrap(dispatch)`` gives a dispatcher
    (sync or async, like ``dispatch``) that records every call.

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is false.
    """

    def __init__(
        self,
        path: str | Path,
        overwrite: bool = False,
        rules: NormalizationRules | None = None,
        *,
        fsync: bool = False,
    ) -> None:
        self.path = Path(path)
        self.rules = rules or NormalizationRules()
        self.fsync = fsync
        self._lock = threading.Lock()
        self._seq = 0
        self._errors = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if overwrite and self.path.exists():
            self._write_path = self.path.with_name(f".{self.path.name}.recording-{os.getpid()}")
            self._fh: BinaryIO | None = open(self._write_path, "wb")  # noqa: SIM115
        else:
            self._write_path = self.path
            try:
                self._fh = open(self.path, "xb")  # noqa: SIM115 - exclusive: never clobbers
            except FileExistsError:
                raise FileExistsError(
                    f"{self.path}: a cassette exists already; pass overwrite=True to replace it"
                ) from None

    # -- writing ------------------------------------------------------------------------------
    @property
    def entries(self) -> int:
        """How many calls were recorded so far."""
        return self._seq

    @property
    def closed(self) -> bool:
        return self._fh is None

    def _write(
        self, tool: str, args: Any, started: float, t0: float, response: Any, error: Any
    ) -> int:
        duration_ms = round((time.perf_counter() - t0) * 1000, 3)
        recorded_at = datetime.fromtimestamp(started, UTC).isoformat().replace("+00:00", "Z")
        with self._lock:
            if self._fh is None:
                raise ValueError(f"{self.path}: recorder is closed")
            seq = self._seq + 1
            entry = Entry(
                seq=seq,
                tool=tool,
                args=args,
                response=None if error is not None else response,
                error=error,
                extra={"recorded_at": recorded_at, "duration_ms": duration_ms},
            )
            try:
                line = dump_line(entry, self.rules)
            except (TypeError, ValueError) as exc:
                raise NotSerializable(
                    f"tool {tool!r}: the response is not JSON-serializable ({exc}); return "
                    'JSON data (bytes as {"_binary": true, "encoding": "base64", '
                    '"data": ...})'
                ) from exc
            self._fh.write(line)
            self._fh.flush()
            if self.fsync:
                os.fsync(self._fh.fileno())
            self._seq = seq
            if error is not None:
                self._errors += 1
            return seq

    def _start(self, tool: str, args: Any) -> tuple[Any, float, float]:
        try:
            json.dumps(args)
        except (TypeError, ValueError) as exc:
            raise NotSerializable(
                f"tool {tool!r}: the args are not JSON-serializable ({exc})"
            ) from exc
        # a copy: a dispatcher that mutates its args must not change what was recorded
        return copy.deepcopy(args), time.time(), time.perf_counter()

    def call(self, dispatch: Callable[[str, Any], Any], tool: str, args: Any) -> Any:
        """Run ``dispatch(tool, args)`` live and record it; return its response, or record
        its exception as an ``error`` entry and raise it again.

        Raises:
            NotSerializable: the args or the response cannot be stored as JSON.
        """
        saved, started, t0 = self._start(tool, args)
        try:
            response = dispatch(tool, args)
        except Exception as exc:
            self._write(tool, saved, started, t0, None, _error_of(exc))
            raise
        self._write(tool, saved, started, t0, response, None)
        return response

    async def acall(
        self, dispatch: Callable[[str, Any], Awaitable[Any]], tool: str, args: Any
    ) -> Any:
        """``call`` for an async dispatcher."""
        saved, started, t0 = self._start(tool, args)
        try:
            response = await dispatch(tool, args)
        except Exception as exc:
            self._write(tool, saved, started, t0, None, _error_of(exc))
            raise
        self._write(tool, saved, started, t0, response, None)
        return response

    def wrap(self, dispatch: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
        """A dispatcher that records every call through this recorder; async if
        ``dispatch`` is a coroutine function."""
        if _is_async(dispatch):

            async def recorded_async(tool: str, args: Any) -> Any:
                return await self.acall(dispatch, tool, args)

            return recorded_async

        def recorded(tool: str, args: Any) -> Any:
            return self.call(dispatch, tool, args)

        return recorded

    def report(self) -> dict[str, Any]:
        """``{"mode": "record", "cassette", "entries", "errors"}``."""
        return {
            "mode": "record",
            "cassette": str(self.path),
            "entries": self._seq,
            "errors": self._errors,
        }

    def close(self) -> None:
        """Flush and close the file; with ``overwrite``, rename the new recording over the
        old cassette. Idempotent."""
        with self._lock:
            if self._fh is None:
                return
            fh, self._fh = self._fh, None
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
            if self._write_path != self.path:
                os.replace(self._write_path, self.path)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _error_of(exc: BaseException) -> dict[str, str]:
    return {"type": type(exc).__name__, "message": str(exc)}


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )
