"""Exceptions raised by the cassette engine.

Every error a user can cause names where it came from: a format error carries the file,
the 1-based line and the field; a miss carries the tool, the args digest, the args and the
nearest recorded calls, so the message alone is enough to act on.
"""

from __future__ import annotations

import builtins
import importlib
import sys
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from .textspot import is_long_pair, spot


class CassetteError(Exception):
    """Base class of every error raised by ``cassette_tui.core``."""


class CassetteFormatError(CassetteError):
    """A cassette (or an importable file) could not be read.

    Attributes:
        path: the file, or ``None`` for data that did not come from a file.
        line: 1-based line number of the offending line, or ``None`` when the whole file
            is at fault (missing, unreadable, not valid UTF-8 throughout).
        field: the entry field at fault (``"seq"``, ``"tool"``, ``"args"``, ``"response"``,
            ``"error"``, ``"args_digest"``), or ``None`` when the line itself is bad.
        reason: what is wrong, without the location prefix.
        truncated: ``True`` when the bad line is the last one and looks cut mid-write.
    """

    def __init__(
        self,
        path: str | Path | None,
        line: int | None,
        field: str | None,
        reason: str,
        *,
        truncated: bool = False,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.reason = reason
        self.truncated = truncated
        super().__init__(self._format())

    @classmethod
    def from_os_error(cls, path: str | Path, exc: OSError) -> Self:
        """The error for a file that could not be opened, read or stat'ed, with ``line`` and
        ``field`` ``None``: ``"no such file"`` (``FileNotFoundError``), ``"is a directory,
        not a cassette file"`` (``IsADirectoryError``), else ``"cannot read: <strerror>"``.
        Raise it ``from None``: the message already says what the ``OSError`` did."""
        if isinstance(exc, FileNotFoundError):
            reason = "no such file"
        elif isinstance(exc, IsADirectoryError):
            reason = "is a directory, not a cassette file"
        else:
            reason = f"cannot read: {exc.strerror or exc}"
        return cls(path, None, None, reason)

    def _format(self) -> str:
        where = self.path or "<data>"
        if self.line is not None:
            where += f":{self.line}"
        what = f"field {self.field!r}: " if self.field else ""
        return f"{where}: {what}{self.reason}"


class ToolError(CassetteError):
    """A tool exception recorded in a cassette's ``error`` field, raised again at replay.

    ``ToolError.of(type, message, seq, module)`` (what replay raises) gives an instance of
    a class that derives from both ``ToolError`` and the recorded exception class, so the
    agent's ``except FileNotFoundError`` (or ``except mylib.RateLimited``) still catches
    it: a builtin class is always rebuilt; another class is looked up by its recorded
    ``module`` and qualified name, importing the module if needed. A class that cannot be
    rebuilt (no module recorded, not importable, not an ``Exception`` subclass, or one
    that cannot be subclassed) gives a plain ``ToolError`` and a ``ToolErrorClassWarning``
    naming the recorded class.

    Attributes:
        type: the recorded exception class name (``"TimeoutError"``, ``"Outer.Inner"``).
        message: the recorded exception message.
        seq: the seq of the recorded entry that holds the error, when known.
        module: the recorded module of the class (``None`` for builtins and for cassettes
            that did not record it).
    """

    def __init__(
        self, type: str, message: str, seq: int | None = None, module: str | None = None
    ) -> None:
        self.type = type
        self.message = message
        self.seq = seq
        self.module = module
        # BaseException's own __init__: the recorded class's __init__ may want other
        # arguments (UnicodeDecodeError takes five); its attributes stay at their defaults
        BaseException.__init__(self, f"{type}: {message}")

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"

    def __reduce__(self) -> tuple[Any, ...]:
        # pickling (multiprocessing) rebuilds the same class again on the other side
        return (ToolError.of, (self.type, self.message, self.seq, self.module))

    @staticmethod
    def of(type: str, message: str, seq: int | None = None, module: str | None = None) -> ToolError:
        """The ``ToolError`` to raise for a recorded error: an instance of the recorded
        class too where it can be rebuilt (see the class docstring), else a plain
        ``ToolError`` after a ``ToolErrorClassWarning``."""
        cls = _replayed_class(type, module)
        return cls(type, message, seq, module)


class ToolErrorClassWarning(UserWarning):
    """A recorded exception class could not be rebuilt at replay; a plain ``ToolError``
    is raised instead. The message names the recorded ``module.qualname``."""


_CLASS_CACHE: dict[tuple[str, str | None], type[ToolError]] = {}
_CLASS_LOCK = threading.Lock()


def recorded_class_name(type_name: str, module: str | None) -> str:
    """``module.qualname`` of a recorded class, or the bare name for builtins."""
    return type_name if module in (None, "builtins") else f"{module}.{type_name}"


def _find_class(type_name: str, module: str | None) -> tuple[type | None, str]:
    """The recorded exception class, or ``(None, why not)``."""
    if module in (None, "builtins"):
        found = getattr(builtins, type_name, None) if "." not in type_name else None
        if found is None:
            if module is None:
                return None, "no module was recorded for it and it is not a builtin"
            return None, "no such builtin"
    else:
        try:
            obj: Any = sys.modules.get(module) or importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - ImportError, or whatever the module raised
            return None, f"module {module!r} cannot be imported ({exc.__class__.__name__}: {exc})"
        for part in type_name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                return None, f"module {module!r} has no {type_name!r}"
        found = obj
    if not (isinstance(found, type) and issubclass(found, Exception)):
        return None, "it is not an Exception subclass"
    return found, ""


def _replayed_class(type_name: str, module: str | None) -> type[ToolError]:
    key = (type_name, module)
    with _CLASS_LOCK:
        cached = _CLASS_CACHE.get(key)
        if cached is not None:
            return cached
        found, why = _find_class(type_name, module)
        cls: type[ToolError] = ToolError
        if found is not None:
            if issubclass(found, ToolError):
                cls = found
            else:
                try:
                    cls = builtins.type(
                        type_name.rsplit(".", 1)[-1],
                        (ToolError, found),
                        {
                            "__init__": ToolError.__init__,
                            "__str__": ToolError.__str__,
                            "__reduce__": ToolError.__reduce__,
                            "__module__": __name__,
                            "__qualname__": f"ToolError[{recorded_class_name(type_name, module)}]",
                        },
                    )
                except TypeError as exc:  # a final class, or a layout conflict
                    why = f"it cannot be subclassed ({exc})"
        if cls is ToolError:
            warnings.warn(
                f"replayed error class {recorded_class_name(type_name, module)!r} cannot be "
                f"rebuilt: {why}; raising a plain ToolError (an except clause for that "
                "class will not catch it)",
                ToolErrorClassWarning,
                stacklevel=4,
            )
        _CLASS_CACHE[key] = cls
        return cls


class CassetteMiss(CassetteError):
    """A replayed call whose key ``(tool, args digest)`` is not in the cassette.

    Replay never falls back to the live tool. The message names the nearest recorded calls
    of the same tool and every argument path that differs, with both values and the kind
    of value (uuid, timestamp, absolute path, number type, other).

    Attributes:
        tool: the tool name of the call.
        digest: the args digest of the call after normalization.
        args: the args as the agent passed them, with their secrets redacted and masked
            (``Replayer``: a miss shows no live secret).
        nearest: a list of candidates, each a dict ``{"seq", "args_digest", "differences":
            [{"path", "recorded", "live", "absent", "kind"}]}``, nearest first (``absent``:
            ``"recorded"``/``"live"`` for a path on one side only, else ``None``); from
            ``Replayer`` every value is masked (``scan.masking.mask_value``) and a live value
            equal to a redacted placeholder's secret is ``"the redacted value at $.path"``.
        proposed_rule: a rule that would make the call match (``"preset nulls"``), or
            ``None``.
    """

    def __init__(
        self,
        tool: str,
        digest: str,
        args: Any,
        nearest: list[dict[str, Any]] | None = None,
        message: str | None = None,
    ) -> None:
        self.tool = tool
        self.digest = digest
        self.args = args
        self.nearest = nearest or []
        #: a normalization rule that would turn this miss into a hit, when one is evident
        #: (``"preset nulls"``: the only differences are nulls against left-out args)
        self.proposed_rule: str | None = None
        super().__init__(message or self._format())

    def _format(self) -> str:
        lines = [f"cassette miss: {self.tool} {self.digest} was not recorded"]
        if not self.nearest:
            lines.append(f"  no call of {self.tool!r} was recorded")
        null_vs_absent = False
        for cand in self.nearest:
            lines.append(f"  nearest: seq {cand['seq']} ({cand['args_digest']})")
            for diff in cand.get("differences", []):
                absent = diff.get("absent")
                if is_long_pair(diff["recorded"], diff["live"], 60):
                    # long strings: both sides around the first differing character
                    where = spot(diff["recorded"], diff["live"], 40)
                    shown = where.describe("recorded ", ", live ")
                    lines.append(f"    {diff['path']}: {shown} [{diff['kind']}]")
                    continue
                rec = _side(diff["recorded"], absent == "recorded", "recorded", "the recording")
                live = _side(diff["live"], absent == "live", "live", "the live call")
                lines.append(f"    {diff['path']}: {rec}, {live} [{diff['kind']}]")
                null_vs_absent = null_vs_absent or is_null_vs_absent(diff)
        if null_vs_absent:
            self.proposed_rule = "preset nulls"
            lines.append(f"  {NULLS_HINT}")
        return "\n".join(lines)


#: what a miss whose args differ only as null against left out says to do (the error, the
#: replay command, the app's miss screen)
NULLS_HINT = (
    "an arg is null on one side and left out on the other: the 'nulls' preset "
    'drops null-valued args before digesting (presets = ["nulls"] in '
    "[tool.cassette.normalize])"
)


def is_null_vs_absent(diff: Mapping[str, Any]) -> bool:
    """Whether a difference (``{"path", "recorded", "live", "absent", "kind"}``, as in
    ``CassetteMiss.nearest``) is a ``null`` on one side and a path left out on the other."""
    absent = diff.get("absent")
    return (absent == "recorded" and diff.get("live") is None) or (
        absent == "live" and diff.get("recorded") is None
    )


def _side(value: Any, absent: bool, label: str, where: str) -> str:
    """One side of a differing arg: ``absent in the recording``, ``null in the live call``,
    ``recorded 'x'``."""
    if absent:
        return f"absent in {where}"
    if value is None:
        return f"null in {where}"
    return f"{label} {value!r}"


class ReplayExhausted(CassetteMiss):
    """A call past the last recording of its key (the n-th call of a key recorded fewer
    than n times) under the default ``error`` repeat policy.

    Attributes (besides those of :class:`CassetteMiss`):
        call_number: 1-based number of this call of the key.
        recorded_count: how many times the key was recorded.
        seqs: the seqs of the recordings of the key.
    """

    def __init__(
        self,
        tool: str,
        digest: str,
        args: Any,
        call_number: int,
        recorded_count: int,
        seqs: list[int],
    ) -> None:
        self.call_number = call_number
        self.recorded_count = recorded_count
        self.seqs = seqs
        times = {1: "once", 2: "twice"}.get(recorded_count, f"{recorded_count} times")
        msg = (
            f"replay exhausted: call #{call_number} of a key recorded {times} "
            f"({tool} {digest}, recorded at seq {', '.join(map(str, seqs))}); "
            "use the repeat-last policy to serve the last response again"
        )
        super().__init__(tool, digest, args, [], message=msg)


# Tracebacks and pickles name the public home (``cassette_tui.core.CassetteMiss``), which
# stays put when the engine's folders change.
for _public in (CassetteError, CassetteFormatError, ToolError, CassetteMiss, ReplayExhausted):
    _public.__module__ = "cassette_tui.core"
del _public
