"""The words around the calls: what the agent said before each call, and how its run ended.

For an imported agent trace the cause of a divergence is often in the model's words, not
in a tool call. Both live in **optional entry fields** (format v1 keeps unknown fields
verbatim and never puts them in a key), so every line stays an entry: the loader, replay,
``check``, the digest and ``jq -c 'select(.tool)'`` read a cassette with the words exactly
as one without.

``context`` (any entry): the words before this call::

    {"assistant": "I'll look the reservation up.",   # the text of the message that made the call
     "reasoning": "...",                              # its reasoning text, when the log has one
     "answered": {"role": "user", "text": "..."}}     # the message it answered, or
     "answered": {"role": "tool", "seqs": [3, 4]}}    # the results of these earlier entries

Every key is optional; parallel calls of one message carry the same ``context``.

``run_outcome`` (the **last** entry only, it is what came after the last call; an
in-memory import also has it in ``Cassette.metadata["run_outcome"]``, which covers a run
with no call)::

    {"reward": 0.0, "passed": false,            # the run's score; passed: reward >= 1
     "final_answer": "..." | null,              # the agent's last words after its last call
     "steps": 30,                               # agent turns (model messages)
     "limit_reached": true | false | null,      # null: the source does not say
     "limit": "steps", "limit_value": 30 | null,
     "evidence": "how limit_reached was derived"}

These are context, not identity: they never change the args digest, matching, replay or
diff statuses (``tests/core/format/test_context.py`` holds a cassette with them equal to one
without). Bad values are **ignored with a warning**, never an error: a ``ContextWarning``
names the file, the line and the field (``run_outcome.reward: expected a number``), and
the readers return what is usable (a wrong-typed key is dropped, the rest kept); ``check``
reports them as ``bad_context`` findings (``lint.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .multi_run import PASS_REWARD
from .plural import plural

#: the entry field holding the words before a call
CONTEXT_FIELD = "context"
#: the entry field (last entry) and metadata key holding the run's outcome
OUTCOME_FIELD = "run_outcome"
#: the field's key as written in a line's bytes (by this project and by ``json.dumps``; a
#: key spelled with ``\u`` escapes is not looked for)
_OUTCOME_KEY = b'"run_outcome"'


@dataclass(frozen=True)
class ContextWarning:
    """A ``context`` or ``run_outcome`` value that was ignored.

    Attributes:
        path: the cassette (or path spec), or ``None`` in memory.
        line: the 1-based line of the entry, or ``None``.
        field: the dotted field (``context.answered.seqs``).
        message: what is wrong (``expected text, got 3``).
    """

    path: str | None
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = self.path or "<memory>"
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: field {self.field}: {self.message}; ignored (context only)"


@dataclass(frozen=True)
class Answered:
    """The message a call's message answered: ``role`` (``user``, ``tool``, ``system``,
    ``assistant``), its ``text`` (not kept for ``tool``: the results are the entries
    ``seqs``), and ``seqs`` for tool results."""

    role: str
    text: str | None = None
    seqs: tuple[int, ...] = ()


@dataclass(frozen=True)
class CallContext:
    """The words before one call (see the module docstring)."""

    assistant: str | None = None
    reasoning: str | None = None
    answered: Answered | None = None

    @property
    def empty(self) -> bool:
        return self.assistant is None and self.reasoning is None and self.answered is None


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended (see the module docstring for the JSON form)."""

    reward: float | None = None
    passed: bool | None = None
    final_answer: str | None = None
    steps: int | None = None
    limit_reached: bool | None = None
    limit: str | None = None
    limit_value: int | None = None
    evidence: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "passed": self.passed,
            "final_answer": self.final_answer,
            "steps": self.steps,
            "limit_reached": self.limit_reached,
            "limit": self.limit,
            "limit_value": self.limit_value,
            "evidence": self.evidence,
        }

    def reward_words(self) -> str:
        """The score: ``✗ reward 0``, ``✓ reward 1``, ``reward 0.5`` (pass unknown), ``✓``
        or ``✗`` (reward unknown); ``""`` when neither is known."""
        mark = {True: "✓", False: "✗", None: ""}[self.passed]
        if self.reward is None:
            return mark
        return f"{mark} reward {self.reward:g}" if mark else f"reward {self.reward:g}"

    def limit_words(self) -> str | None:
        """The limit the run hit: ``step limit reached (30 steps)``, ``time limit reached
        (600)``, ``step limit reached``; ``None`` unless ``limit_reached`` is true."""
        if not self.limit_reached:
            return None
        what = f"{self.limit} limit" if self.limit and self.limit != "steps" else "step limit"
        used = ""
        if self.limit in (None, "steps") and self.steps is not None:
            used = f" ({plural(self.steps, 'step')})"
        elif self.limit_value is not None:
            used = f" ({self.limit_value})"
        return f"{what} reached{used}"

    @property
    def went_wrong(self) -> bool:
        """The run failed (``passed`` false) or hit its limit: the outcome to stress."""
        return self.passed is False or bool(self.limit_reached)

    def summary(self) -> str:
        """One line: ``✗ reward 0 · step limit reached (30 steps)``, ``✓ reward 1``,
        ``reward 0.5 · no final answer``; ``""`` when nothing is known. The parts are
        ``reward_words`` and ``limit_words`` (else ``no final answer`` when the run ended
        after a call with a score known)."""
        parts: list[str] = []
        score = self.reward_words()
        if score:
            parts.append(score)
        limit = self.limit_words()
        if limit is not None:
            parts.append(limit)
        elif self.final_answer is None and self.steps is not None and parts:
            parts.append("no final answer")
        return " · ".join(parts)


