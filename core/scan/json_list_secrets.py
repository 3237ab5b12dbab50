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
holds is kept with the text's layout (where each part starts, for a list written with
``,`` or ``, `` between its items): B, read after A, takes A's answers for the parts it
holds byte for byte up to the one where it first differs, and has only the rest of its
items cut by msgspec (a 3.4 MB side: 3 ms of msgspec and 1 ms of hashing its parts, now
a comparison of its bytes).

The text must be one the scan parses (``orjson.loads``). msgspec refuses what orjson
refuses (``tests/core/scan/test_json_list_secrets.py``) but a float past 1.8e308
(``1e999``, or 309 digits) and nesting past 1,000 levels (which msgspec refuses, orjson
not: the old way then); msgspec's nesting limit is the interpreter's recursion limit, so
under a raised one a text past orjson's 1,024 levels is checked (``_depth_refused_alike``).
The prefilter's pass over each part says whether it holds a digit before an ``e`` or 300
digits in a row (``NUMBER_RISK``): such a text is left to the parse.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from dataclasses import dataclass, replace
from threading import Lock

import msgspec
import orjson

from ._secret_prefilter import NUMBER_RISK, PLAIN, free_of, json_text_set, runs_free
from .json_text_secrets import json_text_secrets

__all__ = ["json_list_secrets"]

_ITEMS = msgspec.json.Decoder(list[msgspec.Raw])
#: the separators a list's items may be written with for its parts to be reused by
#: another text (``_Layout``): ``orjson``'s and ``json``'s
_SEPS = (b",", b", ")


@dataclass(frozen=True)
class _Layout:
    """A list text met last, written ``b"[" + sep.join(items) + b"]"``: its UTF-8 bytes,
    where each part starts in them (``starts``, byte offsets, the end of the text last),
    how many items a part holds (``size``, the last part fewer) and what each part holds
    (``held``)."""

    data: bytes
    sep: bytes
    size: int
    starts: tuple[int, ...]
    held: tuple[frozenset[str] | None, ...]


#: the last list texts met (the two sides of a drift, the step screen's copy), newest
#: last: a text that starts as one of them, part for part, reads those parts' answers
#: (a comparison of bytes: no parse, no hash) and has only the rest of its items cut by
#: msgspec (``_reused``)
_SEEN: OrderedDict[int, _Layout] = OrderedDict()
_SEEN_KEPT = 4
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
    if not _depth_refused_alike(data):
        return None
    layout: _Layout | None
    reused = _reused(data)
    if reused is not None:
        held, docs, layout = reused
    else:
        try:
            items = _ITEMS.decode(data)
        except (msgspec.DecodeError, RecursionError):
            return None
        if len(items) < 2:
            return None
        size = -(-len(items) // parts)
        held, docs = [], _docs(items, size)
        layout = _layout(data, items, size, docs)
    for doc in docs:
        held.append(_part_secrets(doc))
    if layout is not None:
        _keep(replace(layout, held=tuple(held)))
    found: set[str] = set()
    for secrets in held:
        if secrets is None:
            return None
        found |= secrets
    return found


#: orjson refuses a text nested deeper than this (its ``recursion limit``); msgspec's
#: limit is the interpreter's recursion limit (1,000 by default, less the stack in use)
_ORJSON_DEPTH = 1024


def _depth_refused_alike(data: bytes) -> bool:
    """Whether msgspec refuses ``data`` when its nesting is past what orjson takes: always
    under a recursion limit of at most ``_ORJSON_DEPTH``; under a higher one (hypothesis
    raises it, so may a user's program), when ``data`` has no more brackets than that, or
    orjson parses it (only then: 10 ms for 3.4 MB)."""
    if sys.getrecursionlimit() <= _ORJSON_DEPTH:
        return True
    if data.count(b"[") + data.count(b"{") <= _ORJSON_DEPTH:
        return True
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return True


def _docs(items: list[msgspec.Raw], size: int) -> list[bytes]:
    """The parts of ``items``, ``size`` items each, each written as a list."""
    return [b"[" + b",".join(items[i : i + size]) + b"]" for i in range(0, len(items), size)]


def _layout(data: bytes, items: list[msgspec.Raw], size: int, docs: list[bytes]) -> _Layout | None:
    """``data``'s layout (``held`` left empty), or ``None`` when it is not written
    ``b"[" + sep.join(items) + b"]"`` for a separator of ``_SEPS`` (compared a part at a
    time: one join of the whole text is a fresh 3 MB, its pages faulted in)."""
    if data[:1] != b"[" or data[-1:] != b"]":
        return None
    for sep in _SEPS:
        starts = [1]  # where each part starts: after "[", after the separator before it
        for k, i in enumerate(range(0, len(items), size)):
            at = starts[-1]
            part = docs[k][1:-1] if sep == b"," else sep.join(items[i : i + size])
            if not data.startswith(part, at):
                break
            starts.append(at + len(part) + len(sep))  # the last: "]" then the end
        if len(starts) > len(docs) and _written_so(data, starts, sep):
            starts[-1] = len(data)
            return _Layout(data, sep, size, tuple(starts), ())
    return None


def _written_so(data: bytes, starts: list[int], sep: bytes) -> bool:
    """Whether ``sep`` stands before each part but the first, and ``"]"`` ends the text
    right after the last part (``starts[-1]``: where a part after it would start)."""
    if starts[-1] - len(sep) + 1 != len(data):
        return False
    return all(data.startswith(sep, at - len(sep)) for at in starts[1:-1])


def _reused(
    data: bytes,
) -> tuple[list[frozenset[str] | None], list[bytes], _Layout] | None:
    """For a text whose first parts are those of a layout kept (the same bytes, part for
    part, separator included, up to where the next part starts): those parts' answers,
    the rest of its items (cut by msgspec, ``size`` items a part) written as lists, and
    its own layout (``held`` left empty). ``None`` when no layout kept shares a part with
    it, or the rest is not ``sep.join(items) + b"]"`` of one item or more."""
    if data[:1] != b"[":  # a layout's text starts so: its first part at 1
        return None
    with _SEEN_LOCK:
        kept = list(reversed(_SEEN.values()))
    for old in kept:
        starts, sep = old.starts, old.sep
        same = 0  # the parts of ``old`` that ``data`` holds as they are
        while same < len(starts) - 2:  # never the last part (its "]" is the end)
            at, end = starts[same], starts[same + 1]
            if end > len(data) or not data.startswith(old.data[at:end], at):
                break
            same += 1
        if not same:
            continue
        at = starts[same]
        try:
            rest = _ITEMS.decode(b"[" + data[at:])
        except (msgspec.DecodeError, RecursionError):
            return None
        if not rest or data[at:] != sep.join(rest) + b"]":
            return None
        lengths = list(map(len, rest))
        new = list(starts[: same + 1])
        for i in range(0, len(rest), old.size):
            new.append(new[-1] + sum(lengths[i : i + old.size]) + len(sep) * old.size)
        new[-1] = len(data)
        layout = _Layout(data, sep, old.size, tuple(new), ())
        return list(old.held[:same]), _docs(rest, old.size), layout
    return None


def _keep(layout: _Layout) -> None:
    """Keeps ``layout``, the last ``_SEEN_KEPT`` only."""
    with _SEEN_LOCK:
        _SEEN[id(layout.data)] = layout
        _SEEN.move_to_end(id(layout.data))
        while len(_SEEN) > _SEEN_KEPT:
            _SEEN.popitem(last=False)


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
