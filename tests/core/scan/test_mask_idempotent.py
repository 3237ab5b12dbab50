"""A value masked already (a replay report keeps a recorded secret as ``«ghp_…(40 chars)»``)
is shown as it is: masking it again under a secret-named key (``$.token``) read
``««ghp…(17 chars)»``, the length of the mask instead of the secret's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cassette_tui.core.format.digest import digest
from cassette_tui.core.scan.masking import mask_at, mask_value

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_masking_is_idempotent_under_a_secret_named_key() -> None:
    once = mask_at(TOKEN, "$.token")
    assert once == "«ghp_…(40 chars)»"
    assert mask_at(once, "$.token") == once
    assert mask_value({"token": once}) == {"token": once}
    # a real secret beside the mask is still masked
    assert mask_value({"token": once, "password": "hunter2"})["password"] == "«h…(7 chars)»"


def test_replay_miss_shows_the_recorded_secret_masked_once(tmp_path: Path) -> None:
    args = {"q": "x", "token": TOKEN}
    entry = {"seq": 1, "tool": "search", "args": args, "args_digest": digest(args), "response": {}}
    cassette = tmp_path / "run.jsonl"
    cassette.write_text(json.dumps(entry) + "\n")
    agent = tmp_path / "agent.py"
    agent.write_text(
        "from cassette_tui.core import wrap_dispatcher\n"
        "d = wrap_dispatcher(lambda t, a: {})\n"
        f"d('search', {{'q': 'x', 'token': {TOKEN + '9'!r}}})\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "replay", str(cassette), "--agent",
         f"{sys.executable} {agent}"],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'recorded "«ghp_…(40 chars)»"' in done.stdout, done.stdout
    assert "««" not in done.stdout and TOKEN not in done.stdout
