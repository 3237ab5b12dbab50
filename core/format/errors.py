"""Exceptions raised by the cassette engine.

Every error a user can cause names where it came from: a format error carries the file,
the 1-based line and the field; a miss carries the tool, the args digest, the args and the
nearest recorded calls, so the message alone is enough to act on.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import importlib
import json
import os
import sys
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from .jsonvalue import roundtrip_change
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

    ``ToolError.from_record(error, seq)`` (what replay raises) gives an instance of a class
    that derives from both ``ToolError`` and the recorded exception class, so the agent's
    ``except FileNotFoundError`` (or ``except mylib.RateLimited``) still catches it: a
    builtin class is always rebuilt; another class is looked up by its recorded ``module``
    and qualified name, importing the module if needed (a class recorded from a script run
    as ``python agent.py``, module ``__main__``, is also found in an already imported
    module loaded from a file of the recorded ``script`` name, as under pytest). A class
    that cannot be rebuilt (no module recorded, not importable, not an exception class,
    or one that cannot be subclassed) gives a plain ``ToolError`` and a
    ``ToolErrorClassWarning`` naming the recorded class.

    What the agent reads equals what the live exception gave (docs/format.md, "The error
    field"): ``str()`` is the recorded ``message``, ``repr()`` the recorded ``repr``
    (else ``Name(*args)``), ``.args`` the recorded ``args`` (else ``(message,)``), every
    recorded attribute (``attrs``: ``errno``, ``filename``, a custom ``.status``) is set
    again, and a recorded exception group (``exceptions``) is rebuilt as a group of
    replayed exceptions. A recorded attribute wins over the same-named one below.

    Attributes:
        type: the recorded exception class name (``"TimeoutError"``, ``"Outer.Inner"``).
        message: the recorded exception message (``str()`` of the live exception).
        seq: the seq of the recorded entry that holds the error, when known.
        module: the recorded module of the class (``None`` for builtins and for cassettes
            that did not record it).
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        # the recorded class's __new__ may want its own arguments (an exception group's
        # message and exceptions, OSError's errno): give it the recorded args
        record = kwargs.get("record") or {}
        try:
            return super().__new__(cls, *_new_args(record, args[1] if len(args) > 1 else ""))
        except TypeError:
            return super().__new__(cls)

    def __init__(
        self,
        type: str,
        message: str,
        seq: int | None = None,
        module: str | None = None,
        *,
        record: Mapping[str, Any] | None = None,
    ) -> None:
        self._text = message
        self._error: dict[str, Any] = dict(record or {"type": type, "message": message})
        # BaseException's own __init__: the recorded class's __init__ may want other
        # arguments (UnicodeDecodeError takes five)
        BaseException.__init__(self, *_new_args(self._error, message))
        own = {"type": type, "message": message, "seq": seq, "module": module}
        for name, value in (own | _attrs(self._error)).items():
            # a read-only attribute of the recorded class (an exception group's message)
            # is left as it is
            with contextlib.suppress(AttributeError, TypeError, ValueError):
                setattr(self, name, value)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        shown = self._error.get("repr")
        if isinstance(shown, str):
            return shown
        return _default_repr(
            str(self._error.get("type", "ToolError")).rsplit(".", 1)[-1], self.args
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # pickling (multiprocessing) rebuilds the same class again on the other side
        return (ToolError.from_record, (self._error, self._seq()))

    def _seq(self) -> int | None:
        seq = self.__dict__.get("seq")
        return seq if isinstance(seq, int) else None

    @staticmethod
    def of(type: str, message: str, seq: int | None = None, module: str | None = None) -> ToolError:
        """The ``ToolError`` for a recorded error of only ``type``, ``message`` and
        ``module`` (``from_record`` of that object)."""
        record: dict[str, Any] = {"type": type, "message": message}
        if module is not None:
            record["module"] = module
        return ToolError.from_record(record, seq)

    @staticmethod
    def from_record(error: Mapping[str, Any], seq: int | None = None) -> ToolError:
        """The ``ToolError`` to raise for a recorded ``error`` object (docs/format.md, "The
        error field"): an instance of the recorded class too where it can be rebuilt (see
        the class docstring), else a plain ``ToolError`` after a ``ToolErrorClassWarning``.
        Fields of the wrong type are ignored (an old cassette has only type and message)."""
        type_name = str(error.get("type", "Error"))
        message = str(error.get("message", ""))
        module = error.get("module")
        module = module if isinstance(module, str) else None
        script = error.get("script")
        cls = _replayed_class(type_name, module, script if isinstance(script, str) else None)
        record = dict(error)
        subs = error.get("exceptions")
        if (
            issubclass(cls, BaseExceptionGroup)
            and isinstance(subs, list)
            and subs
            and all(isinstance(s, Mapping) for s in subs)
        ):
            record["exceptions"] = [ToolError.from_record(s, seq) for s in subs]
        else:
            record.pop("exceptions", None)
        made = cls(type_name, message, seq, module, record=record)
        made._error = dict(error)  # the cassette's JSON, not the rebuilt exceptions
        return made


def _new_args(record: Mapping[str, Any], message: str) -> tuple[Any, ...]:
    """The args a replayed exception is made with: the recorded ``args`` (a JSON list),
    else ``(message,)``; an exception group's are ``(message, [replayed exceptions])``."""
    args = record.get("args")
    args = tuple(args) if isinstance(args, list) else (record.get("message", message),)
    subs = record.get("exceptions")
    if isinstance(subs, list) and subs and all(isinstance(s, BaseException) for s in subs):
        return (args[0] if args else "", subs)
    return args


