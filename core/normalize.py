"""Normalization rules applied to a copy of the args before digesting (DESIGN.md).

Placeholder interface; the full rule set (drop paths, regex replacements, presets,
config loading) is built on top of this class without changing its signature.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class NormalizationRules:
    """An ordered set of normalization rules. The empty set is the identity."""

    @property
    def is_empty(self) -> bool:
        return True

    def apply(self, tool: str, args: Any) -> Any:
        """Return the normalized copy of ``args`` for a call of ``tool``; never mutates."""
        return args
