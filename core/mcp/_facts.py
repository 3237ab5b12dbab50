"""The server-facts sidecar: what replay needs to stand in for an MCP server besides its
tool calls.

A cassette holds one entry per ``tools/call`` and nothing else, so readers that expect
every line to be an entry (the article's loader, ``jq``) keep working. Every other request
the host made and the server answered (``initialize``, ``server/discover``, ``tools/list``,
``prompts/list``, ``resources/list``, ``resources/read``, ...) is kept next to the cassette
in ``RUN.mcp.json`` (the cassette's name with its last suffix replaced by ``.mcp.json``)::

    {"format": "cassette-tui/mcp-server-facts", "version": 1,
     "cassette": "RUN.jsonl", "server": {"command": ["mcp-server-git", "-r", "repo"]},
     "exchanges": [{"method": "initialize", "params": {...}, "result": {...}},
                   {"method": "tools/list", "params": {}, "result": {"tools": [...]}},
                   {"method": "resources/read", "params": {...},
                    "error": {"code": -32602, "message": "...", "data": ...}}]}

Two optional lists keep what is neither a tool call nor an answered request, in order:

- ``server_messages``: what the server sent the host on its own, and the lines on its
  stdout that are not JSON-RPC, each placed between the answers around it::

      {"message": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
       "before": {"seq": 2}, "after": {"seq": 1}}
      {"message": {"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", ...},
       "before": {"seq": 3}, "after": {"exchange": 2}, "host_answer": {"result": {...}}}
      {"line": "server ready on stdio", "before": {"exchange": 0}, "after": null}

  ``before``/``after`` name the answer forwarded right after/before it (``{"seq": n}`` a
  cassette entry, ``{"exchange": i}`` an exchange here; ``null``: none). Replay sends a
  message just before its ``before`` answer, or after its ``after`` answer when nothing
  followed it, and one recorded before any answer (``after`` null) as the session
  starts; a request's ``host_answer`` is what the host answered live.
- ``kept_aside``: an answered call that cannot be a cassette entry or an exchange (its
  arguments nested past the cassette's 600 levels, a result that is not an object), kept
  as the two lines' text: ``{"method", "id", "reason", "request", "answer"}``.

``params`` are stored without ``_meta`` (transport stamps such as progress tokens and, in
newer protocol versions, the client's info), in the order the host sent the requests.

Replay answers a request from the exchanges of its method whose ``params`` (without
``_meta``) are equal, in recorded order, repeating the last one (list calls are reads);
``initialize`` and ``server/discover`` fall back to the first recorded answer whatever the
client sent, since every host names itself differently.
"""

from __future__ import annotations

import contextlib
import errno
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from cassette_tui.core.format.atomic import write_atomic
from cassette_tui.core.format.digest import canonical_json
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.format.jsonvalue import decode_nonfinite, dumps_strict
from cassette_tui.core.scan.redact import Redactor
from cassette_tui.core.scan.sidecar import JOURNAL, redact_sidecar, sidecar_doc

from ._same_file import FileId, identity, names

FORMAT = "cassette-tui/mcp-server-facts"
VERSION = 1
#: a server message's ``stream`` when it came on Streamable HTTP's standalone GET stream
STANDALONE = "standalone"
#: handshake methods answered as recorded whatever the client's params
HANDSHAKES = frozenset({"initialize", "server/discover"})


def sidecar_path(cassette: str | Path) -> Path:
    """``RUN.jsonl`` -> ``RUN.mcp.json`` (a name without a suffix gets ``.mcp.json``)."""
    path = Path(cassette)
    return (
        path.with_name(path.stem + ".mcp.json")
        if path.suffix
        else path.with_name(path.name + ".mcp.json")
    )


def without_meta(params: Any) -> Any:
    """``params`` without its ``_meta`` key (a copy; non-dicts unchanged, ``None`` -> ``{}``)."""
    if params is None:
        return {}
    if isinstance(params, dict):
        return {k: v for k, v in params.items() if k != "_meta"}
    return params


