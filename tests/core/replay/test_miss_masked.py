"""A miss shows no live secret (issue 26): the exception's text, its ``nearest``, the
replay report and ``Miss.args`` mask every secret, a live value equal to a redacted
placeholder's secret is named by the placeholder's path, and a secret that matches once
redacted is not listed as a difference."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import CassetteMiss
from cassette_tui.core.replay.replayer import Replayer
from cassette_tui.core.scan.redact import placeholder

from tests.support.factory import make_cassette

KEY = "sk-live-4f9a8B2c7D1e6F3a9B8c7D6e5F4a3B2c1D0e"  # fake
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake


def _miss(replayer: Replayer, tool: str, args: object) -> CassetteMiss:
    with pytest.raises(CassetteMiss) as info:
        replayer(tool, args)
    return info.value


def test_a_redacted_secret_is_no_difference_and_never_printed() -> None:
    recorded = {"email": "ana@example.test", "api_key": placeholder(KEY), "fields": ["name"]}
    replayer = Replayer(make_cassette([("crm_lookup", recorded, {"ok": 1})]))
    live = {"email": "ana@example.test", "api_key": KEY, "fields": ["name", "phone"]}
    miss = _miss(replayer, "crm_lookup", live)
    text = str(miss)
    assert KEY not in text and KEY[:12] not in text
    paths = [d["path"] for c in miss.nearest for d in c["differences"]]
    assert paths == ["$.fields[1]"]
    report = json.dumps(replayer.report())
    assert KEY not in report and KEY[:12] not in report
    assert KEY not in json.dumps(miss.args)


def test_a_live_secret_at_another_path_is_named_by_the_placeholder() -> None:
    recorded = {"api_key": placeholder(KEY), "q": "a"}
    replayer = Replayer(make_cassette([("search", recorded, {"ok": 1})]))
    miss = _miss(replayer, "search", {"api_key": placeholder(KEY), "q": KEY})
    diffs = miss.nearest[0]["differences"]
    assert diffs == [
        {
            "path": "$.q",
            "recorded": "a",
            "live": "the redacted value at $.api_key",
            "absent": None,
            "kind": "other",
        }
    ]
    assert "the redacted value at $.api_key" in str(miss)
    assert KEY not in str(miss)


def test_secrets_on_either_side_of_an_unredacted_cassette_are_masked() -> None:
    other = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"  # fake
    replayer = Replayer(make_cassette([("gh", {"token": other, "repo": "a"}, {"ok": 1})]))
    miss = _miss(replayer, "gh", {"token": GHP, "repo": "b"})
    text = str(miss) + json.dumps(replayer.report()) + json.dumps(miss.nearest)
    for secret in (GHP, other):
        assert secret not in text and secret[4:16] not in text
    assert "ghp_…(40 chars)" in text


def test_bugcase_44_secret_in_miss_message(real: Path, tmp_path: Path) -> None:
    case = real / "bugcases" / "44_secret_in_miss_message"
    if not case.is_dir():
        pytest.skip(f"bugcase absent: {case}")
    report = tmp_path / "report.json"
    env = {
        **os.environ,
        "CRM_TOKEN": KEY,
        "CASSETTE_MODE": "replay",
        "CASSETTE_PATH": str(case / "redacted.jsonl"),
        "CASSETTE_REPORT": str(report),
        "NO_COLOR": "1",
    }
    agent = [sys.executable, str(case / "agent.py")]
    hit = subprocess.run(agent, env=env, capture_output=True, text=True, timeout=120)
    assert hit.returncode == 0, hit.stderr
    missed = subprocess.run(
        [*agent, "name", "phone"], env=env, capture_output=True, text=True, timeout=120
    )
    assert missed.returncode == 1
    out = missed.stdout + missed.stderr + report.read_text(encoding="utf-8")
    assert "sk-live-" not in out
    assert "$.fields[1]: absent in the recording, live 'phone' [missing]" in missed.stderr
    assert "$.api_key" not in missed.stderr


def test_a_recorded_token_the_live_call_sends_split_is_masked_on_both_sides() -> None:
    """Session 17: the live call's token broken by a space is no token to its scan; the
    recorded one is. Masked one side at a time, the live side showed it (17 and 23
    characters); now no run of 8 of it shows in the message, the report or the nearest."""
    replayer = Replayer(make_cassette([("gh", {"q": f"use token {GHP} now"}, {"ok": 1})]))
    miss = _miss(replayer, "gh", {"q": f"use token {GHP[:17]} {GHP[17:]} now"})
    text = str(miss) + json.dumps(replayer.report()) + json.dumps(miss.nearest)
    text += json.dumps(miss.args)
    runs = [GHP[i : i + 8] for i in range(len(GHP) - 7)]
    assert [r for r in runs if r in text] == []
    assert [d["path"] for c in miss.nearest for d in c["differences"]] == ["$.q"]
