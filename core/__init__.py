"""cassette_tui.core: the cassette engine (format, digest, normalization, record, replay,
diff). Plain Python; never imports the terminal UI or textual."""

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
from .normalize import NormalizationRules

__all__ = [
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
]
