"""VCR.py / pytest-recording cassettes (YAML, or vcrpy's JSON serializer), as a cassette.

A VCR cassette is ``{"interactions": [{"request": {...}, "response": {...}}, ...],
"version": 1}``. Each interaction becomes one entry:

- ``tool`` = ``"http"``;
- ``args`` = ``{"method", "uri", "body"}``, plus ``"headers"`` with the request headers
  that change the answer (``Accept``, ``Accept-Language``, ``Range``, API-version
  headers; see ``repeats.is_identity_header``) when there are any;
- ``response`` = ``{"status": <code>, "reason": <message>, "headers": {...},
  "body": ...}``; an HTTP error (4xx/5xx) stays a response, as the server sent it;
- extras: ``request_headers`` (kept out of the args: they carry auth placeholders,
  content lengths and cookies that change on every recording) and ``vcr_extra`` with any
  key this importer does not map (nothing is dropped).

Bodies are read from ``body: {string: ...}`` (vcrpy), a plain ``body: ...`` string
(vcrpy request bodies) or ``parsed_body:`` (pydantic-ai's serializer, already structured).
A body that is a JSON object or array becomes that JSON; an SSE stream
(``text/event-stream``, or text starting with ``data:``/``event:``) becomes
``{"_sse": true, "text": <the stream as recorded>, "events": [{"event"?, "id"?, "data"}]}``
with each event's data parsed as JSON when it is JSON; other text stays text. A YAML
``!!binary`` value (a body, or a header value) becomes the binary envelope
``{"_binary": true, "encoding": "base64", "data": <standard base64, no newlines>}``,
which decodes to the recorded bytes exactly and which the lint treats as proper binary.

YAML is read with PyYAML's C loader (``yaml.CSafeLoader``) when libyaml is there, else
the pure-Python ``SafeLoader``; both build ``bytes`` for ``!!binary``. Tags that a safe
loader refuses (``!!python/object``), values a tag cannot build (``!!bool maybe``), sets,
recursive aliases, nesting deeper than ``MAX_DEPTH`` and alias expansion past
``MAX_ALIAS_EXPANSION`` are format errors naming the file and the line (``parse_yaml``).
"""

from __future__ import annotations

import base64
import datetime as _dt
from pathlib import Path
from typing import Any

import yaml

from ..format.depth import MAX_DEPTH as _MAX_DEPTH
from ..format.entry import Entry
from ..format.errors import CassetteFormatError
from ..keys.repeats import identity_headers
from . import Imported, RunInfo, loads_json

NAME = "vcr"
TOOL = "http"

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_REQUEST_KEYS = {"method", "uri", "body", "parsed_body", "headers"}
_RESPONSE_KEYS = {"status", "headers", "body", "parsed_body"}


def binary_envelope(data: bytes) -> dict[str, Any]:
    """The marker object for bytes: ``{"_binary": true, "encoding": "base64", "data"}``."""
    return {"_binary": True, "encoding": "base64", "data": base64.b64encode(data).decode()}


def is_binary_envelope(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("_binary") is True
        and value.get("encoding") == "base64"
        and isinstance(value.get("data"), str)
    )


#: nesting deeper than this (aliases followed) is a format error: every later stage
#: (digest, drift, the app) then works on values it can walk (one limit: depth.py)
MAX_DEPTH = _MAX_DEPTH
#: nodes that aliases may add when expanded (a "billion laughs" file expands 9 aliases of
#: 9 aliases ... into 10^9 nodes from 500 bytes); a VCR cassette hardly uses aliases
MAX_ALIAS_EXPANSION = 1_000_000

_SET_TAG = "tag:yaml.org,2002:set"


def _mark_line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check_graph(root: yaml.Node, path: Path) -> None:
    """Refuse what a safe loader would turn into a value no later stage can walk, before
    anything is built, without recursion: a recursive alias (a node inside itself), nesting
    deeper than :data:`MAX_DEPTH` with aliases followed, and aliases that expand to more
    than :data:`MAX_ALIAS_EXPANSION` extra nodes.

    Raises:
        CassetteFormatError: naming the file and the line of the offending node.
    """
    height: dict[int, int] = {}  # node id -> levels below it, aliases followed
    size: dict[int, int] = {}  # node id -> nodes it expands to, aliases followed
    on_path: set[int] = set()
    distinct = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            _measure(node, height, size, path)
        elif key not in height:  # else an alias of a node already measured
            _enter(node, on_path, height, stack, path)
            distinct += 1
    expanded = size[id(root)]
    if expanded - distinct > MAX_ALIAS_EXPANSION:
        raise CassetteFormatError(
            path,
            None,
            None,
            f"aliases expand {distinct} YAML nodes to {expanded} (more than "
            f"{MAX_ALIAS_EXPANSION} added): refused, as a 'billion laughs' file",
        )


