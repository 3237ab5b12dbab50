"""Which programs the network guard says ran without it (``uncovered``): its reading of a
child's command line and environment, the words a run's result then shows. The guard is
loaded from its file under another name, so nothing is installed in this process."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

GUARD = Path(__file__).resolve().parents[3] / "core" / "replay" / "guard" / "sitecustomize.py"


@pytest.fixture(scope="module")
def guard():
    spec = importlib.util.spec_from_file_location("cassette_guard_under_test", GUARD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def guarded_env(guard) -> dict[str, str]:
    return {"PYTHONPATH": guard.HERE, guard.GUARD_LOG_ENV: "/tmp/x.log"}


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["python3", "-I", "x.py"], "-I (isolated mode"),
        (["python3", "-Ic", "pass"], "-I (isolated mode"),
        (["python3.11", "-E", "-c", "pass"], "-E (ignores PYTHONPATH)"),
        (["python", "-S", "x.py"], "-S (no site"),
        (["curl", "-s", "http://example.invalid"], "not Python"),
        (["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9"], "not Python"),
    ],
)
def test_a_child_the_guard_is_not_in(guard, argv: list[str], why: str) -> None:
    assert why in guard._uncovered_why(argv, None, None)


@pytest.mark.parametrize(
    "argv",
    [
        ["python3", "x.py"],
        ["python3", "-W", "ignore", "-c", "pass"],  # -W takes a value: not a flag word
        ["python3", "-c", "import sys; sys.argv", "-I"],  # after -c: the code's arguments
        ["python3", "-m", "pytest", "-S"],
        [sys.executable, "-u", "x.py"],
    ],
)
def test_a_python_child_that_loads_the_guard(guard, argv: list[str]) -> None:
    assert guard._uncovered_why(argv, None, None) is None
    assert guard._uncovered_why(argv, None, guarded_env(guard)) is None


def test_a_cleared_environment_is_named(guard) -> None:
    why = guard._uncovered_why(["python3", "x.py"], None, {})
    assert why == "Python started with an environment without the guard's variables"
    bytes_env = {k.encode(): v.encode() for k, v in guarded_env(guard).items()}
    assert guard._uncovered_why(["python3", "x.py"], None, bytes_env) is None


def test_a_script_whose_first_line_names_python(guard, tmp_path: Path) -> None:
    script = tmp_path / "tool"
    script.write_text("#!/usr/bin/env python3\nprint(1)\n")
    os.chmod(script, 0o755)
    assert guard._uncovered_why([str(script)], None, {}) is not None  # cleared env
    assert guard._uncovered_why([str(script)], None, None) is None
    shell = tmp_path / "tool.sh"
    shell.write_text("#!/bin/sh\necho 1\n")
    assert "not Python" in guard._uncovered_why([str(shell)], None, None)
