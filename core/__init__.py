"""cassette_tui.core: the cassette engine (format, digest, normalization, record, replay,
diff). Plain Python; never imports the terminal UI or textual."""

from .cassette import Cassette, LoadReport, load, save
from .diff import DiffResult, diff_cassettes
from .digest import canonical_json, digest
from .entry import Entry
from .errors import (
    CassetteError,
    CassetteFormatError,
    CassetteMiss,
    ReplayExhausted,
    ToolError,
)
from .importers import RunInfo, RunSelectionError
from .lint import LintFinding, lint
from .nearest import nearest
from .normalize import NormalizationRules, load_rules, misses_turned_hits, over_normalization
from .record import Recorder
from .replay import Replayer
from .sources import list_runs, open_cassette, pair_specs, parse_path_spec, task_pairs
from .volatile import difference_kind, value_kind
from .wrap import wrap_dispatcher

__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMiss",
    "DiffResult",
    "Entry",
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
