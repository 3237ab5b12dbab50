"""The pytest plugin keeps pytest-recording's promises, each in a real pytest subprocess on
a small project: per-parameter cassette names (bugcase 34), a failed re-recording never
replaces the good cassette (bugcase 35), the record modes ``none``, ``once``,
``new_episodes``, ``all``, several cassettes per marker, ``all`` on code that calls
``wrap_dispatcher()`` itself, a wrapper made at import time, and the network off in
replayed tests and gate runs but for ``--allowed-hosts``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.child_pytest import pytest_argv
from support.listener import tcp_listener
from support.paths import SAMPLES

RECORDED = {"seq": 1, "tool": "lookup", "args": {"key": "a"}, "response": {"value": 1}}


def pytest_run(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CASSETTE_", "PYTEST_"))}
    return subprocess.run(
        pytest_argv("-p", "no:randomly", "-q", "-rA", *args),
        cwd=project, env={**clean, **env}, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip


def write(project: Path, name: str, text: str) -> Path:
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def summary(out: str) -> list[str]:
    """The lines of the "cassette recordings" section."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "cassette recordings" in line)
    section = []
    for line in lines[start + 1 :]:
        if line.startswith("="):
            break
        section.append(line)
    return section


# -- bugcase 34: parameters get their own cassettes ----------------------------------------
def test_bugcase_34_each_parameter_records_and_replays_its_own_cassette(
    real: Path, tmp_path: Path
) -> None:
    case = real / "bugcases" / "34_parametrized_tests_share_cassette"
    shutil.copy(case / "test_weather.py", tmp_path)  # a scratch copy, as run.sh makes
    folder = tmp_path / "cassettes" / "test_weather"
    done = pytest_run(tmp_path, "--cassette-record=once", "test_weather.py")
    assert done.returncode == 0, done.stdout
    assert sorted(p.name for p in folder.iterdir()) == [
        "test_temp[Lisbon].jsonl",
        "test_temp[Oslo].jsonl",
    ]
    assert json.loads((folder / "test_temp[Oslo].jsonl").read_text())["args"] == {"city": "Oslo"}
    done = pytest_run(tmp_path, "test_weather.py")  # replay
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout
    done = pytest_run(tmp_path, "--cassette-record=all", "test_weather.py")
    assert done.returncode == 0, done.stdout
    assert json.loads((folder / "test_temp[Lisbon].jsonl").read_text())["args"] == {
        "city": "Lisbon"
    }
    done = pytest_run(tmp_path, "test_weather.py")  # replay again: nothing overwritten
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout


def test_default_names_sanitize_ids_and_leave_the_gate_out(tmp_path: Path) -> None:
    write(
        tmp_path,
        "test_ids.py",
        """
        import pytest

        @pytest.mark.cassette
        @pytest.mark.parametrize("url", ["a/b", "x" * 300])
        def test_fetch(cassette, url):
            assert cassette.wrap(lambda tool, args: len(args["url"]))("fetch", {"url": url})

        class TestBox:
            @pytest.mark.cassette
            def test_open(self, cassette):
                assert cassette.wrap(lambda tool, args: 1)("open", {}) == 1
        """,
    )
    done = pytest_run(tmp_path, "--cassette-record=once")
    assert done.returncode == 0, done.stdout
    names = sorted(p.name for p in (tmp_path / "cassettes" / "test_ids").iterdir())
    assert names[0] == "TestBox.test_open.jsonl" and names[1] == "test_fetch[a-b].jsonl"
    long = names[2]
    assert long.startswith("test_fetch[xxx") and len(long) <= 120 + len(".jsonl")
    done = pytest_run(tmp_path, "--cassette-gate=2")  # gate runs replay the same files
    assert done.returncode == 0 and "6 passed" in done.stdout, done.stdout


