"""Importers: recordings made by other tools, read as cassettes.

Each importer turns one file into an ``Imported``: the list of runs the file holds
(``RunInfo``, from ``format.multi_run``: task, trial, reward, call count) and a way to
build any run's entries. Files
with one run (a VCR cassette, one chat log) hold a single run whose ``task`` and ``trial``
are ``None``; a tau-bench results file holds one run per ``(task_id, trial)``; an inspect_ai
log one per ``(sample id, epoch)``.

Formats (``FORMATS``; ``--from`` takes these names or an alias from ``ALIASES``):

- ``cassette``: this project's JSON Lines (format v1, docs/format.md), opened by ``load``.
- ``tau-bench``: a list of ``{task_id, trial, reward, info, traj}`` (``_tau_bench.py``).
- ``openai``: OpenAI chat messages with ``tool_calls`` (``openai_chat.py``).
- ``inspect``: inspect_ai eval logs, ``.json`` or ``.eval`` zip (``_inspect_ai.py``).
- ``anthropic``: Anthropic Messages, ``tool_use`` / ``tool_result`` blocks (``_anthropic.py``).
- ``openai-responses``: OpenAI Responses items, ``function_call`` / ``function_call_output``
  (``result.to_input_list()`` of the Agents SDK; ``_responses.py``).
- ``pydantic-ai``: ``all_messages_json()``, ``tool-call`` / ``tool-return`` parts
  (``_pydantic_ai.py``).
- ``langchain``: ``messages_to_dict`` and LangGraph checkpoints' messages (``_langchain.py``).
- ``smolagents``: ``agent.memory.get_full_steps()`` (``_smolagents.py``).
- ``otel``: OpenTelemetry GenAI ``execute_tool`` spans, OTLP JSON or the SDK's span JSON
  (pydantic-ai, Logfire; ``_otel.py``).
- ``openai-agents``: the OpenAI Agents SDK's trace export, function spans (``_agents_trace.py``).
- ``vcr``: VCR.py / pytest-recording YAML (``vcr.py``).

Pairing (issue 25): results are paired with their calls by id when the ids of a run are
unique, by position where ids repeat (tau-bench); a run's metadata says which
(``pairing``: ``"id"``, ``"position"``, or ``"span"`` / ``"step"`` where the format keeps
each call with its result). A file that holds tool calls never imports as 0 entries: the
import is an error naming what was found and the formats tried (``detect.py``).

Detection from the content is in ``detect.py``; ``core.sources.open_cassette`` is the
entry point every command uses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..format.cassette import Cassette
from ..format.entry import Entry
from ..format.multi_run import PASS_REWARD, RunInfo, RunSelectionError, spec_suffix, task_order
from ..keys.normalize import NormalizationRules

#: Canonical format names, in the order detection tries them.
FORMATS: tuple[str, ...] = (
    "cassette",
    "tau-bench",
    "openai",
    "inspect",
    "anthropic",
    "openai-responses",
    "pydantic-ai",
    "langchain",
    "smolagents",
    "otel",
    "openai-agents",
    "vcr",
)

#: Other spellings accepted by ``--from`` and ``fmt=``.
ALIASES: dict[str, str] = {
    "jsonl": "cassette",
    "tau_bench": "tau-bench",
    "tau": "tau-bench",
    "taubench": "tau-bench",
    "openai_chat": "openai",
    "openai-chat": "openai",
    "chat": "openai",
    "inspect_ai": "inspect",
    "inspect-ai": "inspect",
    "eval": "inspect",
    "yaml": "vcr",
    "vcrpy": "vcr",
    "pytest-recording": "vcr",
    "claude": "anthropic",
    "anthropic-messages": "anthropic",
    "responses": "openai-responses",
    "openai_responses": "openai-responses",
    "pydantic_ai": "pydantic-ai",
    "pydanticai": "pydantic-ai",
    "langgraph": "langchain",
    "lc": "langchain",
    "smol": "smolagents",
    "otlp": "otel",
    "opentelemetry": "otel",
    "genai": "otel",
    "logfire": "otel",
    "agents": "openai-agents",
    "agents-sdk": "openai-agents",
    "openai_agents": "openai-agents",
}


def canonical_format(name: str) -> str:
    """The canonical name of format ``name`` (case-insensitive, aliases accepted).

    Raises:
        ValueError: an unknown name; the message lists the known ones.
    """
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in FORMATS:
        raise ValueError(f"unknown format {name!r}; known formats: {', '.join(FORMATS)}")
    return key


#: What an importer's code raises when a file has the right outline but a value of another
#: type or shape inside (a number where a list of spans is, a list as an id): turned into a
#: ``CassetteFormatError`` naming the file, never a traceback.
SHAPE_ERRORS: tuple[type[Exception], ...] = (
    TypeError,
    AttributeError,
    KeyError,
    IndexError,
    ValueError,
)


def shape_error(path: Path, fmt: str | None, exc: Exception) -> Exception:
    """``exc`` (one of ``SHAPE_ERRORS``, raised while importing ``path``) as the error to
    raise: a ``CassetteError`` (some are ``ValueError`` too) stays itself, anything else
    becomes a ``CassetteFormatError`` saying the file is malformed for ``fmt``."""
    from ..format.errors import CassetteError, CassetteFormatError

    if isinstance(exc, CassetteError):
        return exc
    what = f"a malformed {fmt} file" if fmt else "a malformed file"
    detail = str(exc)[:200]
    return CassetteFormatError(
        path,
        None,
        None,
        f"{what}: a value of an unexpected type or shape ({type(exc).__name__}: {detail})",
    )


@dataclass
class Imported:
    """A parsed importable file: its runs and how to build each run's entries.

    Attributes:
        fmt: the canonical format name.
        path: the source file.
        runs: the runs in file order (``RunInfo.index`` is the position).
        build: ``build(index) -> (entries, metadata)`` for one run; called once per run.
        metadata: facts about the whole file (format version, eval name, ...).
    """

    fmt: str
    path: Path
    runs: list[RunInfo]
    build: Callable[[int], tuple[list[Entry], dict[str, Any]]]
    metadata: dict[str, Any] = field(default_factory=dict)
    _built: dict[int, tuple[list[Entry], dict[str, Any]]] = field(default_factory=dict)

    @property
    def multi_run(self) -> bool:
        """True when the runs are told apart by task/trial (tau-bench, inspect logs)."""
        return any(r.task is not None or r.trial is not None for r in self.runs)

    def entries(self, index: int) -> list[Entry]:
        """The entries of run ``index`` (built once, then cached)."""
        return self._run(index)[0]

    def _run(self, index: int) -> tuple[list[Entry], dict[str, Any]]:
        if index not in self._built:
            self._built[index] = self.build(index)
        return self._built[index]

    def cassette(self, index: int, rules: NormalizationRules | None = None) -> Cassette:
        """Run ``index`` as an in-memory ``Cassette``.

        Its ``path`` is the source file with the selector as a path spec
        (``gpt-4o-airline.json#task=31,trial=2``), which ``open_cassette`` opens again;
        its ``metadata`` has ``format``, ``source``, ``run`` (``RunInfo.to_json()``),
        ``label`` and the importer's own facts (tau-bench: ``info``).
        """
        from ..format.depth import check_depth
        from ..format.errors import CassetteFormatError

        try:
            entries, meta = self._run(index)
        except RecursionError:
            raise CassetteFormatError(
                self.path, None, None, "a value nested too deeply to read"
            ) from None
        except SHAPE_ERRORS as exc:
            raise shape_error(self.path, self.fmt, exc) from None
        run = self.runs[index]
        for entry in entries:  # one nesting limit for every importer (see depth.py)
            where = f"{run.label}: seq {entry.seq}" if self.multi_run else f"seq {entry.seq}"
            check_depth(entry.args, self.path, entry.line, f"{where} args")
            outcome = entry.error if entry.error is not None else entry.response
            check_depth(outcome, self.path, entry.line, f"{where} response")
            check_depth(entry.extra, self.path, entry.line, f"{where} (other fields)")
        metadata = {
            **self.metadata,
            "format": self.fmt,
            "source": str(self.path),
            "label": run.label if self.multi_run else self.path.stem,
            "run": run.to_json(),
            **meta,
        }
        spec = str(self.path) + (run.spec_suffix() if self.multi_run else "")
        kwargs: dict[str, Any] = {"path": spec, "metadata": metadata}
        if rules is not None:
            kwargs["rules"] = rules
        return Cassette.from_entries(entries, **kwargs)

    def select(self, task: str | int | None, trial: int | None) -> int:
        """The index of the one run matching ``task`` and ``trial``.

        A single-run file needs no selector. In a multi-run file ``task`` is required;
        ``trial`` may be left out when the task has one trial only.

        Raises:
            RunSelectionError: no selector on a multi-run file ("holds 200 runs; pass task
                and trial"), no run matching, or several; a selector on a single-run file.
        """
        if not self.multi_run:
            if task is not None or trial is not None:
                raise self._refused(
                    f"is a {self.fmt} file with a single run; task and trial do not apply"
                )
            return 0
        if task is None and trial is None:
            if len(self.runs) == 1:
                return 0
            raise self._refused(self._how_to_select())
        if task is None:
            raise self._refused(f"trial={trial} given without a task; {self._how_to_select()}")
        task_s = str(task)
        of_task = self._runs_of_task(task_s)
        if trial is None:
            if len(of_task) == 1:
                return of_task[0].index
            raise self._refused(
                f"task {task_s} has {len(of_task)} trials ({_trials(of_task)}); pass a trial"
            )
        return self._select_trial(task_s, of_task, trial)

    def _refused(self, why: str) -> RunSelectionError:
        return RunSelectionError(self.path, why, self.runs, self.fmt)

    def _runs_of_task(self, task_s: str) -> list[RunInfo]:
        """The runs of task ``task_s``; raises ``RunSelectionError`` when there is none."""
        of_task = [r for r in self.runs if r.task == task_s]
        if not of_task:
            tasks = sorted({r.task for r in self.runs if r.task is not None}, key=task_order)
            raise self._refused(f"has no run of task {task_s!r}; tasks: {_short_list(tasks)}")
        return of_task

    def _select_trial(self, task_s: str, of_task: list[RunInfo], trial: int) -> int:
        """The index of the one run of ``of_task`` (task ``task_s``) with ``trial``."""
        chosen = [r for r in of_task if r.trial == trial]
        if len(chosen) == 1:
            return chosen[0].index
        if not chosen:
            raise self._refused(
                f"task {task_s} has no trial {trial}; its trials: {_trials(of_task)}"
            )
        raise self._refused(
            f"task {task_s} trial {trial} occurs {len(chosen)} times (runs "
            f"{', '.join(str(r.index) for r in chosen)}); the file is ambiguous"
        )

    def _how_to_select(self) -> str:
        tasks = {r.task for r in self.runs}
        trials = sorted({r.trial for r in self.runs if r.trial is not None})
        example = self.runs[0]
        return (
            f"holds {len(self.runs)} runs ({len(tasks)} tasks, trials "
            f"{_ranges(trials)}); pass task and trial: select one as "
            f"'{self.path.name}{example.spec_suffix()}' (import: --task {example.task} "
            f"--trial {example.trial}); list them with 'cassette-tui import "
            f"{self.path.name} --list'"
        )


def of_traces(
    fmt: str, path: Path, trace_ids: Iterable[str], built: list[tuple[list[Entry], dict[str, Any]]]
) -> Imported:
    """An ``Imported`` with one run per trace (OpenTelemetry, the Agents SDK's export):
    each trace's id is its task when the file holds several (trial 0), none when it holds
    one; ``built``: each trace's ``(entries, metadata)``, in the order of ``trace_ids``."""
    many = len(built) > 1
    runs = [
        RunInfo(task=trace_id if many else None, trial=0 if many else None, reward=None,
                calls=len(entries), index=i)
        for i, (trace_id, (entries, _)) in enumerate(zip(trace_ids, built, strict=True))
    ]  # fmt: skip
    return Imported(fmt, path, runs, lambda index: built[index])


def _trials(runs: list[RunInfo]) -> str:
    parts = []
    for r in sorted(runs, key=lambda r: (r.trial is None, r.trial or 0)):
        mark = {True: "pass", False: "fail", None: "no reward"}[r.passed]
        parts.append(f"{r.trial} {mark}")
    return ", ".join(parts)


def _ranges(numbers: list[int]) -> str:
    if not numbers:
        return "none"
    if numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 2:
        return f"{numbers[0]}-{numbers[-1]}"
    return ", ".join(map(str, numbers))


def _short_list(items: list[str], limit: int = 20) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items)} in all)" if len(items) > limit else "")


