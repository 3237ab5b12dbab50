"""cassette_tui.core: the cassette engine (format, digest, normalization, record, replay,
diff). Plain Python; never imports the terminal UI or textual.

Importing this package is cheap: an agent imports it in every replay, so the names that
need deepdiff (the diff), PyYAML (the VCR importer), asyncio (the dispatcher wrapper) or
the importers load on first use (PEP 562 ``__getattr__``), not at ``import
cassette_tui.core``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
from .keys.config import load_rules
from .keys.nearest import nearest
from .keys.normalize import NormalizationRules
from .keys.rule_check import misses_turned_hits, over_normalization
from .keys.volatile import difference_kind, value_kind
from .scan.lint import LintFinding, lint

if TYPE_CHECKING:
    from .diff.result import DiffResult, diff_cassettes
    from .importers.sources import list_runs, open_cassette, pair_specs, parse_path_spec
    from .replay.recorder import Recorder
    from .replay.replayer import Replayer
    from .replay.wrap import wrap_dispatcher

#: public name -> the module that defines it, imported on first use
_LAZY = {
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
