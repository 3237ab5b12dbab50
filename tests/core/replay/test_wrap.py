"""The environment contract: a real agent process driven by CASSETTE_* variables."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cassette_tui.core import CassetteMiss, wrap_dispatcher

SYNC_AGENT = textwrap.dedent(
    """
    import json, sys
    from cassette_tui.core import wrap_dispatcher

    def live(tool, args):
        if sys.argv[1:] == ["offline"]:
            raise SystemExit("live tool called during replay")
        if tool == "flaky":
            raise ConnectionError("429 Too Many Requests")
        return {"tool": tool, "q": args.get("q"), "top": "retry-budget.md"}

    dispatch = wrap_dispatcher(live)
    out = [dispatch("search_docs", {"q": "retry budget", "top_k": 5})]
    try:
        dispatch("flaky", {})
    except Exception as exc:
        # replay raises ToolError carrying the recorded type and message
        kind = getattr(exc, "type", type(exc).__name__)
        out.append(kind + ": " + getattr(exc, "message", str(exc)))
    out.append(dispatch("read_file", {"path": "retry-budget.md"}))
    print(json.dumps(out))
    """
)

ASYNC_AGENT = textwrap.dedent(
    """
    import asyncio, json, sys
    from cassette_tui.core import wrap_dispatcher

    async def live(tool, args):
        if sys.argv[1:] == ["offline"]:
            raise SystemExit("live tool called during replay")
        await asyncio.sleep(0)
        return {"tool": tool, "args": args}

    async def main():
        dispatch = wrap_dispatcher(live)
        assert asyncio.iscoroutinefunction(dispatch)
        a = await dispatch("search_docs", {"q": "retry budget"})
        b = await dispatch("read_file", {"path": "x.md"})
        print(json.dumps([a, b]))

    asyncio.run(main())
    """
)


def run_agent(tmp_path: Path, source: str, env: dict[str, str], *args: str):
    script = tmp_path / "agent.py"
    script.write_text(source, encoding="utf-8")
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        check=False,
        env=full_env,
        cwd=tmp_path,
    )


@pytest.mark.parametrize("source", [SYNC_AGENT, ASYNC_AGENT], ids=["sync", "async"])
def test_record_then_replay_offline_with_report(tmp_path: Path, source: str) -> None:
    cassette = tmp_path / "run.jsonl"
    report = tmp_path / "report.json"
    rec = run_agent(tmp_path, source, {"CASSETTE_MODE": "record", "CASSETTE_PATH": str(cassette)})
    assert rec.returncode == 0, rec.stderr
    env = {
        "CASSETTE_MODE": "replay",
        "CASSETTE_PATH": str(cassette),
        "CASSETTE_REPORT": str(report),
    }
    rep = run_agent(tmp_path, source, env, "offline")
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout) == json.loads(rec.stdout)
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["mode"] == "replay"
    assert data["cassette"] == str(cassette)
    assert data["unused_seqs"] == [] and data["misses"] == []
    assert [c["outcome"] for c in data["calls"]] == (
        ["hit", "error", "hit"] if source is SYNC_AGENT else ["hit", "hit"]
    )


def test_live_mode_is_the_default_and_passes_through(tmp_path: Path) -> None:
    proc = run_agent(tmp_path, SYNC_AGENT, {})
    assert proc.returncode == 0, proc.stderr
    assert "ConnectionError: 429 Too Many Requests" in proc.stdout
    assert list(tmp_path.iterdir()) == [tmp_path / "agent.py"]


def test_replay_miss_exits_nonzero_and_reports_the_miss(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    cassette.write_text(
        '{"seq":1,"tool":"search_docs","args":{"q":"other","top_k":5},"response":{}}\n',
        encoding="utf-8",
    )
    report = tmp_path / "report.json"
    env = {
        "CASSETTE_MODE": "replay",
        "CASSETTE_PATH": str(cassette),
        "CASSETTE_REPORT": str(report),
    }
    proc = run_agent(tmp_path, SYNC_AGENT, env, "offline")
    assert proc.returncode != 0
    assert "CassetteMiss" in proc.stderr and "$.q" in proc.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    (miss,) = data["misses"]
    assert miss["nearest"][0]["differences"][0]["path"] == "$.q"


def test_unknown_mode_and_missing_path_are_clear_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASSETTE_PATH", raising=False)
    with pytest.raises(ValueError, match="unknown CASSETTE_MODE 'rewind'"):
        wrap_dispatcher(lambda t, a: None, mode="rewind")
    with pytest.raises(ValueError, match="needs a cassette"):
        wrap_dispatcher(lambda t, a: None, mode="replay")


def test_in_process_replay_exposes_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "c.jsonl"
    path.write_text('{"seq":1,"tool":"t","args":{"a":1},"response":"r"}\n', encoding="utf-8")
    calls = []
    dispatch = wrap_dispatcher(lambda t, a: calls.append(t), mode="replay", path=path)
    assert dispatch("t", {"a": 1}) == "r"
    with pytest.raises(CassetteMiss):
        dispatch("t", {"a": 2})
    assert calls == []
    assert dispatch.report()["used"] == 1


def test_async_replay_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "c.jsonl"
    path.write_text('{"seq":1,"tool":"t","args":{},"response":"r"}\n', encoding="utf-8")

    async def alive(tool: str, args: dict) -> str:
        raise AssertionError("live call")

    dispatch = wrap_dispatcher(alive, mode="replay", path=path)
    assert asyncio.iscoroutinefunction(dispatch)
    assert asyncio.run(dispatch("t", {})) == "r"


def test_config_rules_apply_in_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cassette.toml").write_text(
        '[normalize]\npresets = ["timestamp"]\n', encoding="utf-8"
    )
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"seq":1,"tool":"t","args":{"since":"2024-05-15T15:00:03Z"},"response":"r"}\n',
        encoding="utf-8",
    )
    dispatch = wrap_dispatcher(lambda t, a: None, mode="replay", path=path)
    assert dispatch("t", {"since": "2024-05-16T09:12:44Z"}) == "r"
