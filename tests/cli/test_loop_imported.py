"""The loop on runs picked from another format's file (issue: replay/gate/re-record of
``FILE#task=31,trial=2`` said "no such file", a VCR cassette "not valid JSON"): the run is
written as a cassette into the runs folder and served to the real demo agent; the source
is only read; a re-recording of such a run goes to the current folder."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cassette_tui.core.loop.rerecord import rerecord_path
from support.imported import tau_results, vcr_yaml
from support.loop import DEMO_AGENT, agent_cmd
from support.paths import REAL, SCRIPT

DEMO = agent_cmd(script=DEMO_AGENT)
TAU = REAL / "tau-bench" / "gpt-4o-airline.json"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd, env=env,
        timeout=300, check=False,
    )  # fmt: skip


def test_replay_serves_one_run_of_a_tau_bench_file(tmp_path: Path) -> None:
    src = tau_results(tmp_path)
    before = src.read_bytes()
    runs = tmp_path / "runs"
    done = cli("replay", f"{src}#task=retry,trial=0", "--agent", DEMO, "--runs-dir", str(runs),
               "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    doc = json.loads(done.stdout)
    assert doc["passed"] and doc["clean"] and doc["run"]["hits"] == 4
    assert doc["cassette"] == f"{src}#task=retry,trial=0"  # the source, named as given
    served = runs / "run-cassette.jsonl"
    assert [json.loads(x)["tool"] for x in served.read_text().splitlines()] == [
        "search_docs", "search_docs", "read_file", "read_file",
    ]  # fmt: skip
    assert src.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "results.json", "runs",
    ]  # fmt: skip
    # the failing trial fails for real (the stale document), in the command's words
    done = cli("replay", f"{src}#task=retry,trial=1", "--agent", DEMO)
    assert done.returncode == 1, done.stderr
    assert "served  a tau-bench run, written as a cassette for the agent" in done.stdout
    assert "7 hits" in done.stdout and "0 misses" in done.stdout


def test_gate_on_an_imported_run(tmp_path: Path) -> None:
    src = tau_results(tmp_path)
    done = cli("gate", f"{src}#task=retry,trial=0", "--agent", DEMO, "-n", "2", "--json")
    assert done.returncode == 0, done.stderr + done.stdout
    doc = json.loads(done.stdout)
    assert doc["verdict"] == "deterministic" and doc["passed"] == 2
    done = cli("gate", f"{src}#task=retry,trial=1", "--agent", DEMO, "-n", "2")
    assert done.returncode == 0 and "served  a tau-bench run" in done.stdout


def test_a_multi_run_file_without_a_selector_says_how_to_pick(tmp_path: Path) -> None:
    src = tau_results(tmp_path)
    done = cli("replay", str(src), "--agent", DEMO)
    assert done.returncode == 2 and done.stdout == ""
    assert "holds 2 runs" in done.stderr and "#task=retry,trial=0" in done.stderr


def test_replay_of_a_vcr_cassette_is_a_replay_not_a_json_error(tmp_path: Path) -> None:
    src = vcr_yaml(tmp_path)
    done = cli("replay", str(src), "--agent", DEMO, "--json")
    doc = json.loads(done.stdout)
    # the demo agent makes no http call: it misses, a real finding (not bad input)
    assert done.returncode == 1, done.stderr
    assert doc["run"]["misses"] == 1 and doc["replay_report"]["entries"] == 1
    assert "not valid JSON" not in done.stderr


def test_replay_on_the_real_tau_bench_file(tmp_path: Path) -> None:
    if not TAU.is_file():
        pytest.skip(f"real-world data not available: {TAU} is absent")
    done = cli("replay", f"{TAU}#task=31,trial=2", "--agent", DEMO, "--json")
    assert "no such file" not in done.stderr
    doc = json.loads(done.stdout)
    # the demo agent's first call is not one of the airline run's: a miss, served offline
    assert done.returncode == 1 and doc["run"]["misses"] == 1
    assert doc["replay_report"]["entries"] > 0 and doc["cassette"].endswith("#task=31,trial=2")


def test_rerecord_path_of_an_imported_run_is_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "data").mkdir()
    src = tau_results(tmp_path / "data")
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    target = rerecord_path(f"{src}#task=retry,trial=1")
    assert target.parent == here
    assert target.name.startswith("results.task-retry_trial-1.rerecord-")
    # told by the caller (a single-run import has no selector)
    assert rerecord_path(vcr_yaml(tmp_path), imported=True).parent == here
    assert rerecord_path(tmp_path / "fail.jsonl").parent == tmp_path