def _attrs(record: Mapping[str, Any]) -> dict[str, Any]:
    attrs = record.get("attrs")
    if not isinstance(attrs, Mapping):
        return {}
    return {
        k: v
        for k, v in attrs.items()
        if isinstance(k, str) and k.isidentifier() and (not k.startswith("_") or k == "__notes__")
    }


class ToolErrorClassWarning(UserWarning):
    """A recorded exception class could not be rebuilt at replay; a plain ``ToolError``
    is raised instead. The message names the recorded ``module.qualname``."""


#: attributes that builtin exceptions keep in C slots rather than ``__dict__``: recorded
#: when an exception has them and they are JSON (``OSError.errno``, ``SyntaxError.lineno``)
_SLOT_ATTRS = (
    "errno",
    "strerror",
    "filename",
    "filename2",
    "encoding",
    "start",
    "end",
    "reason",
    "lineno",
    "offset",
    "text",
    "msg",
    "end_lineno",
    "end_offset",
    "name",
    "path",
    "code",
    "value",
)


def error_record(exc: BaseException) -> dict[str, Any]:
    """The ``error`` field that records ``exc`` (docs/format.md, "The error field"):
    ``type`` (the class's qualified name) and ``message`` (``str(exc)``); ``module`` for a
    class that is not a builtin (the importable name under ``python -m``; ``__main__``
    with the ``script`` file name for ``python agent.py``); ``args`` when they are JSON
    and not just ``[message]``; ``attrs``, the exception's JSON attributes (its
    ``__dict__``, and the C-slot ones of builtins such as ``errno``, ``filename``);
    ``repr`` when ``repr(exc)`` is not ``Name(*args)``; ``exceptions`` (each one such an
    object) for an exception group; ``cancelled: true`` for an ``asyncio`` cancellation.
    A ``ToolError`` (a replayed or pinned error, recorded again under ``record --fixture``
    or by an outer wrapper) gives the error it was raised from, not its replay class
    (``ToolError[json.decoder.JSONDecodeError]``) and the ``ToolError``'s own fields."""
    if isinstance(exc, ToolError):
        return copy.deepcopy(exc._error)
    cls = type(exc)
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__: recorded as Python prints it
        message = "<exception str() failed>"
    error: dict[str, Any] = {"type": cls.__qualname__, "message": message}
    module = cls.__module__
    if module == "__main__":
        main = sys.modules.get("__main__")
        spec = getattr(main, "__spec__", None)
        if spec is not None and getattr(spec, "name", None):  # python -m pkg.agent
            module = spec.name
        elif script_name(main) is not None:
            error["script"] = script_name(main)
    if module != "builtins":
        error["module"] = module
    if isinstance(exc, BaseExceptionGroup):
        args: list[Any] = [exc.message]
        error["exceptions"] = [error_record(sub) for sub in exc.exceptions]
    else:
        args = list(exc.args)
    if args != [message] and _is_json(args):
        error["args"] = args
    attrs = _recorded_attrs(exc)
    if attrs:
        error["attrs"] = attrs
    shown = _safe_repr(exc)
    plain = _default_repr(cls.__name__, tuple(error.get("args", [message])))
    if shown is not None and shown != plain:
        error["repr"] = shown
    asyncio = sys.modules.get("asyncio")  # a cancellation comes only with asyncio loaded
    if asyncio is not None and isinstance(exc, asyncio.CancelledError):
        error["cancelled"] = True
    return error


def _recorded_attrs(exc: BaseException) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for name in _SLOT_ATTRS:
        if any(name in vars(c) for c in type(exc).__mro__):
            try:
                value = getattr(exc, name)
            except Exception:  # noqa: BLE001 - a property that raises is not recorded
                continue
            if value is not None and _is_json(value):
                attrs[name] = value
    for name, value in getattr(exc, "__dict__", {}).items():
        if (not name.startswith("_") or name == "__notes__") and _is_json(value):
            attrs[name] = value
    return attrs


def _is_json(value: Any) -> bool:
    """Whether ``value`` is JSON that comes back equal and of the same types."""
    try:
        return roundtrip_change(value) is None and _finite_json(value)
    except RecursionError:
        return False


def _finite_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        return False
    return True


def _safe_repr(exc: BaseException) -> str | None:
    try:
        return repr(exc)
    except Exception:  # noqa: BLE001 - a broken __repr__ is not recorded
        return None


def _default_repr(name: str, args: tuple[Any, ...]) -> str:
    inner = repr(args[0]) if len(args) == 1 else repr(args)[1:-1].rstrip(",")
    return f"{name}({inner})"


