"""How a secret is shown and named without showing it: its hash (what findings,
placeholders and ``allow_hashes`` carry) and its mask. Values are never shown whole:
``mask`` keeps at most 4 characters and a quarter of the value; ``mask_value`` masks every
secret in a value for a screen."""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from threading import Lock
from typing import Any

import orjson

from ..format.jsonpath import Part, parse_path
from ..format.textspot import first_difference
from ._secret_detectors import is_secret_key, key_secrets, string_leaf_secrets
from ._secret_prefilter import lines_secret_free
from .json_list_secrets import json_list_secrets
from .json_text_secrets import SCAN_BYTES, SPLIT, json_text_secrets
from .masked_text import MaskedText
from .string_secrets import (
    PROVE_FREE_MIN,
    json_container,
    prefilter_free,
    string_secrets,
    text_secrets,
)

__all__ = [
    "hash8",
    "key_at",
    "long_text_secrets",
    "mask",
    "mask_at",
    "mask_found",
    "mask_json_text",
    "mask_labelled",
    "mask_long_text",
    "mask_part",
    "mask_text",
    "mask_value",
    "masked_long",
    "masked_long_found",
    "value_hash",
]


def value_hash(secret: str) -> str:
    """SHA-256 (hex) over the secret's UTF-8 text."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def hash8(secret: str) -> str:
    """The first 8 hex digits of ``value_hash``: what findings show and placeholders carry."""
    return value_hash(secret)[:8]


def mask(secret: str) -> str:
    """The secret with at most 4 characters (and at most a quarter of it) left, and its
    length: ``"ghp_…(40 chars)"``, ``"…(6 chars)"``. Never the whole value."""
    keep = min(4, len(secret) // 4)
    shown = "".join(c if c.isprintable() else "?" for c in secret[:keep])
    return f"{shown}…({len(secret)} chars)"


#: a value masked already (``«ghp_…(40 chars)»``, as a replay report keeps a recorded
#: secret): shown as it is, not masked again into ``««ghp…(17 chars)»``
_MASKED = re.compile(r"«[^«»]{0,4}…\(\d+ chars\)»")


def mask_value(value: Any, key: str | None = None) -> Any:
    """``value`` for display: each secret in it (the scan without config; ``key``: the key
    a bare string was found under) replaced by ``mask(secret)`` in guillemets, so a screen
    never shows one whole. Returns ``value`` itself when nothing is a secret."""
    return mask_found(value, key)[0]


def mask_found(value: Any, key: str | None = None) -> tuple[Any, list[str]]:
    """``(mask_value(value, key), the secrets it masked)``: the secrets' texts, each once,
    for a drift's other side (``pair_masking``); ``[]`` and ``value`` itself when nothing
    is a secret. One scan, the one ``mask_value`` makes."""
    if isinstance(value, str):
        # a long string first asked of the prefilter (``string_secrets``): the same secrets
        secrets = [s for s, _ in string_secrets(value, key) if not _MASKED.fullmatch(s)]
        if not secrets:
            return value, []
        long = len(value) >= PROVE_FREE_MIN
        masked = _mask_long_text(value, secrets) if long else _mask_text(value, secrets)
        return masked, _once(secrets)
    by_leaf: dict[tuple[Part, ...], list[str]] = {}
    for parts, secret, _, _ in string_leaf_secrets(value, ()):
        if not _MASKED.fullmatch(secret):
            by_leaf.setdefault(parts, []).append(secret)
    by_key: dict[tuple[tuple[Part, ...], str], list[str]] = {}
    for parts, key, secret, _ in key_secrets(value, ()):
        if not _MASKED.fullmatch(secret):
            by_key.setdefault((parts, key), []).append(secret)
    for parts, secrets in by_leaf.items():
        value = _replace_at(value, parts, lambda leaf, s=secrets: _mask_text(leaf, s))
    # an object key that is a token: renamed in place (its order kept), deepest first so
    # the paths of the keys above still lead to it
    for (parts, key), secrets in sorted(by_key.items(), key=lambda kv: -len(kv[0][0])):
        value = _rename_key_at(value, parts, key, _mask_text(key, secrets))
    found = [s for group in (*by_leaf.values(), *by_key.values()) for s in group]
    return value, _once(found)


def _once(secrets: list[str]) -> list[str]:
    """``secrets`` without repeats, in their first order."""
    return list(dict.fromkeys(secrets))


def mask_labelled(text: str, key: str | None) -> str:
    """``mask_value(text, key)`` of a string (the same secrets, the same places) with each
    mask labelled with its secret's hash as ``check``'s findings write it:
    ``«ghp_…(40 chars), hash 1a2b3c4d»``. Two different secrets of one shape then read
    apart (a drift inside a secret: ``diff``, the app's drift line); the hash is what a
    finding shows and ``allow_hashes`` takes, never the secret's characters."""
    secrets = [s for s, _ in string_secrets(text, key) if not _MASKED.fullmatch(s)]
    if not secrets:
        return text
    return _mask_long_text(text, secrets, labelled=True)


def mask_part(value: Any) -> Any:
    """``mask_value(value)``, the same value, for a value of many nodes (the part of an
    answer a screen shows: 2,000 lines of it expanded): an object or a list is first
    asked of ``check``'s line prefilter as orjson writes it (one RE2 pass; a proof that
    the scan of its strings, each under its key, and of its object keys finds nothing, as
    ``json_text_secrets`` asks it of a part), and returned as it is when the prefilter
    calls it free, not scanned a string at a time (2,000 strings: 3 ms). Anything else,
    or what orjson cannot write, or a maybe, goes to ``mask_value``."""
    if isinstance(value, dict | list) and value:
        try:
            doc = orjson.dumps(value)
        except (orjson.JSONEncodeError, TypeError):
            doc = None
        if doc is not None and lines_secret_free([doc])[0]:
            return value
    return mask_value(value)


def mask_json_text(
    text: str, inner: dict[str, Any] | list[Any], key: str | None, *, asked: bool = False
) -> str | None:
    """``mask_value(text, key)`` of a JSON text (an object or a list) whose parsed value is
    ``inner`` (``orjson.loads(text)``, as the scan parses it): each secret the scan finds
    anywhere in it masked everywhere its text occurs, found by ``json_text_secrets`` (the
    prefilter's proof over the text's parts; the same set as the scan of every node): a
    screen that shows the start of a 2 MB JSON text (``tui/text/shown.py``) gets it in
    the time of one pass over its bytes when it holds no secret. ``None`` when ``key``
    names a secret (the whole text may be the secret), left to ``mask_value``.
    ``asked``: the prefilter could not prove the whole text free (``prefilter_free``): it
    is asked about parts of about 32 KB of it first."""
    masked = _masked_json_text(text, inner, key, asked)
    return masked if masked is None or isinstance(masked, str) else str(masked)


def _masked_json_text(
    text: str, inner: dict[str, Any] | list[Any], key: str | None, asked: bool
) -> str | MaskedText | None:
    """``mask_json_text`` with its masked text not built (``MaskedText``)."""
    if key is not None and is_secret_key(key):
        return None
    found = json_text_secrets(inner, first_parts=_parts(text) if asked else 1)
    secrets = [s for s in found if not _MASKED.fullmatch(s)]
    return _masked_text(text, secrets) if secrets else text


def mask_long_text(text: str, key: str | None) -> str | None:
    """``mask_value(text, key)`` of a long string found under ``key``, the same string:
    ``text`` itself when it holds no secret, else the whole text with each secret found
    anywhere in it masked everywhere it occurs; ``None`` when ``key`` names a secret (the
    whole text is the secret), left to ``mask_value``. How its secrets are found:
    ``long_text_secrets``."""
    masked = masked_long(text, key)
    return masked if masked is None or isinstance(masked, str) else str(masked)


def masked_long(text: str, key: str | None) -> str | MaskedText | None:
    """``mask_long_text(text, key)`` with the masked text not built: ``text`` itself when
    it holds no secret, ``None`` when ``key`` names a secret, else a ``MaskedText`` whose
    ``str`` is ``mask_long_text``'s answer: a screen reads the length, the part it shows
    and the first difference of two (``masked_text``), not the whole text masked (a 24 MB
    answer: 44 ms a side to build, two 69 MB strings to compare)."""
    found = masked_long_found(text, key)
    return None if found is None else found[0]


def masked_long_found(text: str, key: str | None) -> tuple[str | MaskedText, list[str]] | None:
    """``(masked_long(text, key), the secrets it masked)``, each once (for a drift's other
    side: ``pair_masking``); ``None`` as there."""
    secrets = long_text_secrets(text, key)
    if secrets is None:
        return None
    return (_masked_text(text, secrets) if secrets else text), secrets


def long_text_secrets(text: str, key: str | None) -> list[str] | None:
    """The secrets ``mask_long_text(text, key)`` masks (``[]``: none; ``None`` when ``key``
    names a secret). A JSON list the scan parses is read from its items' bytes
    (``json_list_secrets``: parts of them asked of the prefilter as written, only those
    it cannot call free parsed; the parts of the text masked before kept, so B's are
    A's), not parsed whole. Another text that may be a JSON object or list
    (``json_container``) is first asked of the prefilter whole, before it is parsed: its
    answer holds however the scan reads the text; a JSON object or list the scan parses
    then has its secrets found without walking each node (``json_text_secrets``, as
    ``mask_json_text``), any other text a piece at a time
    (``string_secrets.text_secrets``: the prefilter asked about each piece, the pieces it
    cannot call free scanned)."""
    if key is not None and is_secret_key(key):
        return None
    inner: Any = None
    if json_container(text):  # maybe what the scan parses: not a text that cannot be JSON
        # a list: its parts asked as they are written, parsed only where a secret may be
        found = json_list_secrets(text, _parts(text))
        if found is not None:
            return _once([s for s in found if not _MASKED.fullmatch(s)])
        if prefilter_free(text, key):
            return []  # free, however the scan reads it
        try:
            inner = orjson.loads(text)
        except orjson.JSONDecodeError:
            inner = None
    if isinstance(inner, dict | list):
        found = json_text_secrets(inner, first_parts=_parts(text))
        return _once([s for s in found if not _MASKED.fullmatch(s)])
    # read as text by the scan: a piece at a time (``text_secrets``), not parsed again
    pairs = text_secrets(text, key) if len(text) >= PROVE_FREE_MIN else None
    if pairs is None:
        return mask_found(text, key)[1]
    return _once([s for s, _ in pairs if not _MASKED.fullmatch(s)])


def _parts(text: str) -> int:
    """How many parts a long JSON text's value is first cut into, when the prefilter cannot
    call it free whole: parts of about 32 KB of its text."""
    return max(SPLIT, len(text) // (16 * SCAN_BYTES))


def _rename_key_at(value: Any, parts: tuple[Part, ...], key: str, new: str) -> Any:
    """``value`` with the key ``key`` of the object at ``parts`` renamed ``new`` (copied
    along the path; the object keeps its keys' order)."""
    if not parts:
        if isinstance(value, dict) and key in value:
            return {new if k == key else k: v for k, v in value.items()}
        return value
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict) and head in value:
        return {**value, head: _rename_key_at(value[head], rest, key, new)}
    if isinstance(value, list) and isinstance(head, int) and head < len(value):
        out = list(value)
        out[head] = _rename_key_at(value[head], rest, key, new)
        return out
    return value


#: an args digest as the engine prints it (``sha256:1af58c5b1b455eed``): an id, not a value
_DIGEST = re.compile(r"(sha256:[0-9a-f]{8,64})")


def mask_text(text: str) -> str:
    """Free text (a message, an agent's stderr) with each secret in it masked as
    ``mask_value`` masks a string; the args digests it names (``sha256:…``) are ids and
    are kept as they are."""
    pieces = _DIGEST.split(text)
    return "".join(p if i % 2 else str(mask_value(p)) for i, p in enumerate(pieces))


def mask_at(value: Any, path: str | None) -> Any:
    """``mask_value`` of a value found at ``path`` (a printed JSON path such as
    ``$.headers.api_key``): a bare string is scanned under the path's last key, so a
    password under a secret-named key is masked as the scan of the entry would find it.
    A path that does not parse counts as no key."""
    return mask_value(value, key_at(path))


def key_at(path: str | None) -> str | None:
    """The key a value found at ``path`` (a printed JSON path) is scanned under, as
    ``mask_at`` scans it: the path's last part when it is an object key, else ``None``."""
    if not path:
        return None
    try:
        parts = parse_path(path)
    except ValueError:
        return None
    last = parts[-1] if parts else None
    return last if isinstance(last, str) else None


def _replacements(secrets: list[str], labelled: bool = False) -> list[tuple[str, str]]:
    """What ``_mask_text`` replaces, in turn: each secret (longest first, then in text
    order: an order that does not hang on the hash seed), then its JSON-escaped text when
    it differs, both by the secret's mask in guillemets (``labelled``: with its hash8)."""
    steps: list[tuple[str, str]] = []
    for secret in sorted(set(secrets), key=lambda s: (-len(s), s)):
        label = f", hash {hash8(secret)}" if labelled else ""
        shown = f"«{mask(secret)}{label}»"
        steps.append((secret, shown))
        escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
        if escaped != secret:
            steps.append((escaped, shown))
    return steps


def _mask_text(text: str, secrets: list[str], labelled: bool = False) -> str:
    for pattern, shown in _replacements(secrets, labelled):
        text = text.replace(pattern, shown)
    return text


#: characters a long text may be cut at to be masked a piece at a time, and the length
#: of a piece
_CUTS = ("\n", "{", ",", "}", " ")
_PIECE = 65_536


def _mask_long_text(text: str, secrets: list[str], labelled: bool = False) -> str:
    """``_mask_text(text, secrets)``, the same string: ``_masked_text``'s pieces joined."""
    return str(_masked_text(text, secrets, labelled))


def _masked_text(text: str, secrets: list[str], labelled: bool = False) -> MaskedText:
    """``_mask_text(text, secrets)`` as a ``MaskedText`` (``str`` of it is that string), a
    piece at a time: the text cut at a character of it (``_CUTS``) that no secret and no
    escaped secret holds, so no text replaced, before or after the replacements before it,
    ever spans a cut. Only the pieces where a secret occurs are replaced (each between the
    cuts either side of its occurrences, found in the text as it is); the rest is read
    from the text as it is, never copied: a screen builds the part it shows. Each
    replacement copies a piece, not the text: a 3 MB JSON text with 1,000 secrets was
    masked in 1.8 s, a copy of the text for each. One secret too: ``str.replace`` with a
    mask (not ASCII) widens an ASCII text first and searches it in the wider form, three
    times slower than the ASCII search (24 MB: 80 ms), where here the text is searched as
    it is. A short text, or one no cut serves, is replaced whole: one piece."""
    steps = _replacements(secrets, labelled)
    if not steps:
        return MaskedText(text, [])
    cut = next(
        (c for c in _CUTS if c in text and not any(c in pattern for pattern, _ in steps)), None
    )
    if cut is None or len(text) < 2 * _PIECE or not all(pattern for pattern, _ in steps):
        whole = _mask_text(text, secrets, labelled)
        return MaskedText(text, [] if whole is text else [(0, len(text), whole)])
    pieces = [(start, end) for found in _found(text, steps, cut) for start, end, _ in found]
    replaced: list[tuple[int, int, str]] = []
    for start, end in _merged(pieces):
        piece = text[start:end]
        for pattern, shown in steps:
            piece = piece.replace(pattern, shown)
        replaced.append((start, end, piece))
    return MaskedText(text, replaced)


#: the texts masked a piece at a time last, with the steps and the cut they were masked
#: by and the pieces found for each step: B's text is A's but near where they differ, and
#: B's pieces before that are A's (a 24 MB JSON text with three secrets: three searches
#: of 34.6M characters, 21 ms, against one comparison with A's, 6 ms)
_Found = list[list[tuple[int, int, int]]]
_SEEN: OrderedDict[int, tuple[str, tuple[tuple[str, str], ...], str, _Found]] = OrderedDict()
_SEEN_KEPT = 2
_SEEN_LOCK = Lock()


def _found(text: str, steps: list[tuple[str, str]], cut: str) -> _Found:
    """For each step's text, each ``(start, end, at)`` piece of ``text`` between two
    ``cut`` characters that holds it at ``at``, in turn (the search resumed at each
    piece's end). The pieces of a text masked last by the same steps and cut that end
    before the place the two texts first differ are taken as they are, and the search of
    each step resumed past them where the text masked last has its next one or from
    where the two differ: what lies wholly before that is in both texts."""
    key = tuple(steps)
    with _SEEN_LOCK:
        last = [kept for kept in reversed(_SEEN.values()) if kept[1] == key and kept[2] == cut]
    same, kept_found = 0, None
    for kept_text, _, _, kept in last:
        if kept_text is text:
            return kept
        at = first_difference(text, kept_text)
        if at > same:
            same, kept_found = at, kept
    found: _Found = []
    for n, (pattern, _) in enumerate(steps):
        spans: list[tuple[int, int, int]] = []
        resume = 0
        if kept_found:
            spans = [span for span in kept_found[n] if span[1] < same]
            after = kept_found[n][len(spans)][2] if len(spans) < len(kept_found[n]) else same
            resume = max(spans[-1][1] if spans else 0, min(after, same - len(pattern) + 1))
        at = text.find(pattern, resume)
        while at >= 0:
            start = text.rfind(cut, 0, at) + 1
            end = text.find(cut, at + len(pattern))
            end = len(text) if end < 0 else end
            spans.append((start, end, at))
            at = text.find(pattern, end)
        found.append(spans)
    with _SEEN_LOCK:
        _SEEN[id(text)] = (text, key, cut, found)
        _SEEN.move_to_end(id(text))
        while len(_SEEN) > _SEEN_KEPT:
            _SEEN.popitem(last=False)
    return found


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, those that overlap or touch joined into one."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _replace_at(value: Any, parts: tuple[Part, ...], fn: Any) -> Any:
    if not parts:
        return fn(value) if isinstance(value, str) else value
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        return {**value, head: _replace_at(value[head], rest, fn)}
    if isinstance(value, list) and isinstance(head, int):
        out = list(value)
        out[head] = _replace_at(value[head], rest, fn)
        return out
    return value
