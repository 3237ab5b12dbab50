"""The headless commands' output held byte for byte: ``--json`` (and the text) of ``diff``,
``check``, ``gate`` and ``import`` on the sample cassettes and the real recordings beside
the project, against files written before the engine's redesign (``tests/golden/``).

Paths are written as ``<repo>``, ``<real>`` and ``<tmp>``, and run durations as ``0``, so
the files hold wherever the clone lies. ``CASSETTE_GOLDEN_UPDATE=1`` rewrites them (only
when a change of output is meant)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REAL, ROOT, SAMPLES, SCRIPT

GOLDEN = ROOT / "tests" / "golden"
TAU = "<real>/tau-bench/gpt-4o-airline.json"
AGENT = f"{sys.executable} <repo>/sample_cassettes/agent.py"
FAIL, FIX = "<repo>/sample_cassettes/fail.jsonl", "<repo>/sample_cassettes/fix.jsonl"

#: name -> the command's words; <repo>, <real>, <tmp> and <agent> are filled in
CASES: dict[str, list[str]] = {
    "check_fail_json": ["check", FAIL, "--json"],
    "check_samples_json": ["check", "<repo>/sample_cassettes", "--json"],
    "check_fail_text": ["check", FAIL],
    "diff_json": ["diff", FAIL, FIX, "--json"],
    "diff_key_json": ["diff", FAIL, FIX, "--align", "key", "--json"],
    "diff_text": ["diff", FAIL, FIX],
    "diff_key_text": ["diff", FAIL, FIX, "--align", "key"],
    "gate_fail_json": ["gate", FAIL, "--agent", AGENT, "--runs", "3", "--json"],
    "gate_fix_json": ["gate", FIX, "--agent", AGENT, "--runs", "2", "--json"],
    "gate_fail_text": ["gate", FAIL, "--agent", AGENT, "--runs", "2"],
    "import_fail_json": ["import", FAIL, "-o", "<tmp>/a.jsonl", "--json"],
    "real_tau_list_json": ["import", TAU, "--list", "--json"],
    "real_tau_import_json": [
        "import",
        TAU,
        "--task",
        "31",
        "--trial",
        "2",
        "-o",
        "<tmp>/t.jsonl",
        "--json",
    ],
    "real_tau_check_json": ["check", f"{TAU}#task=11,trial=0", "--json"],
}
for task, (a, b) in {
    31: (2, 3),
    41: (0, 1),
    11: (0, 1),
    13: (0, 1),
    29: (0, 1),
    5: (0, 1),
    2: (1, 2),
}.items():
    CASES[f"real_tau_diff_{task}_json"] = [
        "diff",
        f"{TAU}#task={task},trial={a}",
        f"{TAU}#task={task},trial={b}",
        "--json",
    ]
CASES["real_tau_diff_31_text"] = ["diff", f"{TAU}#task=31,trial=2", f"{TAU}#task=31,trial=3"]
for n, yaml in enumerate(sorted((REAL / "vcr").rglob("*.yaml")) if REAL.is_dir() else []):
    rel = "<real>/" + yaml.relative_to(REAL).as_posix()
    CASES[f"real_vcr_{n}_check_json"] = ["check", rel, "--json"]
    CASES[f"real_vcr_{n}_import_json"] = ["import", rel, "-o", "<tmp>/v.jsonl", "--json"]
for name in ("log_tool_call_error.json", "log_formats.eval"):
    rel = f"<real>/inspect_ai/tests/log/test_eval_log/{name}"
    CASES[f"real_inspect_{name}_import_json"] = ["import", rel, "-o", "<tmp>/i", "--json"]

_DURATION = re.compile(r'("duration_s": )[0-9.e-]+')


def run_case(words: list[str], tmp: Path) -> str:
    """The command's exit status, stdout and every file it wrote, paths made placeholders."""
    fill = {"<repo>": str(ROOT), "<real>": str(REAL), "<tmp>": str(tmp)}

    def filled(word: str) -> str:
        for key, value in fill.items():
            word = word.replace(key, value)
        return word

    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    result = subprocess.run(
        [str(SCRIPT), *map(filled, words)],
        check=False,
        env=env,
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    out = [f"exit {result.returncode}", result.stdout]
    for path in sorted(p for p in tmp.rglob("*") if p.is_file()):
        out += [f"--- wrote {path.relative_to(tmp).as_posix()}", path.read_text("utf-8")]
    text = "\n".join(out).replace(sys.executable, "<python>")
    for key, value in sorted(fill.items(), key=lambda kv: -len(kv[1])):
        text = text.replace(value, key)
    return _DURATION.sub(r"\g<1>0", text)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str, tmp_path: Path) -> None:
    words = CASES[name]
    if any("<real>" in w for w in words) and not REAL.is_dir():
        pytest.skip(f"real-world data not available: {REAL} is absent")
    work = tmp_path / "out"
    work.mkdir()
    got = run_case(words, work)
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("CASSETTE_GOLDEN_UPDATE") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(got, encoding="utf-8")
    assert golden.is_file(), f"no golden file {golden.name}: run with CASSETTE_GOLDEN_UPDATE=1"
    assert got == golden.read_text(encoding="utf-8"), f"{name}: output changed"


def test_samples_are_where_the_cases_say() -> None:
    assert (SAMPLES / "fail.jsonl").is_file() and (SAMPLES / "agent.py").is_file()