# -- bugcase 35: a failed re-recording is kept beside ------------------------------------
def test_bugcase_35_a_failed_rerecord_never_replaces_the_good_cassette(
    real: Path, tmp_path: Path
) -> None:
    case = real / "bugcases" / "35_failed_rerecord_replaces_good"
    shutil.copy(case / "test_refund.py", tmp_path)
    shutil.copytree(case / "cassettes", tmp_path / "cassettes")
    good = tmp_path / "cassettes" / "refund.jsonl"
    before = good.read_bytes()
    done = pytest_run(tmp_path, "--cassette-record=all", "test_refund.py", UPSTREAM_DOWN="1")
    assert done.returncode == 1 and "ConnectionError" in done.stdout
    assert good.read_bytes() == before
    (kept,) = (tmp_path / "cassettes").glob("refund.failed-*.jsonl")
    assert json.loads(kept.read_text())["error"]["message"] == "payments API unreachable"
    (line,) = summary(done.stdout)
    assert line.startswith("test_refund.py::test_refund: KEPT BESIDE ")
    assert kept.name in line and "the test failed" in line and "did not replace" in line
    done = pytest_run(tmp_path, "test_refund.py")  # the good cassette still replays
    assert done.returncode == 0, done.stdout

    # once: a failed first recording is not put in place, the next once records again
    good.unlink()
    kept.unlink()
    done = pytest_run(tmp_path, "--cassette-record=once", "test_refund.py", UPSTREAM_DOWN="1")
    assert done.returncode == 1 and not good.exists()
    assert len(list((tmp_path / "cassettes").glob("refund.failed-*.jsonl"))) == 1
    assert "did not become" in summary(done.stdout)[0]
    done = pytest_run(tmp_path, "--cassette-record=once", "test_refund.py")  # upstream is back
    assert done.returncode == 0, done.stdout
    assert json.loads(good.read_text())["response"]["status"] == "issued"
    assert "recorded" in summary(done.stdout)[0]


# -- record modes ------------------------------------------------------------------------
MODES = """
import pytest

LIVE = []

def live(tool, args):
    LIVE.append(tool)
    return {"live": args["key"]}

@pytest.mark.cassette("shared.jsonl")
def test_first(cassette):
    assert cassette.wrap(live)("lookup", {"key": "a"})

@pytest.mark.cassette("shared.jsonl")
def test_second(cassette):
    assert cassette.wrap(live)("lookup", {"key": "a"})

@pytest.mark.cassette("base.jsonl")
def test_episodes(cassette):
    dispatch = cassette.wrap(live)
    assert dispatch("lookup", {"key": "a"}) == {"value": 1}
    assert dispatch("lookup", {"key": "new"}) == {"live": "new"}
"""


@pytest.fixture
def modes(tmp_path: Path) -> Path:
    write(tmp_path, "test_modes.py", MODES)
    write(tmp_path, "cassettes/base.jsonl", json.dumps(RECORDED) + "\n")
    return tmp_path


def test_none_fails_a_missing_cassette(modes: Path) -> None:
    done = pytest_run(modes, "-k", "first")
    assert (
        done.returncode == 1 and "not found: record it with --cassette-record=once" in done.stdout
    )
    assert not (modes / "cassettes" / "shared.jsonl").exists()


def test_two_tests_sharing_one_cassette_under_once(modes: Path) -> None:
    done = pytest_run(modes, "-k", "first or second", "--cassette-record=once")
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout
    shared = modes / "cassettes" / "shared.jsonl"
    assert len(shared.read_text().splitlines()) == 1  # the first recorded, the second replayed
    assert [line for line in summary(done.stdout) if "recorded" in line] == [
        "test_modes.py::test_first: recorded cassettes/shared.jsonl (1 call(s))"
    ]


