"""The debug-loop commands end to end through the console script: replay, gate, pin,
record, with the demo agent and the test agent; exit statuses, --json, refusals, Ctrl-C."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.loop._isolation import probe_netns
from support.factory import entry, write_cassette
from support.loop import DEMO_AGENT, agent_cmd, loop_cassette, still_alive
from support.paths import SAMPLES, SCRIPT


def cli(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd, env=env,
        timeout=timeout, check=False,
    )  # fmt: skip


DEMO = agent_cmd(script=DEMO_AGENT)


# -- replay ---------------------------------------------------------------------------


def test_replay_reproduces_the_failure_and_the_fix(tmp_path: Path) -> None:
    done = cli("replay", str(SAMPLES / "fail.jsonl"), "--agent", DEMO)
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "failed (exit 1)" in out and "7 hits" in out and "0 misses" in out
    assert "search_docs sha256:0bde2b47072f677b  called 5x, recorded 5x" in out
    assert "network: off (" in out
    runs = tmp_path / "runs"
    done = cli(
        "replay", str(SAMPLES / "fix.jsonl"), "--agent", DEMO, "--json", "--runs-dir", str(runs)
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["passed"] and doc["clean"] and doc["isolation"] in ("netns", "guard")
    assert doc["replay_report"]["used"] == 4 and doc["run"]["call_log"] == str(
        runs / "run-01.jsonl"
    )
    assert (runs / "run-01.jsonl").is_file()  # --runs-dir keeps the files


def test_replay_reports_misses_with_the_nearest_call(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    done = cli("replay", str(cassette), "--agent", agent_cmd("miss"))
    assert done.returncode == 1
    assert "misses (never served live):" in done.stdout
    assert "nearest: seq 1" in done.stdout and "$.key" in done.stdout
    assert "CassetteMiss" in done.stdout  # the agent's stderr tail


def test_replay_unused_entries_and_timeout(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    done = cli("replay", str(cassette), "--agent", agent_cmd("pass"))
    assert done.returncode == 0 and "unused entries: seq 3, 4" in done.stdout
    piddir = tmp_path / "pids"
    piddir.mkdir()
    done = cli("replay", str(cassette), "--agent", agent_cmd("hang", str(piddir)), "--timeout", "2")
    assert done.returncode == 1 and "timeout after 2." in done.stdout
    assert not still_alive([int(p) for f in piddir.glob("*") for p in f.read_text().split()])


@pytest.mark.parametrize("isolation", ["netns", "guard"])
def test_isolation_is_forced_and_named(tmp_path: Path, isolation: str) -> None:
    if isolation == "netns" and not probe_netns()[0]:
        pytest.skip(f"no network namespace here: {probe_netns()[1]}")
    cassette = loop_cassette(tmp_path)
    done = cli("replay", str(cassette), "--agent", agent_cmd("pass"), "--isolation", isolation,
               "--json")  # fmt: skip
    assert json.loads(done.stdout)["isolation"] == isolation


def test_bad_usage_is_exit_2(tmp_path: Path) -> None:
    done = cli("replay", str(SAMPLES / "fail.jsonl"), cwd=tmp_path)
    assert done.returncode == 2 and "--agent CMD" in done.stderr
    done = cli("gate", str(tmp_path / "missing.jsonl"), "--agent", DEMO)
    assert done.returncode == 2 and "missing.jsonl" in done.stderr
    done = cli("gate", str(SAMPLES / "fix.jsonl"), "--agent", "no-such-program-x")
    assert done.returncode == 2 and "no-such-program-x" in done.stderr
    done = cli("replay", str(SAMPLES / "fix.jsonl"), "--agent", "python 'unclosed")
    assert done.returncode == 2 and "No closing quotation" in done.stderr


def test_agent_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.cassette]\nagent = {json.dumps(DEMO)}\n", encoding="utf-8"
    )
    done = cli("replay", str(SAMPLES / "fix.jsonl"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


# -- gate -------------------------------------------------------------------------------


def test_gate_of_the_flaky_demo(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    done = cli("gate", str(SAMPLES / "fix.jsonl"), "--agent", agent_cmd("--flaky", script=DEMO_AGENT),
               "--runs", "20", "-j", "2", "--json", "--runs-dir", str(runs_dir))  # fmt: skip
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    for key in ("runs", "passed", "pass_rate", "verdict", "isolation", "divergence", "results"):
        assert key in doc
    assert doc["runs"] == 20 and doc["verdict"] == "flaky" and 0 < doc["passed"] < 20
    assert doc["pass_rate"] == round(doc["passed"] / 20, 4)
    assert doc["divergence"]["kind"] == "after_tool_layer"
    assert len(doc["results"]) == 20 and doc["runs_dir"] == str(runs_dir)
    logs = sorted(runs_dir.glob("run-*.jsonl"))
    assert len(logs) == 20 and all(len(load(p)) == 4 for p in logs)
    assert doc["repeated_calls"] == 20  # search_docs twice in each run


def test_gate_human_output_names_the_verdict_and_two_runs_to_open(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    done = cli("gate", str(cassette), "--agent", agent_cmd("fork"), "--runs", "20", "-j", "2",
               "--runs-dir", str(tmp_path / "runs"))  # fmt: skip
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "verdict flaky" in out and "The runs part at call 2:" in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("cassette-tui "))
    a, b = line.split()[1:3]
    diff = cli("diff", a, b)
    assert diff.returncode == 1 and "args drift" in diff.stdout
    done = cli("gate", str(cassette), "--agent", agent_cmd("pass"), "--runs", "3")
    assert done.returncode == 0 and "verdict deterministic: 3/3 passed" in done.stdout


def test_gate_network_trying_agent_fails_under_both_isolations(tmp_path: Path) -> None:
    import socket

    cassette = loop_cassette(tmp_path)
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.settimeout(0.5)
    try:
        for isolation in ("netns", "guard") if probe_netns()[0] else ("guard",):
            done = cli("gate", str(cassette), "--agent", agent_cmd("network", str(port)),
                       "--runs", "2", "--isolation", isolation, "--json")  # fmt: skip
            doc = json.loads(done.stdout)
            assert doc["passed"] == 0 and doc["isolation"] == isolation
            assert all(r["exit_code"] == 3 for r in doc["results"])
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


def test_ctrl_c_cancels_the_gate_kills_the_runs_and_prints_the_partial_result(
    tmp_path: Path,
) -> None:
    cassette = loop_cassette(tmp_path)
    piddir = tmp_path / "pids"
    piddir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    proc = subprocess.Popen(
        [str(SCRIPT), "gate", str(cassette), "--agent", agent_cmd("hang", str(piddir)),
         "--runs", "4", "-j", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while len(list(piddir.glob("*.pids"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "cancelled after 0 of 4 runs" in out and "4 cancelled" in out
    pids = [int(p) for f in piddir.glob("*.pids") for p in f.read_text().split()]
    assert len(pids) == 4 and not still_alive(pids)


def test_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    piped = cli("gate", str(cassette), "--agent", agent_cmd("pass"), "--runs", "2")
    assert piped.stderr == ""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env.update(TERM="xterm", COLUMNS="100")
    proc = subprocess.Popen(
        [str(SCRIPT), "gate", str(cassette), "--agent", agent_cmd("overlap", str(tmp_path)),
         "--runs", "6", "-j", "1"],
        stdout=subprocess.PIPE, stderr=slave, env=env,
    )  # fmt: skip
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert "gate" in text and "✓" in text and "/6" in text


# -- pin --------------------------------------------------------------------------------

UNSAFE = ["../../evil", "a/b", "..", ".", "/etc/passwd", "x\x1b[2Jy", "名前", "a" * 300]


def test_pin_writes_a_fixture_with_provenance_that_replays_on_its_own(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    out = tmp_path / "fixtures"
    done = cli("pin", str(cassette), "--seq", "1", "-o", str(out), "--reason", "the bug")
    assert done.returncode == 0, done.stderr
    (fixture,) = out.iterdir()
    assert fixture.name.startswith("lookup-") and fixture.suffix == ".jsonl"
    (pinned,) = load(fixture)
    assert pinned.seq == 1 and pinned.response == {"value": 1}
    prov = pinned.extra["pinned"]
    assert prov["seq"] == 1 and prov["reason"] == "the bug" and prov["source"] == str(cassette)
    assert prov["key"]["tool"] == "lookup" and prov["date"].endswith("Z")
    replay = cli("replay", str(fixture), "--agent", agent_cmd("one"))
    assert replay.returncode == 0, replay.stdout
    # never overwritten without --force
    before = fixture.read_bytes()
    again = cli("pin", str(cassette), "--seq", "1", "-o", str(out))
    assert again.returncode == 2 and "--force" in again.stderr and fixture.read_bytes() == before
    forced = cli("pin", str(cassette), "--seq", "1", "-o", str(out), "--force", "--json")
    assert forced.returncode == 0 and json.loads(forced.stdout)["fixture"] == str(fixture)
    assert "reason" not in load(fixture)[0].extra["pinned"]


def test_pin_unsafe_tool_names_stay_inside_the_folder(tmp_path: Path) -> None:
    src = write_cassette(
        tmp_path / "odd.jsonl",
        *[entry(i, tool, {"n": i}) for i, tool in enumerate(UNSAFE, 1)],
    )
    out = tmp_path / "deep" / "fixtures"
    for seq in range(1, len(UNSAFE) + 1):
        done = cli("pin", str(src), "--seq", str(seq), "-o", str(out))
        assert done.returncode == 0, done.stderr
    written = sorted(out.iterdir())
    assert len(written) == len(UNSAFE)
    for path in written:
        assert path.parent == out and not path.name.startswith(".")
        assert all(c.isalnum() and c.isascii() or c in "_.-" for c in path.name), path.name
        assert len(path.name) < 100
    # nothing escaped anywhere under tmp_path
    everything = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert sorted(everything) == sorted([src, *written])


def test_pin_bad_seq(tmp_path: Path) -> None:
    done = cli("pin", str(SAMPLES / "fail.jsonl"), "--seq", "99", "-o", str(tmp_path))
    assert done.returncode == 2 and "seq 99" in done.stderr and "1..7" in done.stderr


# -- record -----------------------------------------------------------------------------


def test_record_refuses_to_overwrite_then_records_and_diffs(tmp_path: Path) -> None:
    existing = tmp_path / "new.jsonl"
    existing.write_text("precious\n")
    done = cli("record", "--agent", DEMO, "-o", str(existing))
    assert done.returncode == 2 and "never overwrites" in done.stderr
    assert existing.read_text() == "precious\n"
    new = tmp_path / "rerecord.jsonl"
    done = cli("record", "--agent", DEMO, "-o", str(new), "--against", str(SAMPLES / "fail.jsonl"))
    assert done.returncode == 1, done.stderr  # the re-recording differs from the failing run
    assert "4 entries" in done.stdout and "first divergence" in done.stdout
    assert len(load(new)) == 4
    same = cli("record", "--agent", DEMO, "-o", str(tmp_path / "again.jsonl"),
               "--against", str(new), "--json")  # fmt: skip
    doc = json.loads(same.stdout)
    assert same.returncode == 0 and doc["entries"] == 4 and doc["diff"]["first_divergence"] is None


# -- an agent that replays nothing ------------------------------------------------------


@pytest.mark.parametrize("agent", ["true", agent_cmd("none")], ids=["true", "wrapped-no-call"])
def test_an_agent_that_replays_nothing_is_no_pass_but_bad_setup(tmp_path: Path, agent: str) -> None:
    """``true`` writes no replay report; the wrapped agent writes one with 0 of 4 calls:
    neither is a pass (exit 2, status ``no_replay``, gate verdict ``no_replay``)."""
    cassette = loop_cassette(tmp_path)
    done = cli("replay", str(cassette), "--agent", agent)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "result  no_replay (exit 0)" in done.stdout
    assert "no replay: the agent exited 0 but replayed nothing: does it wrap its dispatcher" in (
        done.stdout
    )
    assert "passed" not in done.stdout
    done = cli("replay", str(cassette), "--agent", agent, "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == 2 and not doc["passed"] and not doc["clean"]
    assert doc["run"]["status"] == "no_replay" and "replayed nothing" in doc["run"]["error"]
    done = cli("gate", str(cassette), "--agent", agent, "--runs", "3")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "verdict no_replay: 0 of 3 runs replayed cleanly" in done.stdout
    assert "replayed nothing" in done.stdout and "(3 of 3 runs)" in done.stdout
    assert "runs    3 no_replay" in done.stdout and "deterministic" not in done.stdout
    done = cli("gate", str(cassette), "--agent", agent, "--runs", "2", "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == 2 and doc["verdict"] == "no_replay" and doc["passed"] == 0
    assert [r["status"] for r in doc["results"]] == ["no_replay", "no_replay"]


def test_an_agent_that_replays_one_call_still_passes(tmp_path: Path) -> None:
    """One call of four replayed is a replay (the unused entries are listed), not no_replay."""
    done = cli("replay", str(loop_cassette(tmp_path)), "--agent", agent_cmd("one"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "result  passed (exit 0)" in done.stdout and "no replay" not in done.stdout


# -- an honest gate (issue 29) ----------------------------------------------------------


def test_bugcase_42_every_run_crashed_before_a_call_is_an_error(real: Path) -> None:
    """bugcases/42: the demo agent after a bad refactor dies on import in every run; the
    gate measured nothing (verdict ``no_tool_call``, exit 2), never "deterministic 0/4"."""
    case = real / "bugcases" / "42_gate_all_runs_crashed"
    if not case.is_dir():
        pytest.skip(f"bugcase absent: {case}")
    agent = agent_cmd(script=case / "agent.py")
    done = cli("gate", "fix.jsonl", "--agent", agent, "--runs", "4", "-j", "2", cwd=case)
    assert done.returncode == 2, done.stdout + done.stderr
    out = done.stdout
    assert "verdict no_tool_call: 0 of 4 runs replayed cleanly" in out
    assert "no run reached a tool call that a replay report shows (ModuleNotFoundError: " in out
    assert "no replay took place; not a verdict on determinism (exit 2)" in out
    assert "deterministic" not in out
    done = cli("gate", "fix.jsonl", "--agent", agent, "--runs", "2", "--json", cwd=case)
    doc = json.loads(done.stdout)
    assert done.returncode == 2 and doc["verdict"] == "no_tool_call"
    assert doc["exit_status"] == 2 and doc["clean"] == 0 and doc["passed"] == 0
    assert [d["replay"] for d in doc["not_clean"]] == ["no_tool_call", "no_tool_call"]
    assert doc["results"][0]["replay"] == "no_tool_call"


def test_gate_and_replay_agree_that_a_caught_miss_is_no_pass(tmp_path: Path) -> None:
    """The agent catches its miss and exits 0: ``replay`` exits 1 (not clean), the gate
    exits 2 with ``unclean_replay`` and names each run and why, in text and --json."""
    cassette = loop_cassette(tmp_path)
    agent = agent_cmd("catch-miss")
    assert cli("replay", str(cassette), "--agent", agent).returncode == 1
    done = cli("gate", str(cassette), "--agent", agent, "--runs", "3")
    assert done.returncode == 2, done.stdout + done.stderr
    out = done.stdout
    assert "verdict unclean_replay: 0 of 3 runs replayed cleanly" in out
    assert "only clean replays measure the agent: runs 1, 2, 3 (exit 2)" in out
    assert "  run 2: passed (exit 0) in " in out and " · unclean: 1 miss" in out
    doc = json.loads(cli("gate", str(cassette), "--agent", agent, "--runs", "2", "--json").stdout)
    assert (doc["verdict"], doc["passed"], doc["clean"]) == ("unclean_replay", 0, 0)
    assert doc["not_clean"] == [
        {"run": 1, "replay": "unclean", "why": "1 miss"},
        {"run": 2, "replay": "unclean", "why": "1 miss"},
    ]


def test_gate_strict_fails_unused_recordings(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    done = cli("gate", str(cassette), "--agent", agent_cmd("pass"), "--runs", "2")
    assert done.returncode == 0 and "verdict deterministic: 2/2 passed (100%)" in done.stdout
    done = cli("gate", str(cassette), "--agent", agent_cmd("pass"), "--runs", "2", "--strict")
    assert done.returncode == 2, done.stdout
    assert "no call past the last recording, no unused recording" in done.stdout
    assert "unclean: 2 recorded calls unused (--strict)" in done.stdout


def test_gate_timeouts_are_infrastructure_and_point_at_the_machine(tmp_path: Path) -> None:
    """Run 1 passes, runs 2 and 3 hang past --timeout: exit 2, ``infrastructure``, and the
    words suggest -j 1 or a longer --timeout (never "flaky 1/3")."""
    cassette = loop_cassette(tmp_path)
    piddir = tmp_path / "pids"
    piddir.mkdir()
    agent = agent_cmd("pass-then-hang", "{run}", str(piddir))
    done = cli("gate", str(cassette), "--agent", agent, "--runs", "3", "-j", "3", "--timeout", "8")
    assert done.returncode == 2, done.stdout + done.stderr
    out = done.stdout
    assert "verdict infrastructure: 1 of 3 runs replayed cleanly" in out
    assert "2 runs timed out with 3 at once on " in out and "try -j 1 or a longer --timeout" in out
    assert "infrastructure: timed out after 8 s (a loaded machine can cause this" in out
    assert "flaky" not in out and "deterministic" not in out
    assert not still_alive([int(p) for f in piddir.iterdir() for p in f.read_text().split()])
