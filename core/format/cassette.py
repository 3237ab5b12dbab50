"""Reading and writing cassette files (docs/format.md, "The cassette format, version 1"):
the public names, each defined in the module of its concept.

- ``load`` / ``load_job``: the index loader (``_loader.py``): one pass that validates every
  line and keeps a compact index, without holding the responses (``keys=True``: with the
  replay keys); ``load_head``: the same over the first lines only (a first look);
- ``Cassette`` and ``LoadReport``: the lazy view over that index (``_view.py``), which parses
  an entry when it is asked for and computes the replay keys on first use;
- ``save`` / ``dump_line`` / ``dump_record``: the writer (``_writer.py``);
- ``entry_from_record``: one line read and checked against format v1 (``lines.py``).

Reads by offset are guarded against a file changed since the load (``_guard.py``).
"""

from __future__ import annotations

from ._loader import load, load_head, load_job
from ._view import Cassette, LoadReport
from ._writer import dump_line, dump_record, save
from .lines import entry_from_record

__all__ = [
    "Cassette",
    "LoadReport",
    "dump_line",
    "dump_record",
    "entry_from_record",
    "load",
    "load_head",
    "load_job",
    "save",
]
