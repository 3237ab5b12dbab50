"""The ``contract_change`` finding: the MCP server's contract differs between the two runs.

A cassette recorded by ``cassette-tui mcp record`` has a server-facts sidecar beside it
(``RUN.jsonl`` -> ``RUN.mcp.json``, docs/mcp.md) holding what the server said besides its
tool calls: ``initialize`` (``serverInfo``) and ``tools/list`` (each tool's description,
input schema, annotations). When both runs have one, their contracts are compared:

- ``server``: ``serverInfo.name``/``version`` differ;
- ``tool_added`` / ``tool_removed``: a tool only one run's server listed;
- ``tool_renamed``: a tool removed and one added with the same description and schema;
- ``description``, ``input_schema``, ``output_schema``, ``annotations``, ``title``: a
  tool listed by both whose field differs (schema changes name each JSON path).

A tool's definition is the last one its server listed in the session (a
``notifications/tools/list_changed`` makes a host list again). The finding comes first:
a call that fails after a contract change is likely failing because of it, so the
``error_response`` finding of a call whose tool changed names the change instead of a
transient failure, and says which run's input schema the call's arguments satisfy (when
``jsonschema``, which the MCP SDK brings, is installed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.errors import CassetteFormatError
from ..scan.sidecar import SIDECAR_SUFFIX, read_sidecar
from ._finding import finding, short

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.findings import Finding
    from .result import DiffResult

#: tool fields compared, with the change kind each gives
TOOL_FIELDS = (
    ("description", "description"),
    ("title", "title"),
    ("inputSchema", "input_schema"),
    ("outputSchema", "output_schema"),
    ("annotations", "annotations"),
)
MAX_PATHS = 8


def sidecar_of(cassette: Cassette) -> Path | None:
    """The server-facts sidecar beside a cassette file, when there is one."""
    if cassette.path is None:
        return None
    path = Path(cassette.path)
    name = (path.stem if path.suffix else path.name) + SIDECAR_SUFFIX
    sidecar = path.with_name(name)
    return sidecar if sidecar.is_file() else None


def contract_of(cassette: Cassette) -> dict[str, Any] | None:
    """``{"sidecar", "server": {"name", "version"}, "tools": {name: definition}}`` from the
    cassette's sidecar; ``None`` without one (or with one that is unreadable: ``check``
    reports that, the diff goes on without it)."""
    path = sidecar_of(cassette)
    if path is None:
        return None
    try:
        doc = read_sidecar(path)
    except CassetteFormatError:
        return None
    server: dict[str, Any] = {}
    tools: dict[str, dict[str, Any]] = {}
    listed = False
    for exchange in doc.get("exchanges") or []:
        if not isinstance(exchange, dict) or not isinstance(exchange.get("result"), dict):
            continue
        result = exchange["result"]
        if exchange.get("method") == "initialize" and not server:
            info = result.get("serverInfo")
            server = dict(info) if isinstance(info, dict) else {}
        elif exchange.get("method") == "tools/list":
            params = exchange.get("params")
            if not (isinstance(params, dict) and params.get("cursor")):
                tools = {}  # a new listing replaces the last; its further pages add up
            listed = True
            for tool in result.get("tools") or []:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    tools[tool["name"]] = tool
    if not server and not listed:
        return None
    return {"sidecar": str(path), "server": server, "tools": tools if listed else None}


def contract_changes(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """The changes from B's contract to A's (A is the failing run), each ``{"kind",
    "tool"?, "a"?, "b"?, "paths"?}`` (see the module docstring)."""
    changes: list[dict[str, Any]] = []
    for key in ("name", "version"):
        va, vb = a["server"].get(key), b["server"].get(key)
        if va != vb and (va is not None or vb is not None):
            changes.append({"kind": "server", "field": f"serverInfo.{key}", "a": va, "b": vb})
    ta, tb = a["tools"], b["tools"]
    if ta is None or tb is None:
        return changes
    only_a = [n for n in ta if n not in tb]
    only_b = [n for n in tb if n not in ta]
    for new in list(only_a):
        same = next((old for old in only_b if _shape(tb[old]) == _shape(ta[new])), None)
        if same is not None:
            changes.append({"kind": "tool_renamed", "tool": new, "a": new, "b": same})
            only_a.remove(new)
            only_b.remove(same)
    changes += [{"kind": "tool_added", "tool": n} for n in only_a]
    changes += [{"kind": "tool_removed", "tool": n} for n in only_b]
    for name in ta:
        if name not in tb:
            continue
        for field, kind in TOOL_FIELDS:
            va, vb = ta[name].get(field), tb[name].get(field)
            if va == vb:
                continue
            change: dict[str, Any] = {"kind": kind, "tool": name, "a": va, "b": vb}
            if isinstance(va, dict) and isinstance(vb, dict):
                change["paths"] = _paths(va, vb)[:MAX_PATHS]
            changes.append(change)
    return changes


def _shape(tool: dict[str, Any]) -> str:
    return json.dumps(
        [tool.get("description"), tool.get("inputSchema")], sort_keys=True, default=str
    )


def _paths(a: Any, b: Any, at: str = "$") -> list[str]:
    """The JSON paths where two values differ (objects by key, other values whole)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b or a[key] != b[key]:
                out += (
                    _paths(a.get(key), b.get(key), f"{at}.{key}")
                    if (key in a and key in b)
                    else [f"{at}.{key}"]
                )
        return out
    return [at] if a != b else []


