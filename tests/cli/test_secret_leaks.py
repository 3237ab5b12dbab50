"""The leak check of issue 26: plant secrets (an OpenAI key, a ``ghp_`` token, a bearer
header, a password under a secret-named key), run every command on them, and grep every
byte the commands write to stdout, stderr and the disk for the planted values.

The inputs the user gave (the raw cassettes and the agent's environment) hold the secrets
on purpose; everything the tool writes must not: the redacted cassette, the pinned
fixture, the runs folders (reports, call logs, the agent's captured output, results),
each command's output. ``redact --in-place`` keeps the user's original under the user's
cache folder (its purpose: a copy of the original, outside the repository); that folder is
the one place left out, and the test checks that it is outside the work folder. The app's
screens are checked in ``tests/tui/test_app_secrets.py``; ``mcp record`` (the cassette and
its sidecar) in ``tests/cli/test_mcp_redaction.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from support.paths import SCRIPT

OPENAI = "sk-proj-" + "Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4nMq6wEr0tYu"  # fake
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake
BEARER = "tok9" + "f8e7d6c5b4a39281706f5e4d3c2b1a0ZyXw"  # fake, sent as "Bearer ..."
PASSWORD = "hunter2-db-Pa55word"
PLANTED = (OPENAI, GHP, BEARER, PASSWORD)

AGENT = """\
import os, sys
from cassette_tui.core import wrap_dispatcher

def live(tool, args):
    return {"contact": {"id": "C-5", "name": "Ana Lima"}, "echo": args}

tool = wrap_dispatcher(live)
args = {
    "email": "ana@example.test",
    "openai_key": os.environ["LEAK_OPENAI"],
    "github": {"token": os.environ["LEAK_GHP"]},
    "headers": {"Authorization": "Bearer " + os.environ["LEAK_BEARER"]},
    "db": {"password": os.environ["LEAK_PASSWORD"]},
    "fields": sys.argv[1:] or ["name"],
}
if sys.argv[1:] and sys.argv[-1].isdigit():  # a gate's run number: flaky on purpose
    args["fields"] = ["name"] if int(sys.argv[-1]) % 2 else ["name", "phone"]

result = tool("crm_lookup", args)
print("got", sorted(result))
"""


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env.update(
        NO_COLOR="1",
        COLUMNS="200",
        XDG_CACHE_HOME=str(cache),
        LEAK_OPENAI=OPENAI,
        LEAK_GHP=GHP,
        LEAK_BEARER=BEARER,
        LEAK_PASSWORD=PASSWORD,
    )
    return env


def _leaks(text: str | bytes) -> list[str]:
    """The planted secrets (or a 10-character piece past their first 4) in ``text``."""
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    found = []
    for secret in PLANTED:
        if secret.encode() in data or secret[4:14].encode() in data:
            found.append(secret[:4])
    return found


def test_no_command_writes_a_planted_secret(tmp_path: Path) -> None:
    given, work, cache = tmp_path / "given", tmp_path / "work", tmp_path / "cache"
    given.mkdir()
    work.mkdir()
    env = _env(cache)
    agent = given / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    raw = given / "raw.jsonl"
    recorded = subprocess.run(
        [sys.executable, str(agent)],
        env={**env, "CASSETTE_MODE": "record", "CASSETTE_PATH": str(raw)},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    assert GHP in raw.read_text(encoding="utf-8")  # the planted input holds them all
    # a second recording that differs: for diff
    raw2 = given / "raw2.jsonl"
    subprocess.run(
        [sys.executable, str(agent), "name", "phone"],
        env={**env, "CASSETTE_MODE": "record", "CASSETTE_PATH": str(raw2), "LEAK_GHP": GHP[:-4]
             + "WXYZ"},
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    red = work / "red.jsonl"
    inplace = work / "inplace.jsonl"
    shutil.copy(raw, inplace)
    agent_cmd = f"{sys.executable} {agent} name phone"
    flaky = f"{sys.executable} {agent} {{run}}"
    commands = [
        ["check", str(raw)],
        ["check", "--json", str(raw)],
        ["check", "--secrets", str(given)],
        ["diff", str(raw), str(raw2)],
        ["diff", "--json", str(raw), str(raw2)],
        ["diff", "--all", "--align", "key", str(raw), str(raw2)],
        ["redact", str(raw), "-o", str(red)],
        ["redact", str(inplace), "--in-place"],
        ["check", str(red), str(inplace)],
        ["pin", str(red), "--seq", "1", "-o", str(work / "fixtures")],
        ["replay", str(red), "--agent", agent_cmd, "--runs-dir", str(work / "replay")],
        ["replay", str(red), "--agent", agent_cmd, "--json", "--runs-dir", str(work / "rj")],
        ["gate", str(red), "--agent", agent_cmd, "-n", "2", "-j", "1",
         "--runs-dir", str(work / "gate")],
        ["gate", str(red), "--agent", agent_cmd, "-n", "2", "-j", "1", "--json"],
        # flaky: odd runs hit, even runs miss; on the raw cassette too (its call logs and
        # the divergence quote the recorded args)
        ["gate", str(raw), "--agent", flaky, "-n", "2", "-j", "1", "--runs-dir",
         str(work / "flaky")],
        ["gate", str(red), "--agent", flaky, "-n", "2", "-j", "1", "--json"],
    ]  # fmt: skip
    statuses = {}
    outputs: list[str] = []
    for args in commands:
        done = subprocess.run(
            [str(SCRIPT), *args], cwd=work, env=env, capture_output=True, text=True,
            timeout=600, check=False,
        )  # fmt: skip
        statuses[" ".join(args[:2])] = done.returncode
        outputs.append(done.stdout)
        # a gate with a missing run is an unclean replay (exit 2, issue 29), not a bad input
        ok = (0, 1, 2) if args[0] == "gate" else (0, 1)
        assert done.returncode in ok and "Traceback" not in done.stderr, (args, done.stderr)
        assert not _leaks(done.stdout + done.stderr), (args, done.stdout, done.stderr)
    # the replay did miss (the agent asks one more field); the flaky gate's even runs miss:
    # an unclean replay (exit 2), its runs still compared and quoted
    assert statuses[f"replay {red}"] == 1
    assert statuses[f"gate {raw}"] == 2
    assert json.loads(outputs[-1])["divergence"] is not None  # the runs part, quoted
    # every byte written to the work folder
    written = [p for p in work.rglob("*") if p.is_file()]
    assert any(p.name == "run-01.jsonl" for p in written)  # a call log
    assert any(p.suffix == ".json" and "report" in p.name for p in written), written
    for path in written:
        assert not _leaks(path.read_bytes()), path
    # the original kept by --in-place: outside the work folder, said on stdout
    kept = list((cache / "cassette-tui" / "backups").iterdir())
    assert len(kept) == 1 and work not in kept[0].parents
    report = json.loads(
        subprocess.run(
            [str(SCRIPT), "check", "--json", str(red)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        ).stdout  # fmt: skip
    )
    assert report["findings"] == [] or all(f["kind"] != "secret" for f in report["findings"])
