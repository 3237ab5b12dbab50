"""JSON values as a cassette stores them: copies, the JSON round-trip check, and the one
encoding of non-finite numbers.

- ``json_copy(value)``: a new object tree equal to ``value`` (for the dicts, lists and
  scalars JSON gives, several times faster than ``copy.deepcopy``), so a replayed value
  can be changed by the agent without changing the cassette or a later replay.
- ``roundtrip_change(value)``: the first place where ``json.loads(json.dumps(value))``
  would not give ``value`` back (an int dict key becomes a string, a tuple a list, an
  ``IntEnum``/``str`` subclass a plain ``int``/``str``), so a recording can refuse it at
  record time instead of replaying something the live call never returned.
- Non-finite numbers (``NaN``, ``Infinity``, ``-Infinity``) are not JSON. Every file and
  machine-readable output this project writes is strict JSON, and writes them as
  MongoDB Extended JSON's ``{"$numberDouble": "NaN"}`` (``"Infinity"``, ``"-Infinity"``):
  an object, so no reader can take it for ``null`` or for a string. ``encode_nonfinite``
  and ``decode_nonfinite`` convert; ``dumps_strict`` writes strict JSON.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from typing import Any

from .jsonpath import child_path

#: the key of the one-key object that stands for a non-finite number
NONFINITE_KEY = "$numberDouble"
#: its bytes in a line: a line without them needs no decoding
NONFINITE_MARK = b'"$numberDouble"'
_NONFINITE_TEXT = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def json_copy(value: Any) -> Any:
    """A copy of a JSON value: new dicts and lists all the way down (scalars are shared,
    being immutable), at any depth. Anything else is copied with ``copy.deepcopy``."""
    try:
        return _copy(value)
    except RecursionError:  # deeper than the interpreter's stack: the iterative walk
        return _copy_deep(value)


def _copy(value: Any) -> Any:
    t = type(value)
    if t is dict:
        return {k: _copy(v) for k, v in value.items()}
    if t is list:
        return [_copy(v) for v in value]
    if t in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)


def _copy_deep(value: Any) -> Any:
    if type(value) not in (dict, list):
        return _copy(value)
    root: Any = {} if type(value) is dict else []
    stack = [(value, root)]
    while stack:
        src, dst = stack.pop()
        items = src.items() if type(src) is dict else enumerate(src)
        for k, v in items:
            t = type(v)
            if t is dict or t is list:
                child: Any = {} if t is dict else []
                stack.append((v, child))
            elif t in (str, int, float, bool) or v is None:
                child = v
            else:
                child = copy.deepcopy(v)
            if type(dst) is dict:
                dst[k] = child
            else:
                dst.append(child)
    return root


def _child(parent: str, key: Any) -> str:
    return child_path(
        parent, key if isinstance(key, int) and not isinstance(key, bool) else str(key)
    )


def roundtrip_change(value: Any, path: str = "$") -> tuple[str, str] | None:
    """Where JSON would change ``value``: ``(path, what happens)`` for the first such place
    (depth first, in the value's own order), or ``None`` when ``json.loads(json.dumps(value))``
    gives back an equal value of the same types.

    Reported: a dict key that is not a ``str`` (``"int key 12 becomes the string '12'"``),
    a tuple (becomes a list), a subclass of ``str``/``int``/``float``/``dict``/``list``
    (an enum member included: loses its class), and a value JSON cannot write at all
    (``set``, ``bytes``, ``datetime``...: ``"not JSON data"``). Non-finite floats are kept
    (written as ``{"$numberDouble": ...}`` and read back as floats).
    """
    stack: list[tuple[str, Any]] = [(path, value)]
    seen: set[int] = set()  # a container met again (shared, or circular) is checked once
    while stack:
        where, v = stack.pop()
        t = type(v)
        if v is None or t in (str, int, float, bool):
            continue
        if t is dict or t is list:
            if id(v) in seen:
                continue
            seen.add(id(v))
        if t is dict:
            children = []
            for k, child in v.items():
                if type(k) is not str:
                    return _child(where, k), _key_change(k)
                children.append((_child(where, k), child))
            stack.extend(reversed(children))
            continue
        if t is list:
            stack.extend(reversed([(_child(where, i), c) for i, c in enumerate(v)]))
            continue
        return where, _value_change(v)
    return None


def _key_change(k: Any) -> str:
    """What JSON does to the dict key ``k``, which is not a plain ``str``."""
    if isinstance(k, str):
        return f"the key {k!r} ({type(k).__name__}) becomes a plain str"
    if k is None or isinstance(k, (bool, int, float)):
        return f"the {type(k).__name__} key {k!r} becomes the string {json.dumps(json.dumps(k))}"
    return f"the {type(k).__name__} key {k!r} is not a JSON key"


def _value_change(v: Any) -> str:
    """What JSON does to ``v``, which is not ``None``, a plain scalar, dict or list: a
    tuple becomes a list, a subclass loses its class, anything else is not JSON data."""
    t = type(v)
    if t is tuple:
        return "a tuple becomes a list"
    for base in (bool, str, int, float, dict, list, tuple):
        if isinstance(v, base):
            return (
                f"a {t.__module__}.{t.__qualname__} ({base.__name__} subclass) loses its "
                f"class and comes back as a plain {base.__name__}"
            )
    return f"a {t.__module__}.{t.__qualname__} is not JSON data"


def encode_nonfinite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``{"$numberDouble": "NaN"}``
    (``"Infinity"``, ``"-Infinity"``). Returns ``value`` itself when it holds none."""
    if not has_nonfinite(value):
        return value
    return _map_floats(value)


def has_nonfinite(value: Any) -> bool:
    """``True`` when ``value`` holds a NaN or an infinity anywhere."""
    return any(type(v) is float and not math.isfinite(v) for v in _walk(value))


def _walk(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            yield v


def _map_floats(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return {NONFINITE_KEY: text}
    if isinstance(value, dict):
        return {k: _map_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_map_floats(v) for v in value]
    return value


def is_nonfinite_object(value: Any) -> bool:
    """``True`` for ``{"$numberDouble": "NaN" | "Infinity" | "-Infinity"}``."""
    return (
        type(value) is dict
        and len(value) == 1
        and value.get(NONFINITE_KEY, None) in _NONFINITE_TEXT
    )


def decode_nonfinite(value: Any) -> Any:
    """The inverse of ``encode_nonfinite``: every ``{"$numberDouble": ...}`` object becomes
    its float. Returns ``value`` itself when it holds none."""
    if not _has_encoded(value):
        return value
    return _unmap(value)


def _has_encoded(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            if is_nonfinite_object(v):
                return True
            stack.extend(v.values())
        elif type(v) is list:
            stack.extend(v)
    return False


def _unmap(value: Any) -> Any:
    if type(value) is dict:
        if is_nonfinite_object(value):
            return _NONFINITE_TEXT[value[NONFINITE_KEY]]
        return {k: _unmap(v) for k, v in value.items()}
    if type(value) is list:
        return [_unmap(v) for v in value]
    return value


def dumps_strict(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` that writes strict JSON: non-finite floats as
    ``{"$numberDouble": ...}`` (``allow_nan`` is off, so nothing else slips through).
    The value is walked for them only when the encoder refuses one (issue 31: the walk
    before every dump was a third of a server message's keeping in ``mcp record``)."""
    try:
        return json.dumps(value, allow_nan=False, **kwargs)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
    return json.dumps(encode_nonfinite(value), allow_nan=False, **kwargs)
