"""The standard library's JSON parser, made safe for hostile input.

``json.loads`` raises ``RecursionError`` (not ``ValueError``) on deeply nested arrays or
objects, which every caller would have to know about; ``loads_std`` turns it into a
``JSONTooDeep`` (a ``ValueError``), so "bad JSON" is one exception everywhere.
"""

from __future__ import annotations

import json
from typing import Any

#: A UTF-8 byte order mark, which some editors write at the start of a text file.
UTF8_BOM = b"\xef\xbb\xbf"


class JSONTooDeep(ValueError):
    """JSON nested deeper than the parser can follow."""

    def __init__(self) -> None:
        super().__init__("nested too deeply (more than about 1000 levels of arrays/objects)")
        self.msg = str(self)


def loads_std(text: str | bytes) -> Any:
    """``json.loads(text)`` (bytes are decoded as UTF-8), raising ``JSONTooDeep`` instead
    of ``RecursionError``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        return json.loads(text)
    except RecursionError:
        raise JSONTooDeep() from None
