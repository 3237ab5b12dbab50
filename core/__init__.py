"""cassette_tui.core: the cassette engine (format, digest, normalization, record, replay,
diff). Plain Python; never imports the terminal UI or textual."""

from .cassette import Cassette, LoadReport, load, save
from .digest import canonical_json, digest
from .entry import Entry
from .diff import DiffResult, diff_cassettes
from .errors import (
    CassetteError,
    CassetteFormatError,
    CassetteMiss,
    ReplayExhausted,
    ToolError,
)
from .normalize import NormalizationRules
from .normalize import load_rules, misses_turned_hits, over_normalization
from .lint import LintFinding, lint
from .nearest import nearest
from .record import Recorder
from .replay import Replayer
from .volatile import difference_kind, value_kind
from .wrap import wrap_dispatcher
from .importers import RunInfo, RunSelectionError
from .sources import list_runs, open_cassette, pair_specs, parse_path_spec, task_pairs

__all__ = [
    "DiffResult",
    "diff_cassettes",
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMiss",
    "Entry",
    "LoadReport",
    "NormalizationRules",
    "ReplayExhausted",
    "ToolError",
    "canonical_json",
    "digest",
    "load",
    "save",
    "load_rules",
    "misses_turned_hits",
    "over_normalization",
    "nearest",
    "LintFinding",
    "lint",
    "Recorder",
    "Replayer",
    "difference_kind",
    "value_kind",
    "wrap_dispatcher",
    "RunInfo",
    "RunSelectionError",
    "list_runs",
    "open_cassette",
    "pair_specs",
    "parse_path_spec",
    "task_pairs",
]
