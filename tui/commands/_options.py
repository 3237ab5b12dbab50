"""Click options shared by the commands: ``--from FORMAT`` and ``--config FILE``.

Each command passes its own help line for ``--from`` (what "the input" is differs: FILE,
both inputs, SRC); the parameter names (``fmt``, ``config``) are the same everywhere.
Cheap to import: click only, no Textual.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

#: the help line of ``--config`` (where normalization rules come from; README, "Normalization rules")
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