def test_new_episodes_replays_and_records_the_new_calls_beside(modes: Path) -> None:
    base = modes / "cassettes" / "base.jsonl"
    before = base.read_bytes()
    done = pytest_run(modes, "-k", "episodes", "--cassette-record=new_episodes")
    assert done.returncode == 0, done.stdout
    assert base.read_bytes() == before  # the cassette is never changed in place
    out = modes / "cassettes" / "base.new-episodes.jsonl"
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["seq"], r["args"]) for r in records] == [(1, {"key": "a"}), (2, {"key": "new"})]
    (line,) = summary(done.stdout)
    assert line == (
        "test_modes.py::test_episodes: NEW CALLS cassettes/base.new-episodes.jsonl: "
        "cassettes/base.jsonl plus 1 call(s) recorded live (seq 2); cassettes/base.jsonl is "
        "unchanged: move the new file over it to keep them"
    )
    done = pytest_run(modes, "-k", "episodes")  # none: the new call is a miss
    assert done.returncode == 1 and "CassetteMiss" in done.stdout
    shutil.move(out, base)  # adopted: it replays
    done = pytest_run(modes, "-k", "episodes")
    assert done.returncode == 0, done.stdout


def test_new_episodes_records_a_missing_cassette_as_once(modes: Path) -> None:
    done = pytest_run(modes, "-k", "first", "--cassette-record=new_episodes")
    assert done.returncode == 0, done.stdout
    assert json.loads((modes / "cassettes" / "shared.jsonl").read_text())["response"] == {
        "live": "a"
    }


def test_several_cassettes_in_one_marker_replay_together(tmp_path: Path) -> None:
    write(tmp_path, "cassettes/a.jsonl", json.dumps(RECORDED) + "\n")
    other = {**RECORDED, "tool": "fetch", "args": {"path": "x"}, "response": "text"}
    write(tmp_path, "cassettes/b.jsonl", json.dumps(other) + "\n")
    write(
        tmp_path,
        "test_two.py",
        """
        import pytest

        @pytest.mark.cassette("a.jsonl", "b.jsonl")
        def test_both(cassette):
            dispatch = cassette.wrap(lambda tool, args: 1 / 0)
            assert dispatch("lookup", {"key": "a"}) == {"value": 1}
            assert dispatch("fetch", {"path": "x"}) == "text"

        @pytest.mark.cassette("a.jsonl", "absent.jsonl")
        def test_absent(cassette):
            pass
        """,
    )
    done = pytest_run(tmp_path)
    assert "PASSED test_two.py::test_both" in done.stdout, done.stdout
    assert "absent.jsonl not found (named in the marker)" in done.stdout


# -- code that calls wrap_dispatcher() itself ------------------------------------------
def test_all_rerecords_the_gate_demo_whose_agent_wraps_itself(tmp_path: Path) -> None:
    """``sample_cassettes/test_gate_demo.py``: the agent calls ``wrap_dispatcher()`` in
    ``agent.run()``; ``all`` used to raise ``FileExistsError``."""
    project = tmp_path / "demo"
    shutil.copytree(SAMPLES, project, ignore=shutil.ignore_patterns("signatures"))
    fix = project / "fix.jsonl"
    before = [json.loads(x)["tool"] for x in fix.read_text().splitlines()]
    done = pytest_run(project, "test_gate_demo.py", "-k", "fixed_run", "--cassette-record=all")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FileExistsError" not in done.stdout
    after = [json.loads(x) for x in fix.read_text().splitlines()]
    assert [r["tool"] for r in after] == before and [r["seq"] for r in after] == [1, 2, 3, 4]
    assert "test_gate_demo.py::test_fixed_run: recorded fix.jsonl (4 call(s))" in summary(
        done.stdout
    )
    done = pytest_run(project, "test_gate_demo.py", "-k", "fixed_run")
    assert done.returncode == 0, done.stdout


