"""Normalization rules: applied to a copy of a call's args before digesting (docs/architecture.md, "Normalization").

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
top-level ``[normalize]`` table of ``cassette.toml`` (see ``load_rules``)::

    [tool.cassette.normalize]
    presets = ["uuid", "timestamp"]
    drop = ["metadata.request_id", "search_docs:since"]
    transport = ["timeout"]
    replace = [{pattern = "session-[0-9a-f]+", replacement = "session-X", path = "query"}]
    ignore_response = ["$.took_ms", "search_docs:$.meta.trace_id"]

Rules never touch the stored args: ``apply`` returns a normalized copy. Every rule has a
one-line ``str()`` (``drop search_docs:since``, ``preset uuid``) used when the engine
proposes a rule to a user. ``over_normalization`` and ``misses_turned_hits`` say what a
set of rules would merge and what it would fix before anyone adopts it.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any

from ..format.constants import ENV_CONFIG
from ..format.digest import digest
from ..format.errors import CassetteFormatError
from ..format.jsonpath import ANY_DEPTH, JSONPathError, Part, Segment, parse_path, segment_matches
from .urls import canonical_url
from .volatile import ISO_TIMESTAMP_RE, REQUEST_ID_RE, TEMP_PATH_RE, UUID_RE, is_epoch

if TYPE_CHECKING:
    from ..format.cassette import Cassette

PRESETS = ("uuid", "timestamp", "request_id", "path", "nulls", "url")
#: the environment variable naming a config file (``constants.ENV_CONFIG``)
CONFIG_ENV = ENV_CONFIG
_IDENTIFIER_ARG = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


class NormalizationConfigError(CassetteFormatError):
    """A normalization config that cannot be used: a missing file, bad TOML (``line`` set),
    or a bad rule (``field`` names it, e.g. ``normalize.drop[2]``)."""


# -- paths ------------------------------------------------------------------------------
# Paths are in the engine's one JSON-path syntax (jsonpath.py): what a message prints
# ("$.metadata.request_id", '$["a.b"]') is accepted here, as is the dotted form
# ("metadata.request_id", "items.*.id").
def _parse_path(path: str) -> tuple[Segment, ...]:
    segments = parse_path(path, pattern=True)
    if not segments:
        raise JSONPathError(f"bad path {path!r}: the root itself cannot be dropped")
    return segments


def _split_tool(spec: str) -> tuple[str | None, str]:
    """``"search_docs:since"`` -> ``("search_docs", "since")``; ``"a.b"`` -> ``(None, "a.b")``;
    ``"search_docs:$.since"`` -> ``("search_docs", "$.since")``."""
    head, sep, tail = spec.partition(":")
    if sep and head and not any(c in head for c in '.*[]"$'):
        return head, tail
    return None, spec


def _drop(value: Any, pattern: tuple[Segment, ...]) -> Any:
    """A copy of ``value`` without the nodes matching ``pattern`` (containers rebuilt on the
    way, never mutated)."""
    if not pattern:
        return value
    head, rest = pattern[0], pattern[1:]
    if head is ANY_DEPTH:
        value = _drop(value, rest)  # zero levels
        return _map_children(value, lambda _k, v: _drop(v, pattern))
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if segment_matches(head, k):
                if not rest:
                    continue
                v = _drop(v, rest)
            out[k] = v
        return out
    if isinstance(value, list):
        out_list = []
        for i, v in enumerate(value):
            if segment_matches(head, i):
                if not rest:
                    continue
                v = _drop(v, rest)
            out_list.append(v)
        return out_list
    return value


def _map_children(value: Any, fn: Callable[[Part, Any], Any]) -> Any:
    if isinstance(value, dict):
        return {k: fn(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [fn(i, v) for i, v in enumerate(value)]
    return value


def _map_at(value: Any, pattern: tuple[Segment, ...], fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every node matching ``pattern`` (``()`` = the root)."""
    if not pattern:
        return fn(value)
    head, rest = pattern[0], pattern[1:]
    if head is ANY_DEPTH:
        value = _map_at(value, rest, fn)
        return _map_children(value, lambda _k, v: _map_at(v, pattern, fn))
    return _map_children(
        value, lambda k, v: _map_at(v, rest, fn) if segment_matches(head, k) else v
    )


