"""The standard library's JSON parser, made safe for hostile input.

``json.loads`` raises ``RecursionError`` (not ``ValueError``) on deeply nested arrays or
objects, which every caller would have to know about; ``loads_std`` turns it into a
``JSONTooDeep`` (a ``ValueError``), so "bad JSON" is one exception everywhere.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

#: A UTF-8 byte order mark, which some editors write at the start of a text file.
UTF8_BOM = b"\xef\xbb\xbf"


class JSONTooDeep(ValueError):
    """JSON nested deeper than the parser can follow."""

    def __init__(self) -> None:
        super().__init__("nested too deeply (more than about 1000 levels of arrays/objects)")
        self.msg = str(self)


def sorted_json_bytes(value: Any) -> bytes:
    """``value`` as compact JSON with sorted keys, as UTF-8 bytes: orjson's output, or the
    standard library's (``json.dumps(value, sort_keys=True)``) for what orjson cannot write
    (integers past 64 bits). For in-process equality and hashing only: it is not the
    canonical JSON of the args digest (see ``digest.canonical_json``).

    Raises:
        TypeError, ValueError: ``value`` is not JSON data.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # integers past 64 bits
        return json.dumps(value, sort_keys=True).encode()


def loads_std(text: str | bytes) -> Any:
    """``json.loads(text)`` (bytes are decoded as UTF-8), raising ``JSONTooDeep`` instead
    of ``RecursionError``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        return json.loads(text)
    except RecursionError:
        raise JSONTooDeep() from None
