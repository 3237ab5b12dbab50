"""smolagents memory steps (``agent.memory.get_full_steps()``), as a cassette.

A JSON list of steps: ``{"task": ...}`` (the user's task), action steps ``{"step_number",
"tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}],
"model_output", "observations", "error", "is_final_answer", "action_output"}`` and
planning steps (``{"plan": ...}``), as ``json.dumps(steps, default=str)`` writes them.

Each tool call of an action step is an entry (``arguments`` an object, or the model's
text: parsed, and kept with ``arguments_error`` when it is not valid JSON). The
``final_answer`` call is not a tool: it is the run's final answer (``run_outcome``).

Results (``pairing``: ``"step"``): smolagents keeps one ``observations`` text per step,
each call's observation joined by a newline in the order of the call ids (its
``ToolCallingAgent`` sorts both by id). A step with one call: that call's response is
``json_result(observations)``. A step with several: the text is split at newlines when
it has one line per call (each call its line, by id), else every call of the step keeps
the whole text with ``observations_shared: true``. A step's ``error`` (``{"type",
"message"}``: the tool raised, or the call could not be parsed) is the error of its calls
that have no observation. Each entry carries ``step`` (the step number); the words are the
step's ``model_output`` and what it answered (the task, or the previous step's results).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..format.context import CONTEXT_FIELD, RunOutcome, attach_outcome
from ..format.entry import Entry
from ..format.errors import CassetteFormatError
from . import Imported, RunInfo, json_result
from ._openai_chat import parse_arguments

NAME = "smolagents"
FINAL_ANSWER = "final_answer"


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` is a smolagents step list, else why not."""
    if not isinstance(doc, list) or not doc:
        return "not a list of smolagents memory steps"
    if not all(isinstance(s, dict) for s in doc):
        return "not every item is a memory step (an object)"
    if not any("step_number" in s and "tool_calls" in s for s in doc):
        return "no action step (with 'step_number' and 'tool_calls')"
    return None


def read(doc: Any, path: Path) -> Imported:
    """smolagents steps (see ``looks_like``) as an ``Imported`` with one run.

    Raises:
        CassetteFormatError: not such steps, or a call with a bad field, naming it
            (``[2].tool_calls[0].function.name``).
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    entries: list[Entry] = []
    task: str | None = None
    answered: dict[str, Any] | None = None
    final: str | None = None
    steps = 0
    for i, step in enumerate(doc):
        if isinstance(step.get("task"), str):
            task = step["task"]
            answered = {"role": "user", "text": task}
            continue
        if "step_number" not in step:
            continue
        steps += 1
        made = _step_entries(step, i, path, len(entries))
        context = _words(step, answered)
        for entry in made:
            if context:
                entry.extra[CONTEXT_FIELD] = context
        entries.extend(made)
        answered = {"role": "tool", "seqs": [e.seq for e in made]} if made else answered
        if step.get("is_final_answer") or _final_of(step) is not None:
            final = _final_of(step) or _text(step.get("action_output"))
    outcome = RunOutcome(final_answer=final, steps=steps)
    attach_outcome(entries, outcome)
    run = RunInfo(task=None, trial=None, reward=None, calls=len(entries))
    meta = {"steps": steps, "pairing": "step", "task": task, "run_outcome": outcome.to_json()}
    answers = sum(
        1
        for step in doc
        for c in step.get("tool_calls") or ()
        if isinstance(c, dict) and (c.get("function") or {}).get("name") == FINAL_ANSWER
    )
    # its final_answer calls are the outcome, not entries: a run of only those is no
    # file of unread calls (detect.py)
    return Imported(
        NAME, path, [run], lambda index: (entries, meta), metadata={"calls_not_entries": answers}
    )


def _step_entries(step: dict[str, Any], i: int, path: Path, before: int) -> list[Entry]:
    calls = [
        (j, c)
        for j, c in enumerate(step.get("tool_calls") or ())
        if _name(c, f"[{i}].tool_calls[{j}]", path) != FINAL_ANSWER
    ]
    observations = step.get("observations")
    texts = _split(observations, len(calls))
    error = step.get("error")
    out: list[Entry] = []
    for k, (j, call) in enumerate(calls):
        field = f"[{i}].tool_calls[{j}]"
        args, fields = parse_arguments(
            call["function"].get("arguments"), f"{field}.function.arguments"
        )
        fields = {"tool_call_id": call.get("id"), "step": step.get("step_number"), **fields}
        if texts is None and observations is not None:
            fields["observations_shared"] = True
        text = texts[k] if texts is not None else observations
        failed = text is None and bool(error)
        out.append(
            Entry(
                seq=before + len(out) + 1,
                tool=_name(call, field, path),
                args=args,
                response=None if failed else json_result(text if text is not None else ""),
                error=_error(error) if failed else None,
                extra=fields,
            )
        )
    return out


def _name(call: Any, field: str, path: Path) -> str:
    fn = call.get("function") if isinstance(call, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str) or not name:
        raise CassetteFormatError(path, None, f"{field}.function.name", "expected a tool name")
    return name


def _split(observations: Any, calls: int) -> list[str] | None:
    """Each call's observation, or ``None`` when they cannot be told apart."""
    if not isinstance(observations, str):
        return None
    if calls <= 1:
        return [observations] * calls
    lines = observations.split("\n")
    return lines if len(lines) == calls else None


def _error(error: Any) -> dict[str, Any]:
    if isinstance(error, dict):
        return {"type": str(error.get("type", "Error")), "message": str(error.get("message", ""))}
    return {"type": "Error", "message": str(error)}


def _words(step: dict[str, Any], answered: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    said = step.get("model_output")
    if isinstance(said, str) and said.strip():
        out["assistant"] = said
    if answered is not None:
        out["answered"] = answered
    return out


def _final_of(step: dict[str, Any]) -> str | None:
    for call in step.get("tool_calls") or ():
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and fn.get("name") == FINAL_ANSWER:
            args, _ = parse_arguments(fn.get("arguments"), "")
            value = args.get("answer") if isinstance(args, dict) else args
            return _text(value)
    return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
