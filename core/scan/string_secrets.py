"""The secrets of one long string, found in one pass over its bytes when it holds none.

A screen masks a string as the scan finds its secrets (``_secret_detectors.scan_string``:
the library's patterns on windows around each token, the URL and keyword rules). Over a
2.4 MB answer that scan takes 0.04-0.11 s, and over text dense with URLs seconds (3.3 MB
of URLs: 73 s). The line prefilter of ``check`` (``_secret_prefilter.lines_secret_free``:
one RE2 pass, a necessary condition of each source of hits) proves such a text free in
about 15 ms. Here the string is framed as the scan sees it (under its key, or alone in a
list when it has none), asked of the prefilter, and scanned only when the prefilter cannot
call it free: the same secrets as ``scan_string`` alone, in every case
(``tests/core/scan/test_string_secrets.py``).

A string the scan reads as text (not a JSON object or list) is asked a piece at a time
(``plain_text_secrets``), so that a secret in it costs the scan of the pieces the
prefilter cannot call free, not of the whole string: 2.4 MB of lines with one password
assignment were scanned whole in 0.12 s, 24 MB in 1.4 s.

Scanning only the part of a string a screen shows, as the detail pane once did for speed,
is not the same: a password named by an assignment far past the part shown
(``password = 'hunter2xyz'``) is a secret wherever its text occurs, the part shown
included.
"""

from __future__ import annotations

import orjson

from ._secret_detectors import _JSON_TEXT_MAX, is_id_key, is_secret_key, scan_string
from ._secret_prefilter import (
    REBUILT,
    free_of,
    lines_secret_free,
    prefilter_sets,
    runs_free,
)
from .plain_text_secrets import plain_text_secrets

__all__ = ["PROVE_FREE_MIN", "json_container", "prefilter_free", "string_secrets", "text_secrets"]

#: a string at least this many characters long is first asked of the prefilter; a shorter
#: one is scanned straight (the scan remembers strings up to 4 KB, and a few KB scan in
#: about what the prefilter's call costs)
PROVE_FREE_MIN = 16_384


def string_secrets(text: str, key: str | None) -> list[tuple[str, str]]:
    """``(secret, detector)`` of each secret ``scan_string(text, key)`` finds in a string
    found under ``key`` (``None``: under no object key), in the scan's order: its result
    itself when the prefilter cannot prove the string free. Raises nothing."""
    if len(text) >= PROVE_FREE_MIN:
        pairs = None if _json_text(text) else text_secrets(text, key)
        if pairs is not None:
            return list(pairs)
        if prefilter_free(text, key):
            return []
    return [(secret, detector) for secret, detector, _ in scan_string(text, key)]


def text_secrets(text: str, key: str | None) -> tuple[tuple[str, str], ...] | None:
    """``scan_string(text, key)`` of a string the scan reads as text (the caller knows it
    is no JSON object or list the scan parses: a JSON text cut short, or with more after
    it, is text), piece by piece (``plain_text_secrets``): the same pairs in the same
    order. ``None`` under a secret-named key (the whole text is the secret), for a blank
    text, or for one that cannot be cut (see ``plain_text_secrets``)."""
    if (key is not None and is_secret_key(key)) or text.isspace():
        return None
    return plain_text_secrets(text, key is None or not is_id_key(key))


def _json_text(text: str) -> bool:
    """Whether the scan reads ``text`` as a JSON object or list (``scan_string``)."""
    if not json_container(text):
        return False
    try:
        return isinstance(orjson.loads(text), dict | list)
    except orjson.JSONDecodeError:
        return False


_CLOSERS = {"{": "}", "[": "]"}


def json_container(text: str) -> bool:
    """Whether ``text`` may be what the scan parses as a JSON object or list
    (``scan_string``): it starts with ``{`` or ``[`` and ends with the bracket that closes
    it (blank space aside), and is not too long to be parsed. ``False`` means it is read
    as text, without a parse: a JSON text cut short, or with more after it, fails
    ``orjson.loads`` only once read to its end (13 ms for 3 MB)."""
    if len(text) > _JSON_TEXT_MAX:
        return False
    head = text.lstrip()[:1]
    return head in _CLOSERS and text.rstrip()[-1:] == _CLOSERS[head]


def prefilter_free(text: str, key: str | None) -> bool:
    """Whether the prefilter proves ``text`` under ``key`` free of secrets, however the scan
    reads it (a JSON text or text: the prefilter's answer holds for a line's texts that
    hold JSON): ``scan_string(text, key)`` then finds nothing. ``False``: it cannot, or the
    text cannot be written as JSON (a lone surrogate).

    The text is asked as the one text of a line: that line rebuilt (``\x00`` around each
    text) is made at once when the text holds no backslash and no NUL and the key is plain,
    without writing the JSON line and reading its escapes back (``_texts_line``: a Python
    step per escape, 0.1 s for the quotes of 3 MB of JSON text)."""
    line = _rebuilt_line(text, key)
    if line is None:
        try:
            doc = orjson.dumps([text] if key is None else {key: text})
        except (orjson.JSONEncodeError, TypeError):
            return False
        return lines_secret_free([doc])[0]
    sets = prefilter_sets()
    if sets is None:
        return False
    hits = sets.rebuilt._set.Match(line)
    if hits and not free_of(line, hits, sets.rebuilt_meanings, REBUILT):
        return False
    return runs_free(line, REBUILT)


def _rebuilt_line(text: str, key: str | None) -> bytes | None:
    """The line ``[text]`` (``{key: text}``) as ``_secret_prefilter._texts_line`` rebuilds
    its JSON, made from the text's bytes: ``None`` when the text or the key holds a
    backslash or a NUL, the key a quote or a control character, or the text is not UTF-8
    (JSON escapes those, or the prefilter refuses them)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    if b"\\" in data or b"\x00" in data:
        return None
    if key is None:
        return b"[\x00" + data + b"\x00]"
    if any(c in key for c in '"\\') or not key.isprintable():
        return None
    return b"{\x00" + key.encode("utf-8") + b"\x00:\x00" + data + b"\x00}"
