"""``cassette-tui pin CASSETTE --seq N [-o DIR]``: one recorded call as a fixture cassette.

Writes ``DIR/<tool>-<digest hex>.jsonl`` (a safe name whatever the tool is called) holding
that entry and its provenance (source, seq, key, date, ``--reason``); see
``cassette_tui.core.loop.pin``. Never overwrites without ``--force``.

Exit status: 0 written, 2 bad usage, unreadable input, no such seq, or the fixture exists.
Does not import Textual.
"""

from __future__ import annotations

import sys

import click
from cassette_tui.core.format.constants import EXIT_CLEAN

from ._options import config_option, from_option
from ._output import echo_json, fail, safe

EXIT_WRITTEN = EXIT_CLEAN


@click.command("pin")
@click.argument("cassette", type=str)
@click.option("--seq", type=click.IntRange(min=1), required=True, help="The entry to pin.")
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(),  # a file there is said by core.pin, in the app's words
    default="fixtures",
    show_default=True,
    help="The folder for the fixture.",
)
@click.option("--reason", default=None, help="Why it is pinned (kept in the provenance).")
@click.option("--force", is_flag=True, help="Replace a fixture of the same key.")
@from_option("Read CASSETTE as this format instead of detecting it.")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the fixture's path and key as JSON.")
def pin(
    cassette: str,
    seq: int,
    out_dir: str,
    reason: str | None,
    force: bool,
    fmt: str | None,
    config: str | None,
    as_json: bool,
) -> None:
    """Pin the entry with --seq of CASSETTE as a one-entry fixture cassette.

    \b
    The fixture replays on its own (a test that needs only that call, or the pytest
    plugin's @pytest.mark.cassette("fixtures/NAME.jsonl")).
    Exit status: 0 written, 2 bad usage or the fixture exists (--force replaces it).
    """
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.importers.sources import open_cassette
    from cassette_tui.core.keys.config import load_rules
    from cassette_tui.core.loop.pin import pin as pin_entry

    try:
        rules = load_rules(config)
        path = pin_entry(cassette, seq, out_dir, reason=reason, force=force, rules=rules, fmt=fmt)
        entry = open_cassette(path, rules=rules)[0]
    except (CassetteError, OSError, ValueError, LookupError) as exc:
        fail("pin", exc, file=cassette)
    provenance = entry.extra["pinned"]
    if as_json:
        echo_json({"fixture": str(path), **provenance})
    else:
        key = provenance["key"]
        click.echo(
            f"pinned {safe(cassette)} seq {seq} ({safe(key['tool'])} {safe(key['args_digest'])})"
            f" -> {safe(path)}"
        )
    sys.exit(EXIT_WRITTEN)
