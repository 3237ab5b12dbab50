"""``diff`` of a drift whose sides' secret scans disagree (session 17): a JSON text whose
``api_key`` only A's scan finds (B's copy is cut inside it, no JSON), and a ``ghp_``
token broken by a space on B only. On main B's side showed the secret, or 18-23
characters of it, in the text and in ``--json``; now no run of 8 characters of it shows
in any output, and ``--reveal`` still shows it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.cut_secrets import GHP, KEY, leaked, write_pair
from support.run import cli


def _diff(*args: str) -> subprocess.CompletedProcess[str]:
    return cli("diff", *args)


@pytest.mark.parametrize(("case", "secret"), [("json", KEY), ("split", GHP)])
def test_no_run_of_a_secret_either_side_finds_shows(tmp_path: Path, case: str, secret: str) -> None:
    a, b = write_pair(tmp_path, case)
    outs: dict[tuple[str, ...], str] = {}
    for extra in ((), ("--json",), ("--format", "markdown")):
        done = _diff(str(a), str(b), *extra)
        assert done.returncode == 1, done.stderr
        outs[extra] = done.stdout
        out = done.stdout + done.stderr
        assert "$.text" in out and "«" in out, (extra, out)
        assert leaked(out, secret) is None, (extra, leaked(out, secret), out)
    doc = json.loads(outs[("--json",)])
    drift = next(d for r in doc["rows"] for d in r["drift"] or [] if d["path"] == "$.text")
    assert "«" in drift["a"] and "«" in drift["b"]  # each side masked, B by A's secret
    assert leaked(_diff(str(a), str(b), "--reveal").stdout, secret) is not None
