"""Issue 26: ``diff`` masks what the secret scan finds, in its text and its ``--json``
(drift values, an ``other_call`` row's args, findings); ``--reveal`` shows them whole."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cassette_tui.core.scan.masking import value_hash
from support.factory import entry, write_cassette
from support.paths import SCRIPT

GHP_A = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake
GHP_B = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"  # fake
PASSWORD_A, PASSWORD_B = "hunter2-db-Pa55word", "hunter3-db-Pa55word"
OPENAI = "sk-proj-" + "Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4nMq6wEr0tYu"  # fake
SECRETS = (GHP_A, GHP_B, PASSWORD_A, PASSWORD_B, OPENAI)


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "login", {"user": "ana", "password": PASSWORD_A}, response={"token": GHP_A}),
        entry(2, "llm", {"headers": {"Authorization": f"Bearer {OPENAI}"}}, response={"x": 1}),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "login", {"user": "ana", "password": PASSWORD_B}, response={"token": GHP_B}),
        entry(2, "other", {"key": OPENAI}, response={"x": 1}),
    )
    return a, b


def _diff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "diff", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"NO_COLOR": "1", "COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )


def test_diff_text_and_json_mask_secrets(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    for extra in ((), ("--json",), ("--all",)):
        done = _diff(str(a), str(b), "--align", "seq", *extra)
        assert done.returncode == 1, done.stderr
        out = done.stdout + done.stderr
        for secret in SECRETS:
            assert secret not in out and secret[4:14] not in out, (extra, secret)
        assert "ghp_…(40 chars)" in out
    doc = json.loads(_diff(str(a), str(b), "--json", "--align", "seq").stdout)
    drift = {d["path"]: d for r in doc["rows"] for d in r["drift"] or []}
    assert drift["$.password"]["a"].startswith("«") and drift["$.token"]["b"].startswith("«")


def test_diff_reveal_shows_values_whole(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    text = _diff(str(a), str(b), "--align", "seq", "--reveal").stdout
    assert PASSWORD_A in text and GHP_B[:20] in text and OPENAI in text
    doc = _diff(str(a), str(b), "--align", "seq", "--json", "--reveal").stdout
    assert GHP_A in doc and OPENAI in doc


def test_a_token_used_as_a_tool_name_or_key_is_masked_in_text_and_json(tmp_path: Path) -> None:
    """A token as a tool's name (an other_call row, both sides) or as an args key is
    masked in the diff's rows, calls and drift; ``--reveal`` shows it."""
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, GHP_A, {"q": "x"}, response={"x": 1}),
        entry(2, "lookup", {GHP_B: "v"}, response={"x": 1}),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "search", {"q": "x"}, response={"x": 1}),
        entry(2, "lookup", {"k": "v"}, response={"x": 1}),
    )
    for extra in ((), ("--json",)):
        done = _diff(str(a), str(b), "--limit", "0", *extra)
        assert done.returncode == 1, done.stderr
        out = done.stdout + done.stderr
        assert GHP_A[4:12] not in out and GHP_B[4:12] not in out, out
        assert "ghp_…(40 chars)" in out
    revealed = _diff(str(a), str(b), "--limit", "0", "--reveal")
    assert GHP_A in revealed.stdout


def test_a_drift_inside_a_secret_reads_apart_by_its_hashes(tmp_path: Path) -> None:
    """Two tokens of one shape (and a long text whose first difference is inside one)
    masked alike read the same (``"«ghp_…(40 chars)»" -> "«ghp_…(40 chars)»"``): each
    side's mask carries its secret's hash, the position is the values' own."""
    before, after = "The token for the mirror is now set to ", " and it expires in 30 days."
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(
            1, "login", {"user": "ana"}, response={"token": GHP_A, "note": before + GHP_A + after}
        ),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        entry(
            1, "login", {"user": "ana"}, response={"token": GHP_B, "note": before + GHP_B + after}
        ),
    )
    out = _diff(str(a), str(b), "--align", "seq").stdout
    lines = {line.split()[2]: line for line in out.splitlines() if "~ response $." in line}
    ha, hb = (f"hash {value_hash(t)[:8]}" for t in (GHP_A, GHP_B))
    for path in ("$.token", "$.note"):
        line = lines[path]
        assert ha in line and hb in line and line.index(ha) < line.index(hb), line
    assert f"at character {len(before) + 5} (inside a secret):" in lines["$.note"]
    for secret in (GHP_A, GHP_B):
        assert secret[4:14] not in out
