"""Issue 26: the files a runs folder holds beside its call logs (the agent's captured
stdout and stderr, the replay report and its journal, the run's result) are covered by
``check``, ``redact`` and the pre-commit hook like a cassette: a ``--runs-dir`` committed
by mistake is caught. The agent here prints a secret it read from its environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from support.paths import ROOT, SAMPLES, SCRIPT

TOKEN = "ghp_" + "Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg9Fe8Dc7Ba6"  # fake

AGENT = """
import os, sys
from cassette_tui.core import wrap_dispatcher
print("using token", os.environ["LEAK_TOKEN"])
print("debug: auth", os.environ["LEAK_TOKEN"], file=sys.stderr)
dispatch = wrap_dispatcher(lambda tool, args: {"live": True})
dispatch("search_docs", {"q": "retry budget", "top_k": 5})
"""


def _run(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=300, check=False,
        env=env, cwd=cwd,
    )  # fmt: skip


def test_check_redact_and_the_hook_cover_a_runs_folder(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    env = {**os.environ, "LEAK_TOKEN": TOKEN, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("CASSETTE_CONFIG", None)
    runs = tmp_path / "runs"
    done = _run(
        "replay", str(SAMPLES / "fail.jsonl"), "--agent", f"{sys.executable} {agent}",
        "--runs-dir", str(runs), env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert TOKEN not in done.stdout + done.stderr
    stdout_file = next(runs.rglob("*.stdout"))
    assert TOKEN in stdout_file.read_text()  # the agent's own output, as it printed it

    found = _run("check", "--secrets", str(runs), "--json", env=env, cwd=tmp_path)
    assert found.returncode == 1, found.stdout + found.stderr
    assert TOKEN not in found.stdout
    docs = json.loads(found.stdout)
    flagged = {Path(d["file"]).name for d in docs if d.get("findings")}
    assert {stdout_file.name, stdout_file.with_suffix(".stderr").name} <= flagged
    paths = [f["path"] for d in docs for f in d.get("findings", [])]
    assert any("line 1" in p for p in paths), paths  # the finding names its line

    for d in docs:
        if d.get("findings"):
            red = _run("redact", d["file"], "--in-place", env=env, cwd=tmp_path)
            assert red.returncode == 0, red.stderr
            assert "1 secret(s) replaced" in red.stdout and TOKEN not in red.stdout
    again = _run("check", "--secrets", str(runs), env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    text = stdout_file.read_text()
    assert TOKEN not in text and re.search(r"using token <redacted:[a-z_]+:[0-9a-f]{8}>", text)

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    for hook in hooks:
        pattern = re.compile(hook["files"])
        for name in ("run-01.stdout", "run-01.stderr", "run-01.report.json",
                     "run-01.report.json.journal", "run-01.end.json", "run.mcp.json"):  # fmt: skip
            assert pattern.search(name), (hook["id"], name)


def test_redact_refuses_a_secret_it_cannot_replace(tmp_path: Path) -> None:
    """A token written with a JSON escape is found (decoded) but is not the bytes on the
    line: ``redact`` says so and writes nothing, never "1 secret(s) replaced"."""
    path = tmp_path / "run-01.report.json"
    body = '{"token_x":"\\u0067hp_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"}\n'
    path.write_text(body, encoding="utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = _run("redact", str(path), "--in-place", env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert "escaped form that redact cannot replace" in done.stderr and ":1:" in done.stderr
    assert path.read_text(encoding="utf-8") == body
    assert not list((tmp_path / "cache").rglob("*.bak"))  # no backup either: nothing done
