"""``cassette-tui import``: one run to a file, many runs to a directory, never overwriting."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import Replayer
from cassette_tui.core.format.cassette import load
from cassette_tui.core.scan.lint import lint
from cassette_tui.tui.cli import cli
from click.testing import CliRunner
from support.odd_yaml import CASES
from support.paths import SAMPLES

RUNS = [
    {
        "task_id": 3,
        "trial": trial,
        "reward": reward,
        "info": {},
        "traj": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": json.dumps({"id": trial})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "name": "lookup", "content": '{"ok": 1}'},
        ][: 2 if trial else 0],
    }
    for trial, reward in ((0, 1.0), (1, 0.0))
]


def invoke(*args: str):
    return CliRunner().invoke(cli, ["import", *args])


@pytest.fixture
def results(tmp_path: Path) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(RUNS))
    return path


def test_selected_run_to_a_file(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "one.jsonl"
    r = invoke(str(results), "--task", "3", "--trial", "1", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "1 entry" in r.output and "reward 0.0 (fail)" in r.output
    (entry,) = load(out)
    assert (entry.tool, entry.args, entry.response) == ("lookup", {"id": 1}, {"ok": 1})
    assert entry.extra["run"] == {"task_id": 3, "trial": 1, "reward": 0.0}
    # never overwrite without --force; the path-spec form selects as well
    r = invoke(f"{results}#task=3,trial=1", "-o", str(out))
    assert r.exit_code == 2 and "exists" in r.output
    r = invoke(f"{results}#task=3,trial=1", "-o", str(out), "--force")
    assert r.exit_code == 0


def test_all_runs_to_a_directory(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    r = invoke(str(results), "-o", str(out), "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["format"] == "tau-bench"
    assert sorted(p.name for p in out.iterdir()) == [
        "runs.json",
        "task-3_trial-0.jsonl",
        "task-3_trial-1.jsonl",
    ]
    assert len(load(out / "task-3_trial-0.jsonl")) == 0
    index = json.loads((out / "runs.json").read_text())
    assert [(w["trial"], w["reward"], w["entries"]) for w in index["runs"]] == [
        (0, 1.0, 0),
        (1, 0.0, 1),
    ]
    before = (out / "task-3_trial-1.jsonl").read_bytes()
    r = invoke(str(results), "-o", str(out))
    assert r.exit_code == 2 and "nothing was written" in r.output
    assert (out / "task-3_trial-1.jsonl").read_bytes() == before


def test_list(results: Path) -> None:
    r = invoke(str(results), "--list")
    assert r.exit_code == 0
    assert "results.json#task=3,trial=1" in r.output
    r = invoke(str(results), "--list", "--json")
    assert [run["passed"] for run in json.loads(r.output)["runs"]] == [True, False]


def test_bad_input_exits_2(results: Path, tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    r = invoke(str(junk), "-o", str(tmp_path / "x.jsonl"))
    assert r.exit_code == 2 and "not a known format" in r.output
    r = invoke(str(results), "--task", "9", "--trial", "0", "-o", str(tmp_path / "x.jsonl"))
    assert r.exit_code == 2 and "no run of task '9'" in r.output
    r = invoke(str(results), "--from", "nope", "-o", str(tmp_path / "x.jsonl"))
    assert r.exit_code == 2 and "unknown format" in r.output
    r = invoke(str(results))
    assert r.exit_code == 2 and "--output" in r.output
    file_out = tmp_path / "file.jsonl"
    file_out.write_text("")
    r = invoke(str(results), "-o", str(file_out))
    assert r.exit_code == 2 and "directory" in r.output
    assert not (tmp_path / "x.jsonl").exists()


def test_vcr_to_a_file(tmp_path: Path) -> None:
    src = tmp_path / "c.yaml"
    src.write_text(
        "interactions:\n- request: {method: GET, uri: 'https://x', body: null, headers: {}}\n"
        "  response: {status: {code: 200, message: OK}, headers: {}, body: {string: '{\"a\": 1}'}}\n"
        "version: 1\n"
    )
    out = tmp_path / "c.jsonl"
    r = invoke(str(src), "-o", str(out))
    assert r.exit_code == 0, r.output
    (entry,) = load(out)
    assert entry.response["body"] == {"a": 1}


def test_import_does_not_load_textual(results: Path, tmp_path: Path) -> None:
    code = (
        "import sys; from cassette_tui.tui.cli import main\n"
        "try:\n"
        f"    main(['import', {str(results)!r}, '--list'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert 'textual' not in sys.modules, 'import loaded textual'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_real_tau_bench_directory(real: Path, tmp_path: Path) -> None:
    src = real / "tau-bench" / "gpt-4o-airline.json"
    if not src.is_file():
        pytest.skip(f"{src} is absent")
    out = tmp_path / "runs"
    r = invoke(str(src), "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "wrote 200 cassettes" in r.output and "18 with no tool call" in r.output
    assert len(list(out.glob("task-*_trial-*.jsonl"))) == 200
    assert len(load(out / "task-31_trial-2.jsonl")) == 7


def test_tau_bench_task_11_dates_are_not_volatile(real: Path, tmp_path: Path) -> None:
    out = tmp_path / "t11.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "import",
         str(real / "tau-bench" / "gpt-4o-airline.json"), "--task", "11", "--trial", "2",
         "-o", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    findings = lint(load(out))
    assert len(findings) == 1  # 16 before: 15 were flight and birth dates
    assert not any("date" in (f.path or "") or "dob" in (f.path or "") for f in findings)


# -- headers that change the answer ------------------------------------------------------------------
def test_case_19_accept_header_is_part_of_the_key(real: Path, tmp_path: Path) -> None:
    folder = real / "bugcases" / "19_headers_only_variants"
    out = tmp_path / "h.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "import", folder / "export.yaml", "-o", out],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    c = load(out)
    assert c[0].args["headers"] == {"Accept": ["application/json"]}
    assert c.key(0) != c.key(1)
    assert not [f for f in lint(c) if f.kind == "repeated_key"]
    replay = subprocess.run(
        [sys.executable, folder / "replay_csv_first.py", out],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "CASSETTE_REPORT": ""},
    )  # fmt: skip
    assert "application/json" not in replay.stdout  # never the JSON body for a CSV ask
    assert "CassetteMiss" in replay.stderr
    csv = Replayer(c)("http", {**c[1].args})
    assert csv["headers"]["Content-Type"] == ["text/csv"]


def test_the_cli_shows_no_traceback(tmp_path: Path) -> None:
    for i, (text, _line, reason) in enumerate(CASES.values()):
        path = tmp_path / f"odd-{i}.yaml"
        path.write_text(text, encoding="utf-8")
        for args in (["check", path], ["import", path, "-o", tmp_path / f"out-{i}.jsonl"]):
            proc = subprocess.run(
                [sys.executable, "-m", "cassette_tui.tui.cli", *map(str, args)],
                capture_output=True,
                timeout=60,
                check=False,
            )
            err = proc.stderr.decode()
            assert proc.returncode == 2 and "Traceback" not in err, err
            assert f"odd-{i}.yaml" in err and reason in err


def test_import_writes_files_with_the_umask(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            IMPORT_WITH_UMASK_027,
            str(SAMPLES / "fix.jsonl"),
            str(out / "one.jsonl"),
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert mode(out / "one.jsonl") == 0o640


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


IMPORT_WITH_UMASK_027 = (
    "import os, sys; os.umask(0o027); from cassette_tui.tui.cli import main; "
    "sys.argv[1:] = ['import', sys.argv[1], '-o', sys.argv[2]]; main()"
)