def _enter(
    node: yaml.Node,
    on_path: set[int],
    height: dict[int, int],
    stack: list[tuple[yaml.Node, bool]],
    path: Path,
) -> None:
    """``check_graph`` going down into ``node``: its children not measured yet are pushed
    on ``stack`` (after ``node`` itself, to be measured once they are). Raises
    ``CassetteFormatError`` for a recursive alias or a path deeper than ``MAX_DEPTH``."""
    key = id(node)
    if key in on_path:
        raise CassetteFormatError(
            path, _mark_line(node), None, "a recursive alias (a node that contains itself)"
        )
    on_path.add(key)
    stack.append((node, True))
    for kid in _children(node):
        if id(kid) in on_path:
            raise CassetteFormatError(
                path,
                _mark_line(kid),
                None,
                "a recursive alias (a node that contains itself)",
            )
        if id(kid) not in height:
            stack.append((kid, False))
    if len(on_path) > MAX_DEPTH:
        raise CassetteFormatError(
            path, _mark_line(node), None, f"nested deeper than {MAX_DEPTH} levels"
        )


def _measure(node: yaml.Node, height: dict[int, int], size: dict[int, int], path: Path) -> None:
    """``check_graph`` coming back up from ``node``: its height and expanded size from its
    children's. Raises ``CassetteFormatError`` when it is deeper than ``MAX_DEPTH``."""
    key = id(node)
    kids = _children(node)
    height[key] = 1 + max((height[id(k)] for k in kids), default=0)
    size[key] = 1 + sum(size[id(k)] for k in kids)
    if height[key] > MAX_DEPTH:
        raise CassetteFormatError(
            path,
            _mark_line(node),
            None,
            f"nested deeper than {MAX_DEPTH} levels (aliases followed)",
        )


class _Constructor(_Loader):  # type: ignore[misc,valid-type]
    """The safe loader, where a value its tag cannot build (``!!bool maybe``,
    ``!!timestamp 'x'``, an empty ``!!int`` or ``!!float``) or a YAML set (no JSON form) is
    a ``ConstructorError`` with the node's line instead of a ``KeyError``, ``IndexError``
    or ``AttributeError`` from deep inside PyYAML."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node.tag == _SET_TAG:
            raise yaml.constructor.ConstructorError(
                None, None, "a YAML set (!!set) has no JSON form", node.start_mark
            )
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        # an empty ``!!int``/``!!float`` is an IndexError, a huge exponent an OverflowError
        except (ValueError, LookupError, TypeError, AttributeError, ArithmeticError) as exc:
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            shown = repr(node.value)[:60] if isinstance(node, yaml.ScalarNode) else "this node"
            raise yaml.constructor.ConstructorError(
                None, None, f"{tag} cannot be {shown} ({type(exc).__name__})", node.start_mark
            ) from None


def parse_yaml(text: str | bytes, path: Path) -> tuple[Any, list[int]]:
    """Parse a YAML document; return it and the 1-based line of each interaction.

    Raises:
        CassetteFormatError: not valid YAML (naming the line and the problem), a tag a
            safe loader refuses or a value its tag cannot build, a recursive alias,
            nesting deeper than ``MAX_DEPTH``, or aliases that expand too far (see
            ``check_graph``).
    """
    loader = _Constructor(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise CassetteFormatError(
                path, None, None, f"not valid YAML: nested deeper than {MAX_DEPTH} levels"
            ) from None
        if node is not None:
            check_graph(node, path)
        doc = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        why = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise CassetteFormatError(path, line, None, f"not valid YAML: {why}") from None
    except yaml.YAMLError as exc:
        raise CassetteFormatError(path, None, None, f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()
    lines: list[int] = []
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == "interactions" and isinstance(value, yaml.SequenceNode):
                lines = [item.start_mark.line + 1 for item in value.value]
    return doc, lines


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` is a VCR cassette, else why it is not."""
    if not isinstance(doc, dict):
        return "not a YAML/JSON mapping with 'interactions'"
    if "interactions" not in doc:
        return f"a mapping without 'interactions' (keys: {', '.join(map(str, list(doc)[:8]))})"
    if not isinstance(doc["interactions"], list):
        return "'interactions' is not a list"
    return None


