"""Click options shared by the commands: ``--from FORMAT`` and ``--config FILE``; the
parameter type of a finite number >= 0 (``NonNegativeFinite``).

Each command passes its own help line for ``--from`` (what "the input" is differs: FILE,
both inputs, SRC); the parameter names (``fmt``, ``config``) are the same everywhere.
Cheap to import: click only, no Textual.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

#: the help line of ``--config`` (where normalization rules come from;
#: README, "Normalization rules")
CONFIG_HELP = "Normalization config (default: CASSETTE_CONFIG, cassette.toml or pyproject.toml)."


def from_option(help: str) -> Callable[[F], F]:
    """``--from FORMAT``: read the input as that format (a name of
    ``cassette_tui.core.importers.FORMATS``) instead of detecting it; passed as ``fmt``
    (``None``: detect). An unknown name is reported by the command (``ValueError``)."""
    return click.option("--from", "fmt", default=None, metavar="FORMAT", help=help)


#: ``--config FILE``: the normalization config (``load_rules``); passed as ``config``
#: (``None``: ``CASSETTE_CONFIG``, else ``cassette.toml`` or ``pyproject.toml``).
config_option: Callable[[F], F] = click.option(
    "--config", type=click.Path(dir_okay=False), default=None, help=CONFIG_HELP
)


class NonNegativeFinite(click.FloatRange):
    """A number >= 0 that is finite: ``nan``, ``inf`` and ``-1`` are click errors (exit
    status 2), where ``click.FloatRange(min=0)`` lets NaN and infinity through."""

    name = "number"

    def __init__(self) -> None:
        super().__init__(min=0)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number (give a number >= 0)", param, ctx)
        return number


#: the most replays ``--runs`` asks for: a run costs memory for its result whether or not
#: it ever starts, and a gate of more runs than this would not end in a day anyway
MAX_RUNS = 100_000

#: the type of a ``--runs``: 1 to ``MAX_RUNS`` (a larger number is refused before any run)
RUNS = click.IntRange(1, MAX_RUNS)
