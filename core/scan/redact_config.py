"""The scan and redaction settings: ``SecretConfig`` and the reader of the ``redact`` table
of the project's config (the secret scan: ``secrets.py``).

The config (``[tool.cassette.redact]`` in ``pyproject.toml``, ``[redact]`` in
``cassette.toml``)::

    [tool.cassette.redact]
    record = true                          # recording redacts as it writes
    paths = ["$.args.user.email"]          # always redacted (and reported while present)
    allow = ["$.response.build_sha"]       # never a finding (a path pattern, ** and * work)
    allow_hashes = ["3f2a1b9c"]            # a value marked as not a secret, by its hash

``redact = true`` directly under ``[tool.cassette]`` is short for ``record = true``. A
finding's hash (``hash8``) is the first 8 hex digits of SHA-256 over the secret's UTF-8
text: the same secret has the same hash in every file, so an allowed hash stays allowed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..format.jsonpath import ANY_DEPTH, JSONPathError, Part, Segment, parse_path, segment_matches
from ..keys.config import ProjectConfig
from ..keys.normalize import NormalizationConfigError
from .masking import value_hash

__all__ = ["SecretConfig", "app_secret_config", "load_secret_config", "path_matches"]


def _parse_pattern(text: str) -> tuple[Segment, ...]:
    return parse_path(text, pattern=True)


def path_matches(pattern: tuple[Segment, ...], parts: tuple[Part, ...]) -> bool:
    """Whether ``pattern`` matches ``parts`` or one of its ancestors (a rule on a node
    covers everything below it). ``**`` matches any number of levels."""
    if not pattern:
        return True
    head, rest = pattern[0], pattern[1:]
    if head is ANY_DEPTH:
        return any(path_matches(rest, parts[i:]) for i in range(len(parts) + 1))
    if not parts or not segment_matches(head, parts[0]):
        return False
    return path_matches(rest, parts[1:])


@dataclass(frozen=True)
class SecretConfig:
    """The scan and redaction settings (see the module docstring).

    Attributes:
        record: recording redacts as it writes (``record = true`` / ``redact = true``).
        paths: path patterns whose values are always redacted (entry-rooted: ``$.args...``).
        allow: path patterns where nothing is a finding.
        allow_hashes: hex prefixes (8 to 64 digits) of ``value_hash`` of allowed values.
        source: the config file, for messages.
    """

    record: bool = False
    paths: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    allow_hashes: tuple[str, ...] = ()
    source: str | None = field(default=None, compare=False)
    _paths: tuple[tuple[Segment, ...], ...] = field(init=False, repr=False, compare=False)
    _allow: tuple[tuple[Segment, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_paths", tuple(_parse_pattern(p) for p in self.paths))
        object.__setattr__(self, "_allow", tuple(_parse_pattern(p) for p in self.allow))

    def allowed(self, parts: tuple[Part, ...], secret: str) -> bool:
        """Whether a value at ``parts`` is marked as not a secret (by path or by hash)."""
        if any(path_matches(p, parts) for p in self._allow):
            return True
        if self.allow_hashes:
            full = value_hash(secret)
            return any(full.startswith(h) for h in self.allow_hashes)
        return False

    def redact_path(self, parts: tuple[Part, ...]) -> bool:
        """Whether a value at ``parts`` is under a ``redact.paths`` pattern."""
        return any(path_matches(p, parts) for p in self._paths)

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any], source: str | None = None) -> SecretConfig:
        """From the ``redact`` table; raises ``NormalizationConfigError`` naming the field."""

        def bad(fld: str, why: str) -> NormalizationConfigError:
            return NormalizationConfigError(source, None, f"redact.{fld}", why)

        known = {"record", "paths", "allow", "allow_hashes"}
        for key in table:
            if key not in known:
                raise bad(key, f"unknown key; expected one of {', '.join(sorted(known))}")
        record = table.get("record", False)
        if not isinstance(record, bool):
            raise bad("record", "expected true or false")
        lists: dict[str, tuple[str, ...]] = {}
        for name in ("paths", "allow", "allow_hashes"):
            value = table.get(name, [])
            if not isinstance(value, list):
                raise bad(name, f"expected a list of strings, got {type(value).__name__}")
            for i, item in enumerate(value):
                if not isinstance(item, str) or not item:
                    raise bad(f"{name}[{i}]", "expected a non-empty string")
                if name == "allow_hashes":
                    if not re.fullmatch(r"(?:sha256:)?[0-9a-fA-F]{8,64}", item):
                        raise bad(f"{name}[{i}]", "expected 8 to 64 hex digits (a finding's hash)")
                else:
                    try:
                        _parse_pattern(item)
                    except JSONPathError as exc:
                        raise bad(f"{name}[{i}]", str(exc)) from None
            lists[name] = tuple(value)
        hashes = tuple(h.lower().removeprefix("sha256:") for h in lists["allow_hashes"])
        return cls(record, lists["paths"], lists["allow"], hashes, source=source)


def load_secret_config(
    config: ProjectConfig | str | Path | None = None, root: str | Path | None = None
) -> SecretConfig:
    """The redaction settings from the project's config (``config``, a read
    ``ProjectConfig``, else the file ``ProjectConfig.load(config, root)`` finds):
    ``[tool.cassette.redact]`` or ``redact = true`` under ``[tool.cassette]`` in
    ``pyproject.toml``; ``[redact]`` or a top-level ``redact = true`` in ``cassette.toml``.
    No config gives the defaults (scan everything, allow nothing, record unredacted).

    Raises:
        NormalizationConfigError: a missing named config, bad TOML, or a bad field.
    """
    project = config if isinstance(config, ProjectConfig) else ProjectConfig.load(config, root)
    path, value = project.path, project.redact
    if path is None:
        return SecretConfig()
    if value is None:
        return SecretConfig(source=str(path))
    if isinstance(value, bool):
        return SecretConfig(record=value, source=str(path))
    if not isinstance(value, Mapping):
        raise NormalizationConfigError(path, None, "redact", "expected true/false or a table")
    return SecretConfig.from_mapping(value, source=str(path))


def app_secret_config() -> SecretConfig:
    """The project's redaction settings for a screen: ``load_secret_config()``, or the
    defaults when the config cannot be read (the screen shows the lint's own error)."""
    try:
        return load_secret_config()
    except NormalizationConfigError:
        return SecretConfig()
