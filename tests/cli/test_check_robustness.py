"""Bad inputs and signals for ``cassette-tui check`` run as a user runs it (the
installed script in a subprocess)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.paths import SCRIPT


def _check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CASSETTE_CONFIG"}
    return subprocess.run(
        [str(SCRIPT), "check", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_reports_a_query_token_in_a_compact_line(tmp_path: Path) -> None:
    """Pre-existing: the same entry is reported when written with spaces, missed when
    compact (``jq -c``, orjson, the shared generator's layout): exit 0, "no findings"."""
    (tmp_path / "c.jsonl").write_bytes(
        b'{"seq":1,"tool":"http_get","args":{"url":"https://api.example.com/v1/items?page=2",'
        b'"next":"https://api.example.com/v1/items?access_token=s3cr3tvalue"},'
        b'"response":{"status":200}}\n'
    )
    result = _check("--json", "c.jsonl", cwd=tmp_path)
    kinds = [f["kind"] for f in json.loads(result.stdout)["findings"]]
    assert (result.returncode, kinds) == (1, ["secret"]), result.stdout


def test_check_reports_a_password_after_a_key_holding_the_digest(tmp_path: Path) -> None:
    """New at cc751d3 (be8df1e): 6eb101f reports the password; cc751d3 says only
    ``stale_digest`` and ``volatile_arg``."""
    (tmp_path / "c.jsonl").write_bytes(
        b'{"seq":1,"tool":"t","args":{"foo\\"args_digest":"D","p":"C:\\\\x",'
        b'"password":"hunter2"},"args_digest":"D","response":{}}\n'
    )
    result = _check("--json", "c.jsonl", cwd=tmp_path)
    kinds = [f["kind"] for f in json.loads(result.stdout)["findings"]]
    assert "secret" in kinds, result.stdout


def test_check_reads_a_lone_surrogate_digest_as_a_stale_one(tmp_path: Path) -> None:
    """Pre-existing: exit 2 and "'utf-8' codec can't encode character '\\ud800'..."
    without the file, line or field, while ``check --no-secrets`` says stale_digest."""
    (tmp_path / "c.jsonl").write_bytes(
        b'{"seq":1,"tool":"t","args":{"q":"x"},"args_digest":"\\ud800","response":{"a":1}}\n'
    )
    lint_only = _check("--no-secrets", "c.jsonl", cwd=tmp_path)
    assert lint_only.returncode == 1 and "stale_digest" in lint_only.stdout
    result = _check("c.jsonl", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "stale_digest" in result.stdout


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(p) for p in path.read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_during_a_two_process_check_leaves_no_worker(tmp_path: Path) -> None:
    """Pre-existing (same at 6eb101f): SIGTERM to ``check`` on a cassette of 20k entries
    or more kills the parent at once; the forked worker (core/checkscan.py) holds both
    ends of its pipe (the read end was inherited at the fork), so when it sends its
    result (far more than a pipe's 64 KB) it blocks in ``write`` for ever: an orphan
    under init, seen with ``ps`` as ``anon_pipe_write``. Ctrl-C (SIGINT to the group)
    cleans up."""
    path = tmp_path / "big.jsonl"
    with path.open("w") as fh:
        for i in range(1, 40_001):
            fh.write(
                json.dumps(
                    {
                        "seq": i,
                        "tool": "search_docs",
                        "args": {"q": f"query {i}", "top_k": 5},
                        "response": {"text": "retry budget backoff " * 12, "n": i},
                    },
                    separators=(",", ":"),
                )
                + "\n"
            )
    env = {k: v for k, v in os.environ.items() if k != "CASSETTE_CONFIG"}
    proc = subprocess.Popen(
        [str(SCRIPT), "check", str(path)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while not workers and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            workers = _children(proc.pid)
        if not workers:
            pytest.skip("no worker was forked (one CPU, or the check ended first)")
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        left = [w for w in workers if _alive(w)]
        assert left == [], f"worker(s) {left} still running after the check was terminated"
    finally:
        if proc.poll() is None:
            proc.kill()
        for w in workers:
            if _alive(w):
                os.kill(w, signal.SIGKILL)


def test_a_bad_replacement_in_the_config_is_a_bad_input_not_a_traceback(tmp_path: Path) -> None:
    """Pre-existing: a ``replace`` rule whose replacement names a group the pattern lacks
    (``\\9``) is not checked when the config is read (a bad ``pattern`` is: exit 2 naming
    the config's file and field). ``check`` and ``diff`` then die in ``re`` with a Python
    traceback and exit status 1, the status of "findings"; ``check --json`` prints nothing
    on stdout."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cassette.normalize]\nreplace = [{pattern = "(a)", replacement = "\\\\9"}]\n'
    )
    (tmp_path / "c.jsonl").write_text(
        '{"seq": 1, "tool": "t", "args": {"q": "abc"}, "response": {"a": 1}}\n'
    )
    result = _check("--json", "c.jsonl", cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-300:]
    assert "Traceback" not in result.stderr
    doc = json.loads(result.stdout)
    assert "pyproject.toml" in (doc.get("error") or "")
