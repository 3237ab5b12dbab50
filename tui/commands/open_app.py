"""``cassette-tui open FILES...`` (also plain ``cassette-tui A [B]``): the app.

Inputs are opened and validated before the terminal is taken over, so a bad file is a
plain error message and exit status 2, never a broken screen.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

EXIT_BAD_INPUT = 2


def _fail(message: str) -> None:
    from ..widgets.safe import printable

    click.echo(f"cassette-tui: {printable(message)}", err=True)
    sys.exit(EXIT_BAD_INPUT)


@click.command("open")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--align",
    type=click.Choice(["seq", "key"]),
    default="seq",
    show_default=True,
    help="Align the two runs by seq, or by call key (keeps inserted steps apart).",
)
@click.option(
    "--from",
    "fmt",
    default=None,
    metavar="FORMAT",
    help="Force the input format instead of detecting it from the content.",
)
@click.option(
    "--theme",
    default=None,
    metavar="NAME",
    help="Textual theme (default ansi-dark: the terminal's own colours).",
)
@click.option(
    "--keys",
    "keys_file",
    default=None,
    type=click.Path(path_type=Path),
    help="Keymap file: a [keys] table of binding id -> key "
    "(default ~/.config/cassette-tui/keys.toml when present).",
)
def open_app(
    files: tuple[Path, ...], align: str, fmt: str | None, theme: str | None, keys_file: Path | None
) -> None:
    """Open one cassette, or two side by side (A = failing run, B = passing run)."""
    from cassette_tui.core.errors import CassetteError
    from cassette_tui.core.sources import open_cassette

    if len(files) > 2:
        _fail(f"open takes one or two files, got {len(files)}")
    cassettes = []
    for path in files:
        try:
            cassettes.append(open_cassette(path, fmt=fmt))
        except CassetteError as exc:
            _fail(str(exc))
        except (OSError, ValueError) as exc:
            _fail(f"{path}: {exc}")

    from ..app import CassetteApp, default_keymap_path, load_keymap

    keymap = None
    keys_path = keys_file or default_keymap_path()
    if keys_file is not None or keys_path.is_file():
        try:
            keymap = load_keymap(keys_path)
        except ValueError as exc:
            _fail(str(exc))
    a = cassettes[0]
    b = cassettes[1] if len(cassettes) > 1 else None
    CassetteApp(a, b, align=align, theme=theme, keymap=keymap).run()
