"""The import layers hold: ``lint-imports`` checks the contracts of ``[tool.importlinter]``
in pyproject.toml (core never imports the app, the pytest plugin nor Textual; core's stages
mcp > loop > diff | replay | importers > scan > keys > format; the app's cli > commands >
app : screens > widgets > text > core). docs/architecture.md explains each layer."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the two imports that broke "format below keys" when core got its stage folders; the
#: format stage is cutting them (issue 23). Any other broken import fails the test.
KNOWN = {
    ("cassette_tui.core.format.cassette", "cassette_tui.core.keys.normalize"),
    ("cassette_tui.core.format.jsonvalue", "cassette_tui.core.keys.nearest"),
}

#: one import in a broken contract's report: "- a.b -> c.d (l.12)"
IMPORT = re.compile(r"^-?\s*(\S+) -> (\S+) \(l\.[\d, ]+\)", re.MULTILINE)


def _lint_imports() -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(script), "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_import_contracts_hold() -> None:
    done = _lint_imports()
    if done.returncode != 0:
        broken = set(IMPORT.findall(done.stdout))
        if broken and broken <= KNOWN:
            pytest.xfail(
                "format/cassette.py -> keys.normalize and format/jsonvalue.py -> keys.nearest "
                "still break format < keys (the format stage cuts them)"
            )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "BROKEN" not in done.stdout
    assert done.stdout.count("KEPT") == 4, done.stdout