def test_a_wrapper_made_at_import_time_follows_the_marker(tmp_path: Path) -> None:
    write(tmp_path, "cassettes/a.jsonl", json.dumps(RECORDED) + "\n")
    write(
        tmp_path,
        "agent_module.py",
        """
        from cassette_tui.core import wrap_dispatcher

        LIVE = []

        def live(tool, args):
            LIVE.append(tool)
            return {"live": True}

        DISPATCH = wrap_dispatcher(live)  # built at import, before any marker
        """,
    )
    write(
        tmp_path,
        "test_import_time.py",
        """
        import pytest
        from agent_module import DISPATCH, LIVE

        @pytest.mark.cassette("a.jsonl")
        def test_replays():
            assert DISPATCH("lookup", {"key": "a"}) == {"value": 1}
            assert LIVE == [] and DISPATCH.mode == "replay"

        @pytest.mark.cassette("b.jsonl")
        def test_records():
            assert DISPATCH("lookup", {"key": "b"}) == {"live": True}

        def test_unmarked_is_live():
            assert DISPATCH("lookup", {"key": "c"}) == {"live": True}
        """,
    )
    done = pytest_run(tmp_path, "--cassette-record=once")
    assert done.returncode == 0 and "3 passed" in done.stdout, done.stdout
    assert json.loads((tmp_path / "cassettes" / "b.jsonl").read_text())["args"] == {"key": "b"}


def test_an_agent_and_its_sub_agent_record_one_cassette_in_a_test(tmp_path: Path) -> None:
    """The test's wrapper and a sub-agent's own ``wrap_dispatcher()`` join the test's
    staged recording: one file, seqs in call order."""
    write(
        tmp_path,
        "test_sub.py",
        """
        import pytest
        from cassette_tui.core import wrap_dispatcher

        @pytest.mark.cassette("team.jsonl")
        def test_team(cassette):
            agent = cassette.wrap(lambda tool, args: {"agent": tool})
            sub = wrap_dispatcher(lambda tool, args: {"sub": tool})  # from the environment
            agent("plan", {})
            sub("search", {"q": 1})
            agent("answer", {})
            sub.close()
        """,
    )
    done = pytest_run(tmp_path, "--cassette-record=all")
    assert done.returncode == 0, done.stdout
    team = tmp_path / "cassettes" / "team.jsonl"
    records = [json.loads(x) for x in team.read_text().splitlines()]
    assert [(r["seq"], r["tool"], r["response"]) for r in records] == [
        (1, "plan", {"agent": "plan"}),
        (2, "search", {"sub": "search"}),
        (3, "answer", {"agent": "answer"}),
    ]
    assert sorted(p.name for p in team.parent.iterdir()) == ["team.jsonl"]  # no staging left
    done = pytest_run(tmp_path)  # and it replays
    assert done.returncode == 0, done.stdout


# -- the network ---------------------------------------------------------------------------
@pytest.fixture
def listener() -> Iterator[int]:
    """A real TCP server on 127.0.0.1 in this process, the one the tests try to reach."""
    with tcp_listener("127.0.0.1") as port:
        yield port


NETWORK = """
import os
import socket

import pytest

def reach():
    with socket.create_connection(("127.0.0.1", int(os.environ["PORT"])), timeout=10) as c:
        return c.recv(5)

@pytest.mark.cassette("a.jsonl")
def test_replayed(cassette):
    assert cassette.wrap(lambda tool, args: 1 / 0)("lookup", {"key": "a"}) == {"value": 1}
    assert reach() == b"hello"

@pytest.mark.cassette("a.jsonl", allowed_hosts=["127.0.0.1"])
def test_marker_allows(cassette):
    assert cassette.wrap(lambda tool, args: 1 / 0)("lookup", {"key": "a"}) == {"value": 1}
    assert reach() == b"hello"

def test_unmarked():
    assert reach() == b"hello"
"""


