"""The replay report: what a replay served, call by call, in one typed shape with one JSON
schema (docs/format.md, "Replay semantics").

The agent's ``Replayer`` builds it and writes ``ReplayReport.to_json()`` to
``CASSETTE_REPORT`` (``report_sink.py``), and each call as it is served to the report's
journal (``PATH.journal``, every process of the run); the loop and the pytest plugin read
the run's report back with ``ReplayReport.read_run`` (the file, or the journal when it
holds calls the file lacks). ``from_json`` (and ``read``) also take the combined report
of a process that wrapped several dispatchers (``{"mode", "wrappers": [report, ...]}``:
their calls renumbered in order, misses, repeats and unused seqs joined). The JSON::

    {"mode": "replay", "cassette": path or None, "entries": int, "used": int,
     "unused_seqs": [int], "repeats": [{"tool", "digest", "calls", "recorded"}],
     "misses": [{"tool", "digest", "args", "nearest": [candidate]}],
     "calls": [{"n", "tool", "digest", "seq": int | None,
                "outcome": "hit" | "miss" | "exhausted" | "error" | "new" | "pinned"}],
     "new_calls": [{"tool", "digest", "args", "nearest"}], "new_cassette": path or None}

``new_calls`` and ``new_cassette`` are there only when the replay ran under a new-calls
policy other than ``error`` (``new_calls.py``): the calls answered live, each with its
nearest recorded calls as a miss has them, and where ``record`` writes them (made at the
first new call: a run with none leaves no file).

Reading is lenient about what may be left out (a field absent takes its default: a call's
``n`` its position, ``digest`` ``""``, ``seq`` ``None``) and strict about what is there: a
field of the wrong type raises ``ReplayReportError`` naming the file and the field. Fields
of the report the schema does not name are kept (``extra``, written after the others: an
MCP replay's ``"mcp"``); unknown fields of a call, repeat or miss are dropped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..format.errors import CassetteError

#: the report's journal: ``PATH`` + this (``report_sink``: every call of every process)
JOURNAL_SUFFIX = ".journal"

#: what a call's ``outcome`` says: served (``hit``), a recorded error served (``error``),
#: never recorded (``miss``), past the last recording of its key (``exhausted``), either of
#: those answered live under a new-calls policy (``new``), answered by a pinned fixture
#: (``pinned``)
OUTCOMES = ("hit", "error", "miss", "exhausted", "new", "pinned")


class ReplayReportError(CassetteError, ValueError):
    """A replay report that does not follow the schema (see the module doc). The message
    names the file (when known) and the field. Attributes: ``path``, ``field``."""

    def __init__(self, path: str | Path | None, why: str, where: str = "") -> None:
        self.path = None if path is None else str(path)
        self.field = where
        head = f"{path}: " if path is not None else ""
        what = f"replay report field {where!r}: " if where else ""
        super().__init__(f"{head}{what}{why}")


@dataclass(frozen=True)
class CallRecord:
    """One call of the replay, in call order.

    Attributes:
        n: its 1-based number.
        tool: the tool called.
        digest: its args digest under the rules (the key is ``(tool, digest)``).
        seq: the recorded entry that served it, ``None`` for a miss or an exhausted call.
        outcome: one of ``OUTCOMES``.
    """

    n: int
    tool: str
    digest: str
    seq: int | None
    outcome: str

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "tool": self.tool,
            "digest": self.digest,
            "seq": self.seq,
            "outcome": self.outcome,
        }


@dataclass(frozen=True)
class KeyRepeat:
    """A key called more than once, or called and recorded more than once: its call
    count against its recorded count (served in recorded order)."""

    tool: str
    digest: str
    calls: int
    recorded: int

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "digest": self.digest, "calls": self.calls,
                "recorded": self.recorded}  # fmt: skip


@dataclass(frozen=True)
class Miss:
    """A call whose key was never recorded.

    Attributes:
        tool, digest: its key.
        args: its args as JSON (redacted as the cassette's config redacts).
        nearest: the nearest recorded calls of the same tool, as ``Candidate.to_dict``
            gives them (``{"seq", "args_digest", "differences": [...]}``).
    """

    tool: str
    digest: str
    args: Any
    nearest: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "digest": self.digest, "args": self.args,
                "nearest": list(self.nearest)}  # fmt: skip


@dataclass(frozen=True)
class ReplayReport:
    """What one replay served (see the module doc).

    Attributes:
        mode: ``"replay"`` (``"record"`` for a recorder's report read back, which has no
            calls; ``"mixed"`` for several wrappers of different modes).
        cassette: the cassette replayed, or ``None``.
        entries: its number of entries, or ``None`` when the report does not say.
        used: recorded entries served at least once, or ``None`` when not said.
        unused_seqs: the seqs of the entries never served.
        repeats: the repeated keys.
        misses: the calls never recorded, in call order.
        calls: every call in order; ``None`` when the report has no ``calls`` (a
            recorder's report).
        new_calls: the calls answered live under a new-calls policy, in call order;
            ``None`` when the replay ran under ``error`` (no such policy).
        new_cassette: where the ``record`` policy writes the new calls, else ``None``.
        extra: the report's other fields, kept as they were.
    """

    mode: str = "replay"
    cassette: str | None = None
    entries: int | None = None
    used: int | None = None
    unused_seqs: tuple[int, ...] = ()
    repeats: tuple[KeyRepeat, ...] = ()
    misses: tuple[Miss, ...] = ()
    calls: tuple[CallRecord, ...] | None = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    new_calls: tuple[Miss, ...] | None = None
    new_cassette: str | None = None

    # -- what readers ask ----------------------------------------------------------------
    def count(self, *outcomes: str) -> int:
        """How many calls had one of ``outcomes``."""
        return sum(1 for c in self.calls or () if c.outcome in outcomes)

    @property
    def hits(self) -> int:
        """Calls served from the cassette (a recorded error served counts too)."""
        return self.count("hit", "error")

    @property
    def repeated_calls(self) -> int:
        """Calls of a key beyond its first call (summed over ``repeats``)."""
        return sum(max(0, r.calls - 1) for r in self.repeats)

    # -- JSON ----------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The report as JSON data, in the schema's field order (the module doc), then
        ``extra``."""
        return {
            "mode": self.mode,
            "cassette": self.cassette,
            "entries": self.entries,
            "used": self.used,
            "unused_seqs": list(self.unused_seqs),
            "repeats": [r.to_json() for r in self.repeats],
            "misses": [m.to_json() for m in self.misses],
            "calls": None if self.calls is None else [c.to_json() for c in self.calls],
            **(
                {}
                if self.new_calls is None
                else {
                    "new_calls": [m.to_json() for m in self.new_calls],
                    "new_cassette": self.new_cassette,
                }
            ),
            **self.extra,
        }

    @classmethod
    def from_json(cls, data: Any, source: str | Path | None = None) -> ReplayReport:
        """The report of ``data`` (a parsed report: one wrapper's, or the combined form of
        several). ``source`` names the file in errors.

        Raises:
            ReplayReportError: ``data`` is not an object, or a field has the wrong type.
        """
        if not isinstance(data, Mapping):
            raise ReplayReportError(source, "the replay report is not a JSON object")
        reader = _Reader(source)
        wrappers = data.get("wrappers")
        if isinstance(wrappers, list):
            return _joined(reader, data, wrappers)
        return _one(reader, data, "")

    @classmethod
    def read(cls, path: str | Path) -> ReplayReport:
        """The report in the file at ``path``.

        Raises:
            FileNotFoundError, OSError: the file cannot be read.
            ValueError: it is not JSON (``json.JSONDecodeError``).
            ReplayReportError: it does not follow the schema.
        """
        return cls.from_json(json.loads(Path(path).read_bytes()), source=path)

    @classmethod
    def read_run(cls, path: str | Path) -> ReplayReport:
        """The report of a whole run at ``path``: the report file as ``read`` gives it,
        unless its journal (``journal_path``) holds calls the file does not (calls of
        other processes of the run: a forked child, a second program; or calls made after
        the file was last written: an agent that ended with ``os._exit`` or was killed).
        Then the report is rebuilt from the journal: every call of every process in the
        order they were served, renumbered, with their misses; ``used``, ``unused_seqs``
        and ``repeats`` counted over all of them (``extra`` from the file when it could
        be read). A journal line that cannot be read (cut by a full disk) is skipped.

        Raises:
            FileNotFoundError: neither the file nor its journal is there.
            OSError, ValueError, ReplayReportError: as ``read``, when the file is needed
                (the journal holds no call it lacks) and cannot be read.
        """
        events = journal_events(journal_path(path))
        calls = [e for e in events if isinstance(e.get("call"), Mapping)]
        try:
            report: ReplayReport | None = cls.read(path)
            problem: Exception | None = None
        except (OSError, ValueError) as exc:  # ReplayReportError is a ValueError
            report, problem = None, exc
        pids = {e.get("pid") for e in calls}
        if report is not None and len(pids) <= 1 and len(report.calls or ()) >= len(calls):
            return report
        if not calls and problem is not None:
            raise problem
        return _from_journal(events, path, report)


#: the report fields the schema names (the rest go to ``extra``)
_FIELDS = (
    "mode", "cassette", "entries", "used", "unused_seqs", "repeats", "misses", "calls",
    "new_calls", "new_cassette",
)  # fmt: skip


class _Reader:
    """Typed field reads that raise ``ReplayReportError`` naming the file and field."""

    def __init__(self, source: str | Path | None) -> None:
        self.source = source

    def fail(self, where: str, why: str) -> ReplayReportError:
        return ReplayReportError(self.source, why, where)

    def value(self, obj: Mapping[str, Any], key: str, where: str, kind: type, default: Any) -> Any:
        """``obj[key]`` when it is a ``kind`` (a bool is no int), ``default`` when absent or
        null."""
        value = obj.get(key)
        if value is None:
            return default
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise self.fail(
                f"{where}{key}", f"expected {kind.__name__}, got {type(value).__name__}"
            )
        return value

    def text(self, obj: Mapping[str, Any], key: str, where: str, default: Any = "") -> Any:
        return self.value(obj, key, where, str, default)

    def number(self, obj: Mapping[str, Any], key: str, where: str, default: Any = 0) -> Any:
        return self.value(obj, key, where, int, default)

    def rows(self, obj: Mapping[str, Any], key: str, where: str) -> list[Any] | None:
        """The list at ``key`` (``None`` when absent or null)."""
        return self.value(obj, key, where, list, None)  # type: ignore[no-any-return]

    def objects(self, obj: Mapping[str, Any], key: str, where: str) -> list[tuple[str, Any]]:
        """The objects of the list at ``key``, each with its field path."""
        out = []
        for i, row in enumerate(self.rows(obj, key, where) or []):
            at = f"{where}{key}[{i}]"
            if not isinstance(row, Mapping):
                raise self.fail(at, f"expected an object, got {type(row).__name__}")
            out.append((f"{at}.", row))
        return out


def journal_path(path: str | Path) -> Path:
    """The journal of the report at ``path``: ``PATH.journal`` (see ``report_sink``)."""
    p = Path(path)
    return p.with_name(p.name + JOURNAL_SUFFIX)


def journal_events(path: Path) -> list[Mapping[str, Any]]:
    """The journal's lines as objects in the order they were served (``[]`` when there is
    no journal): zero bytes between lines skipped (what a process's region of the file did
    not fill, ``report_sink._Region``), a line that is not a JSON object skipped, and the
    lines ordered by their ``t`` when every line has one (each process stores its lines in
    its own regions: file order is served order within a process only)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    events = []
    timed = True
    for line in data.replace(b"\0", b"\n").splitlines():
        if not line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, Mapping):
            events.append(event)
            t = event.get("t")
            timed = timed and isinstance(t, int) and not isinstance(t, bool)
    if timed:
        events.sort(key=lambda event: event["t"])  # stable: file order for equal times
    return events


def _from_journal(
    events: list[Mapping[str, Any]], source: str | Path, report: ReplayReport | None
) -> ReplayReport:
    """The run's report rebuilt from its journal's ``events`` (see ``read_run``)."""
    r = _Reader(f"{journal_path(source)}")
    headers: dict[Any, Mapping[str, Any]] = {}
    order: list[Any] = []  # the cassettes, first seen first
    seqs: dict[Any, list[int]] = {}
    served: dict[Any, set[int]] = {}
    keys: dict[tuple[Any, str, str], list[int]] = {}
    calls: list[CallRecord] = []
    misses: list[Miss] = []
    new: list[Miss] = []
    for i, event in enumerate(events):
        where = f"line {i + 1}: "
        header = event.get("header")
        if isinstance(header, Mapping):
            headers.setdefault(event.get("engine"), header)
            cassette = header.get("cassette")
            if cassette not in seqs:
                order.append(cassette)
                seqs[cassette] = [s for s in header.get("seqs") or () if isinstance(s, int)]
            continue
        row = event.get("call")
        if not isinstance(row, Mapping):
            continue
        cassette = headers.get(event.get("engine"), {}).get("cassette")
        call = _call(r, where, row, len(calls) + 1)
        calls.append(CallRecord(len(calls) + 1, call.tool, call.digest, call.seq, call.outcome))
        miss = event.get("miss")
        if isinstance(miss, Mapping):
            (new if call.outcome == "new" else misses).append(_miss(r, where + "miss.", miss))
        if call.outcome in ("hit", "error") and call.seq is not None:
            served.setdefault(cassette, set()).add(call.seq)
        # a key never recorded (a miss, a new call of one, a pinned call) is no repeat
        if call.outcome not in ("miss", "pinned") and event.get("recorded") != 0:
            recorded = event.get("recorded")
            count = keys.setdefault((cassette, call.tool, call.digest), [0, 0])
            count[0] += 1
            count[1] = recorded if isinstance(recorded, int) else count[1]
    first = order[0] if order else None
    first_header = next((h for h in headers.values() if h.get("cassette") == first), {})
    entries = first_header.get("entries")
    return ReplayReport(
        mode="replay",
        cassette=first if isinstance(first, str) else None,
        entries=entries if isinstance(entries, int) else None,
        used=len(served.get(first, ())),
        unused_seqs=tuple(s for c in order for s in seqs[c] if s not in served.get(c, set())),
        repeats=tuple(
            KeyRepeat(tool, digest, n, recorded)
            for (_, tool, digest), (n, recorded) in keys.items()
            if n > 1 or (n >= 1 and recorded > 1)  # keys.replay_key.is_repeated
        ),
        misses=tuple(misses),
        calls=tuple(calls),
        extra=dict(report.extra) if report is not None else {},
        new_calls=tuple(new)
        if new or (report is not None and report.new_calls is not None)
        else None,
    )


def _call(r: _Reader, where: str, row: Mapping[str, Any], position: int) -> CallRecord:
    return CallRecord(
        r.number(row, "n", where, None) or position,
        r.text(row, "tool", where),
        r.text(row, "digest", where),
        r.number(row, "seq", where, None),
        r.text(row, "outcome", where),
    )


def _repeat(r: _Reader, where: str, row: Mapping[str, Any]) -> KeyRepeat:
    return KeyRepeat(
        r.text(row, "tool", where),
        r.text(row, "digest", where),
        r.number(row, "calls", where),
        r.number(row, "recorded", where),
    )


def _miss(r: _Reader, where: str, row: Mapping[str, Any]) -> Miss:
    nearest = tuple(dict(cand) for _, cand in r.objects(row, "nearest", where))
    return Miss(r.text(row, "tool", where), r.text(row, "digest", where), row.get("args"), nearest)


def _seqs(r: _Reader, data: Mapping[str, Any], where: str) -> tuple[int, ...]:
    seqs = r.rows(data, "unused_seqs", where) or []
    for i, seq in enumerate(seqs):
        if not isinstance(seq, int) or isinstance(seq, bool):
            raise r.fail(f"{where}unused_seqs[{i}]", f"expected int, got {type(seq).__name__}")
    return tuple(seqs)


def _one(r: _Reader, data: Mapping[str, Any], where: str) -> ReplayReport:
    """One wrapper's report."""
    calls = None
    if r.rows(data, "calls", where) is not None:
        calls = tuple(
            _call(r, at, row, i) for i, (at, row) in enumerate(r.objects(data, "calls", where), 1)
        )
    return ReplayReport(
        mode=r.text(data, "mode", where, "replay"),
        cassette=r.text(data, "cassette", where, None),
        entries=r.number(data, "entries", where, None),
        used=r.number(data, "used", where, None),
        unused_seqs=_seqs(r, data, where),
        repeats=tuple(_repeat(r, at, row) for at, row in r.objects(data, "repeats", where)),
        misses=tuple(_miss(r, at, row) for at, row in r.objects(data, "misses", where)),
        calls=calls,
        extra={k: v for k, v in data.items() if k not in _FIELDS} if not where else {},
        new_calls=None
        if r.rows(data, "new_calls", where) is None
        else tuple(_miss(r, at, row) for at, row in r.objects(data, "new_calls", where)),
        new_cassette=r.text(data, "new_cassette", where, None),
    )


def _joined(r: _Reader, data: Mapping[str, Any], wrappers: list[Any]) -> ReplayReport:
    """The combined report of several wrappers as one: calls renumbered in order, misses,
    repeats and unused seqs joined; ``cassette``, ``entries`` and ``used`` the first
    wrapper's; a wrapper that is not an object is skipped."""
    parts = [
        _one(r, sub, f"wrappers[{i}].")
        for i, sub in enumerate(wrappers)
        if isinstance(sub, Mapping)
    ]
    calls: list[CallRecord] = []
    for part in parts:
        for call in part.calls or ():
            calls.append(CallRecord(len(calls) + 1, call.tool, call.digest, call.seq, call.outcome))
    first = parts[0] if parts else ReplayReport()
    return ReplayReport(
        mode=r.text(data, "mode", "", "replay"),
        cassette=first.cassette,
        entries=first.entries,
        used=first.used,
        unused_seqs=tuple(s for p in parts for s in p.unused_seqs),
        repeats=tuple(x for p in parts for x in p.repeats),
        misses=tuple(m for p in parts for m in p.misses),
        calls=tuple(calls),
        new_calls=None
        if all(p.new_calls is None for p in parts)
        else tuple(m for p in parts for m in p.new_calls or ()),
        new_cassette=next((p.new_cassette for p in parts if p.new_cassette), None),
    )
