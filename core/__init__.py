"""cassette_tui.core: the cassette engine (format, digest, normalization, record, replay,
diff). Plain Python; never imports the terminal UI or textual.

Importing this package is cheap: an agent imports it in every replay (``from
cassette_tui.core import wrap_dispatcher``), so every public name loads its module on first
use (PEP 562 ``__getattr__``), not at ``import cassette_tui.core``; the wrapper's own module
loads the loader, the rules and the replayer when a wrapper needs them
(``tests/test_import_hygiene.py`` holds which modules that import leaves out).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .diff.result import DiffResult, diff_cassettes
    from .format.cassette import Cassette, LoadReport, load, save
    from .format.digest import canonical_json, digest
    from .format.entry import Entry
    from .format.errors import (
        CassetteError,
        CassetteFormatError,
        CassetteMiss,
        ReplayExhausted,
        ToolError,
    )
    from .format.findings import Finding
    from .format.multi_run import RunInfo, RunSelectionError, task_pairs
    from .importers.sources import list_runs, open_cassette, pair_specs, parse_path_spec
    from .keys.config import load_rules
    from .keys.nearest import nearest
    from .keys.normalize import NormalizationRules
    from .keys.rule_check import misses_turned_hits, over_normalization
    from .keys.volatile import difference_kind, value_kind
    from .replay.recorder import Recorder
    from .replay.replayer import Replayer
    from .replay.wrap import wrap_dispatcher
    from .scan.lint import LintFinding, lint

#: public name -> the module that defines it, imported on first use
_LAZY = {
    "Cassette": ".format.cassette",
    "LoadReport": ".format.cassette",
    "load": ".format.cassette",
    "save": ".format.cassette",
    "canonical_json": ".format.digest",
    "digest": ".format.digest",
    "Entry": ".format.entry",
    "CassetteError": ".format.errors",
    "CassetteFormatError": ".format.errors",
    "CassetteMiss": ".format.errors",
    "ReplayExhausted": ".format.errors",
    "ToolError": ".format.errors",
    "Finding": ".format.findings",
    "RunInfo": ".format.multi_run",
    "RunSelectionError": ".format.multi_run",
    "task_pairs": ".format.multi_run",
    "load_rules": ".keys.config",
    "nearest": ".keys.nearest",
    "NormalizationRules": ".keys.normalize",
    "misses_turned_hits": ".keys.rule_check",
    "over_normalization": ".keys.rule_check",
    "difference_kind": ".keys.volatile",
    "value_kind": ".keys.volatile",
    "LintFinding": ".scan.lint",
    "lint": ".scan.lint",
    "DiffResult": ".diff.result",
    "diff_cassettes": ".diff.result",
    "Recorder": ".replay.recorder",
    "Replayer": ".replay.replayer",
    "list_runs": ".importers.sources",
    "open_cassette": ".importers.sources",
    "pair_specs": ".importers.sources",
    "parse_path_spec": ".importers.sources",
    "wrap_dispatcher": ".replay.wrap",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMiss",
    "DiffResult",
    "Entry",
    "Finding",
    "LintFinding",
    "LoadReport",
    "NormalizationRules",
    "Recorder",
    "ReplayExhausted",
    "Replayer",
    "RunInfo",
    "RunSelectionError",
    "ToolError",
    "canonical_json",
    "diff_cassettes",
    "difference_kind",
    "digest",
    "lint",
    "list_runs",
    "load",
    "load_rules",
    "misses_turned_hits",
    "nearest",
    "open_cassette",
    "over_normalization",
    "pair_specs",
    "parse_path_spec",
    "save",
    "task_pairs",
    "value_kind",
    "wrap_dispatcher",
]
