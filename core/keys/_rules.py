"""The normalization rule types: ``drop``, ``transport``, ``replace``, the presets, and
``ignore_response`` (see the ``normalize`` module doc for what each does).

Every rule is a frozen value with ``applies_to(tool)``, ``apply(value)`` (a copy, never a
change in place) and a one-line ``str()`` (``drop search_docs:since``, ``preset uuid``)
used when the engine proposes a rule to a user. Paths are in the rule path syntax of
``_rule_paths.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..format.jsonpath import Segment, parse_path
from ._presets import PRESETS, apply_preset
from ._rule_paths import drop_matching, map_at, map_leaves, parse_rule_path


@dataclass(frozen=True)
class _PathRule:
    """A rule on the nodes matching ``path`` (the one JSON-path syntax of
    ``core.jsonpath``), for ``tool`` only when set. Raises ``JSONPathError`` for a path
    that does not parse or names the root."""

    path: str
    tool: str | None = None
    _pattern: tuple[Segment, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_pattern", parse_rule_path(self.path))

    def applies_to(self, tool: str) -> bool:
        return self.tool is None or self.tool == tool

    def apply(self, value: Any) -> Any:
        """A copy of ``value`` without the matching nodes (containers rebuilt)."""
        return drop_matching(value, self._pattern)

    def _scoped(self) -> str:
        return f"{self.tool + ':' if self.tool else ''}{self.path}"


@dataclass(frozen=True)
class DropRule(_PathRule):
    """Drop every key (or list item) matching ``path`` from the args; for ``tool`` only
    when set."""

    def __str__(self) -> str:
        return f"drop {self._scoped()}"


@dataclass(frozen=True)
class IgnoreResponseRule(_PathRule):
    """Ignore the response nodes matching ``path`` (for ``tool`` only when set) when two
    responses are compared: a change there is metadata drift, not a divergence. Applies to
    responses, never to args or keys."""

    def __str__(self) -> str:
        return f"ignore_response {self._scoped()}"


@dataclass(frozen=True)
class TransportRule:
    """Drop the transport-only top-level arg ``name`` (``timeout``, ``stream``...)."""

    name: str
    tool: str | None = None

    def applies_to(self, tool: str) -> bool:
        return self.tool is None or self.tool == tool

    def apply(self, args: Any) -> Any:
        if isinstance(args, dict) and self.name in args:
            return {k: v for k, v in args.items() if k != self.name}
        return args

    def __str__(self) -> str:
        return f"transport {self.tool + ':' if self.tool else ''}{self.name}"


class BadReplacement(ValueError):
    """A ``replace`` rule's replacement that ``re`` cannot expand for its pattern (a group
    reference the pattern lacks, a bad escape)."""


def _check_replacement(regex: re.Pattern[str], replacement: str) -> None:
    """Raise ``BadReplacement`` when ``replacement`` names a group ``regex`` lacks or has a
    bad escape: ``re`` checks a replacement only at the first match, which would make a
    bad rule fail in the middle of a diff. The check expands it against a match of an
    empty pattern with the same groups (numbers and names)."""
    names = {number: name for name, number in regex.groupindex.items()}
    same_groups = "".join(
        f"(?P<{names[g]}>)" if g in names else "()" for g in range(1, regex.groups + 1)
    )
    match = re.compile(same_groups).match("")
    assert match is not None  # empty groups match the empty string
    try:
        match.expand(replacement)
    except (re.error, IndexError) as exc:
        raise BadReplacement(f"not a valid replacement for its pattern: {exc}") from None


@dataclass(frozen=True)
class ReplaceRule:
    """``re.sub(pattern, replacement, s)`` on every string value at or below ``path``
    (everywhere when ``path`` is ``None``), for ``tool`` only when set."""

    pattern: str
    replacement: str
    path: str | None = None
    tool: str | None = None
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _at: tuple[Segment, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        regex = re.compile(self.pattern)
        object.__setattr__(self, "_regex", regex)
        _check_replacement(regex, self.replacement)
        object.__setattr__(self, "_at", parse_path(self.path, pattern=True) if self.path else ())

    def applies_to(self, tool: str) -> bool:
        return self.tool is None or self.tool == tool

    def apply(self, args: Any) -> Any:
        def sub(v: Any) -> Any:
            return self._regex.sub(self.replacement, v) if isinstance(v, str) else v

        return map_at(args, self._at, lambda node: map_leaves(node, sub))

    def __str__(self) -> str:
        where = f" at {self.tool + ':' if self.tool else ''}{self.path or '*'}"
        if self.path is None and self.tool is None:
            where = ""
        return f"replace {self.pattern!r} -> {self.replacement!r}{where}"


@dataclass(frozen=True)
class PresetRule:
    """A built-in rule by name (see ``PRESETS``). ``root`` is the project root the ``path``
    preset makes paths relative to."""

    name: str
    root: str | None = None

    def __post_init__(self) -> None:
        if self.name not in PRESETS:
            raise ValueError(f"unknown preset {self.name!r}; known: {', '.join(PRESETS)}")

    def applies_to(self, tool: str) -> bool:
        return True

    def apply(self, args: Any) -> Any:
        return apply_preset(self.name, self.root, args)

    def __str__(self) -> str:
        return f"preset {self.name}"


#: a rule on args (``NormalizationRules.rules``); ``ignore_response`` rules are kept apart
Rule = DropRule | TransportRule | ReplaceRule | PresetRule