_CLASS_CACHE: dict[tuple[str, str | None, str | None], type[ToolError]] = {}
_CLASS_LOCK = threading.Lock()


def recorded_class_name(type_name: str, module: str | None) -> str:
    """``module.qualname`` of a recorded class, or the bare name for builtins."""
    return type_name if module in (None, "builtins") else f"{module}.{type_name}"


def _attr_path(obj: Any, type_name: str) -> Any:
    for part in type_name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def script_name(main: Any) -> str | None:
    """The file name (``agent.py``) of ``main``, the ``__main__`` module, when it is a
    script run by its path, or ``None``."""
    where = getattr(main, "__file__", None)
    return os.path.basename(where) if isinstance(where, str) else None


def script_class(type_name: str, script: str | None) -> Any:
    """The class ``type_name`` (a qualified name) of a script run as ``__main__`` when it
    was recorded (an exception's, a codec's dataclass), or ``None``: in
    ``__main__`` itself (the same script run again), else in an already imported module
    loaded from a file named ``script`` (a test imported it). Never imports a script: its
    top level could run the agent."""
    found = _attr_path(sys.modules.get("__main__"), type_name)
    if isinstance(found, type) or script is None:
        return found
    for mod in list(sys.modules.values()):
        where = getattr(mod, "__file__", None)
        if isinstance(where, str) and os.path.basename(where) == script:
            found = _attr_path(mod, type_name)
            if isinstance(found, type):
                return found
    return None


def main_spec_name() -> str | None:
    """The importable name of ``__main__`` under ``python -m pkg.agent``, else ``None``."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = getattr(spec, "name", None)
    return name if isinstance(name, str) and name else None


def _find_class(type_name: str, module: str | None, script: str | None) -> tuple[type | None, str]:
    """The recorded exception class, or ``(None, why not)``."""
    if module in (None, "builtins"):
        found = getattr(builtins, type_name, None) if "." not in type_name else None
        if found is None:
            if module is None:
                return None, "no module was recorded for it and it is not a builtin"
            return None, "no such builtin"
    elif module == "__main__":
        found = script_class(type_name, script)
        if found is None:
            where = f"the script {script!r}" if script else "__main__"
            return None, f"{where} has no {type_name!r} here and no imported module of it has"
    elif module == main_spec_name():
        # the agent run as `python -m pkg.agent` again: its class is in __main__; importing
        # pkg.agent would run the agent's top level a second time (and hang on the lock)
        found = _attr_path(sys.modules.get("__main__"), type_name)
        if found is None:
            return None, f"__main__ ({module}) has no {type_name!r}"
    else:
        try:
            obj: Any = sys.modules.get(module) or importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - ImportError, or whatever the module raised
            return None, f"module {module!r} cannot be imported ({exc.__class__.__name__}: {exc})"
        found = _attr_path(obj, type_name)
        if found is None:
            return None, f"module {module!r} has no {type_name!r}"
    if not (isinstance(found, type) and issubclass(found, BaseException)):
        return None, "it is not an exception class"
    return found, ""


def _replayed_class(
    type_name: str, module: str | None, script: str | None = None
) -> type[ToolError]:
    key = (type_name, module, script)
    with _CLASS_LOCK:
        cached = _CLASS_CACHE.get(key)
        if cached is not None:
            return cached
        found, why = _find_class(type_name, module, script)
        cls: type[ToolError] = ToolError
        if found is not None:
            if issubclass(found, ToolError):
                cls = found
            else:
                try:
                    cls = _derived(found, type_name, module)
                except TypeError as exc:  # a final class, or a layout conflict
                    why = f"it cannot be subclassed ({exc})"
        if cls is ToolError:
            warnings.warn(
                f"replayed error class {recorded_class_name(type_name, module)!r} cannot be "
                f"rebuilt: {why}; raising a plain ToolError (an except clause for that "
                "class will not catch it)",
                ToolErrorClassWarning,
                stacklevel=5,
            )
        if module != "__main__":  # a script's class is looked up each time: a test may
            _CLASS_CACHE[key] = cls  # import (or drop) the script's module in between
        return cls


_DERIVED: dict[tuple[type, str, str | None], type[ToolError]] = {}


def _derived(found: type, type_name: str, module: str | None) -> type[ToolError]:
    """The class that derives from ``ToolError`` and ``found``, one per class.

    Raises:
        TypeError: ``found`` cannot be subclassed.
    """
    key = (found, type_name, module)
    cls = _DERIVED.get(key)
    if cls is None:
        cls = builtins.type(
            type_name.rsplit(".", 1)[-1],
            (ToolError, found),
            {
                "__new__": ToolError.__new__,
                "__init__": ToolError.__init__,
                "__str__": ToolError.__str__,
                "__repr__": ToolError.__repr__,
                "__reduce__": ToolError.__reduce__,
                "__module__": __name__,
                "__qualname__": f"ToolError[{recorded_class_name(type_name, module)}]",
            },
        )
        _DERIVED[key] = cls
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
