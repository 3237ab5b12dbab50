"""What the debug-loop commands (``replay``, ``gate``, ``record``) share: their options (the
agent, and ``loop_options``: how the job runs it, one ``core.loop.options.LoopOptions``),
and running a core job with a progress bar where Ctrl-C (or SIGTERM) cancels the job instead of
killing the command, so the partial result is still printed.

A first Ctrl-C cancels (every agent's process group is killed at once); a second one
interrupts the command. A cancelled command exits 130 (128 + SIGINT) after its output.
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ._options import config_option
from ._progress import progress_on_stderr

if TYPE_CHECKING:
    from cassette_tui.core.loop.options import LoopOptions

F = TypeVar("F", bound=Callable[..., Any])


def agent_option(f: F) -> F:
    return click.option(
        "--agent",
        metavar="CMD",
        default=None,
        help="The agent command, split like a shell would but never run by one; "
        "{cassette}, {report} and {run} are replaced inside its arguments (default: "
        "agent = ... under [tool.cassette]).",
    )(f)


_TIMEOUT = click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds a run may take; then its whole process group is killed.",
)
_ISOLATION = click.option(
    "--isolation",
    type=click.Choice(["netns", "guard"]),
    default=None,
    help="How the network is switched off: netns, a new network namespace (every "
    "process of the agent); guard, a socket guard loaded into the agent's Python "
    "processes only (a non-Python child, such as curl or bash, is not blocked). "
    "Default: netns where the system allows one, else guard.",
)
_RUNS_DIR = click.option(
    "--runs-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep each run's output, report and call log here (an empty or new folder; "
    "default: a temporary folder, removed when the command ends).",
)
_JOBS = click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Replays at once (default: the CPUs this process may use, within a cgroup's "
    "quota; more make runs wait for a CPU and time out).",
)


def _readable_fixtures(
    ctx: click.Context, param: click.Parameter, fixtures: tuple[str, ...]
) -> tuple[str, ...]:
    """Each ``--fixture`` loaded once before any agent runs: an unreadable one (UTF-16, a
    conflict marker, a broken line) is bad input (exit 2, naming the file and line), not
    an agent that crashes on it in every run (exit 1)."""
    from cassette_tui.core import CassetteError, load

    for path in fixtures:
        try:
            load(path)
        except (CassetteError, OSError) as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    return fixtures


def fixture_option(f: F) -> F:
    """``--fixture PIN.jsonl`` (repeatable): pinned fixtures that answer their keys first
    (``LoopOptions.fixtures``, ``CASSETTE_FIXTURES``)."""
    return click.option(
        "--fixture",
        "fixtures",
        metavar="PIN",
        multiple=True,
        type=click.Path(exists=True, dir_okay=False),
        callback=_readable_fixtures,
        help="A pinned fixture (a cassette, as `pin` writes) whose calls answer their keys "
        "first; every other call goes on as usual (repeatable; the first holding a key "
        "answers it).",
    )(f)


#: the parameters ``loop_options`` gathers into one ``LoopOptions``
_GATHERED = ("jobs", "timeout", "isolation", "runs_dir", "config")


def loop_options(*, jobs: bool = False, replay: bool = True) -> Callable[[F], F]:
    """How a loop command runs its job, as one ``LoopOptions`` passed as ``options``:
    ``--jobs`` (with ``jobs``), ``--timeout``, ``--isolation`` and ``--runs-dir`` (with
    ``replay``: a recording runs live, its files in a temporary folder) and ``--config``,
    in that order in ``--help``."""
    chosen = [
        *([_JOBS] if jobs else []),
        _TIMEOUT,
        *([_ISOLATION, _RUNS_DIR] if replay else []),
        config_option,
    ]

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def command(**kwargs: Any) -> Any:
            return f(options=_gather(kwargs), **kwargs)

        for option in reversed(chosen):
            command = option(command)
        return command  # type: ignore[return-value]

    return decorate


def _gather(kwargs: dict[str, Any]) -> LoopOptions:
    """The ``LoopOptions`` of the command's parameters (taken out of ``kwargs``)."""
    from cassette_tui.core.loop.options import LoopOptions

    values = {name: kwargs.pop(name) for name in _GATHERED if name in kwargs}
    return LoopOptions(**values)


@contextmanager
def _cancel_on_signals(cancel: Callable[[], None], cancelled: Callable[[], bool]) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if cancelled():
            raise KeyboardInterrupt
        cancel()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def run_cancellable(make_job: Callable[[Any], Any], *, progress: bool | None = None) -> Any:
    """Run the core job ``make_job(token)`` with a progress bar on stderr (a terminal only;
    ``progress=False``: none), Ctrl-C and SIGTERM cancelling it through the token; return
    its result."""
    from cassette_tui.core.format.jobs import CancelToken, run_job

    token = CancelToken()
    with (
        _cancel_on_signals(token.cancel, lambda: token.cancelled),
        progress_on_stderr(progress) as sink,
    ):
        return run_job(make_job(token), sink)


def swap_option(f: F) -> F:
    """``--swap SEQ=OTHER.jsonl:SEQ`` (repeatable), as ``swaps``: replay or gate the
    cassette with a step answered as another run answered it (``core/why/swap.py``)."""
    return click.option(
        "--swap", "swaps", multiple=True, metavar="SEQ=OTHER.jsonl:SEQ",
        help="Replay the cassette with the step at SEQ answered as OTHER answered its SEQ "
        "(with B's answer here, does the agent pass?). Repeatable; the cassette is not "
        "changed.",
    )(f)  # fmt: skip


def swapped(cassette: str, specs: tuple[str, ...], scratch: Path) -> tuple[str, list[Any]]:
    """The cassette to replay: ``cassette`` itself, or with ``--swap`` a copy in ``scratch``
    with the swaps made (``core/why/swap.py``), and the swaps.

    Raises:
        SwapError: a malformed spec, a missing seq, two different tools.
        CassetteFormatError: a cassette cannot be read.
    """
    if not specs:
        return cassette, []
    from cassette_tui.core.why.swap import Swap, write_swapped

    made = [Swap.parse(spec) for spec in specs]
    return str(write_swapped(cassette, made, scratch / Path(cassette).name)), made
