"""Progress of a core job on stderr: a Rich bar when stderr is a terminal, nothing when it
is not (pipes and CI logs stay clean)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from cassette_tui.core.format.jobs import Progress, ProgressSink

if TYPE_CHECKING:
    from rich.progress import TaskID


@contextmanager
def progress_on_stderr(enabled: bool | None = None) -> Iterator[ProgressSink]:
    """A progress sink for :func:`cassette_tui.core.format.jobs.run_job`.

    ``enabled`` defaults to "stderr is a terminal". The bar is transient: it disappears when
    the block ends, leaving the command's own output as the only lasting text."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda event: None
        return

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    from ._output import safe

    bar = Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[message]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    tasks: dict[str, TaskID] = {}

    def sink(event: Progress) -> None:
        task = tasks.get(event.stage)
        if task is None:
            task = tasks[event.stage] = bar.add_task(event.stage, total=event.total, message="")
        bar.update(task, completed=event.done, total=event.total, message=safe(event.message))

    with bar:
        yield sink
