"""Names and numbers fixed by the project's contracts, defined once.

Exit status of every headless command (0 clean, 1 findings, 2 bad usage or unreadable
input) and the ``CASSETTE_*`` environment variables through which the debugger drives an
agent (docs/format.md, "Environment contract").
"""

from __future__ import annotations

from typing import Final

#: nothing found: the cassette is clean, the runs are the same, the gate is deterministic
EXIT_CLEAN: Final = 0
#: findings: lint or secret findings, drift, a flaky gate, misses, a failed replay
EXIT_FINDINGS: Final = 1
#: bad usage or unreadable input (the message names the file, the line and the field)
EXIT_BAD_INPUT: Final = 2
#: a loop command stopped by Ctrl-C: 128 + SIGINT, after printing the partial result
EXIT_CANCELLED: Final = 130

#: ``record``, ``replay`` or ``live`` (the default)
ENV_MODE: Final = "CASSETTE_MODE"
#: the cassette to read (replay) or write (record)
ENV_PATH: Final = "CASSETTE_PATH"
#: where the replay report is written as JSON
ENV_REPORT: Final = "CASSETTE_REPORT"
#: a config file other than ``cassette.toml`` / ``pyproject.toml``
ENV_CONFIG: Final = "CASSETTE_CONFIG"
#: ``DEV:INO`` of the empty file the ``record`` job created (exclusively) at
#: ``CASSETTE_PATH`` for its agent: the recorder may write into that file and no other
ENV_CLAIM: Final = "CASSETTE_CLAIM"

#: what a replay does with a call the cassette never recorded: ``error`` (the default),
#: ``report`` (answer it live, write it nowhere), ``record`` (answer it live and append it
#: to ``CASSETTE_NEW_PATH``); ``replay.new_calls``
ENV_NEW_CALLS: Final = "CASSETTE_NEW_CALLS"
#: where ``CASSETTE_NEW_CALLS=record`` writes the new calls (default: beside the cassette,
#: ``NAME.new-<UTC>.jsonl``)
ENV_NEW_PATH: Final = "CASSETTE_NEW_PATH"
#: pinned fixtures that answer their keys first, paths joined by ``os.pathsep``
#: (``replay.fixtures``), in every mode
ENV_FIXTURES: Final = "CASSETTE_FIXTURES"

#: ``PID:PATH``: the process that writes the report at ``PATH`` (``CASSETTE_REPORT``,
#: resolved); set by the first process of a run that wraps a dispatcher, so the processes
#: it starts only append their calls to the report's journal. ``0:PATH`` (the loop sets
#: it): every process of the run appends to the journal, none starts it afresh.
ENV_REPORT_OWNER: Final = "CASSETTE_REPORT_OWNER"

MODES: Final = ("record", "replay", "live")

#: where the replay network guard logs what it refused (set by the debugger per run; the
#: guard itself, ``guard/sitecustomize.py``, is standard library only and repeats the name)
ENV_GUARD_LOG: Final = "CASSETTE_GUARD_LOG"

#: the optional entry field the recorder writes on a call that overlapped another in time:
#: the seq of the first call of the calls in flight together (docs/format.md)
BATCH_FIELD: Final = "batch"
