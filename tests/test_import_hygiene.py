"""core never imports the UI: each core module imports in a fresh interpreter without
textual or cassette_tui.tui (DESIGN.md, Layout)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "core"
MODULES = sorted(
    "cassette_tui.core" + ("" if p.stem == "__init__" else "." + p.stem) for p in CORE.glob("*.py")
)


@pytest.mark.parametrize("module", MODULES)
def test_core_module_imports_without_the_ui(module: str) -> None:
    code = (
        "import sys, importlib\n"
        f"importlib.import_module({module!r})\n"
        "bad = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')"
        " or m.startswith('cassette_tui.tui')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} imported {out.stdout.strip()}"


def test_check_command_does_not_import_textual() -> None:
    code = "import sys\nimport cassette_tui.tui.commands.check\nprint('textual' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
