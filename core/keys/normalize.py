"""Normalization rules: applied to a copy of a call's args before digesting
(docs/format.md, "Normalization").

Start strict (no rules) and loosen one rule at a time. Four kinds of rule, applied in this
order whatever order the config lists them in:

``drop``
    Remove keys by path, in the JSON-path syntax the messages print (``jsonpath.py``):
    ``$.metadata.request_id``, ``$.items[0].id``, ``$["key.with.dots"]``, or the dotted
    form ``metadata.request_id`` (a digit segment there is a key or a list index). ``*``
    matches any one key or index, ``**`` any number of levels (zero included):
    ``*.timestamp`` (one level down), ``**.timestamp`` (anywhere), ``items.*.id``. Prefix a
    path with ``TOOL:`` to scope it to one tool: ``search_docs:since``.
``transport``
    Transport-only fields (``timeout``, ``stream``, ``max_retries``...): top-level args
    that change how a call travels, not what it asks. Dropped; ``TOOL:`` scoping works too.
``replace``
    A regex replacement on string values (``re.sub``), everywhere or only at and below a
    path, optionally for one tool.
``ignore_response``
    Response paths whose changes are not a divergence (a timing, a trace id, a cache
    flag): same syntax as ``drop`` (``$.took_ms``, ``**.trace_id``, ``search:$.meta``).
    They never touch the args or the keys; a diff row whose responses differ only there is
    ``metadata_drift`` (shown, not the first divergence, not a stale recording; see
    ``refine.py``), and ``check`` reports one that matches no recorded response.
``presets``
    Built-in replacements: ``uuid`` (UUIDs to ``<uuid>``), ``timestamp`` (ISO-8601 dates
    and date-times to ``<timestamp>``, Unix epoch numbers and digit strings to
    ``<epoch>``), ``request_id`` (``req_8f3a...`` to ``<request_id>``) and ``path``
    (paths under the project root made relative to it, the home folder to ``~``, temporary
    paths to ``<tmp>/`` + their file name) and ``nulls`` (object keys whose value is
    ``null`` dropped: an explicit ``null`` asks the same as a left-out optional arg) and
    ``url`` (every absolute URL in one spelling: query order, ``+``/``%20``, escape case,
    default port; see ``urls.canonical_url``).

Rules are read from ``[tool.cassette.normalize]`` in ``pyproject.toml`` or from the
top-level ``[normalize]`` table of ``cassette.toml`` (``config.ProjectConfig``)::

    [tool.cassette.normalize]
    presets = ["uuid", "timestamp"]
    drop = ["metadata.request_id", "search_docs:since"]
    transport = ["timeout"]
    replace = [{pattern = "session-[0-9a-f]+", replacement = "session-X", path = "query"}]
    ignore_response = ["$.took_ms", "search_docs:$.meta.trace_id"]

Rules never touch the stored args: ``apply`` returns a normalized copy. Every rule has a
one-line ``str()`` (``drop search_docs:since``, ``preset uuid``) used when the engine
proposes a rule to a user (the rule types are in ``rules.py``, the presets in
``_presets.py``). ``rule_check.over_normalization`` and ``rule_check.misses_turned_hits``
say what a set of rules would merge and what it would fix before anyone adopts it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.errors import CassetteFormatError
from ._presets import PRESETS
from ._rule_paths import split_tool
from ._rules import (
    BadReplacement,
    DropRule,
    IgnoreResponseRule,
    PresetRule,
    ReplaceRule,
    Rule,
    TransportRule,
)

if TYPE_CHECKING:
    from ..format.cassette import Cassette

_IDENTIFIER_ARG = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_KNOWN_KEYS = {"presets", "drop", "transport", "replace", "ignore_response"}
_ORDER = {DropRule: 0, TransportRule: 1, ReplaceRule: 2, PresetRule: 3}


class NormalizationConfigError(CassetteFormatError):
    """A normalization config that cannot be used: a missing file, bad TOML (``line`` set),
    or a bad rule (``field`` names it, e.g. ``normalize.drop[2]``)."""


# -- the rule set -------------------------------------------------------------------------
@dataclass(frozen=True)
class NormalizationRules:
    """An ordered set of normalization rules. The empty set (``NormalizationRules()``) is
    the identity: strict matching.

    Attributes:
        rules: the rules, applied drop -> transport -> replace -> presets.
        source: where they came from (a config file path, ``"presets"``, ...), for messages.
        ignore_response: response paths a diff does not count as a divergence
            (``strip_metadata``); never applied to args.
    """

    rules: tuple[Rule, ...] = ()
    source: str | None = field(default=None, compare=False)
    ignore_response: tuple[IgnoreResponseRule, ...] = ()
    #: tool -> the rules that apply to it, in order (``apply``, on every replayed call,
    #: asked each rule whether it applies)
    _by_tool: dict[str, tuple[Rule, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.rules, key=lambda r: _ORDER[type(r)]))
        object.__setattr__(self, "rules", ordered)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_presets(
        cls, names: Iterable[str], *, root: str | Path | None = None
    ) -> NormalizationRules:
        """Rules made of built-in presets (``"uuid"``, ``"timestamp"``, ``"request_id"``,
        ``"path"``). ``root``: the project root for ``path`` (default: the current folder).

        Raises ``ValueError`` for an unknown preset name."""
        r = str(Path(root).resolve()) if root is not None else None
        return cls(tuple(PresetRule(n, r) for n in names), source="presets")

    @classmethod
    def from_mapping(
        cls,
        table: Mapping[str, Any],
        *,
        root: str | Path | None = None,
        source: str | Path | None = None,
    ) -> NormalizationRules:
        """Rules from a config table (the TOML ``[tool.cassette.normalize]`` table):
        ``presets``/``drop``/``transport``: lists of strings; ``replace``: a list of tables
        ``{pattern, replacement, path?, tool?}`` or a table ``{pattern = replacement}``.

        Raises ``NormalizationConfigError`` naming the field (``normalize.drop[1]``) for an
        unknown key, a wrong type, a bad path, a bad regex or an unknown preset."""
        src = str(source) if source is not None else None
        r = str(Path(root).resolve()) if root is not None else None
        t = _Table(table, src)
        t.check_keys()
        # checked in this order: of several bad fields, the same one is named first
        presets = t.presets(r)
        drops = t.drops()
        transports = t.transports()
        ignored = t.ignored_responses()
        replaces = t.replaces()
        rules: list[Rule] = [*presets, *drops, *transports, *replaces]
        return cls(tuple(rules), source=src, ignore_response=tuple(ignored))

    # -- use --------------------------------------------------------------------------------
    @property
    def is_empty(self) -> bool:
        """True when there is no rule: ``apply`` is the identity (strict matching)."""
        return not self.rules

    def apply(self, tool: str, args: Any) -> Any:
        """Return the normalized copy of ``args`` for a call of ``tool``; never mutates
        ``args`` (with no rule, ``args`` itself is returned)."""
        if not self.rules:
            return args
        rules = self._by_tool.get(tool)
        if rules is None:
            rules = tuple(rule for rule in self.rules if rule.applies_to(tool))
            self._by_tool[tool] = rules
        for rule in rules:
            args = rule.apply(args)
        return args

    def strip_metadata(self, tool: str, response: Any) -> Any:
        """``response`` without the paths the ``ignore_response`` rules name for ``tool``
        (a copy; ``response`` itself when no rule applies). Used when two responses are
        compared (``refine.classify_response_drift``)."""
        for rule in self.ignore_response:
            if rule.applies_to(tool):
                response = rule.apply(response)
        return response

    def ignores_response(self, tool: str) -> bool:
        """Whether some ``ignore_response`` rule applies to ``tool``."""
        return any(rule.applies_to(tool) for rule in self.ignore_response)

    def describe(self) -> list[str]:
        """One short line per rule, in application order (``["drop a.b", "preset uuid"]``),
        then the ``ignore_response`` rules."""
        return [str(r) for r in self.rules] + [str(r) for r in self.ignore_response]

    def __str__(self) -> str:
        return "; ".join(self.describe()) or "no rules (strict)"

    def __len__(self) -> int:
        """Every rule, the ``ignore_response`` ones included (a set of only those is
        not empty: ``rules or default`` keeps it)."""
        return len(self.rules) + len(self.ignore_response)


#: the empty rule set: strict matching
_NO_NORMALIZATION = NormalizationRules()


def rules_of(cassette: Cassette) -> NormalizationRules:
    """The normalization rules ``cassette``'s replay keys are made under: the rules it was
    loaded or built with, or the empty set for one given none (the format, which knows no
    rules, then holds its identity ``digest.NO_RULES``)."""
    rules = cassette.rules
    return rules if isinstance(rules, NormalizationRules) else _NO_NORMALIZATION


class _Table:
    """The ``normalize`` table of a config being read into rules, one field at a time;
    each step raises ``NormalizationConfigError`` naming the field it rejects."""

    def __init__(self, table: Mapping[str, Any], source: str | None) -> None:
        self.table = table
        self.source = source

    def bad(self, fld: str, why: str) -> NormalizationConfigError:
        return NormalizationConfigError(self.source, None, f"normalize.{fld}", why)

    def check_keys(self) -> None:
        for key in self.table:
            if key not in _KNOWN_KEYS:
                raise self.bad(
                    key, f"unknown key; expected one of {', '.join(sorted(_KNOWN_KEYS))}"
                )

    def strings(self, name: str) -> list[str]:
        """The field ``name``: a list of non-empty strings (``[]`` when absent)."""
        value = self.table.get(name, [])
        if not isinstance(value, list):
            raise self.bad(name, f"expected a list of strings, got {type(value).__name__}")
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item:
                raise self.bad(f"{name}[{i}]", "expected a non-empty string")
        return value

    def presets(self, root: str | None) -> list[PresetRule]:
        out = []
        for i, name in enumerate(self.strings("presets")):
            if name not in PRESETS:
                why = f"unknown preset {name!r}; known: {', '.join(PRESETS)}"
                raise self.bad(f"presets[{i}]", why)
            out.append(PresetRule(name, root))
        return out

    def drops(self) -> list[DropRule]:
        out = []
        for i, spec in enumerate(self.strings("drop")):
            tool, path = split_tool(spec)
            try:
                out.append(DropRule(path, tool))
            except ValueError as exc:
                raise self.bad(f"drop[{i}]", str(exc)) from None
        return out

    def transports(self) -> list[TransportRule]:
        out = []
        for i, spec in enumerate(self.strings("transport")):
            tool, name = split_tool(spec)
            if not _IDENTIFIER_ARG.match(name) and any(c in name for c in '.*[]"$'):
                raise self.bad(f"transport[{i}]", "a transport field is a top-level arg name")
            out.append(TransportRule(name, tool))
        return out

    def ignored_responses(self) -> list[IgnoreResponseRule]:
        out = []
        for i, spec in enumerate(self.strings("ignore_response")):
            tool, path = split_tool(spec)
            try:
                out.append(IgnoreResponseRule(path, tool))
            except ValueError as exc:
                raise self.bad(f"ignore_response[{i}]", str(exc)) from None
        return out

    def replaces(self) -> list[ReplaceRule]:
        replace = self.table.get("replace", [])
        if isinstance(replace, Mapping):
            replace = [{"pattern": k, "replacement": v} for k, v in replace.items()]
        if not isinstance(replace, list):
            raise self.bad(
                "replace", "expected a list of tables or a table of pattern = replacement"
            )
        return [self.replace(f"replace[{i}]", item) for i, item in enumerate(replace)]

    def replace(self, fld: str, item: Any) -> ReplaceRule:
        """One ``replace`` item (the field ``fld``): ``{pattern, replacement, path?, tool?}``."""
        if not isinstance(item, Mapping):
            raise self.bad(fld, "expected a table {pattern, replacement, path?, tool?}")
        extra = set(item) - {"pattern", "replacement", "path", "tool"}
        if extra:
            raise self.bad(fld, f"unknown key {min(extra)!r}")
        for key in ("pattern", "replacement"):
            if not isinstance(item.get(key), str):
                raise self.bad(f"{fld}.{key}", "expected a string")
        for key in ("path", "tool"):
            if key in item and not isinstance(item[key], str):
                raise self.bad(f"{fld}.{key}", "expected a string")
        try:
            return ReplaceRule(
                item["pattern"], item["replacement"], item.get("path"), item.get("tool")
            )
        except re.error as exc:
            raise self.bad(f"{fld}.pattern", f"not a valid regex: {exc}") from None
        except BadReplacement as exc:
            raise self.bad(f"{fld}.replacement", str(exc)) from None
        except ValueError as exc:
            raise self.bad(f"{fld}.path", str(exc)) from None