@dataclass
class Exchange:
    """One answered request: ``result`` or ``error`` (``{"code", "message", "data"?}``)."""

    method: str
    params: Any
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "params": self.params}
        if self.error is not None:
            out["error"] = self.error
        else:
            out["result"] = self.result
        return out


@dataclass
class ServerMessage:
    """A server-to-host message (``message``: the JSON-RPC object), or a line of the
    server's stdout that is not one (``line``), placed by the answers around it (see the
    module docstring); ``host_answer`` (``{"result"}`` or ``{"error"}``) for a request."""

    message: Any = None
    line: str | None = None
    before: dict[str, int] | None = None
    after: dict[str, int] | None = None
    host_answer: dict[str, Any] | None = None
    #: ``"standalone"``: it came on Streamable HTTP's standalone GET stream (no request's)
    stream: str | None = None

    @property
    def is_request(self) -> bool:
        m = self.message
        return isinstance(m, dict) and isinstance(m.get("method"), str) and "id" in m

    def describe(self) -> str:
        """``notifications/tools/list_changed``, ``request sampling/createMessage``,
        ``line 'server ready'``."""
        if self.line is not None:
            return f"stdout line {self.line[:60]!r}"
        method = self.message.get("method") if isinstance(self.message, dict) else None
        if method is None:
            return "an answer to no request"
        return f"request {method}" if self.is_request else str(method)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = (
            {"line": self.line} if self.line is not None else {"message": self.message}
        )
        out["before"] = self.before
        out["after"] = self.after
        if self.host_answer is not None:
            out["host_answer"] = self.host_answer
        if self.stream is not None:
            out["stream"] = self.stream
        return out