def test_the_network_is_off_in_replayed_tests_and_gate_runs(tmp_path: Path, listener: int) -> None:
    write(tmp_path, "cassettes/a.jsonl", json.dumps(RECORDED) + "\n")
    write(tmp_path, "test_network.py", NETWORK)
    port = str(listener)
    done = pytest_run(tmp_path, PORT=port)
    assert done.returncode == 1, done.stdout
    assert "FAILED test_network.py::test_replayed" in done.stdout
    assert "network guard: connection to ('127.0.0.1'" in done.stdout
    assert "allow a host with --cassette-allowed-hosts" in done.stdout
    assert "PASSED test_network.py::test_marker_allows" in done.stdout
    assert "PASSED test_network.py::test_unmarked" in done.stdout
    done = pytest_run(tmp_path, "--allowed-hosts=localhost", PORT=port)
    assert done.returncode == 0 and "3 passed" in done.stdout, done.stdout
    done = pytest_run(tmp_path, "-k", "replayed", "--cassette-gate=2", PORT=port)
    assert done.returncode != 0 and "2 failed" in done.stdout, done.stdout
    done = pytest_run(
        tmp_path, "-k", "replayed", "--cassette-gate=2", "--allowed-hosts=127.0.0.1", PORT=port
    )
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout


#: the options pytest-recording 0.14.1 adds (its plugin.py), in a plugin of their own
RECORDING_LIKE = """
def pytest_addoption(parser):
    group = parser.getgroup("recording")
    group.addoption("--record-mode", action="store", default=None)
    group.addoption("--block-network", action="store_true", default=False)
    group.addoption("--allowed-hosts", action="store", default=None)
    group.addoption("--disable-recording", action="store_true", default=False)
"""


def test_the_plugin_runs_beside_pytest_recording(tmp_path: Path, listener: int) -> None:
    """Both plugins added ``--allowed-hosts``: argparse refused the second and pytest
    stopped before collecting. ``--cassette-allowed-hosts`` is ours; ``--allowed-hosts``
    is left to the plugin that has it."""
    write(tmp_path, "cassettes/a.jsonl", json.dumps(RECORDED) + "\n")
    write(tmp_path, "test_network.py", NETWORK)
    write(tmp_path, "recording_like.py", RECORDING_LIKE)
    env = {"PORT": str(listener), "PYTHONPATH": str(tmp_path)}
    done = pytest_run(tmp_path, "-p", "recording_like", "--allowed-hosts=.*", **env)
    assert "conflicting option string" not in done.stderr, done.stderr
    assert "FAILED test_network.py::test_replayed" in done.stdout, done.stdout + done.stderr
    assert "allow a host with --cassette-allowed-hosts" in done.stdout
    done = pytest_run(tmp_path, "-p", "recording_like", "--cassette-allowed-hosts=localhost", **env)
    assert done.returncode == 0 and "3 passed" in done.stdout, done.stdout + done.stderr


def test_recording_keeps_the_network(tmp_path: Path, listener: int) -> None:
    write(tmp_path, "test_network.py", NETWORK)
    done = pytest_run(tmp_path, "-k", "replayed", "--cassette-record=all", PORT=str(listener))
    assert done.returncode == 1 and "ZeroDivisionError" in done.stdout  # live ran
    assert "network guard" not in done.stdout


def test_an_agent_the_test_starts_records_the_cassette_itself_under_once(tmp_path: Path) -> None:
    """A subprocess agent reads ``CASSETTE_PATH`` and records there, as before: the test's
    empty staged recording does not shadow it."""
    write(
        tmp_path,
        "agent.py",
        """
        from cassette_tui.core import wrap_dispatcher

        dispatch = wrap_dispatcher(lambda tool, args: {"live": tool})
        dispatch("lookup", {"key": "a"})
        """,
    )
    write(
        tmp_path,
        "test_child.py",
        """
        import subprocess
        import sys

        import pytest

        @pytest.mark.cassette("child.jsonl")
        def test_child():
            subprocess.run([sys.executable, "agent.py"], check=True)
        """,
    )
    done = pytest_run(tmp_path, "--cassette-record=once")
    assert done.returncode == 0, done.stdout
    child = tmp_path / "cassettes" / "child.jsonl"
    assert json.loads(child.read_text())["response"] == {"live": "lookup"}
    assert sorted(p.name for p in child.parent.iterdir()) == ["child.jsonl"]
    assert "cassette recordings" not in done.stdout
    done = pytest_run(tmp_path)  # the child replays it
    assert done.returncode == 0, done.stdout
