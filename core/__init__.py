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

from .cassette import Cassette, LoadReport, load, save
from .digest import canonical_json, digest
from .entry import Entry
from .errors import (
    CassetteError,
    CassetteFormatError,
    CassetteMiss,
    ReplayExhausted,
    ToolError,
)
from .findings import Finding
from .lint import LintFinding, lint
from .nearest import nearest
from .normalize import NormalizationRules, load_rules, misses_turned_hits, over_normalization
from .runs import RunInfo, RunSelectionError, task_pairs
from .volatile import difference_kind, value_kind

if TYPE_CHECKING:
    from .diff import DiffResult, diff_cassettes
    from .record import Recorder
    from .replay import Replayer
    from .sources import list_runs, open_cassette, pair_specs, parse_path_spec
    from .wrap import wrap_dispatcher

#: public name -> the module that defines it, imported on first use
_LAZY = {
    "DiffResult": ".diff",
    "diff_cassettes": ".diff",
    "Recorder": ".record",
    "Replayer": ".replay",
    "list_runs": ".sources",
    "open_cassette": ".sources",
    "pair_specs": ".sources",
    "parse_path_spec": ".sources",
    "wrap_dispatcher": ".wrap",
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