def json_result(content: Any) -> Any:
    """A tool result as a response: JSON text of an object or array becomes that JSON;
    any other text (``"329.0"``, ``""``, ``"Error: ..."``) becomes ``{"text": ...}``
    (issue 5: a bare number stays text, so ``"329.0"`` and ``329.0`` are not confused).
    Content parts (``[{"type": "text", "text": ...}]``) are joined when all are text; any
    other value is kept as ``{"content": value}``."""
    if (
        isinstance(content, list)
        and content
        and all(
            isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
            for p in content
        )
    ):
        content = "".join(p["text"] for p in content)
    if isinstance(content, str):
        head = content.lstrip()[:1]
        if head in ("{", "["):
            try:
                value = loads_json(content)
            except ValueError:
                pass
            else:
                if isinstance(value, dict | list):
                    return value
        return {"text": content}
    return {"content": content}


def loads_json(text: str | bytes) -> Any:
    """Parse JSON: orjson first, the standard library for what orjson refuses (integers
    past 64 bits, NaN). A leading byte order mark is skipped. Raises ``ValueError``
    (``json.JSONDecodeError``, orjson's, or ``JSONTooDeep`` for nesting too deep)."""
    import orjson

    from ..format.jsontext import UTF8_BOM, loads_std

    if isinstance(text, bytes) and text.startswith(UTF8_BOM):
        text = text[len(UTF8_BOM) :]
    elif isinstance(text, str) and text.startswith("\ufeff"):
        text = text[1:]
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return loads_std(text)


__all__ = [
    "ALIASES",
    "FORMATS",
    "PASS_REWARD",
    "Imported",
    "RunInfo",
    "RunSelectionError",
    "canonical_format",
    "json_result",
    "loads_json",
    "spec_suffix",
]
