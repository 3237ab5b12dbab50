"""A count and its noun, singular or plural: ``core/format/plural.py``, the one helper for
"1 entry", "2 entries", re-exported for the commands and the app."""

from __future__ import annotations

from cassette_tui.core.format.plural import noun, plural

__all__ = ["noun", "plural"]
