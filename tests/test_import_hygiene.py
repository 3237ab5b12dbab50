"""What an import costs, in a fresh interpreter: ``import cassette_tui.core`` (which an agent
pays on every replay) stays cheap; the headless commands (tui/commands/*.py) never import
textual nor a widget module; the text builders they share with the app (tui/text/) never
import textual either. That core never imports the app nor Textual at all is a layer
contract (tests/test_layers.py, docs/architecture.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str, folder: Path, pattern: str) -> list[str]:
    names = []
    for p in folder.glob(pattern):
        parts = p.relative_to(folder).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join((package, *parts)))
    return sorted(names)


COMMANDS = _modules("cassette_tui.tui.commands", ROOT / "tui" / "commands", "*.py")
TEXT = _modules("cassette_tui.tui.text", ROOT / "tui" / "text", "*.py")


def _imported_after(module: str, prefixes: tuple[str, ...]) -> str:
    """The modules matching ``prefixes`` that ``import module`` brings in, in a fresh
    interpreter, comma-separated ("" when none)."""
    code = (
        "import sys, importlib\n"
        f"importlib.import_module({module!r})\n"
        f"bad = [m for m in sys.modules if m == 'textual' or m.startswith({prefixes!r})]\n"
        "print(','.join(sorted(bad)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_module_lists_are_complete() -> None:
    assert "cassette_tui.tui.commands.check" in COMMANDS
    assert "cassette_tui.tui.text.safe" in TEXT


@pytest.mark.parametrize("module", COMMANDS)
def test_command_module_imports_neither_textual_nor_widgets(module: str) -> None:
    bad = _imported_after(
        module, ("textual.", "cassette_tui.tui.widgets", "cassette_tui.tui.screens")
    )
    assert bad == "", f"{module} imported {bad}"


@pytest.mark.parametrize("module", TEXT)
def test_text_builder_module_does_not_import_textual(module: str) -> None:
    bad = _imported_after(
        module, ("textual.", "cassette_tui.tui.widgets", "cassette_tui.tui.screens")
    )
    assert bad == "", f"{module} imported {bad}"


def test_check_command_does_not_import_textual() -> None:
    code = "import sys\nimport cassette_tui.tui.commands.check\nprint('textual' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_importing_core_stays_cheap() -> None:
    """``import cassette_tui.core`` (which an agent pays on every replay) brings in none of
    textual, deepdiff, PyYAML, asyncio, the MCP SDK or the importers; the public names still
    resolve."""
    bad = _imported_after(
        "cassette_tui.core",
        ("textual.", "deepdiff", "yaml", "asyncio", "mcp", "cassette_tui.core.importers"),
    )
    assert bad == ""
    code = (
        "from cassette_tui.core import wrap_dispatcher, diff_cassettes, open_cassette\n"
        "import cassette_tui.core as core\n"
        "assert all(hasattr(core, name) for name in core.__all__)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


#: what ``from cassette_tui.core import wrap_dispatcher`` must not load: the engine a
#: wrapper loads when it is made (the loader, rules, scan, replayer, recorder, report
#: writer) and the libraries under it (issue 31: the agent-side import under 30 ms)
AGENT_IMPORT_LEAVES_OUT = (
    "cassette_tui.core.format.cassette",
    "cassette_tui.core.format._loader",
    "cassette_tui.core.format.errors",
    "cassette_tui.core.keys",
    "cassette_tui.core.scan",
    "cassette_tui.core.diff",
    "cassette_tui.core.loop",
    "cassette_tui.core.importers",
    "cassette_tui.core.replay.replayer",
    "cassette_tui.core.replay.recorder",
    "cassette_tui.core.replay.report",
    "cassette_tui.core.replay.report_sink",
    "cassette_tui.core.replay.codec",
    "msgspec",
    "orjson",
    "json",
    "hashlib",
    "inspect",
    "dataclasses",
    "asyncio",
    "deepdiff",
    "yaml",
    "textual",
    "mcp",
)


def test_the_agent_side_import_loads_no_engine() -> None:
    """``from cassette_tui.core import wrap_dispatcher`` (the line an agent runs) loads none
    of ``AGENT_IMPORT_LEAVES_OUT`` that a bare interpreter had not loaded already; the
    wrapper still replays, and the modules load when it is made."""
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from cassette_tui.core import wrap_dispatcher\n"
        f"out = {AGENT_IMPORT_LEAVES_OUT!r}\n"
        "new = set(sys.modules) - before\n"
        "print(','.join(sorted(m for m in new if m in out or m.startswith(tuple(p + '.' for p in out)))))\n"
        "d = wrap_dispatcher(lambda t, a: None, mode='replay', path=sys.argv[1])\n"
        "print(d('search_docs', {'q': 'retry budget', 'top_k': 5}))\n"
        "print('cassette_tui.core.replay.replayer' in sys.modules)\n"
    )
    cassette = ROOT / "sample_cassettes" / "fix.jsonl"
    out = subprocess.run(
        [sys.executable, "-c", code, str(cassette)], capture_output=True, text=True, check=True
    )
    bad, served, loaded = out.stdout.splitlines()
    assert bad == ""
    assert served.startswith("{") and loaded == "True"