def read(doc: Any, path: Path, lines: list[int] | None = None) -> Imported:
    """A parsed VCR cassette as an ``Imported`` with a single run.

    Args:
        doc: the parsed YAML (or JSON) document.
        path: the source file.
        lines: the 1-based line of each interaction (from ``parse_yaml``), for errors and
            ``Entry.line``.

    Raises:
        CassetteFormatError: not a VCR cassette, or an interaction without a request
            ``method``/``uri`` or a response ``status``, naming the line and the field.
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    interactions = doc["interactions"]
    lines = lines or []
    entries = [
        _entry(item, i, path, lines[i] if i < len(lines) else None)
        for i, item in enumerate(interactions)
    ]
    run = RunInfo(task=None, trial=None, reward=None, calls=len(entries))
    meta = {k: _plain(v) for k, v in doc.items() if k != "interactions"}

    def build(index: int) -> tuple[list[Entry], dict[str, Any]]:
        return entries, {"vcr": meta} if meta else {}

    return Imported(NAME, path, [run], build)


def read_file(data: bytes, path: Path) -> Imported:
    """Parse YAML bytes and read them as a VCR cassette (see ``read``)."""
    doc, lines = parse_yaml(data, path)
    return read(doc, path, lines)


def _entry(item: Any, i: int, path: Path, line: int | None) -> Entry:
    req, resp, code, reason = _checked(item, i, path, line)
    req_headers = _plain(req.get("headers") or {})
    resp_headers = _plain(resp.get("headers") or {})
    req_body, req_left = _body(req, req_headers)
    resp_body, resp_left = _body(resp, resp_headers)
    args: dict[str, Any] = {"method": req["method"], "uri": req["uri"], "body": req_body}
    identity = identity_headers(req_headers)
    if identity:
        # headers that change the answer (Accept, Range, Accept-Language, API version)
        # are part of the call: two GETs of one URL asking for JSON and for CSV differ
        args["headers"] = identity
    response: dict[str, Any] = {"status": code}
    if reason is not None:
        response["reason"] = reason
    response["headers"] = resp_headers
    response["body"] = resp_body
    leftovers = _leftovers(item, req, resp, req_left, resp_left)
    extra: dict[str, Any] = {"request_headers": req_headers}
    if leftovers:
        extra["vcr_extra"] = leftovers
    return Entry(seq=i + 1, tool=TOOL, args=args, response=response, extra=extra, line=line)


def _checked(
    item: Any, i: int, path: Path, line: int | None
) -> tuple[dict[str, Any], dict[str, Any], int, Any]:
    """Interaction ``i``'s request and response mappings, its status code and reason;
    raises ``CassetteFormatError`` naming the field that is missing or of the wrong type
    (``interactions[3].request.uri``)."""
    where = f"interactions[{i}]"

    def bad(field: str, reason: str) -> CassetteFormatError:
        return CassetteFormatError(path, line, f"{where}.{field}" if field else where, reason)

    if not isinstance(item, dict):
        raise bad("", "an interaction must be a mapping with 'request' and 'response'")
    req, resp = item.get("request"), item.get("response")
    if not isinstance(req, dict):
        raise bad("request", "missing or not a mapping")
    if not isinstance(resp, dict):
        raise bad("response", "missing or not a mapping")
    method, uri = req.get("method"), req.get("uri")
    if not isinstance(method, str) or not method:
        raise bad("request.method", f"expected an HTTP method, got {method!r:.40}")
    if not isinstance(uri, str) or not uri:
        raise bad("request.uri", f"expected a URI, got {uri!r:.40}")
    status = resp.get("status")
    code: Any
    reason: Any = None
    if isinstance(status, dict):
        code, reason = status.get("code"), status.get("message")
    else:
        code = status
    if isinstance(code, bool) or not isinstance(code, int):
        raise bad("response.status", f"expected an HTTP status code, got {status!r:.60}")
    return req, resp, code, reason


def _leftovers(
    item: dict[str, Any],
    req: dict[str, Any],
    resp: dict[str, Any],
    req_left: dict[str, Any],
    resp_left: dict[str, Any],
) -> dict[str, Any]:
    """What an interaction holds beyond the call and its answer, by where it was
    (``request``, ``response``, ``interaction``); ``{}`` when nothing."""
    leftovers: dict[str, Any] = {}
    other_req = {k: _plain(v) for k, v in req.items() if k not in _REQUEST_KEYS}
    other_resp = {k: _plain(v) for k, v in resp.items() if k not in _RESPONSE_KEYS}
    status = resp.get("status")
    if isinstance(status, dict):
        rest = {k: _plain(v) for k, v in status.items() if k not in ("code", "message")}
        if rest:
            other_resp["status"] = rest
    if req_left:
        other_req["body"] = req_left
    if resp_left:
        other_resp["body"] = resp_left
    if other_req:
        leftovers["request"] = other_req
    if other_resp:
        leftovers["response"] = other_resp
    other = {k: _plain(v) for k, v in item.items() if k not in ("request", "response")}
    if other:
        leftovers["interaction"] = other
    return leftovers


def _body(part: dict[str, Any], headers: Any) -> tuple[Any, dict[str, Any]]:
    """``(body value, leftover keys of a body mapping)`` for a request or response."""
    if "parsed_body" in part:
        return _plain(part["parsed_body"]), {}
    body = part.get("body")
    left: dict[str, Any] = {}
    if isinstance(body, dict) and "string" in body:
        left = {k: _plain(v) for k, v in body.items() if k != "string"}
        body = body["string"]
    elif isinstance(body, dict):
        return _plain(body), {}
    return decode_body(body, _content_type(headers)), left


def _content_type(headers: Any) -> str:
    if not isinstance(headers, dict):
        return ""
    for name, value in headers.items():
        if str(name).lower() == "content-type":
            if isinstance(value, list) and value:
                value = value[0]
            if is_binary_envelope(value):
                try:
                    return base64.b64decode(value["data"]).decode("utf-8", "replace").lower()
                except ValueError:
                    return ""
            return str(value).lower()
    return ""


def decode_body(raw: Any, content_type: str = "") -> Any:
    """A recorded body as a value: bytes -> the binary envelope; an SSE stream -> the
    ``_sse`` object; JSON text of an object or array -> that JSON; other text unchanged."""
    if raw is None:
        return None
    if isinstance(raw, bytes | bytearray):
        return binary_envelope(bytes(raw))
    if not isinstance(raw, str):
        return _plain(raw)
    head = raw.lstrip()
    if "text/event-stream" in content_type or head.startswith(("data:", "event:")):
        return {"_sse": True, "text": raw, "events": parse_sse(raw)}
    if head[:1] in ("{", "["):
        try:
            value = loads_json(raw)
        except ValueError:
            return raw
        if isinstance(value, dict | list):
            return value
    return raw


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The events of a server-sent-events stream (WHATWG HTML, "event stream
    interpretation"): blank-line separated; ``data`` lines joined with newlines and parsed
    as JSON when they are JSON (``[DONE]`` stays text); ``event``, ``id``, ``retry`` kept;
    comment lines (``:``) skipped."""
    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    data: list[str] = []

    def dispatch() -> None:
        nonlocal current, data
        if data or current:
            event = dict(current)
            if data:
                joined = "\n".join(data)
                try:
                    event["data"] = (
                        loads_json(joined) if joined.lstrip()[:1] in ("{", "[") else joined
                    )
                except ValueError:
                    event["data"] = joined
            events.append(event)
        current, data = {}, []

    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            dispatch()
            continue
        if line.startswith(":"):
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name in ("event", "id", "retry"):
            current[name] = value
    dispatch()
    return events


def _plain_leaf(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return binary_envelope(bytes(value))
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    return value


def _plain(value: Any) -> Any:
    """``value`` with YAML-only types made JSON: bytes -> binary envelope, dates and
    timestamps -> ISO-8601 text, non-string keys -> text (sets are refused when parsing).
    Without recursion: values may be nested up to ``MAX_DEPTH`` levels."""
    if not isinstance(value, dict | list | tuple):
        return _plain_leaf(value)
    root: list[Any] = [None]
    # (source container, target container, or the slot of the parent to fill)
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        source, parent, slot = stack.pop()
        if isinstance(source, dict):
            target: Any = {}
            parent[slot] = target
            for key, item in source.items():
                name = key if isinstance(key, str) else str(key)
                if isinstance(item, dict | list | tuple):
                    target[name] = None
                    stack.append((item, target, name))
                else:
                    target[name] = _plain_leaf(item)
        else:
            target = [None] * len(source)
            parent[slot] = target
            for index, item in enumerate(source):
                if isinstance(item, dict | list | tuple):
                    stack.append((item, target, index))
                else:
                    target[index] = _plain_leaf(item)
    return root[0]
