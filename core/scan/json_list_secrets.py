"""The secrets of a long JSON list held in a string (an MCP answer's 40k objects), found
from the bytes of its items, without parsing the whole text: the same set as
``json_text_secrets`` of its parsed value.

``masking.mask_long_text`` asked the prefilter about the whole text (6 ms for 3.4 MB),
then, when a secret was in it, parsed it (orjson, 7-10 ms) and asked about parts of the
parsed value written again (11 ms): about 30 ms a side of a drift, the B side paying it
all again. Here msgspec cuts the text into its items (``msgspec.Raw``: each item checked,
none built: 2.4 ms), parts of them are asked of the prefilter as they are written in the
text (a plain line: each text its own bytes), and only the
parts it cannot call free are parsed and scanned (``json_text_secrets``). What each part
holds is kept by its bytes: B's parts are A's but for the one that changed.

The text must be one the scan parses (``orjson.loads``). msgspec refuses what orjson
refuses (``tests/core/scan/test_json_list_secrets.py``) but a float past 1.8e308
(``1e999``, or 309 digits) and nesting past 1,000 levels (which msgspec refuses, orjson
not: the old way then). The prefilter's pass over each part says whether it holds a digit
before an ``e`` or 300 digits in a row (``NUMBER_RISK``): such a text is left to the parse.
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock

import msgspec
import orjson

from ._secret_prefilter import NUMBER_RISK, PLAIN, free_of, json_text_set, runs_free
from .json_text_secrets import json_text_secrets

__all__ = ["json_list_secrets"]

_ITEMS = msgspec.json.Decoder(list[msgspec.Raw])

#: what each part met last holds, by its bytes (the dict hashes them once: 0.9 ms for
#: 3.4 MB, SHA-256 2.4 ms; a hit is confirmed by comparing the bytes): its secrets, or
#: ``None`` for a part with a number orjson may refuse. At most ``_SEEN_BYTES`` of parts
#: kept: the two sides of a drift of the longest JSON text the scan parses
_SEEN: OrderedDict[bytes, frozenset[str] | None] = OrderedDict()
_SEEN_BYTES = 24_000_000
_SEEN_LOCK = Lock()


def json_list_secrets(text: str, parts: int) -> set[str] | None:
    """``json_text_secrets(orjson.loads(text), first_parts=parts)`` of a JSON text that is
    a list of two items or more: the secrets ``scan_string(text, key)`` finds in it, for
    any ``key`` that names no secret. ``None``, for the caller to parse the text, when it
    is no such list, holds a backslash or a NUL, is not UTF-8, is refused by msgspec, or
    may hold a number orjson refuses (see the module)."""
    if not text.lstrip().startswith("["):
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    if 0x5C in data or 0 in data:  # an escape: its texts are not its bytes
        return None
    try:
        items = _ITEMS.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    if len(items) < 2:
        return None
    size = -(-len(items) // parts)
    docs = [b"[" + b",".join(items[i : i + size]) + b"]" for i in range(0, len(items), size)]
    held: list[frozenset[str] | None] = []
    todo: list[int] = []
    with _SEEN_LOCK:
        for k, doc in enumerate(docs):
            if doc in _SEEN:
                _SEEN.move_to_end(doc)
                held.append(_SEEN[doc])
            else:
                held.append(frozenset())
                todo.append(k)
    for k in todo:
        held[k] = _part_secrets(docs[k])
    _keep([(docs[k], held[k]) for k in todo])
    found: set[str] = set()
    for secrets in held:
        if secrets is None:
            return None
        found |= secrets
    return found


def _keep(parts: list[tuple[bytes, frozenset[str] | None]]) -> None:
    """Keeps what each part holds, the oldest dropped past ``_SEEN_BYTES`` (counted
    afresh: a few hundred parts)."""
    with _SEEN_LOCK:
        _SEEN.update(parts)
        size = sum(map(len, _SEEN))
        while size > _SEEN_BYTES:
            doc, _ = _SEEN.popitem(last=False)
            size -= len(doc)


def _part_secrets(doc: bytes) -> frozenset[str] | None:
    """What ``json_text_secrets`` finds in the list ``doc`` (JSON, no backslash, no NUL):
    nothing when the prefilter calls it free (``lines_secret_free([doc])``: a plain line,
    each text its own bytes), else the scan of its parsed value; ``None`` when it may hold
    a number orjson refuses."""
    found = json_text_set()
    if found is None:
        return None
    matcher, meanings = found
    hits = matcher._set.Match(doc)
    if hits and any(meanings[i] == NUMBER_RISK for i in hits):
        return None
    if (not hits or free_of(doc, hits, meanings, PLAIN)) and runs_free(doc, PLAIN):
        return frozenset()
    try:
        node = orjson.loads(doc)
    except orjson.JSONDecodeError:
        return None
    return frozenset(json_text_secrets(node))
