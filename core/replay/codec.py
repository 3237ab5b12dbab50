"""Typed values through a cassette: the agent gets back the type the live tool returned.

A cassette holds JSON. A tool that returns a pydantic model, a dataclass, a ``datetime``,
a ``Decimal``, ``bytes``, a set or a tuple is refused by a plain recording
(``recorder.NotSerializable``). A **codec** (``Recorder(codec=)``, ``Replayer(codec=)``,
``wrap_dispatcher(codec=)``) turns such a value into plain JSON when it is recorded and
back into the same type when it is replayed (docs/format.md, "Typed values").

The protocol is two methods:

- ``encode(value) -> (data, types)``: ``data`` is plain JSON; ``types`` is ``None`` when
  ``value`` was JSON already, else a dict from a JSON path of ``data`` (``"$"``,
  ``"$.items[0].when"``, the project's path syntax) to the tag of the type that stood
  there (``"datetime"``, ``"dataclass:shop.orders:Order"``).
- ``decode(data, types) -> value``: the value again, from ``data`` and that dict.

The response is written as ``data`` (readable by ``diff``, ``check``, the app: a datetime
is its ISO string) and ``types`` beside it as the entry's ``response_types`` field, which
no key, digest or diff reads. Args are encoded the same way before they are digested (at
record and at replay), so the args digest is the one of their JSON form.

``TypeCodec`` is the built-in codec: ``datetime``, ``date``, ``time``, ``Decimal``,
``UUID``, ``bytes`` (the binary envelope ``{"_binary": true, "encoding": "base64",
"data"}``), ``set``/``frozenset`` (a list in the sorted order of its JSON), ``tuple`` and
named tuples, dataclasses (field by field, so their typed fields come back too) and
pydantic v2 models (``model_dump(mode="json")``, ``model_validate`` back; pydantic is
imported only by a model's own class). ``TypeCodec().with_type(cls, tag, to_json,
from_json)`` adds a type of the user's. A class that cannot be imported at replay, or a
value that does not decode, gives a ``CodecWarning`` and the plain JSON, never a crash.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import importlib
import json
import sys
import uuid
import warnings
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple, Protocol

from ..format.errors import main_spec_name, script_class, script_name
from ..format.jsonpath import child_path, parse_path

__all__ = ["BUILTIN_CODEC", "Codec", "CodecWarning", "TypeCodec", "TypeRule"]


class Codec(Protocol):
    """What a wrapper needs of a codec (see the module docstring)."""

    def encode(self, value: Any) -> tuple[Any, dict[str, str] | None]:
        """``(plain JSON, {path: tag} or None)``."""
        ...

    def decode(self, data: Any, types: Mapping[str, str] | None) -> Any:
        """The value ``encode`` was given, from its JSON and its types."""
        ...


class CodecWarning(UserWarning):
    """A recorded typed value could not be given back as its type (its class cannot be
    imported, or the JSON does not fit it): the agent gets the plain JSON. The message
    names the path and the tag."""


class TypeRule(NamedTuple):
    """A user's type: instances of ``cls`` are written as ``to_json(value)`` (plain JSON)
    under ``tag``, and read back with ``from_json(data)``."""

    cls: type
    tag: str
    to_json: Callable[[Any], Any]
    from_json: Callable[[Any], Any]


_SCALARS = (str, int, float, bool)
_BUILTIN_TAGS = frozenset(
    {"tuple", "set", "frozenset", "bytes", "datetime", "date", "time", "decimal", "uuid"}
)
#: the tags of classes rebuilt by import: ``KIND:module:qualname``
_CLASS_KINDS = ("dataclass", "pydantic", "namedtuple")


class TypeCodec:
    """The built-in codec, plus the user's types (``with_type``). Immutable.

    Args:
        rules: user types, looked at before the built-ins, in order.
    """

    def __init__(self, rules: tuple[TypeRule, ...] = ()) -> None:
        for rule in rules:
            if rule.tag in _BUILTIN_TAGS or rule.tag.split(":", 1)[0] in _CLASS_KINDS:
                raise ValueError(f"type tag {rule.tag!r} is a built-in tag; choose another")
        self.rules = rules
        self._by_tag = {rule.tag: rule for rule in rules}

    def with_type(
        self,
        cls: type,
        tag: str,
        to_json: Callable[[Any], Any],
        from_json: Callable[[Any], Any],
    ) -> TypeCodec:
        """A codec that also writes instances of ``cls`` as ``to_json(value)`` (which must
        be plain JSON) tagged ``tag``, and reads them back with ``from_json(data)``.

        Raises:
            ValueError: ``tag`` is a built-in tag or used already.
        """
        if tag in self._by_tag:
            raise ValueError(f"type tag {tag!r} is used already")
        return TypeCodec((*self.rules, TypeRule(cls, tag, to_json, from_json)))

    # -- encode --------------------------------------------------------------------------
    def encode(self, value: Any) -> tuple[Any, dict[str, str] | None]:
        """``value`` as plain JSON and the types it had, by path (``None``: it was JSON).
        A value this codec does not know is left as it is (the recorder then refuses it,
        naming its path)."""
        types: dict[str, str] = {}
        data = self._enc(value, "$", types)
        return data, (types or None)

    def _enc(self, v: Any, path: str, types: dict[str, str]) -> Any:
        t = type(v)
        if v is None or t in _SCALARS:
            return v
        if t is dict:
            return {
                k: self._enc(x, child_path(path, k), types) if type(k) is str else x
                for k, x in v.items()
            }
        if t is list:
            return [self._enc(x, child_path(path, i), types) for i, x in enumerate(v)]
        for rule in self.rules:
            if isinstance(v, rule.cls):
                types[path] = rule.tag
                return rule.to_json(v)
        tag, data = self._builtin(v, path, types)
        if tag is None:
            return v
        types[path] = tag
        return data

    def _builtin(self, v: Any, path: str, types: dict[str, str]) -> tuple[str | None, Any]:
        t = type(v)
        if t is tuple:
            return "tuple", [self._enc(x, child_path(path, i), types) for i, x in enumerate(v)]
        if t is set or t is frozenset:
            # a set has no order: its elements are written sorted by their JSON, so the
            # same set is the same line whatever the hash seed
            parts = []
            for x in v:
                sub: dict[str, str] = {}
                parts.append((self._enc(x, "$", sub), sub))
            parts.sort(key=lambda p: json.dumps(p[0], sort_keys=True, default=repr))
            for i, (_, sub) in enumerate(parts):
                here = child_path(path, i)
                types.update({here + where[1:]: tag for where, tag in sub.items()})
            return t.__name__, [x for x, _ in parts]
        if t is bytes:
            return "bytes", {
                "_binary": True,
                "encoding": "base64",
                "data": base64.b64encode(v).decode("ascii"),
            }
        if t is dt.datetime:
            return "datetime", v.isoformat()
        if t is dt.date:
            return "date", v.isoformat()
        if t is dt.time:
            return "time", v.isoformat()
        if t is Decimal:
            return "decimal", str(v)
        if t is uuid.UUID:
            return "uuid", str(v)
        if _is_pydantic_model(v):
            return f"pydantic:{_class_name(t)}", v.model_dump(mode="json")
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            fields = {
                f.name: self._enc(getattr(v, f.name), child_path(path, f.name), types)
                for f in dataclasses.fields(v)
            }
            return f"dataclass:{_class_name(t)}", fields
        if isinstance(v, tuple) and hasattr(t, "_fields"):  # a named tuple
            return f"namedtuple:{_class_name(t)}", [
                self._enc(x, child_path(path, i), types) for i, x in enumerate(v)
            ]
        return None, None

    # -- decode --------------------------------------------------------------------------
    def decode(self, data: Any, types: Mapping[str, str] | None) -> Any:
        """``data`` with each tagged path given back as its type, the deepest first (a
        dataclass gets its fields already decoded). A tag that cannot be decoded warns
        (``CodecWarning``) and leaves the JSON there."""
        if not types:
            return data
        places = []
        for where, tag in types.items():
            try:
                places.append((parse_path(where), where, tag))
            except ValueError:
                _warn(where, tag, "not a JSON path")
        places.sort(key=lambda p: len(p[0]), reverse=True)
        root = [data]  # a box, so "$" is replaced like any other place
        for segments, where, tag in places:
            parent: Any = root
            key: Any = 0
            try:
                for seg in segments:
                    parent = parent[key]
                    key = seg
                value = parent[key]
            except (KeyError, IndexError, TypeError):
                _warn(where, tag, "no such path in the recorded value")
                continue
            try:
                parent[key] = self._dec(value, tag)
            except Exception as exc:  # noqa: BLE001 - any failure: the JSON, and a warning
                _warn(where, tag, f"{type(exc).__name__}: {exc}")
        return root[0]

    def _dec(self, data: Any, tag: str) -> Any:
        rule = self._by_tag.get(tag)
        if rule is not None:
            return rule.from_json(data)
        simple = _SIMPLE_DECODERS.get(tag)
        if simple is not None:
            return simple(data)
        kind, _, name = tag.partition(":")
        if kind not in _CLASS_KINDS:
            raise ValueError("unknown type tag (a codec without this type)")
        cls = _import_class(name)
        if kind == "pydantic":
            return cls.model_validate(data)
        if kind == "namedtuple":
            return cls(*data)
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise TypeError(f"{name} is not a dataclass")
        fields = dataclasses.fields(cls)
        obj = cls(**{f.name: data[f.name] for f in fields if f.init and f.name in data})
        for f in fields:
            if not f.init and f.name in data:
                object.__setattr__(obj, f.name, data[f.name])  # a frozen dataclass too
        return obj


def _binary(data: Any) -> bytes:
    if not (isinstance(data, dict) and data.get("_binary") is True and "data" in data):
        raise ValueError("not a binary envelope")
    return base64.b64decode(data["data"], validate=True)


_SIMPLE_DECODERS: dict[str, Callable[[Any], Any]] = {
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
    "bytes": _binary,
    "datetime": dt.datetime.fromisoformat,
    "date": dt.date.fromisoformat,
    "time": dt.time.fromisoformat,
    "decimal": Decimal,
    "uuid": uuid.UUID,
}


def _is_pydantic_model(v: Any) -> bool:
    """Whether ``v`` is a pydantic v2 model, without importing pydantic (a value can only
    be one when pydantic is loaded already)."""
    if "pydantic" not in sys.modules:
        return False
    return any(
        c.__name__ == "BaseModel" and c.__module__.startswith("pydantic")
        for c in type(v).__mro__[1:]
    ) and hasattr(v, "model_dump")


def _class_name(cls: type) -> str:
    """``module:qualname``; for a class of a script run as ``python agent.py``,
    ``__main__:qualname:agent.py`` (found again as ``errors.script_class`` finds an
    exception class: in ``__main__``, or in an imported module of that file)."""
    module = cls.__module__
    if module == "__main__":
        main = sys.modules.get("__main__")
        spec = getattr(main, "__spec__", None)
        if getattr(spec, "name", None):  # run as python -m pkg.agent: its importable name
            module = spec.name  # type: ignore[union-attr]
        else:
            script = script_name(main)
            return f"__main__:{cls.__qualname__}" + (f":{script}" if script else "")
    return f"{module}:{cls.__qualname__}"


def _import_class(name: str) -> Any:
    module, _, rest = name.partition(":")
    qualname, _, script = rest.partition(":")
    if module == "__main__" or module == main_spec_name():
        # under python -m pkg.agent the class is in __main__: importing pkg.agent would run
        # the agent's top level a second time
        found = script_class(qualname, script or None)
        if found is None:
            where = f"the script {script!r}" if script else "__main__"
            raise LookupError(f"{where} has no {qualname!r} here and no imported module of it has")
        return found
    obj: Any = sys.modules.get(module) or importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _warn(where: str, tag: str, why: str) -> None:
    warnings.warn(
        f"replayed value at {where} ({tag}) is given back as its recorded JSON: {why}",
        CodecWarning,
        stacklevel=4,
    )


#: the built-in codec (``wrap_dispatcher(codec=BUILTIN_CODEC)``)
BUILTIN_CODEC = TypeCodec()