def _map_leaves(value: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every scalar below ``value`` (containers rebuilt)."""
    if isinstance(value, (dict, list)):
        return _map_children(value, lambda _k, v: _map_leaves(v, fn))
    return fn(value)


# -- rules ------------------------------------------------------------------------------
@dataclass(frozen=True)
class _PathRule:
    """A rule on the nodes matching ``path`` (the one JSON-path syntax of
    ``core.jsonpath``), for ``tool`` only when set. Raises ``JSONPathError`` for a path
    that does not parse or names the root."""

    path: str
    tool: str | None = None
    _pattern: tuple[Segment, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_pattern", _parse_path(self.path))

    def applies_to(self, tool: str) -> bool:
        return self.tool is None or self.tool == tool

    def apply(self, value: Any) -> Any:
        """A copy of ``value`` without the matching nodes (containers rebuilt)."""
        return _drop(value, self._pattern)

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

        return _map_at(args, self._at, lambda node: _map_leaves(node, sub))

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
        if self.name == "nulls":
            return _drop_nulls(args)
        return _map_leaves(args, _PRESET_FUNCS[self.name](self))

    def __str__(self) -> str:
        return f"preset {self.name}"


def _drop_nulls(value: Any) -> Any:
    """``value`` without the object keys whose value is ``null``, at any depth (the
    ``nulls`` preset: a caller that sends ``"cabin": null`` for an unused optional arg
    asks the same as one that leaves it out). List items are kept, nulls included."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _preset_uuid(_rule: PresetRule) -> Callable[[Any], Any]:
    def fn(v: Any) -> Any:
        return UUID_RE.sub("<uuid>", v) if isinstance(v, str) else v

    return fn


def _preset_timestamp(_rule: PresetRule) -> Callable[[Any], Any]:
    def fn(v: Any) -> Any:
        if isinstance(v, bool):
            return v
        if is_epoch(v):
            return "<epoch>"
        if isinstance(v, str):
            return ISO_TIMESTAMP_RE.sub("<timestamp>", v)
        return v

    return fn


def _preset_request_id(_rule: PresetRule) -> Callable[[Any], Any]:
    def fn(v: Any) -> Any:
        return REQUEST_ID_RE.sub("<request_id>", v) if isinstance(v, str) else v

    return fn


def _temp_placeholder(match: re.Match[str]) -> str:
    text = match.group(0)
    name = PureWindowsPath(text).name if "\\" in text else PurePosixPath(text).name
    return f"<tmp>/{name}" if name and name.upper() != "%TEMP%" else "<tmp>"


def _prefix_repl(repl: str) -> Callable[[re.Match[str]], str]:
    """The replacement for a matched path prefix (group 1: the separator after it, if any):
    the project root (``"."``) goes away before a separator (``/root/a`` -> ``a``) and is
    ``.`` alone; another prefix (``"~"``) keeps its separator (``/home/u/a`` -> ``~/a``)."""
    if repl == ".":
        return lambda m: "" if m.group(1) else "."
    return lambda m: repl + (m.group(1) or "")


def _preset_path(rule: PresetRule) -> Callable[[Any], Any]:
    root = (rule.root or os.getcwd()).rstrip("/\\")
    home = os.path.expanduser("~").rstrip("/\\")
    prefixes = [(root, ".")] if len(root) > 1 else []
    if len(home) > 1 and home != root:
        prefixes.append((home, "~"))
    # the longest prefix first: the root may live under the home folder
    prefixes.sort(key=lambda p: -len(p[0]))
    subs = [
        (re.compile(re.escape(prefix) + r"(?=[/\\]|$|[\s\"'])([/\\])?"), _prefix_repl(repl))
        for prefix, repl in prefixes
    ]

    def fn(v: Any) -> Any:
        if not isinstance(v, str):
            return v
        if v in (root, root + "/"):
            return "."
        v = TEMP_PATH_RE.sub(_temp_placeholder, v)
        for regex, repl in subs:
            v = regex.sub(repl, v)
        return v

    return fn


_PRESET_FUNCS: dict[str, Callable[[PresetRule], Callable[[Any], Any]]] = {
    "nulls": lambda _rule: lambda v: v,  # a key-dropping preset: see PresetRule.apply
    # one spelling per URL: query order, +/%20, escape case, default port (urls.py)
    "url": lambda _rule: lambda v: canonical_url(v) if isinstance(v, str) else v,
    "uuid": _preset_uuid,
    "timestamp": _preset_timestamp,
    "request_id": _preset_request_id,
    "path": _preset_path,
}

Rule = DropRule | TransportRule | ReplaceRule | PresetRule
_ORDER = {DropRule: 0, TransportRule: 1, ReplaceRule: 2, PresetRule: 3}


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

        def bad(fld: str, why: str) -> NormalizationConfigError:
            return NormalizationConfigError(src, None, f"normalize.{fld}", why)

        known = {"presets", "drop", "transport", "replace", "ignore_response"}
        for key in table:
            if key not in known:
                raise bad(key, f"unknown key; expected one of {', '.join(sorted(known))}")
        rules: list[Rule] = []

        def strings(name: str) -> list[str]:
            value = table.get(name, [])
            if not isinstance(value, list):
                raise bad(name, f"expected a list of strings, got {type(value).__name__}")
            for i, item in enumerate(value):
                if not isinstance(item, str) or not item:
                    raise bad(f"{name}[{i}]", "expected a non-empty string")
            return value

        for i, name in enumerate(strings("presets")):
            if name not in PRESETS:
                raise bad(f"presets[{i}]", f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
            rules.append(PresetRule(name, r))
        for i, spec in enumerate(strings("drop")):
            tool, path = _split_tool(spec)
            try:
                rules.append(DropRule(path, tool))
            except ValueError as exc:
                raise bad(f"drop[{i}]", str(exc)) from None
        for i, spec in enumerate(strings("transport")):
            tool, name = _split_tool(spec)
            if not _IDENTIFIER_ARG.match(name) and any(c in name for c in '.*[]"$'):
                raise bad(f"transport[{i}]", "a transport field is a top-level arg name")
            rules.append(TransportRule(name, tool))
        ignored: list[IgnoreResponseRule] = []
        for i, spec in enumerate(strings("ignore_response")):
            tool, path = _split_tool(spec)
            try:
                ignored.append(IgnoreResponseRule(path, tool))
            except ValueError as exc:
                raise bad(f"ignore_response[{i}]", str(exc)) from None
        replace = table.get("replace", [])
        if isinstance(replace, Mapping):
            replace = [{"pattern": k, "replacement": v} for k, v in replace.items()]
        if not isinstance(replace, list):
            raise bad("replace", "expected a list of tables or a table of pattern = replacement")
        for i, item in enumerate(replace):
            fld = f"replace[{i}]"
            if not isinstance(item, Mapping):
                raise bad(fld, "expected a table {pattern, replacement, path?, tool?}")
            extra = set(item) - {"pattern", "replacement", "path", "tool"}
            if extra:
                raise bad(fld, f"unknown key {min(extra)!r}")
            for key in ("pattern", "replacement"):
                if not isinstance(item.get(key), str):
                    raise bad(f"{fld}.{key}", "expected a string")
            for key in ("path", "tool"):
                if key in item and not isinstance(item[key], str):
                    raise bad(f"{fld}.{key}", "expected a string")
            try:
                rules.append(
                    ReplaceRule(
                        item["pattern"], item["replacement"], item.get("path"), item.get("tool")
                    )
                )
            except re.error as exc:
                raise bad(f"{fld}.pattern", f"not a valid regex: {exc}") from None
            except BadReplacement as exc:
                raise bad(f"{fld}.replacement", str(exc)) from None
            except ValueError as exc:
                raise bad(f"{fld}.path", str(exc)) from None
        return cls(tuple(rules), source=src, ignore_response=tuple(ignored))

    # -- use --------------------------------------------------------------------------------
    @property
    def is_empty(self) -> bool:
        """True when there is no rule: ``apply`` is the identity (strict matching)."""
        return not self.rules

    def apply(self, tool: str, args: Any) -> Any:
        """Return the normalized copy of ``args`` for a call of ``tool``; never mutates
        ``args`` (with no rule, ``args`` itself is returned)."""
        for rule in self.rules:
            if rule.applies_to(tool):
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

    def with_rule(self, rule: Rule) -> NormalizationRules:
        """These rules plus ``rule`` (a no-op if it is already there)."""
        if rule in self.rules:
            return self
        return NormalizationRules(
            (*self.rules, rule), source=self.source, ignore_response=self.ignore_response
        )


#: the empty rule set: strict matching
_NO_NORMALIZATION = NormalizationRules()


def rules_of(cassette: Cassette) -> NormalizationRules:
    """The normalization rules ``cassette``'s replay keys are made under: the rules it was
    loaded or built with, or the empty set for one given none (the format, which knows no
    rules, then holds its identity ``digest.NO_RULES``)."""
    rules = cassette.rules
    return rules if isinstance(rules, NormalizationRules) else _NO_NORMALIZATION


# -- config -------------------------------------------------------------------------------
def find_config(start: str | Path | None = None) -> Path | None:
    """The config file that applies in ``start`` (default: the current folder) or its
    nearest parent: ``cassette.toml`` first, then a ``pyproject.toml`` that has a
    ``[tool.cassette]`` table. ``None`` when there is none."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "cassette.toml"
        if candidate.is_file():
            return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
                return pyproject  # let load_rules report the problem
            if "cassette" in data.get("tool", {}):
                return pyproject
    return None


def read_config(
    config: str | Path | None = None, root: str | Path | None = None
) -> tuple[Path, dict[str, Any]] | None:
    """Find and parse the project's config file; ``(path, TOML document)`` or ``None``.

    Where it comes from, first match wins: ``config``; the ``CASSETTE_CONFIG`` environment
    variable; ``find_config(root)``. Shared by every reader of the config (the
    normalization rules here, the agent command in ``agent.py``, the redaction settings
    in ``secrets.py``).

    Raises:
        NormalizationConfigError: an explicitly named config file is missing or unreadable,
            or the TOML is invalid (``line`` set).
    """
    explicit = config if config is not None else os.environ.get(CONFIG_ENV) or None
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise NormalizationConfigError(path, None, None, "config file not found")
    else:
        found = find_config(root)
        if found is None:
            return None
        path = found
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise NormalizationConfigError(path, None, None, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise NormalizationConfigError(path, None, None, f"not UTF-8 at byte {exc.start}") from None
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _toml_line(str(exc))
        raise NormalizationConfigError(path, line, None, f"not valid TOML: {exc}") from None
    return path, data


def config_table(path: Path, data: dict[str, Any], key: str) -> Any:
    """The value of ``key`` in the project's table: ``[tool.cassette]`` in
    ``pyproject.toml``; in any other file the top level (or ``[tool.cassette]`` if that is
    where it is). ``None`` when absent."""
    tool_value = data.get("tool", {}).get("cassette", {}).get(key)
    return tool_value if path.name == "pyproject.toml" else data.get(key, tool_value)


def load_rules(
    config: str | Path | None = None, root: str | Path | None = None
) -> NormalizationRules:
    """Read normalization rules from a config file.

    Where they come from, first match wins: ``config``; the ``CASSETTE_CONFIG`` environment
    variable; ``find_config(root)``. In ``pyproject.toml`` the table is
    ``[tool.cassette.normalize]``; in any other file the top-level ``[normalize]`` table
    (or ``[tool.cassette.normalize]`` if that is what it has). No config file, or a config
    without the table, gives the empty rules (strict). ``root`` (default: the config file's
    folder, else the current one) is the project root of the ``path`` preset.

    Raises:
        NormalizationConfigError: an explicitly named config file is missing or unreadable,
            the TOML is invalid (``line`` set), or a rule is bad (``field`` set).
    """
    found = read_config(config, root)
    if found is None:
        return NormalizationRules()
    path, data = found
    table = config_table(path, data, "normalize")
    if table is None:
        return NormalizationRules(source=str(path))
    if not isinstance(table, Mapping):
        raise NormalizationConfigError(path, None, "normalize", "expected a table")
    return NormalizationRules.from_mapping(
        table, root=root if root is not None else path.parent, source=path
    )


def _toml_line(message: str) -> int | None:
    m = re.search(r"line (\d+)", message)
    return int(m.group(1)) if m else None


# -- analysis -----------------------------------------------------------------------------
@dataclass(frozen=True)
class OverNormalization:
    """Distinct recorded calls that ``rules`` would merge into one key although their
    responses differ: replay would serve one call another call's response.

    Attributes:
        tool: the tool of the merged calls.
        digest: the merged args digest under the rules.
        seqs: the seqs of every recorded entry under that key, in file order.
        distinct_calls: how many different keys (before the rules) were merged.
        distinct_responses: how many different outcomes those entries hold.
    """

    tool: str
    digest: str
    seqs: tuple[int, ...]
    distinct_calls: int
    distinct_responses: int


@dataclass(frozen=True)
class TurnedHit:
    """A live call that misses under the cassette's own rules but hits under the new ones.

    Attributes:
        n: 1-based position of the call among the live calls.
        tool: its tool.
        strict_digest: its args digest under the cassette's rules (the miss).
        digest: its args digest under the new rules (the hit).
        seqs: the recorded entries that would serve it.
    """

    n: int
    tool: str
    strict_digest: str
    digest: str
    seqs: tuple[int, ...]


def over_normalization(cassette: Cassette, rules: NormalizationRules) -> list[OverNormalization]:
    """Groups of recorded entries whose keys merge under ``rules`` although their
    responses differ (compared by ``cassette.fingerprint``). A key recorded several times
    with the same args (a retry) is not a merge: it was already one key."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, entry in enumerate(cassette):
        key = (entry.tool, digest(rules.apply(entry.tool, entry.args)))
        groups.setdefault(key, []).append(i)
    found = []
    for (tool, dig), idxs in groups.items():
        before = {cassette.digest(i) for i in idxs}
        if len(before) < 2:
            continue
        outcomes = {cassette.fingerprint(i) for i in idxs}
        if len(outcomes) < 2:
            continue
        found.append(
            OverNormalization(
                tool, dig, tuple(cassette.seq(i) for i in idxs), len(before), len(outcomes)
            )
        )
    return found


def _call_parts(call: Any) -> tuple[str, Any]:
    if isinstance(call, Mapping):
        return call["tool"], call.get("args")
    if isinstance(call, tuple) and len(call) == 2:
        return call[0], call[1]
    return call.tool, call.args


def misses_turned_hits(
    cassette: Cassette, live_calls: Iterable[Any], rules: NormalizationRules
) -> list[TurnedHit]:
    """The live calls that miss under the cassette's own rules but would hit under
    ``rules``. ``live_calls``: ``(tool, args)`` pairs, ``{"tool", "args"}`` dicts or
    entries (``live_calls.jsonl`` rows load as dicts)."""
    strict_keys = {cassette.key(i) for i in range(len(cassette))}
    loose: dict[tuple[str, str], list[int]] = {}
    for entry in cassette:
        key = (entry.tool, digest(rules.apply(entry.tool, entry.args)))
        loose.setdefault(key, []).append(entry.seq)
    found = []
    for n, call in enumerate(live_calls, 1):
        tool, args = _call_parts(call)
        strict = digest(cassette.rules.apply(tool, args))
        if (tool, strict) in strict_keys:
            continue
        dig = digest(rules.apply(tool, args))
        if (tool, dig) in loose:
            found.append(TurnedHit(n, tool, strict, dig, tuple(loose[(tool, dig)])))
    return found
