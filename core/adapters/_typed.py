"""A tool's return annotation as a pydantic ``TypeAdapter``: how the adapters of frameworks
built on pydantic (pydantic-ai, the Agents SDK) write a typed return value as JSON and read
it back as the same type (a model, a dataclass, a datetime, a Decimal), the way the
framework itself validates the tool's arguments. Until ``wrap_dispatcher(codec=...)``
exists, this is the adapters' codec."""

from __future__ import annotations

import dataclasses
import functools
import typing
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import TzInfo


@functools.lru_cache(maxsize=256)
def return_adapter(function: Any) -> TypeAdapter[Any] | None:
    """The ``TypeAdapter`` of ``function``'s return annotation, or ``None`` (no
    annotation, ``Any``, or one that cannot be resolved: the value is then plain JSON)."""
    try:
        returns = typing.get_type_hints(function).get("return")
    except Exception:  # noqa: BLE001 - a forward reference that does not resolve
        return None
    if returns is None or returns is Any:
        return None
    try:
        return TypeAdapter(returns)
    except Exception:  # noqa: BLE001 - a type pydantic has no schema for
        return None


def dumped(adapter: TypeAdapter[Any], value: Any) -> Any:
    """``value`` as JSON data under ``adapter`` (pydantic's JSON mode)."""
    return adapter.dump_python(value, mode="json")


def loaded(adapter: TypeAdapter[Any], response: Any) -> Any:
    """``response`` (JSON data) read back under ``adapter``, or as it is when it does not
    validate (a tool that returned an error text instead of its type)."""
    try:
        return _stdlib_offsets(adapter.validate_json(orjson.dumps(response)))
    except ValidationError:
        return response


def is_plain_json(value: Any) -> bool:
    """Whether ``value`` is made only of what JSON reads back as it is (dict with str keys,
    list, str, int, float, bool, None): not a value a codec has given its types back."""
    if value is None or type(value) in (str, int, float, bool):
        return True
    if type(value) is list:
        return all(is_plain_json(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and is_plain_json(v) for k, v in value.items())
    return False


def _stdlib_offsets(value: Any) -> Any:
    """``value`` with each datetime's pydantic ``TzInfo`` (what pydantic reads ``Z`` and
    ``+02:00`` as) made the standard library's ``timezone`` of the same offset: a live
    ``datetime(..., tzinfo=UTC)`` comes back with ``tzinfo=UTC`` and the same ``repr``
    (a framework that shows the model ``str()`` of a value shows the same text). Models
    and dataclasses are changed in place (they were just made from the cassette)."""
    if isinstance(value, datetime):
        if isinstance(value.tzinfo, TzInfo):
            offset = value.utcoffset() or timedelta(0)
            return value.replace(tzinfo=UTC if not offset else timezone(offset))
        return value
    if isinstance(value, BaseModel):
        for name, item in vars(value).items():
            object.__setattr__(value, name, _stdlib_offsets(item))
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            object.__setattr__(value, f.name, _stdlib_offsets(getattr(value, f.name)))
        return value
    if isinstance(value, list):
        return [_stdlib_offsets(v) for v in value]
    if isinstance(value, dict):
        return {k: _stdlib_offsets(v) for k, v in value.items()}
    if type(value) is tuple:
        return tuple(_stdlib_offsets(v) for v in value)
    return value
