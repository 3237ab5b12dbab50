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


def _big(path: Path) -> Path:
    """40k entries: enough for check's second process (core/scan/check.py)."""
    with path.open("w") as fh:
        for i in range(1, 40_001):
            record = {
                "seq": i,
                "tool": "search_docs",
                "args": {"q": f"query {i}", "top_k": 5},
                "response": {"text": "retry budget backoff " * 12, "n": i},
            }
            fh.write(json.dumps(record, separators=(",", ":")) + "\n")
    return path


#: run a program with SIGINT's default action, as from a shell: a runner started in the
#: background by a non-interactive shell ignores SIGINT, and its children inherit that
_SIGINT_DEFAULT = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])",
]


def _start_check(tmp_path: Path) -> subprocess.Popen[str]:
    """``check`` on a 40k-entry cassette, in its own session (stderr piped)."""
    path = _big(tmp_path / "big.jsonl")
    env = {k: v for k, v in os.environ.items() if k != "CASSETTE_CONFIG"}
    return subprocess.Popen(
        [*_SIGINT_DEFAULT, str(SCRIPT), "check", str(path)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _forked_worker(proc: subprocess.Popen[str]) -> list[int]:
    """The pids of ``proc``'s children once it has forked its worker (skips the test when
    none comes within 30 s: one CPU, or the check ended first)."""
    workers: list[int] = []
    deadline = time.monotonic() + 30
    while not workers and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
        workers = _children(proc.pid)
    if not workers:
        pytest.skip("no worker was forked (one CPU, or the check ended first)")
    return workers


def _stop_during_the_pass(tmp_path: Path, how: signal.Signals) -> tuple[int, str, list[int]]:
    """Run ``check`` on a 40k-entry cassette in its own session, send ``how`` once its
    worker is forked (SIGINT to the group, as Ctrl-C does; SIGTERM to the parent alone),
    and give ``(exit status, stderr, worker pids still alive after 20 s)``."""
    proc = _start_check(tmp_path)
    workers: list[int] = []
    try:
        workers = _forked_worker(proc)
        if how == signal.SIGINT:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(how)
        _, err = proc.communicate(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        return proc.returncode, err, [w for w in workers if _alive(w)]
    finally:
        if proc.poll() is None:
            proc.kill()
        for w in workers:
            if _alive(w):
                os.kill(w, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_during_a_two_process_check_leaves_no_worker(tmp_path: Path) -> None:
    """SIGTERM kills the parent at once (no cleanup runs); the forked worker must not
    live on: it closed its copy of the pipe's read end (a send to a dead parent fails
    instead of blocking for ever) and stops when it sees it was orphaned."""
    status, _, left = _stop_during_the_pass(tmp_path, signal.SIGTERM)
    assert status == -signal.SIGTERM
    assert left == [], f"worker(s) {left} still running after the check was terminated"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_during_check_exits_130_and_leaves_no_worker(tmp_path: Path) -> None:
    """Ctrl-C exits 130 (128 + SIGINT) with one line, never click's "Aborted!" and 1,
    the status of "findings" that CI would misread (found by a tester)."""
    status, err, left = _stop_during_the_pass(tmp_path, signal.SIGINT)
    assert status == 130, err
    assert "cancelled" in err and "Aborted" not in err and "Traceback" not in err
    assert left == []


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


def _blocked_signals(pid: int) -> int:
    """The mask of signals ``pid`` blocks (``SigBlk`` of ``/proc/PID/status``), or -1."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return -1
    for line in status.splitlines():
        if line.startswith("SigBlk:"):
            return int(line.split()[1], 16)
    return -1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_worker_blocks_ctrl_c_from_its_start_and_the_check_does_not(tmp_path: Path) -> None:
    """Ctrl-C goes to the whole process group; the parent answers it and stops the
    worker. A worker that could take it printed "Exception ignored in _after_fork ...
    KeyboardInterrupt" when it landed during the fork's own bookkeeping (seen in CI under
    load): the worker now starts with SIGINT blocked, and the parent's mask is restored."""
    proc = _start_check(tmp_path)
    sigint = 1 << (signal.SIGINT - 1)
    try:
        workers = _forked_worker(proc)
        deadline = time.monotonic() + 30
        worker_mask = _blocked_signals(workers[0])
        parent_mask = _blocked_signals(proc.pid)
        while parent_mask != -1 and parent_mask & sigint and time.monotonic() < deadline:
            time.sleep(0.01)  # the parent may still be inside the fork
            parent_mask = _blocked_signals(proc.pid)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    if worker_mask == -1:
        pytest.skip("the worker ended before its mask was read")
    assert worker_mask & sigint, f"the worker takes SIGINT (SigBlk {worker_mask:x})"
    assert parent_mask == -1 or not parent_mask & sigint, "the check itself blocks SIGINT"
    assert proc.returncode in (0, 1), err
    assert "Traceback" not in err