@dataclass
class ServerFacts:
    """The sidecar's content. ``answer`` looks a request up for replay."""

    command: list[str] = field(default_factory=list)
    cassette: str = ""
    exchanges: list[Exchange] = field(default_factory=list)
    server_messages: list[ServerMessage] = field(default_factory=list)
    kept_aside: list[dict[str, Any]] = field(default_factory=list)
    _served: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "cassette": self.cassette,
            "server": {"command": list(self.command)},
            "exchanges": [e.to_dict() for e in self.exchanges],
            **(
                {"server_messages": [m.to_dict() for m in self.server_messages]}
                if self.server_messages
                else {}
            ),
            **({"kept_aside": list(self.kept_aside)} if self.kept_aside else {}),
        }

    def header(self) -> dict[str, Any]:
        """A journal's first line (``scan.sidecar.sidecar_doc``): the document without
        its lists, marked ``"journal": true``."""
        return {
            "format": FORMAT,
            "version": VERSION,
            JOURNAL: True,
            "cassette": self.cassette,
            "server": {"command": list(self.command)},
        }

    def write(self, path: str | Path, *, overwrite: bool, redactor: Redactor | None = None) -> None:
        """Write the sidecar atomically (temporary file, fsync, rename). With ``redactor``
        (``record = true``), every secret in it is written as its placeholder
        (``scan.sidecar.redact_sidecar``: the command line, every exchange).

        Raises:
            FileExistsError: ``path`` exists and ``overwrite`` is false.
        """
        doc = self.to_dict()
        if redactor is not None:
            doc = redact_sidecar(doc, redactor)[0]
        text = dumps_strict(doc, indent=2, ensure_ascii=False) + "\n"
        # a lone surrogate (JSON can say "\\ud800") written as its escape: reads back the same
        write_atomic(path, [text.encode("utf-8", "backslashreplace")], overwrite=overwrite)

    @classmethod
    def read(cls, path: str | Path) -> ServerFacts:
        """Load a sidecar.

        Raises:
            CassetteFormatError: unreadable file, bad JSON, or a field of the wrong shape
                (``.path`` the sidecar, ``.field`` the field, e.g. ``exchanges[2].method``).
        """
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise CassetteFormatError.from_os_error(path, exc) from None
        doc = decode_nonfinite(sidecar_doc(raw, path))  # a journal too (a cut recording)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise CassetteFormatError(path, None, "format", f"expected {FORMAT!r}")
        if doc.get("version") != VERSION:
            raise CassetteFormatError(
                path, None, "version", f"version {doc.get('version')!r} is not {VERSION}"
            )
        server = doc.get("server") or {}
        command = server.get("command", []) if isinstance(server, dict) else []
        if not isinstance(command, list):
            raise CassetteFormatError(path, None, "server.command", "expected a list")
        rows = doc.get("exchanges")
        if not isinstance(rows, list):
            raise CassetteFormatError(path, None, "exchanges", "expected a list")
        exchanges = []
        for i, row in enumerate(rows):
            where = f"exchanges[{i}]"
            if not isinstance(row, dict) or not isinstance(row.get("method"), str):
                raise CassetteFormatError(path, None, f"{where}.method", "expected a string")
            result, error = row.get("result"), row.get("error")
            if ("result" in row) == ("error" in row):
                raise CassetteFormatError(path, None, where, "needs one of result/error")
            if result is not None and not isinstance(result, dict):
                raise CassetteFormatError(path, None, f"{where}.result", "expected an object")
            if error is not None and not (
                isinstance(error, dict)
                and isinstance(error.get("code"), int)
                and isinstance(error.get("message"), str)
            ):
                raise CassetteFormatError(
                    path, None, f"{where}.error", "expected {code: int, message: str}"
                )
            exchanges.append(Exchange(row["method"], row.get("params", {}), result, error))
        messages = [
            _server_message(path, i, row) for i, row in enumerate(doc.get("server_messages", []))
        ]
        aside = doc.get("kept_aside", [])
        if not isinstance(aside, list):
            raise CassetteFormatError(path, None, "kept_aside", "expected a list")
        return cls(
            [str(c) for c in command],
            str(doc.get("cassette", "")),
            exchanges,
            messages,
            aside,
        )

    def answer(self, method: str, params: Any) -> Exchange | None:
        """The recorded answer to ``method`` with ``params`` (``_meta`` ignored): equal
        params in recorded order, the last one repeated; for ``initialize`` and
        ``server/discover`` the first recorded answer when no params are equal. ``None``
        when the request was never recorded."""
        wanted = canonical_json(without_meta(params))
        same = [
            e
            for e in self.exchanges
            if e.method == method and canonical_json(without_meta(e.params)) == wanted
        ]
        if not same:
            handshakes = [e for e in self.exchanges if e.method == method]
            return handshakes[0] if method in HANDSHAKES and handshakes else None
        key = (method, wanted)
        n = self._served.get(key, 0)
        self._served[key] = n + 1
        return same[min(n, len(same) - 1)]

    def read_only_tools(self) -> set[str]:
        """The tools a recorded ``tools/list`` annotates ``readOnlyHint`` or
        ``idempotentHint`` (the MCP spec's tool annotations)."""
        names = set()
        for exchange in self.exchanges:
            if exchange.method != "tools/list" or not isinstance(exchange.result, dict):
                continue
            for tool in exchange.result.get("tools") or []:
                notes = tool.get("annotations") if isinstance(tool, dict) else None
                if isinstance(notes, dict) and (
                    notes.get("readOnlyHint") is True or notes.get("idempotentHint") is True
                ):
                    names.add(str(tool.get("name")))
        return names

    def recorded_params(self, method: str) -> list[Any]:
        """The params recorded for ``method``, for a miss message."""
        return [e.params for e in self.exchanges if e.method == method]


