"""tau-bench results files, one cassette per run.

sierra-research/tau-bench writes a JSON list of runs, ``{"task_id": int, "trial": int,
"reward": float, "info": {...}, "traj": [chat messages]}`` (its
``historical_trajectories/*.json`` and the files ``run.py`` writes). Each run's ``traj``
is an OpenAI chat log; its tool calls become the run's entries (``openai_chat.py``, calls
paired with results by position).

A run is selected by ``task`` (the ``task_id``) and ``trial``. Its cassette's metadata
holds ``task_id``, ``trial``, ``reward``, ``passed`` (reward >= 1, tau-bench's rule) and
``info`` (the task, ``reward_info``, ``user_cost``, ...). Every entry also carries an
extra field ``run`` = ``{"task_id", "trial", "reward"}``, so a cassette written to disk
still says which run it came from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..format.context import RunOutcome, attach_outcome, passed_of
from ..format.entry import Entry
from ..format.errors import CassetteFormatError
from . import Imported, RunInfo
from ._openai_chat import chat_outcome, count_calls, entries_from_messages, pairing_of

NAME = "tau-bench"

_REQUIRED = ("task_id", "traj")


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` (parsed JSON) is a tau-bench results list, else why not."""
    if not isinstance(doc, list):
        return "not a JSON list of runs"
    if not doc:
        return "an empty list: no runs"
    first = doc[0]
    if not isinstance(first, dict) or any(k not in first for k in _REQUIRED):
        return "the first item is not a run (an object with 'task_id' and 'traj')"
    return None


def read(doc: Any, path: Path) -> Imported:
    """A tau-bench results list as an ``Imported`` with one run per item.

    Raises:
        CassetteFormatError: not a results list, or a run with a bad field, naming it
            (``[17].trial``, ``[17].traj[5].tool_calls[0].function.name``).
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    runs = [_run_info(i, run, path) for i, run in enumerate(doc)]

    def build(index: int) -> tuple[list[Entry], dict[str, Any]]:
        return _run_cassette(doc[index], runs[index], index, path)

    return Imported(NAME, path, runs, build)


def _run_info(i: int, run: Any, path: Path) -> RunInfo:
    """Run ``i`` of the list, its fields checked.

    Raises:
        CassetteFormatError: naming the bad field (``[17].trial``).
    """
    if not isinstance(run, dict):
        raise CassetteFormatError(path, None, f"[{i}]", "a run must be an object")
    for key in _REQUIRED:
        if key not in run:
            raise CassetteFormatError(path, None, f"[{i}].{key}", "missing")
    task_id = run["task_id"]
    if isinstance(task_id, bool) or not isinstance(task_id, int | str):
        raise CassetteFormatError(
            path, None, f"[{i}].task_id", f"expected an integer, got {task_id!r:.40}"
        )
    trial = run.get("trial", 0)
    if isinstance(trial, bool) or not isinstance(trial, int):
        raise CassetteFormatError(
            path, None, f"[{i}].trial", f"expected an integer, got {trial!r:.40}"
        )
    reward = run.get("reward")
    if reward is not None and (isinstance(reward, bool) or not isinstance(reward, int | float)):
        raise CassetteFormatError(
            path, None, f"[{i}].reward", f"expected a number, got {reward!r:.40}"
        )
    traj = run["traj"]
    if not isinstance(traj, list):
        raise CassetteFormatError(path, None, f"[{i}].traj", "expected a list of messages")
    return RunInfo(
        task=str(task_id),
        trial=trial,
        reward=float(reward) if reward is not None else None,
        calls=count_calls(traj),
        index=i,
    )


def _run_cassette(
    run: dict[str, Any], info: RunInfo, index: int, path: Path
) -> tuple[list[Entry], dict[str, Any]]:
    """The entries and metadata of one run (``info``: its ``_run_info``)."""
    tag = {"task_id": run["task_id"], "trial": info.trial, "reward": run.get("reward")}
    entries = entries_from_messages(
        run["traj"], path=path, where=f"[{index}].traj", extra={"run": tag}
    )
    outcome = run_outcome(run, info.reward)
    attach_outcome(entries, outcome)
    meta: dict[str, Any] = {
        "run_outcome": outcome.to_json(),
        "task_id": run["task_id"],
        "trial": info.trial,
        "reward": run.get("reward"),
        "passed": info.passed,
        "messages": len(run["traj"]),
        "pairing": pairing_of(run["traj"]),
        "info": run.get("info"),
    }
    rest = {k: v for k, v in run.items() if k not in ("task_id", "trial", "reward", "info", "traj")}
    if rest:
        meta["other"] = rest
    return entries, meta


#: why ``limit_reached`` is true (the evidence stored with the outcome)
STEP_LIMIT_EVIDENCE = (
    "info.reward_info is null: tau-bench fills it only when the episode ends (the user's "
    "###STOP###, a transfer to a human), so the agent's step loop ran out first"
)


def run_outcome(run: dict[str, Any], reward: float | None) -> RunOutcome:
    """How one tau-bench run ended: its ``reward`` (``passed``: reward >= 1), the final
    answer and the agent's steps (``openai_chat.chat_outcome`` over ``traj``), and
    whether it hit the step limit.

    The step limit, derived from the data only: tau-bench's agents run
    ``for _ in range(max_num_steps)`` (30 by default; one assistant message per step) and
    stop early when the environment reports the episode done; the environment computes
    ``info["reward_info"]`` only at that moment. So ``info.reward_info`` present and
    ``null`` means the loop ended without the episode ending: ``limit_reached`` true (the
    5 such runs of ``gpt-4o-airline.json`` all have exactly 30 assistant messages; task 2
    trial 1 ends on a tool result with no final answer). A ``reward_info`` object means the
    episode ended: false. No ``reward_info`` key: ``None``, the file does not say. The
    limit's value (``max_num_steps``) is not in the file: ``limit_value`` is ``None`` and
    ``steps`` counts the steps taken.
    """
    base = chat_outcome(run["traj"])
    info = run.get("info")
    reached: bool | None = None
    evidence: str | None = None
    if isinstance(info, dict) and "reward_info" in info:
        reached = info["reward_info"] is None
        evidence = STEP_LIMIT_EVIDENCE if reached else "info.reward_info is set: the episode ended"
    return RunOutcome(
        reward=reward,
        passed=passed_of(reward),
        final_answer=base.final_answer,
        steps=base.steps,
        limit_reached=reached,
        limit="steps",
        evidence=evidence,
    )
