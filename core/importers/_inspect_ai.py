"""inspect_ai eval logs, one cassette per sample and epoch.

UKGovernmentBEIS/inspect_ai writes a log as one JSON object (``{"version", "status",
"eval", "plan", "results", "stats", "samples": [...]}``) or as a ``.eval`` zip archive
(``header.json`` plus one ``samples/<id>_epoch_<n>.json`` per sample; read with
``zipfile``). Each sample's ``messages`` is a chat log in inspect's variant of the OpenAI
shape (tool calls carry ``"function": "<name>"`` and ``arguments`` already as an object;
a tool message may carry ``"error": {"type", "message"}``), read by ``openai_chat.py``:
a tool message with an error becomes an ``error`` entry, its ``content`` kept as an extra.

A run is selected by ``task`` = the sample id and ``trial`` = the epoch. The reward is the
first score's value (numbers as they are; ``C``/``I``/``P`` as 1.0/0.0/0.5); metadata
holds ``sample_id``, ``epoch``, ``scores``, ``target`` and the log's ``eval`` header.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from ..format.context import RunOutcome, attach_outcome, message_text, passed_of
from ..format.entry import Entry
from ..format.errors import CassetteFormatError
from ..format.jsontext import json_error_text
from . import Imported, RunInfo, loads_json
from ._openai_chat import chat_outcome, count_calls, entries_from_messages, pairing_of

NAME = "inspect"

_LETTER_SCORES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` (parsed JSON) is an inspect_ai log, else why it is not."""
    if not isinstance(doc, dict):
        return "not a JSON object with 'eval' and 'samples'"
    if "eval" not in doc or "version" not in doc:
        return "an object without inspect's 'version' and 'eval' header"
    if not isinstance(doc.get("samples", []), list):
        return "'samples' is not a list"
    return None


