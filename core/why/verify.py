"""Is the recording stale? The recorded calls re-issued to the live tools, with no agent
and no model, and each live answer compared with the recorded one (the article's third
signature: "replay passes, live fails: the recorded response is stale; re-record, then
diff").

Only calls marked safe are re-issued: a tool the live MCP server's ``tools/list``
annotates ``readOnlyHint: true``, or one the user allows (``--allow TOOL``, or ``allow``
under ``[tool.cassette.verify]``). Every other entry is listed as not re-issued: a write
is never replayed live. A call whose args hold a redaction placeholder
(``<redacted:KIND:HASH8>``) is not re-issued either: the live tool would get the
placeholder, not the secret.

Each re-issued entry gets a status (``classify``), by the rules ``diff`` uses:

- ``fresh``: the live answer equals the recorded one, or differs only in volatile
  metadata, at ``ignore_response`` paths, or by float noise
  (``diff.refine.classify_response_drift``: what ``diff`` calls ``metadata_drift``);
- ``stale``: it differs (``drift``: the paths, ``diff._drift.entry_drift``);
- ``error``: the live tool failed (an exception, a JSON-RPC error, an ``isError`` result,
  an HTTP 4xx/5xx status: ``format.outcome.is_error_outcome``) where the recording did
  not fail the same way;
- ``nondeterministic``: with ``repeat`` > 1, the live answers to the same args differ
  among themselves: re-recording rolls the dice again, so it is not called stale.

The live answers are written as a cassette (``write_live``) to diff against the
recording. Exit status (``VerifyResult.exit_status``): 0 every re-issued entry fresh, 1
stale, error or nondeterministic entries, 2 nothing was safe to re-issue or the MCP server
exited mid-way (the check is incomplete).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..diff._drift import entry_drift
from ..diff.model import DriftItem
from ..diff.refine import classify_response_drift
from ..format.entry import Entry
from ..format.jobs import CancelToken, JobGenerator, Progress
from ..format.jsonpath import JSONPathError, parse_path
from ..format.jsontext import sorted_json_bytes
from ..format.jsonvalue import dumps_strict
from ..format.outcome import is_error_outcome
from ..keys.volatile import response_metadata_reason
from ._live import Answer, LiveGone, LiveTools

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..keys.normalize import NormalizationRules

__all__ = [
    "Checked",
    "Status",
    "VerifyResult",
    "classify",
    "default_out",
    "verify_job",
    "write_live",
]

#: a redaction placeholder (``scan.redact.placeholder``) in a value's JSON text
_PLACEHOLDER = re.compile(r"<redacted:[A-Za-z0-9_.-]+:[0-9a-f]{8}>")
#: drift paths named per stale entry in messages (the JSON lists all)
MAX_PATHS = 5


class Status(str, Enum):
    """What re-issuing one entry found (see the module doc)."""

    FRESH = "fresh"
    STALE = "stale"
    ERROR = "error"
    NONDETERMINISTIC = "nondeterministic"
    NOT_REISSUED = "not_reissued"


@dataclass
class Checked:
    """One entry of the recording, re-issued or not.

    Attributes:
        seq, tool: the recorded entry's.
        status: see ``Status``.
        safe_by: why it was re-issued: ``"readOnlyHint"`` (the live server's annotation),
            ``"--allow"``, ``"config"`` (``verify.allow``); ``None`` when not re-issued.
        why: one sentence: why not re-issued, what the live error was, what only
            differed for a fresh entry (``""`` when there is nothing to say).
        drift: stale: recorded (a) against live (b); nondeterministic: the first live
            answer (a) against the first that differs from it (b).
        quiet: a fresh entry whose answers differ only in volatile metadata
            (``"metadata"``) or float noise (``"noise"``), else ``None``.
        metadata_paths: drift paths that are volatile metadata (a request id, a date-time:
            ``keys.volatile.response_metadata_reason``): in ``drift``, never in ``paths``.
        live_error: the live error named (``MCPError -32602: unknown tool``), or ``None``.
        recorded_error: a stale entry's recorded failure the live tool no longer gives
            (``status 429 (rate_limited)``), or ``None``.
        answers: the live answers, in order (``repeat`` of them when re-issued).
        distinct: how many different answers they hold (under the rules).
    """

    seq: int
    tool: str
    status: Status
    safe_by: str | None = None
    why: str = ""
    drift: list[DriftItem] = field(default_factory=list)
    quiet: str | None = None
    metadata_paths: list[str] = field(default_factory=list)
    live_error: str | None = None
    recorded_error: str | None = None
    answers: list[Answer] = field(default_factory=list)
    distinct: int = 0
    args: Any = None

    @property
    def paths(self) -> list[str]:
        """The JSON paths whose difference is the answer (``$.top``), each once, in order,
        volatile metadata left out; an error/response swap is ``response`` or ``error``,
        as ``bisect`` names a whole outcome."""
        out: list[str] = []
        for item in self.drift:
            if item.path in self.metadata_paths and item.part == "response":
                continue
            name = item.part if item.path == "$" else item.path
            if item.part == "error" and item.path != "$":
                name = "error" + item.path[1:]
            if name not in out:
                out.append(name)
        return out


@dataclass
class VerifyResult:
    """What ``verify_job`` found.

    Attributes:
        cassette: the path spec verified; ``live_kind``/``live_target``: ``"mcp"`` and the
            server command, or ``"dispatcher"`` and ``module:function``.
        entries: one ``Checked`` per recorded entry, in order.
        repeat: live calls per re-issued entry.
        annotations: tools whose ``readOnlyHint`` the recorded sidecar and the live
            ``tools/list`` disagree on: ``{"tool", "recorded", "live"}`` (``null``: the
            tool is not listed there); the live one decides.
        problem: why the check is incomplete (the MCP server exited: its message), or
            ``None``.
        out: the live cassette written, ``None`` when none was.
        cancelled: stopped by the user part-way.
    """

    cassette: str
    live_kind: str
    live_target: str
    entries: list[Checked] = field(default_factory=list)
    repeat: int = 1
    annotations: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None
    out: Path | None = None
    cancelled: bool = False
    allow: list[str] = field(default_factory=list)

    def of(self, status: Status) -> list[Checked]:
        return [c for c in self.entries if c.status is status]

    @property
    def reissued(self) -> list[Checked]:
        return [c for c in self.entries if c.status is not Status.NOT_REISSUED]

    @property
    def verdict(self) -> str:
        """The first that holds: ``nothing_safe`` (no entry was safe to re-issue),
        ``incomplete`` (the server exited, or cancelled), ``stale``, ``live_error``,
        ``nondeterministic``, else ``fresh``."""
        if not self.reissued:
            return "nothing_safe"
        if self.problem is not None or self.cancelled:
            return "incomplete"
        for status, name in (
            (Status.STALE, "stale"),
            (Status.ERROR, "live_error"),
            (Status.NONDETERMINISTIC, "nondeterministic"),
        ):
            if self.of(status):
                return name
        return "fresh"

    @property
    def exit_status(self) -> int:
        """0 ``fresh``, 1 ``stale``/``live_error``/``nondeterministic``, 2 ``nothing_safe``
        or ``incomplete`` (the house convention: docs/json.md, "Exit status")."""
        return {"fresh": 0, "nothing_safe": 2, "incomplete": 2}.get(self.verdict, 1)

    def to_json(self) -> dict[str, Any]:
        """The ``verify --json`` document (docs/json.md, "`verify --json`")."""
        counts = {s.value: len(self.of(s)) for s in Status}
        return {
            "cassette": self.cassette,
            "live": {"kind": self.live_kind, "target": self.live_target},
            "repeat": self.repeat,
            "allow": list(self.allow),
            "verdict": self.verdict,
            "exit_status": self.exit_status,
            "counts": counts,
            "problem": self.problem,
            "cancelled": self.cancelled,
            "annotations": list(self.annotations),
            "entries": [_entry_json(c) for c in self.entries],
            "stale": [
                {"seq": c.seq, "tool": c.tool, "paths": c.paths} for c in self.of(Status.STALE)
            ],
            "out": str(self.out) if self.out is not None else None,
        }


def _entry_json(c: Checked) -> dict[str, Any]:
    return {
        "seq": c.seq,
        "tool": c.tool,
        "status": c.status.value,
        "safe_by": c.safe_by,
        "why": c.why,
        "paths": c.paths,
        "quiet": c.quiet,
        "metadata_paths": list(c.metadata_paths),
        "live_error": c.live_error,
        "recorded_error": c.recorded_error,
        "answers": len(c.answers),
        "distinct": c.distinct,
        "drift": [
            {
                "path": d.path,
                "a": d.a,
                "b": d.b,
                "change": d.change.value,
                "part": d.part,
            }
            for d in c.drift
        ],
    }


# -- one entry ------------------------------------------------------------------------------
def _as_entry(seq: int, tool: str, args: Any, answer: Answer) -> Entry:
    return Entry(seq, tool, args, response=answer.response, error=answer.error)


def _same_outcome(tool: str, x: Entry, y: Entry, cassette: Cassette) -> tuple[bool, str | None]:
    """Whether two outcomes of one call are the same answer under ``diff``'s rules:
    ``(True, None)`` equal as JSON (key order aside), ``(True, "metadata"|"noise")``
    differing only in volatile metadata, ``ignore_response`` paths or float noise,
    ``(False, None)`` otherwise."""
    if x.is_error != y.is_error:
        return False, None
    a, b = (x.error, y.error) if x.is_error else (x.response, y.response)
    if sorted_json_bytes(a) == sorted_json_bytes(b):
        return True, None
    if x.is_error:
        return False, None
    how = classify_response_drift(tool, a, b, cassette, relative=True)
    return (True, how) if how is not None else (False, None)


def _outcome_drift(a: Entry, b: Entry) -> list[DriftItem]:
    return [d for d in entry_drift(a, b) if d.part not in ("args", "tool")]


def _metadata_paths(a: Entry, b: Entry, drift: list[DriftItem]) -> list[str]:
    """The response paths of ``drift`` whose two values are volatile metadata, as ``diff``
    judges them (``keys.volatile.response_metadata_reason``)."""
    out = []
    for item in drift:
        if item.part != "response" or item.path == "$":
            continue
        try:
            parts = tuple(parse_path(item.path))
        except JSONPathError:
            continue
        if response_metadata_reason(a.response, b.response, parts, item.a, item.b) is not None:
            out.append(item.path)
    return out


def error_name(entry: Entry) -> str | None:
    """The failure an outcome holds, in a few words, or ``None`` when it is no error:
    ``MCPError -32602: Unknown tool: x``, ``FileNotFoundError: docs/a.md``, ``isError:
    <its first text>``, ``status 429 (rate_limited)``."""
    if entry.error is not None:
        err = entry.error
        code = err.get("code")
        head = f"{err.get('type', 'error')}" + (f" {code}" if isinstance(code, int) else "")
        return f"{head}: {err.get('message', '')}"
    response = entry.response
    if not is_error_outcome(False, response):
        return None
    if isinstance(response, dict) and response.get("isError") is True:
        texts: list[str] = [
            c["text"]
            for c in response.get("content") or []
            if isinstance(c, dict) and isinstance(c.get("text"), str)
        ]
        return "isError: " + (texts[0][:200] if texts else "(no text)")
    if isinstance(response, dict):
        for key in ("status", "status_code", "statusCode", "http_status", "code"):
            if key in response:
                detail = response.get("error") or response.get("message")
                tail = f" ({str(detail)[:120]})" if isinstance(detail, (str, int)) else ""
                return f"{key} {response[key]}{tail}"
    return str(response)[:200]


def classify(recorded: Entry, answers: list[Answer], cassette: Cassette) -> Checked:
    """The status of one re-issued entry (see the module doc) from its live ``answers``
    (at least one), under the rules ``cassette`` was loaded with (``ignore_response``).
    Key order in any object never matters."""
    tool, seq = recorded.tool, recorded.seq
    lives = [_as_entry(seq, tool, recorded.args, a) for a in answers]
    first = lives[0]
    groups: list[Entry] = [first]
    for live in lives[1:]:
        if not any(_same_outcome(tool, g, live, cassette)[0] for g in groups):
            groups.append(live)
    checked = Checked(seq, tool, Status.FRESH, answers=list(answers), distinct=len(groups))
    if len(groups) > 1:
        checked.status = Status.NONDETERMINISTIC
        checked.drift = _outcome_drift(groups[0], groups[1])
        checked.metadata_paths = _metadata_paths(groups[0], groups[1], checked.drift)
        checked.why = (
            f"{len(groups)} different answers in {len(lives)} live calls with the same args: "
            "a nondeterministic tool; re-recording rolls the dice again (pin the answer as "
            "a fixture, or normalize the paths that vary)"
        )
        return checked
    same, how = _same_outcome(tool, recorded, first, cassette)
    live_error = error_name(first)
    if same:
        checked.quiet = how
        if how == "metadata":
            checked.why = "only volatile metadata differs (ids, dates, ignore_response paths)"
        elif how == "noise":
            checked.why = "only float noise differs"
        return checked
    checked.drift = _outcome_drift(recorded, first)
    checked.metadata_paths = _metadata_paths(recorded, first, checked.drift)
    if live_error is not None:
        checked.status = Status.ERROR
        checked.live_error = live_error
        checked.why = f"the live tool failed: {live_error}"
        return checked
    checked.status = Status.STALE
    paths = checked.paths
    shown = ", ".join(paths[:MAX_PATHS]) + (", ..." if len(paths) > MAX_PATHS else "")
    checked.why = f"the live answer differs at {shown}"
    recorded_error = checked.recorded_error = error_name(recorded)
    if recorded_error is not None:
        checked.why += (
            f" (the recording holds a failure the live tool no longer gives: {recorded_error})"
        )
    return checked


# -- the job --------------------------------------------------------------------------------
def _safe_by(
    tool: str, read_only: dict[str, bool], allow: set[str], config_allow: set[str]
) -> str | None:
    if read_only.get(tool):
        return "readOnlyHint"
    if tool in allow:
        return "--allow"
    if tool in config_allow:
        return "config"
    return None


def annotation_disagreements(
    recorded: dict[str, bool] | None, live: dict[str, bool], tools: list[str]
) -> list[dict[str, Any]]:
    """The tools of ``tools`` (the cassette's, in order) whose ``readOnlyHint`` the
    recorded sidecar's ``tools/list`` and the live one disagree on: ``{"tool",
    "recorded", "live"}`` (``None``: not listed on that side). ``[]`` without a recorded
    sidecar."""
    if recorded is None:
        return []
    out = []
    for tool in dict.fromkeys(tools):
        r, v = recorded.get(tool), live.get(tool)
        if r is None and v is None:
            continue
        if bool(r) != bool(v):
            out.append({"tool": tool, "recorded": r, "live": v})
    return out


def verify_job(
    cassette: Cassette,
    live: LiveTools,
    *,
    spec: str | None = None,
    repeat: int = 1,
    allow: list[str] | tuple[str, ...] = (),
    config_allow: list[str] | tuple[str, ...] = (),
    recorded_read_only: dict[str, bool] | None = None,
    cancel: CancelToken | None = None,
) -> JobGenerator[VerifyResult]:
    """Re-issue ``cassette``'s safe calls to ``live``, ``repeat`` times each, and classify
    every entry (module doc). Yields ``Progress("verify", done, total, "calls")``.

    Args:
        spec: the cassette's path spec as given (default: its path).
        allow, config_allow: tools allowed by ``--allow`` and by the config.
        recorded_read_only: the recorded sidecar's annotations
            (``_live.read_only_tools`` of its ``tools/list``), to say where they disagree.
        cancel: checked between calls; a cancel ends the job with ``cancelled`` set.

    An MCP server that exits mid-way (``ServerGone``) ends the re-issuing: the call it did
    not answer is an ``error`` entry, the ones left are not re-issued, and ``problem`` says
    so. Other failures of the live tool are answers (``error`` entries).
    """
    read_only = live.read_only()
    allowed, configured = set(allow), set(config_allow)
    result = VerifyResult(
        spec or str(cassette.path), live.kind, live.target, repeat=repeat,
        allow=sorted(allowed | configured),
    )  # fmt: skip
    tools = [cassette.tool(i) for i in range(len(cassette))]
    result.annotations = annotation_disagreements(recorded_read_only, read_only, tools)
    plan: list[tuple[int, str | None]] = []
    for i, tool in enumerate(tools):
        plan.append((i, _safe_by(tool, read_only, allowed, configured)))
    total = sum(1 for _, by in plan if by is not None) * repeat
    done = 0
    yield Progress("verify", 0, total, "calls")
    stopped: str | None = None
    for i, by in plan:
        entry = cassette.entry_view(i)
        if by is None or stopped is not None or result.cancelled:
            why = _not_safe_why(live) if by is None else stopped or "cancelled"
            result.entries.append(
                Checked(entry.seq, entry.tool, Status.NOT_REISSUED, why=why, args=entry.args)
            )
            continue
        if _PLACEHOLDER.search(sorted_json_bytes(entry.args).decode("utf-8", "replace")):
            result.entries.append(
                Checked(
                    entry.seq,
                    entry.tool,
                    Status.NOT_REISSUED,
                    args=entry.args,
                    why="its args hold a redacted value: the live tool would get the "
                    "placeholder, not the secret",
                )  # fmt: skip
            )
            continue
        answers: list[Answer] = []
        try:
            for _ in range(repeat):
                if cancel is not None and cancel.cancelled:
                    break
                answers.append(live.call(entry.tool, entry.args))
                done += 1
                yield Progress("verify", done, total, "calls")
        except LiveGone as exc:
            result.problem = str(exc)
            stopped = f"not re-issued: the MCP server exited at seq {entry.seq}"
            failed = Checked(entry.seq, entry.tool, Status.ERROR, safe_by=by, args=entry.args,
                             live_error=str(exc), why=f"the live tool failed: {exc}")  # fmt: skip
            failed.answers = [*answers, Answer(error={"type": "ServerGone", "message": str(exc)})]
            result.entries.append(failed)
            continue
        if not answers:  # cancelled before the first call of this entry
            result.cancelled = True
            result.entries.append(
                Checked(
                    entry.seq, entry.tool, Status.NOT_REISSUED, why="cancelled", args=entry.args
                )  # fmt: skip
            )
            continue
        checked = classify(entry, answers, cassette)
        checked.safe_by, checked.args = by, entry.args
        result.entries.append(checked)
        if cancel is not None and cancel.cancelled:
            result.cancelled = True
    return result


def _not_safe_why(live: LiveTools) -> str:
    marks = "readOnlyHint on the live server, " if live.kind == "mcp" else ""
    return f"not re-issued (not marked safe: {marks}--allow TOOL or [verify] allow)"


# -- the live cassette ---------------------------------------------------------------------
def default_out(spec: str) -> Path:
    """``RUN.live.jsonl`` beside ``RUN.jsonl`` (a path spec's ``#task=...`` part left out:
    ``runs.json#task=3`` -> ``runs.task-3.live.jsonl``)."""
    file, _, selector = spec.partition("#")
    path = Path(file)
    stem = path.stem if path.suffix else path.name
    if selector:
        stem += "." + re.sub(r"[^A-Za-z0-9]+", "-", selector).strip("-")
    return path.with_name(f"{stem}.live.jsonl")


def live_lines(result: VerifyResult, rules: NormalizationRules | None) -> list[bytes]:
    """The live cassette's lines: the first live answer of each re-issued entry, in order
    (every answer of a ``nondeterministic`` one, so ``diff`` sees the same args answered
    differently within the run), seq from 1, with ``recorded_at`` (when written),
    ``duration_ms`` and ``verified_seq`` (the recorded entry's seq). A cassette ``diff``
    and ``replay`` read as any recording."""
    from ..format.cassette import dump_line

    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    lines: list[bytes] = []
    seq = 0
    for checked in result.entries:
        answers = checked.answers
        if checked.status is not Status.NONDETERMINISTIC:
            answers = answers[:1]
        for answer in answers:
            if answer.error is not None and answer.error.get("type") == "ServerGone":
                continue  # no answer was given: nothing to record
            seq += 1
            extra = {"recorded_at": stamp, "duration_ms": answer.duration_ms,
                     "verified_seq": checked.seq}  # fmt: skip
            entry = Entry(seq, checked.tool, checked.args, response=answer.response,
                          error=answer.error, extra=extra)  # fmt: skip
            lines.append(dump_line(entry, rules))
    return lines


def write_live(
    result: VerifyResult,
    out: Path,
    rules: NormalizationRules | None,
    *,
    overwrite: bool,
    live: LiveTools | None = None,
) -> Path | None:
    """Write the live answers to ``out`` atomically (``format.atomic``), set
    ``result.out``; ``None`` (nothing written) when no call was answered. For an MCP
    server (``live`` an ``McpTools``), its live ``initialize`` and ``tools/list`` go to
    the sidecar ``OUT.mcp.json`` too, so ``diff RUN.jsonl OUT`` reports a contract change
    (a tool's schema or annotations) beside the stale answers.

    Raises:
        TargetExists: ``out`` exists and ``overwrite`` is false.
        NotReplaceable: ``out`` is not a regular file.
        OSError: the folder cannot be written.
    """
    from ..format.atomic import write_atomic

    lines = live_lines(result, rules)
    if not lines:
        return None
    facts = getattr(live, "facts", None)
    if facts is not None:
        from ..mcp._facts import sidecar_path

        sidecar = sidecar_path(out)
        doc = facts(out.name)
        text = dumps_strict(doc, indent=2, ensure_ascii=False) + "\n"
        write_atomic(out, lines, overwrite=overwrite)
        write_atomic(sidecar, [text.encode("utf-8")], overwrite=True)
    else:
        write_atomic(out, lines, overwrite=overwrite)
    result.out = out
    return out
