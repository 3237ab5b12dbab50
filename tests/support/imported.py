"""Small recordings of other formats, made by the tests: a tau-bench results file whose
runs hold the demo agent's calls (so a replay of one run passes or fails for real), and a
one-interaction VCR cassette."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .paths import SAMPLES


def _traj(cassette: Path) -> list[dict[str, Any]]:
    """The entries of ``cassette`` as a tau-bench trajectory (OpenAI chat messages)."""
    traj: list[dict[str, Any]] = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "what is our retry budget?"},
    ]
    for line in cassette.read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        call_id = f"call_{e['seq']}"
        traj.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": e["tool"], "arguments": json.dumps(e["args"])},
                    }
                ],
            }
        )
        traj.append(
            {"role": "tool", "tool_call_id": call_id, "name": e["tool"],
             "content": json.dumps(e["response"])}
        )  # fmt: skip
    return traj


def tau_results(folder: Path, name: str = "results.json") -> Path:
    """A tau-bench results file with two runs of task ``retry``: trial 0 the fixed run
    (``fix.jsonl``'s calls, reward 1), trial 1 the failing one (``fail.jsonl``, reward 0)."""
    path = folder / name
    runs = [
        {"task_id": "retry", "trial": 0, "reward": 1.0, "info": {}, "traj": _traj(SAMPLES / "fix.jsonl")},
        {"task_id": "retry", "trial": 1, "reward": 0.0, "info": {}, "traj": _traj(SAMPLES / "fail.jsonl")},
    ]  # fmt: skip
    path.write_text(json.dumps(runs), encoding="utf-8")
    return path


def vcr_yaml(folder: Path, name: str = "http.yaml") -> Path:
    """A VCR.py cassette with one GET."""
    path = folder / name
    path.write_text(
        "interactions:\n"
        "- request:\n"
        "    body: null\n"
        "    headers: {}\n"
        "    method: GET\n"
        "    uri: https://example.com/docs\n"
        "  response:\n"
        "    body: {string: '{\"ok\": true}'}\n"
        "    headers: {Content-Type: [application/json]}\n"
        "    status: {code: 200, message: OK}\n"
        "version: 1\n",
        encoding="utf-8",
    )
    return path
