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

Scanning only the part of a string a screen shows, as the detail pane once did for speed,
is not the same: a password named by an assignment far past the part shown
(``password = 'hunter2xyz'``) is a secret wherever its text occurs, the part shown
included.
"""

from __future__ import annotations

import orjson

from ._secret_detectors import scan_string
from ._secret_prefilter import lines_secret_free

__all__ = ["PROVE_FREE_MIN", "string_secrets"]

#: a string at least this many characters long is first asked of the prefilter; a shorter
#: one is scanned straight (the scan remembers strings up to 4 KB, and a few KB scan in
#: about what the prefilter's call costs)
PROVE_FREE_MIN = 16_384


def string_secrets(text: str, key: str | None) -> list[tuple[str, str]]:
    """``(secret, detector)`` of each secret ``scan_string(text, key)`` finds in a string
    found under ``key`` (``None``: under no object key), in the scan's order: its result
    itself when the prefilter cannot prove the string free. Raises nothing."""
    if len(text) >= PROVE_FREE_MIN and _prefilter_free(text, key):
        return []
    return [(secret, detector) for secret, detector, _ in scan_string(text, key)]


def _prefilter_free(text: str, key: str | None) -> bool:
    """Whether the prefilter proves ``text`` under ``key`` free of secrets (``False``: it
    cannot, or the text cannot be written as JSON, such as a lone surrogate)."""
    try:
        doc = orjson.dumps([text] if key is None else {key: text})
    except (orjson.JSONEncodeError, TypeError):
        return False
    return lines_secret_free([doc])[0]
