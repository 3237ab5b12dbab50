"""What the debug-loop commands (``replay``, ``gate``, ``record``) share: their options, and
running a core job with a progress bar where Ctrl-C (or SIGTERM) cancels the job instead of
killing the command, so the partial result is still printed.

A first Ctrl-C cancels (every agent's process group is killed at once); a second one
interrupts the command. A cancelled command exits 130 (128 + SIGINT) after its output.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from ._progress import progress_on_stderr

T = TypeVar("T")
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


def timeout_option(f: F) -> F:
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=120.0,
        show_default=True,
        help="Seconds a run may take; then its whole process group is killed.",
    )(f)


def isolation_option(f: F) -> F:
    return click.option(
        "--isolation",
        type=click.Choice(["netns", "guard"]),
        default=None,
        help="How the network is switched off: netns, a new network namespace (every "
        "process of the agent); guard, a socket guard loaded into the agent's Python "
        "processes only (a non-Python child, such as curl or bash, is not blocked). "
        "Default: netns where the system allows one, else guard.",
    )(f)


def runs_dir_option(f: F) -> F:
    return click.option(
        "--runs-dir",
        type=click.Path(file_okay=False),
        default=None,
        help="Keep each run's output, report and call log here (an empty or new folder; "
        "default: a temporary folder, removed when the command ends).",
    )(f)


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


def run_cancellable(make_job: Callable[[Any], Any]) -> Any:
    """Run the core job ``make_job(token)`` with a progress bar on stderr (a terminal only),
    Ctrl-C and SIGTERM cancelling it through the token; return its result."""
    from cassette_tui.core.format.jobs import CancelToken, run_job

    token = CancelToken()
    with _cancel_on_signals(token.cancel, lambda: token.cancelled), progress_on_stderr() as sink:
        return run_job(make_job(token), sink)
