"""``check --help`` lists every finding kind the engine can give ``check``, from the one
table (``lint.KINDS``, plus check's own ``dropped_lines``), and so does docs/json.md."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
from pathlib import Path

from support.paths import ROOT, SCRIPT

# the modules (``cassette_tui.core.scan.lint`` is also a function, ``commands.check`` a command)
lint, repeats, rulecheck, secrets = (
    importlib.import_module(f"cassette_tui.core.{name}")
    for name in ("scan.lint", "keys.repeats", "keys.rule_check", "scan.secrets")
)
check = importlib.import_module("cassette_tui.tui.commands.check")


def _kind_literals(module: object) -> set[str]:
    """Every string literal given as ``kind=`` (to ``Finding``/``LintFinding``) in the
    module's source, and the first item of every ``return "kind", ...`` tuple."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.keyword)
            and node.arg == "kind"
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found.add(node.value.value)
        if (
            isinstance(node, ast.Return)
            and isinstance(node.value, ast.Tuple)
            and node.value.elts
            and isinstance(node.value.elts[0], ast.Constant)
            and isinstance(node.value.elts[0].value, str)
        ):
            found.add(node.value.elts[0].value)
    return found


def _emitted() -> set[str]:
    kinds = set()
    for module in (lint, rulecheck, secrets, check):
        kinds |= _kind_literals(module)
    classified = _kind_literals(repeats)  # repeats.classify: (kind, sentence)
    assert classified == set(lint.REPEAT_KINDS), classified
    return kinds | classified


def test_the_table_holds_every_kind_the_engine_gives_check() -> None:
    emitted = _emitted()
    assert emitted >= {"stale_digest", "secret", "over_normalization", "dropped_lines"}
    assert emitted <= set(check.CHECK_KINDS), emitted - set(check.CHECK_KINDS)
    assert len(set(check.CHECK_KINDS)) == len(check.CHECK_KINDS)


def test_check_help_lists_every_kind() -> None:
    done = subprocess.run(
        [SCRIPT, "check", "--help"], capture_output=True, text=True, timeout=60, check=False,
        env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # the help is wrapped
    listed = text.split("Findings: ", 1)[1].split(". --json", 1)[0]
    names = [re.sub(r" \(.*", "", part.strip()) for part in re.split(r",(?![^(]*\))", listed)]
    assert names == list(check.CHECK_KINDS)
    for kind in ("distinct_errors", "over_normalization", "unused_rule", "bad_context"):
        assert kind in names
    assert max(len(line) for line in done.stdout.splitlines()) <= 80


def test_the_json_reference_lists_every_kind() -> None:
    page = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    section = page.split("## `check --json`", 1)[1].split("\n## ", 1)[0]
    missing = [k for k in check.CHECK_KINDS if f"`{k}`" not in section]
    assert not missing, missing
