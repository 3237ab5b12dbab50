"""A count and its noun, singular or plural: the one helper for "1 entry", "2 entries"
(the engine's messages, and the commands and the app through ``tui/text/plural.py``)."""

from __future__ import annotations

#: the plurals that are not the noun and an "s"
_IRREGULAR = {"entry": "entries", "miss": "misses"}


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 entry"``, ``"3 entries"``, ``"0 misses"``: ``n`` and ``word``, or its plural
    (``many``, else a known irregular one, else ``word + "s"``) when ``n`` is not 1."""
    return f"{n} {noun(n, word, many)}"


def noun(n: int, word: str, many: str | None = None) -> str:
    """``word`` or its plural for a count of ``n`` (see :func:`plural`), without the count."""
    if n == 1:
        return word
    return many or _IRREGULAR.get(word, word + "s")
