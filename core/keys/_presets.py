"""The built-in normalization presets (``PresetRule``): what each one does to a value.

``uuid``, ``timestamp``, ``request_id``, ``path``, ``nulls`` and ``url``: see the
``normalize`` module doc for what each replaces.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from ._rule_paths import map_leaves
from .urls import canonical_url
from .volatile import ISO_TIMESTAMP_RE, REQUEST_ID_RE, TEMP_PATH_RE, UUID_RE, is_epoch

#: the preset names, in the order messages list them
PRESETS = ("uuid", "timestamp", "request_id", "path", "nulls", "url")


def apply_preset(name: str, root: str | None, value: Any) -> Any:
    """``value`` under the preset ``name`` (one of ``PRESETS``); ``root`` is the project
    root the ``path`` preset makes paths relative to (default: the current folder). A
    copy: ``value`` itself is never changed."""
    if name == "nulls":
        return drop_nulls(value)
    return map_leaves(value, _PRESET_FUNCS[name](root))


def drop_nulls(value: Any) -> Any:
    """``value`` without the object keys whose value is ``null``, at any depth (the
    ``nulls`` preset: a caller that sends ``"cabin": null`` for an unused optional arg
    asks the same as one that leaves it out). List items are kept, nulls included."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def _preset_uuid(_root: str | None) -> Callable[[Any], Any]:
    def fn(v: Any) -> Any:
        return UUID_RE.sub("<uuid>", v) if isinstance(v, str) else v

    return fn


def _preset_timestamp(_root: str | None) -> Callable[[Any], Any]:
    def fn(v: Any) -> Any:
        if isinstance(v, bool):
            return v
        if is_epoch(v):
            return "<epoch>"
        if isinstance(v, str):
            return ISO_TIMESTAMP_RE.sub("<timestamp>", v)
        return v

    return fn


def _preset_request_id(_root: str | None) -> Callable[[Any], Any]:
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


def _preset_path(project_root: str | None) -> Callable[[Any], Any]:
    root = (project_root or os.getcwd()).rstrip("/\\")
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


_PRESET_FUNCS: dict[str, Callable[[str | None], Callable[[Any], Any]]] = {
    "nulls": lambda _root: lambda v: v,  # a key-dropping preset: see apply_preset
    # one spelling per URL: query order, +/%20, escape case, default port (urls.py)
    "url": lambda _root: lambda v: canonical_url(v) if isinstance(v, str) else v,
    "uuid": _preset_uuid,
    "timestamp": _preset_timestamp,
    "request_id": _preset_request_id,
    "path": _preset_path,
}
