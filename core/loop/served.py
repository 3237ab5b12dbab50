"""What a replay serves the agent: a cassette file, whatever the user named.

The loop's replays (``replay``, ``gate``, the app's ``r`` and ``t``) accept every path spec
``open_cassette`` accepts (``core.sources``): a cassette, one run of a multi-run file
(``gpt-4o-airline.json#task=31,trial=2``), a VCR cassette, an OpenAI chat log... The agent
reads ``CASSETTE_PATH`` with ``wrap_dispatcher``, which reads cassette files only, so an
imported run is written as a cassette (``IMPORTED_NAME``) into the job's runs folder, and
goes when that folder goes; the source file is only read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..format.cassette import Cassette, save
from ..format.errors import CassetteError
from ..format.multi_run import spec_suffix
from ..importers.sources import open_cassette, parse_path_spec
from ..keys.normalize import NormalizationRules

#: the name of an imported run written for the agent, in the runs folder (``run-*``: a
#: file of the job, see ``loop.make_runs_dir``)
IMPORTED_NAME = "run-cassette.jsonl"


class NotServable(CassetteError):
    """An imported run that cannot be written as a cassette for the agent."""


@dataclass
class ServedCassette:
    """The cassette a replay serves, and where it came from.

    Attributes:
        source: what the user named: the cassette file (absolute), or the path spec of an
            imported run (``/abs/gpt-4o-airline.json#task=31,trial=2``).
        fmt: ``"cassette"``, or the importer's format name (``"tau-bench"``, ``"vcr"``...).
        cassette: the run, loaded (with the rules given).
        path: the file the agent reads: the cassette itself, or (imported, after
            ``place``) the run written into the runs folder; ``None`` until placed.
    """

    source: Path
    fmt: str
    cassette: Cassette
    path: Path | None = None

    @property
    def imported(self) -> bool:
        """The source is not a cassette file (an imported run, written for the agent)."""
        return self.fmt != "cassette"

    @property
    def stem(self) -> str:
        """A short name for folders: the source file's stem (``gpt-4o-airline``)."""
        return parse_path_spec(self.source).path.stem

    def place(self, folder: Path) -> Path:
        """The file to hand the agent: the cassette itself, or the imported run written
        as ``folder / IMPORTED_NAME`` (a new file).

        Raises:
            NotServable: the run cannot be written as a cassette (says how to import it).
        """
        if self.path is not None:
            return self.path
        target = folder / IMPORTED_NAME
        try:
            save(self.cassette, target)
        except (OSError, ValueError, TypeError) as exc:
            raise NotServable(
                f"{self.source}: this {self.fmt} run cannot be served to the agent as a "
                f"cassette ({exc}); import it first: cassette-tui import "
                f"'{self.source}' -o run.jsonl, then replay run.jsonl"
            ) from None
        self.path = target
        return target


def absolute_spec(spec: str | Path) -> str:
    """``spec`` as ``--json`` names the cassette served (docs/json.md: the path spec as
    given, absolute): the file resolved, its selector kept (``/runs/a.json#task=3``)."""
    parsed = parse_path_spec(spec)
    return str(parsed.path.resolve()) + spec_suffix(parsed.task, parsed.trial, parsed.fmt)


def open_served(spec: str | Path, rules: NormalizationRules | None = None) -> ServedCassette:
    """Open ``spec`` (any path spec) for a replay.

    A cassette file is loaded from where it is (``path`` is its absolute path); any other
    format is imported into memory (``path`` is ``None`` until ``place``).

    Raises:
        CassetteFormatError: unreadable input or no known format (naming the file, line
            and field); ``RunSelectionError`` for a multi-run file without a selector (the
            message lists the runs and says how to pick one).
    """
    parsed = parse_path_spec(spec)
    cassette = open_cassette(spec, rules=rules)
    fmt = str(cassette.metadata.get("format") or "cassette")
    if fmt == "cassette":
        path = parsed.path.resolve()
        return ServedCassette(path, fmt, cassette, path)
    selector = spec_suffix(parsed.task, parsed.trial, parsed.fmt)
    return ServedCassette(Path(str(parsed.path.resolve()) + selector), fmt, cassette)
