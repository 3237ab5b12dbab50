"""The secrets of a long JSON text held in a string (an MCP answer's text), found without
walking every node of it.

The secret scan parses such a text (``_secret_detectors.scan_string``) and scans each of
its strings under its key and each of its object keys; a screen then masks each secret
found everywhere its text occurs in the string (``masking.mask_value``), so a secret
under a ``password`` key at the end of a 2 MB text is also masked where the same text
shows at its start. That walk cost 0.19 s for 40k small objects, where the line
prefilter of ``check`` (``_secret_prefilter.lines_secret_free``: one RE2 pass over a JSON
document's bytes, a necessary condition of each source of hits) proves most of such a
text free in 10 ms. Here the prefilter is asked about the whole value, then only about
the parts it could not call free, split in turn, until a part is small enough to be
scanned as the scan does: the same set of secrets as the whole scan
(``tests/core/scan/test_json_text_secrets.py``), in the time of one pass when the text
holds none.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..format.jsonpath import iter_leaves
from ._secret_detectors import is_envelope, key_secrets, last_key, scan_string
from ._secret_prefilter import lines_secret_free

__all__ = ["json_text_secrets"]

#: a part whose compact JSON is at most this many bytes is scanned node by node: the
#: prefilter's call costs about what a few small nodes' scan does
SCAN_BYTES = 2048
#: a part the prefilter could not call free is split into this many parts (at most)
SPLIT = 16


def json_text_secrets(
    inner: dict[str, Any] | list[Any], depth: int = 0, *, first_parts: int = 1
) -> set[str]:
    """The secrets ``scan_string(text, key, depth)`` finds in a JSON text whose parsed
    value is ``inner`` (an object or a list), as a set of the secrets' texts: the same
    set, for any ``key`` that is not a secret-named one (such a key makes the whole text
    the secret; the caller sees to that first).

    Each part is framed as the scan sees its strings: a part reached through a list keeps
    the object key above it (``{key: part}``), since a string's key is the nearest object
    key above it. A binary envelope is never scanned, nor split.

    ``first_parts``: the prefilter is first asked about that many parts of the value, not
    the whole (the caller knows the whole is no use asking: ``masking.mask_long_text``
    asked about the text first); parts of about 32 KB each are the fewest bytes it reads
    again over a few secrets far apart."""
    found: set[str] = set()
    if first_parts > 1 and len(inner) > 1 and not is_envelope(inner):
        _scan_parts(_split(inner, None, depth, found, first_parts), depth, found)
    else:
        _scan_parts([(inner, None)], depth, found)
    return found


def _scan_parts(parts: list[tuple[Any, str | None]], depth: int, found: set[str]) -> None:
    """Adds to ``found`` the secrets of each ``(node, key)`` (an object or a list, and the
    nearest object key above it in the text): the parts the prefilter calls free are
    left, the others scanned when small, else split."""
    pending: list[tuple[Any, str | None]] = []
    docs: list[bytes] = []
    for node, key in parts:
        if is_envelope(node) or not node:
            continue
        try:
            doc = orjson.dumps(node if key is None else {key: node})
        except (orjson.JSONEncodeError, TypeError):  # too deep for orjson: scanned
            _scan_node(node, key, depth, found)
            continue
        pending.append((node, key))
        docs.append(doc)
    if not pending:
        return
    smaller: list[tuple[Any, str | None]] = []
    for (node, key), doc, free in zip(pending, docs, lines_secret_free(docs), strict=True):
        if free:
            continue
        if len(doc) <= SCAN_BYTES:
            _scan_node(node, key, depth, found)
        else:
            smaller.extend(_split(node, key, depth, found))
    if smaller:
        _scan_parts(smaller, depth, found)


def _split(
    node: Any, key: str | None, depth: int, found: set[str], parts: int | None = None
) -> list[tuple[Any, str | None]]:
    """``node`` (a non-empty object or list under ``key``) as ``parts`` smaller parts (at
    most; ``SPLIT`` by default), each under
    the key its strings are found under. A node of one child is stepped into: its key is
    scanned here (as ``key_secrets`` scans a key) and the child goes on alone."""
    items = list(node.items()) if isinstance(node, dict) else list(node)
    if len(items) == 1:
        if isinstance(node, dict):
            ((child_key, child),) = items
            for _, _, secret, _ in key_secrets({child_key: None}, ()):
                found.add(secret)
            key = child_key
        else:
            child = items[0]
        if isinstance(child, dict | list):
            return [(child, key)]
        if isinstance(child, str):
            found.update(s for s, _, _ in scan_string(child, key, depth + 1))
        return []
    size = -(-len(items) // (SPLIT if parts is None else parts))
    if isinstance(node, dict):
        return [(dict(items[i : i + size]), key) for i in range(0, len(items), size)]
    return [(items[i : i + size], key) for i in range(0, len(items), size)]


def _scan_node(node: Any, key: str | None, depth: int, found: set[str]) -> None:
    """The secrets of ``node`` as ``scan_string`` finds those of a JSON text's value: each
    string under its key (the nearest object key above it, ``key`` when it is reached
    through lists only) one level deeper, and the object keys."""
    for parts, leaf in iter_leaves(node, skip=is_envelope, only=(str,)):
        leaf_key = last_key(parts)
        found.update(s for s, _, _ in scan_string(leaf, key if leaf_key is None else leaf_key,
                                                  depth + 1))  # fmt: skip
    for _, _, secret, _ in key_secrets(node, ()):
        found.add(secret)
