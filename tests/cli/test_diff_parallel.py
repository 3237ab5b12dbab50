"""End to end (issue 24): an asyncio agent that fans out three lookups at once is recorded
twice through ``wrap_dispatcher`` in real subprocesses, its calls finishing in another
order each run (forced with events, not timing) and one answer changed; ``cassette-tui
diff --json`` then shows that call as response drift beside its twin, never as a call
only one run made, with every alignment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

AGENT = r"""
import asyncio, json, os, sys
from cassette_tui.core import wrap_dispatcher

CITIES = json.loads(os.environ["CITIES"])          # the issue order
FINISH = json.loads(os.environ["FINISH"])          # the completion order (positions)
TEMPS = json.loads(os.environ["TEMPS"])

async def main():
    cond = asyncio.Condition()
    state = {"issued": 0, "next": 0}

    async def live(tool, args):
        if tool == "summarize":
            return {"text": args["text"]}
        k = CITIES.index(args["city"])
        async with cond:
            state["issued"] += 1
            cond.notify_all()
            await cond.wait_for(lambda: state["issued"] == len(CITIES)
                                and FINISH[state["next"]] == k)
            state["next"] += 1
            cond.notify_all()
        return {"temp_c": TEMPS[args["city"]]}

    tool = wrap_dispatcher(live)
    answers = await asyncio.gather(*(tool("get_weather", {"city": c}) for c in CITIES))
    text = ", ".join(f"{c} {a['temp_c']}" for c, a in sorted(zip(CITIES, answers)))
    print(await tool("summarize", {"text": text}))

asyncio.run(main())
"""


def _record(tmp_path: Path, name: str, cities: list[str], finish: list[int], temps: dict) -> Path:
    script = tmp_path / "agent.py"
    script.write_text(AGENT, encoding="utf-8")
    out = tmp_path / name
    env = {
        **os.environ,
        "CASSETTE_MODE": "record",
        "CASSETTE_PATH": str(out),
        "CITIES": json.dumps(cities),
        "FINISH": json.dumps(finish),
        "TEMPS": json.dumps(temps),
    }
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("align", ["auto", "seq", "key"])
def test_recorded_fan_outs_diff_side_by_side(tmp_path: Path, align: str) -> None:
    temps = {"Lisbon": 21, "Oslo": 4, "Cairo": 33}
    a = _record(tmp_path, "a.jsonl", ["Lisbon", "Oslo", "Cairo"], [2, 1, 0], temps)
    b = _record(tmp_path, "b.jsonl", ["Cairo", "Lisbon", "Oslo"], [1, 2, 0], {**temps, "Oslo": 5})
    # A's lines stand in completion order, numbered in issue order
    on_disk = [json.loads(x) for x in a.read_text(encoding="utf-8").splitlines()]
    assert [(r["seq"], r["args"].get("city"), r.get("batch")) for r in on_disk] == [
        (3, "Cairo", 1),
        (2, "Oslo", 1),
        (1, "Lisbon", 1),
        (4, None, None),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", "--json", "--align", align,
         str(a), str(b)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    statuses = [r["status"] for r in doc["rows"]]
    assert "only_a" not in statuses and "only_b" not in statuses, statuses
    drift = [r for r in doc["rows"] if r["status"] == "response_drift"]
    assert [(r["a_seq"], r["b_seq"], r["tool"]) for r in drift] == [(2, 3, "get_weather")]
    # the summary's args changed with Oslo's answer: that is the consequence, after it
    summary = next(r for r in doc["rows"] if r["tool"] == "summarize")
    assert summary["status"] == "args_drift" and summary["a_seq"] == summary["b_seq"] == 4
    assert doc["first_divergence"]["a_seq"] == 2 and doc["first_divergence"]["b_seq"] == 3
    first = next(f for f in doc["findings"] if f["kind"] == "first_divergence")
    assert "issued their parallel calls in another order" in first["message"]