def _anchor(path: str | Path, where: str, value: Any) -> dict[str, int] | None:
    if value is None:
        return None
    if (
        isinstance(value, dict)
        and len(value) == 1
        and next(iter(value)) in ("seq", "exchange")
        and isinstance(next(iter(value.values())), int)
    ):
        return dict(value)
    raise CassetteFormatError(path, None, where, 'expected {"seq": int}, {"exchange": int} or null')


def _server_message(path: str | Path, i: int, row: Any) -> ServerMessage:
    where = f"server_messages[{i}]"
    if not isinstance(row, dict) or ("message" in row) == ("line" in row):
        raise CassetteFormatError(path, None, where, "needs one of message/line")
    if "line" in row and not isinstance(row["line"], str):
        raise CassetteFormatError(path, None, f"{where}.line", "expected a string")
    if "message" in row and not isinstance(row["message"], dict):
        raise CassetteFormatError(path, None, f"{where}.message", "expected an object")
    answer = row.get("host_answer")
    if answer is not None and not isinstance(answer, dict):
        raise CassetteFormatError(path, None, f"{where}.host_answer", "expected an object")
    stream = row.get("stream")
    if stream is not None and not isinstance(stream, str):
        raise CassetteFormatError(path, None, f"{where}.stream", "expected a string")
    return ServerMessage(
        row.get("message"),
        row.get("line"),
        _anchor(path, f"{where}.before", row.get("before")),
        _anchor(path, f"{where}.after", row.get("after")),
        answer,
        stream,
    )


class FactsJournal:
    """The sidecar while ``mcp record`` runs: created exclusively with the facts' header,
    then one line appended (and flushed) for each thing recorded (``scan.sidecar.
    sidecar_doc`` lists the events), so a session of 10,000 server messages writes each
    once, not the whole file each time; ``finish`` replaces it atomically with the
    document. A crash leaves the journal, which every reader of sidecars reads: nothing
    flushed is lost. With ``redactor``, each line is written redacted.

    Raises (from the constructor):
        FileExistsError: ``path`` exists.
    """

    def __init__(self, facts: ServerFacts, path: Path, redactor: Redactor | None = None) -> None:
        self.facts = facts
        self.path = path
        self.redactor = redactor
        self._fh: BinaryIO | None = open(path, "xb")  # noqa: SIM115 - for the whole session
        #: the journal's file (device, inode): ``finish`` never replaces another one
        self.identity: FileId = identity(self._fh.fileno())
        #: the write the file refused (a full disk): nothing more is appended
        self.failure: OSError | None = None
        self.add(facts.header())

    def add(self, event: dict[str, Any]) -> None:
        """Append one line (a header or an event) and flush it. A write the file refuses
        (``OSError``) is kept in ``failure``, never raised: the journal stops there (the
        recording proxy relays on, ``record._write_failure``)."""
        if self._fh is None:
            return
        if self.redactor is not None:
            event = redact_sidecar({"event": event}, self.redactor)[0]["event"]
            if "server" in event:  # the header: its command line by its flags
                event = redact_sidecar(event, self.redactor)[0]
        line = dumps_strict(event, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            self._fh.write(line.encode("utf-8", "backslashreplace"))  # a lone surrogate
            self._fh.flush()
        except OSError as exc:
            self.failure = exc
            fh, self._fh = self._fh, None
            with contextlib.suppress(OSError):
                fh.close()

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            fh.close()

    def finish(self) -> None:
        """Close the journal and put the whole document in its place, atomically, unless
        another file took the journal's path meanwhile (the user moved the journal and put
        a file there): that file is left as it is.

        Raises:
            FileExistsError: another file is at ``path`` (nothing written).
            OSError: the document could not be written (as ``ServerFacts.write``).
        """
        self.close()
        if names(self.path, self.identity) is False:
            raise FileExistsError(
                errno.EEXIST,
                "another file took its place while the session ran; it is left as it is",
            )
        self.facts.write(self.path, overwrite=True, redactor=self.redactor)