def describe(change: dict[str, Any]) -> str:
    """One change in words: ``serverInfo.version "0.4" (A) vs "0.3" (B)``,
    ``find_contact: inputSchema changed at $.properties.query.pattern``."""
    kind = change["kind"]
    if kind == "server":
        return f"{change['field']} {short(change['a'], 30)} (A) vs {short(change['b'], 30)} (B)"
    if kind == "tool_added":
        return f"{change['tool']}: only A's server lists it"
    if kind == "tool_removed":
        return f"{change['tool']}: only B's server lists it"
    if kind == "tool_renamed":
        return f"{change['a']}: renamed from {change['b']} (same description and schema)"
    field = dict((k, f) for f, k in TOOL_FIELDS)[kind]
    if change.get("paths"):
        return f"{change['tool']}: {field} changed at {', '.join(change['paths'])}"
    return f"{change['tool']}: {field} {short(change['a'], 40)} (A) vs {short(change['b'], 40)} (B)"


def contract_finding(result: DiffResult) -> Finding | None:
    """The ``contract_change`` finding, or ``None`` when a side has no sidecar or the
    contracts are equal. Evidence: ``{"changes", "sidecars": {"a", "b"}, "tools"}``."""
    a, b = result.contract()
    if a is None or b is None:
        return None
    changes = contract_changes(a, b)
    if not changes:
        return None
    tools = sorted({c["tool"] for c in changes if "tool" in c})
    calls = {
        "a": [e.seq for e in result.a if e.tool in tools],
        "b": [e.seq for e in result.b if e.tool in tools],
    }
    words = "; ".join(describe(c) for c in changes[:6])
    more = f"; and {len(changes) - 6} more" if len(changes) > 6 else ""
    message = f"The MCP server's contract changed between the runs: {words}{more}."
    action = (
        "A call that fails after this likely fails because of it: compare the tool's "
        "description and schema in the two sidecars, and re-record against the server "
        "version the agent is meant to use."
    )
    return finding(
        "contract_change",
        {"a": calls["a"][:20], "b": calls["b"][:20]},
        message,
        action,
        {"changes": changes, "sidecars": {"a": a["sidecar"], "b": b["sidecar"]}, "tools": tools},
    )


def changed_tool_words(result: DiffResult, tool: str, args: Any, side: str) -> str | None:
    """For the ``error_response`` finding of ``tool`` on ``side``: the contract change of
    that tool in words, and which run's input schema ``args`` satisfy; ``None`` when the
    tool's contract did not change."""
    a, b = result.contract()
    if a is None or b is None:
        return None
    changes = [c for c in contract_changes(a, b) if c.get("tool") == tool]
    if not changes:
        return None
    words = "; ".join(describe(c) for c in changes[:3])
    fits = _fits(args, a, b, tool)
    tail = f" {fits}" if fits else ""
    return (
        f"The tool's contract changed between the runs ({words}), the likely cause rather "
        f"than a transient failure.{tail} Check which server version the agent is meant "
        "to use, then re-record."
    )


def _fits(args: Any, a: dict[str, Any], b: dict[str, Any], tool: str) -> str:
    """``The call's arguments satisfy B's input schema, not A's.`` (or ``""``)."""
    try:
        import jsonschema
    except ImportError:  # optional: the MCP SDK brings it
        return ""
    verdict = {}
    for side, contract in (("A", a), ("B", b)):
        schema = (contract["tools"] or {}).get(tool, {}).get("inputSchema")
        if not isinstance(schema, dict):
            return ""
        try:
            jsonschema.validate(args, schema)
            verdict[side] = True
        except jsonschema.ValidationError:
            verdict[side] = False
        except jsonschema.SchemaError:
            return ""
    if verdict["A"] == verdict["B"]:
        which = "both runs'" if verdict["A"] else "neither run's"
        return f"The call's arguments satisfy {which} input schema."
    good, bad = ("A", "B") if verdict["A"] else ("B", "A")
    return f"The call's arguments satisfy {good}'s input schema, not {bad}'s."
