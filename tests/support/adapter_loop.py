"""Helpers of the framework adapter tests (tests/core/adapters/): the debug loop run on a
framework agent through the installed ``cassette-tui`` command, and message histories
compared byte for byte.

Each framework's test agent (``agents/<framework>_agent.py``) takes ``FLAKY_TOOL=fail``
(its flaky tool fails and the run exits 1) and writes its message history to the path in
its first argument; its live tools raise under ``CASSETTE_MODE=replay``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

AGENTS = Path(__file__).resolve().parent / "agents"


def cassette_tui() -> str:
    """The installed ``cassette-tui`` script next to this interpreter."""
    found = shutil.which("cassette-tui", path=str(Path(sys.executable).parent))
    assert found, "cassette-tui is not installed next to the test interpreter"
    return found


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``cassette-tui ARGS`` in ``cwd``, with the test's environment plus ``env``, the
    ``CASSETTE_*`` variables of the test process removed (the command sets its own)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    full.update(env or {})
    return subprocess.run(
        [cassette_tui(), *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=300
    )


def agent_template(script: str, history: Path) -> str:
    """The ``--agent`` template running ``agents/SCRIPT`` with this interpreter, writing its
    history to ``history``."""
    return shlex.join([sys.executable, str(AGENTS / script), str(history)])


def normalised(
    history: bytes,
    wall_clock: tuple[str, ...],
    where: Callable[[dict[str, Any]], bool] | None = None,
) -> str:
    """``history`` (JSON) with the value of every key named in ``wall_clock`` replaced by
    ``"<wall clock>"`` (only in the objects ``where`` accepts, when given): fields a
    framework stamps from the clock or a random source, which differ between any two runs.
    Asserts each named key occurs, so a rename upstream shows."""
    seen: set[str] = set()

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            stamped = where is None or where(value)
            for k, v in value.items():
                if k in wall_clock and stamped:
                    seen.add(k)
                    out[k] = "<wall clock>"
                else:
                    out[k] = walk(v)
            return out
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    text = json.dumps(walk(json.loads(history)), sort_keys=True)
    assert seen == set(wall_clock), f"keys not in the history: {set(wall_clock) - seen}"
    return text


def debug_loop(
    tmp_path: Path,
    script: str,
    flaky_tool: str,
    wall_clock: tuple[str, ...] = (),
    where: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """The loop a user runs on a flaky framework agent, through the CLI, offline: record a
    failing run and a passing run, replay each (exit 1 and 0, no live call: the agent's
    tools raise in replay), gate each (deterministic), diff them (the first divergence is
    at ``flaky_tool``). Checks every step's exit status, and that each replay's history is
    the recorded run's, byte for byte after ``normalised``. Returns the diff's JSON."""
    cassettes = {}
    for outcome, status in (("fail", 1), ("pass", 0)):
        recorded, replayed = tmp_path / f"{outcome}-rec.json", tmp_path / f"{outcome}-rep.json"
        cassette = tmp_path / f"{outcome}.jsonl"
        env = {"FLAKY_TOOL": outcome}
        rec = run_cli(
            "record", "--agent", agent_template(script, recorded), "-o", str(cassette),
            env=env, cwd=tmp_path,
        )  # fmt: skip
        assert rec.returncode == status, rec.stdout + rec.stderr
        assert cassette.exists(), rec.stdout + rec.stderr
        rep = run_cli(
            "replay", str(cassette), "--agent", agent_template(script, replayed), "--json",
            env=env, cwd=tmp_path,
        )  # fmt: skip
        assert rep.returncode == status, rep.stdout + rep.stderr
        report = json.loads(rep.stdout)
        assert normalised(replayed.read_bytes(), wall_clock, where) == normalised(
            recorded.read_bytes(), wall_clock, where
        )
        gate = run_cli(
            "gate", str(cassette), "--agent", agent_template(script, tmp_path / "gate.json"),
            "--runs", "2", "-j", "1", "--json",
            env=env, cwd=tmp_path,
        )  # fmt: skip
        assert gate.returncode == 0, gate.stdout + gate.stderr
        verdict = json.loads(gate.stdout)
        assert verdict["verdict"] == "deterministic", verdict
        assert verdict["passed"] == (2 if status == 0 else 0), verdict
        cassettes[outcome] = (cassette, report)
    diff = run_cli(
        "diff", str(cassettes["fail"][0]), str(cassettes["pass"][0]), "--json", cwd=tmp_path
    )
    assert diff.returncode == 1, diff.stdout + diff.stderr
    result: dict[str, Any] = json.loads(diff.stdout)
    assert result["first_divergence"]["tool"] == flaky_tool, result["first_divergence"]
    result["replays"] = {k: v[1] for k, v in cassettes.items()}
    return result