def message_text(message: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(text, reasoning)`` of a chat message: ``content`` as text (a string, or the
    ``text`` of its content parts joined), and the reasoning (inspect's ``reasoning``
    parts, or a ``reasoning_content`` / ``reasoning`` string). Empty text is ``None``."""
    content = message.get("content")
    texts: list[str] = []
    thoughts: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind in ("reasoning", "thinking"):
                value = part.get("reasoning", part.get("thinking"))
                if isinstance(value, str):
                    thoughts.append(value)
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str):
            thoughts.append(value)
    text = "\n".join(t for t in texts if t.strip()) or None
    reasoning = "\n".join(t for t in thoughts if t.strip()) or None
    return text, reasoning


def attach_outcome(entries: list[Any], outcome: RunOutcome) -> None:
    """Put ``outcome`` on the last of ``entries`` (``Entry`` objects) as ``run_outcome``;
    nothing when there is no entry (the metadata still holds it)."""
    if entries:
        entries[-1].extra[OUTCOME_FIELD] = outcome.to_json()


# -- reading (never raises on bad values: warns and keeps what is usable) -------------------


class _Reader:
    def __init__(self, path: str | Path | None, line: int | None) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.warnings: list[ContextWarning] = []

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(ContextWarning(self.path, self.line, field, message))

    def text(self, obj: dict[str, Any], key: str, field: str) -> str | None:
        value = obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.warn(f"{field}.{key}", f"expected text, got {_kind(value)}")
            return None
        return value

    def number(self, obj: dict[str, Any], key: str, field: str) -> float | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.warn(f"{field}.{key}", f"expected a number, got {_kind(value)}")
            return None
        return float(value)

    def integer(self, obj: dict[str, Any], key: str, field: str) -> int | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.warn(f"{field}.{key}", f"expected a count (an integer >= 0), got {_kind(value)}")
            return None
        return value

    def flag(self, obj: dict[str, Any], key: str, field: str) -> bool | None:
        value = obj.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            self.warn(f"{field}.{key}", f"expected true, false or null, got {_kind(value)}")
            return None
        return value


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return f"text {value[:20]!r}"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return repr(value)[:30]


def call_context(
    entry: Any, path: str | Path | None = None
) -> tuple[CallContext | None, list[ContextWarning]]:
    """The words before ``entry``'s call (``entry.extra["context"]``), or ``None`` when it
    has none, with the warnings about values that were ignored (naming ``path``, the
    entry's line and the field)."""
    raw = entry.extra.get(CONTEXT_FIELD) if entry.extra else None
    reader = _Reader(path, getattr(entry, "line", None))
    if raw is None:
        return None, []
    if not isinstance(raw, dict):
        reader.warn(CONTEXT_FIELD, f"expected an object, got {_kind(raw)}")
        return None, reader.warnings
    answered = None
    got = raw.get("answered")
    field = f"{CONTEXT_FIELD}.answered"
    if isinstance(got, dict):
        role = reader.text(got, "role", field)
        text = reader.text(got, "text", field)
        seqs_raw = got.get("seqs", [])
        seqs: tuple[int, ...] = ()
        if isinstance(seqs_raw, list) and all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in seqs_raw
        ):
            seqs = tuple(seqs_raw)
        else:
            reader.warn(
                f"{field}.seqs", f"expected a list of seqs (integers >= 1), got {_kind(seqs_raw)}"
            )
        if role is None:
            if "role" not in got:
                reader.warn(f"{field}.role", "missing")
        else:
            answered = Answered(role, text, seqs)
    elif got is not None:
        reader.warn(field, f"expected an object, got {_kind(got)}")
    context = CallContext(
        assistant=reader.text(raw, "assistant", CONTEXT_FIELD),
        reasoning=reader.text(raw, "reasoning", CONTEXT_FIELD),
        answered=answered,
    )
    return (None if context.empty else context), reader.warnings


def outcome_from_json(
    raw: Any, path: str | Path | None = None, line: int | None = None
) -> tuple[RunOutcome | None, list[ContextWarning]]:
    """A ``run_outcome`` value as a ``RunOutcome`` (``None`` for ``None``), with warnings
    for the keys that were ignored."""
    reader = _Reader(path, line)
    if raw is None:
        return None, []
    if not isinstance(raw, dict):
        reader.warn(OUTCOME_FIELD, f"expected an object, got {_kind(raw)}")
        return None, reader.warnings
    f = OUTCOME_FIELD
    outcome = RunOutcome(
        reward=reader.number(raw, "reward", f),
        passed=reader.flag(raw, "passed", f),
        final_answer=reader.text(raw, "final_answer", f),
        steps=reader.integer(raw, "steps", f),
        limit_reached=reader.flag(raw, "limit_reached", f),
        limit=reader.text(raw, "limit", f),
        limit_value=reader.integer(raw, "limit_value", f),
        evidence=reader.text(raw, "evidence", f),
    )
    return outcome, reader.warnings


def run_outcome(cassette: Any, last: Any = None) -> tuple[RunOutcome | None, list[ContextWarning]]:
    """How ``cassette``'s run ended: ``metadata["run_outcome"]`` of an in-memory import,
    else the last entry's ``run_outcome`` field (one entry parsed), else ``None``.
    ``last``: the last entry, parsed already (the detail of the last step): its field is
    read, not the line's bytes again (a 24 MB line read and searched: 30 ms).

    Raises:
        CassetteFormatError: only when the last entry itself cannot be read (as any
            access to it would).
    """
    metadata = getattr(cassette, "metadata", None) or {}
    if OUTCOME_FIELD in metadata:
        return outcome_from_json(metadata[OUTCOME_FIELD], cassette.path)
    n = len(cassette)
    if not n:
        return None, []
    if last is not None:
        raw = last.extra.get(OUTCOME_FIELD) if last.extra else None
        return outcome_from_json(raw, cassette.path, last.line)
    # a recording of one's own agent has no outcome: say so from the line's bytes, without
    # parsing a response that may be megabytes long (the app asks on its UI thread)
    if getattr(cassette, "is_file_backed", False) and _OUTCOME_KEY not in cassette.raw_line(n - 1):
        return None, []
    view = getattr(cassette, "entry_view", None)
    last = view(n - 1) if view is not None else cassette[n - 1]  # read only: no copy
    raw = last.extra.get(OUTCOME_FIELD) if last.extra else None
    return outcome_from_json(raw, cassette.path, last.line)


def passed_of(reward: float | None) -> bool | None:
    """tau-bench's pass rule: reward >= 1 (``None`` without a reward)."""
    return None if reward is None else reward >= PASS_REWARD