def read(doc: Any, path: Path) -> Imported:
    """An inspect_ai JSON log as an ``Imported`` with one run per sample and epoch.

    Raises:
        CassetteFormatError: not an inspect log, a log without samples, or a bad message.
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    return _imported(doc.get("samples") or [], doc, path, "samples")


def read_eval(data: bytes, path: Path) -> Imported:
    """An inspect_ai ``.eval`` zip archive (header.json + samples/*.json).

    Raises:
        CassetteFormatError: not a zip archive, a corrupt one (a flipped bit: a bad CRC,
            a deflate stream that does not inflate, a member cut short), no
            ``header.json``, or a member that is not valid JSON (named in the field).
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except _CORRUPT as exc:
        raise CassetteFormatError(path, None, None, f"not a zip archive: {exc}") from None
    with archive:
        names = archive.namelist()
        if "header.json" not in names:
            raise CassetteFormatError(
                path, None, "header.json", "a zip archive without inspect's header.json"
            )
        header = _member(archive, "header.json", path)
        sample_names = sorted(
            (n for n in names if n.startswith("samples/") and n.endswith(".json")),
            key=_sample_order,
        )
        samples = [_member(archive, n, path) for n in sample_names]
    if not isinstance(header, dict):
        raise CassetteFormatError(path, None, "header.json", "not a JSON object")
    return _imported(samples, header, path, "samples", sample_names)


def _sample_order(name: str) -> tuple[int, int | str, int]:
    stem = name.removeprefix("samples/").removesuffix(".json")
    sample, _, epoch = stem.rpartition("_epoch_")
    ep = int(epoch) if epoch.isdigit() else 0
    return (0, int(sample), ep) if sample.isdigit() else (1, sample, ep)


#: what reading a damaged zip archive raises: a bad CRC or header (``BadZipFile``), a deflate
#: stream that does not inflate (``zlib.error``), a member cut short (``EOFError``), a
#: compression or encryption it cannot read (``NotImplementedError``, ``RuntimeError``), a
#: size or offset field gone wrong (``ValueError``, ``struct.error``, ``OverflowError``)
_CORRUPT = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    struct.error,
    OverflowError,
)


def _member(archive: zipfile.ZipFile, name: str, path: Path) -> Any:
    try:
        raw = archive.read(name)
    except _CORRUPT as exc:
        why = f"a corrupt zip archive: {name} cannot be read ({type(exc).__name__}: {exc})"
        raise CassetteFormatError(path, None, name, why) from None
    try:
        return loads_json(raw)
    except ValueError as exc:
        reason = f"not valid JSON: {json_error_text(exc, line=True)}"
        raise CassetteFormatError(path, None, name, reason) from None


def _reward(scores: Any) -> float | None:
    if not isinstance(scores, dict) or not scores:
        return None
    first = next(iter(scores.values()))
    value = first.get("value") if isinstance(first, dict) else first
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return _LETTER_SCORES.get(value.upper())
    return None


def _imported(
    samples: list[Any],
    header: dict[str, Any],
    path: Path,
    where: str,
    member_names: list[str] | None = None,
) -> Imported:
    if not samples:
        raise CassetteFormatError(path, None, where, "the log holds no samples")
    runs: list[RunInfo] = []
    for i, sample in enumerate(samples):
        field = member_names[i] if member_names else f"{where}[{i}]"
        if not isinstance(sample, dict) or not isinstance(sample.get("messages"), list):
            raise CassetteFormatError(path, None, field, "a sample without a 'messages' list")
        epoch = sample.get("epoch", 1)
        runs.append(
            RunInfo(
                task=str(sample.get("id", i)),
                trial=epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else None,
                reward=_reward(sample.get("scores")),
                calls=count_calls(sample["messages"]),
                index=i,
            )
        )
    meta = {
        "eval": header.get("eval"),
        "log_version": header.get("version"),
        "log_status": header.get("status"),
    }

    def build(index: int) -> tuple[list[Entry], dict[str, Any]]:
        sample = samples[index]
        field = (
            (member_names[index] + ":messages") if member_names else (f"{where}[{index}].messages")
        )
        entries = entries_from_messages(sample["messages"], path=path, where=field)
        outcome = run_outcome(sample, runs[index].reward)
        attach_outcome(entries, outcome)
        return entries, {
            "run_outcome": outcome.to_json(),
            "sample_id": sample.get("id"),
            "epoch": sample.get("epoch"),
            "scores": sample.get("scores"),
            "target": sample.get("target"),
            "messages": len(sample["messages"]),
            "pairing": pairing_of(sample["messages"]),
        }

    return Imported(NAME, path, runs, build, metadata=meta)


def run_outcome(sample: dict[str, Any], reward: float | None) -> RunOutcome:
    """How one sample ended: the reward (the first score, see ``_reward``), the final
    answer (``output.completion``, else the text of ``output.choices[0].message``, else
    the last assistant message after the last call), the agent's turns, and the limit.

    The limit, from the data: inspect records a sample that hit a limit as ``"limit":
    {"type": "message" | "token" | "time" | "working" | ..., "limit": N}``, so an object
    there means ``limit_reached`` true with that kind and value. Logs leave the key out
    when no limit was hit, and older logs never write it, so its absence means unknown
    (``None``), not false.
    """
    base = chat_outcome(sample["messages"])
    final = base.final_answer
    output = sample.get("output")
    if isinstance(output, dict):
        completion = output.get("completion")
        choices = output.get("choices")
        if isinstance(completion, str) and completion.strip():
            final = completion
        elif isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict) and not message.get("tool_calls"):
                final = message_text(message)[0] or final
    limit = sample.get("limit")
    reached: bool | None = None
    kind: str | None = None
    value: int | None = None
    evidence: str | None = None
    if isinstance(limit, dict):
        reached = True
        kind = str(limit.get("type") or "limit")
        got = limit.get("limit")
        value = got if isinstance(got, int) and not isinstance(got, bool) else None
        evidence = "the sample's 'limit' field: inspect stopped it at this limit"
    return RunOutcome(
        reward=reward,
        passed=passed_of(reward),
        final_answer=final,
        steps=base.steps,
        limit_reached=reached,
        limit=kind,
        limit_value=value,
        evidence=evidence,
    )
