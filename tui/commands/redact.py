"""``cassette-tui redact FILE -o OUT``: replace every secret with a stable placeholder
(headless; no Textual).

    cassette-tui redact runs/fail.jsonl -o runs/fail.redacted.jsonl
    cassette-tui redact runs/fail.jsonl --in-place        # keeps runs/fail.jsonl.bak

Each secret the scan of ``check`` finds, and each value at a ``redact.paths`` pattern of
the config, becomes ``<redacted:KIND:HASH8>`` (the same secret, the same placeholder);
every ``args_digest`` is recomputed. Replay redacts the agent's live args the same way, so
the redacted cassette still matches the real calls. FILE may be any format ``check``
reads (a VCR cassette, say); the output is a cassette (JSONL). The output is written
atomically; an existing OUT is only replaced with ``--force``; ``--in-place`` copies FILE
to FILE.bak (``--backup`` names another path; never over an existing file) first.

Exit status: 0 written, 2 bad usage, unreadable input or an existing output.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click
from cassette_tui.core.format.constants import EXIT_CLEAN
from cassette_tui.core.format.errors import CassetteError
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.importers.sources import detect_format, open_cassette
from cassette_tui.core.keys.config import ProjectConfig
from cassette_tui.core.scan.redact import redact_job
from cassette_tui.core.scan.redact_config import load_secret_config

from ..text.plural import plural
from ._options import config_option, from_option
from ._output import echo_json, fail, safe
from ._progress import progress_on_stderr

if TYPE_CHECKING:
    from cassette_tui.core.format.cassette import Cassette
    from cassette_tui.core.scan.redact import RedactResult
    from cassette_tui.core.scan.secrets import SecretConfig


def _fail(message: object, file: object = None) -> NoReturn:
    fail("redact", message, file=file)


@click.command("redact")
@click.argument("file", type=str)
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The redacted cassette to write.",
)
@click.option("--in-place", is_flag=True, help="Replace FILE itself (a backup is kept).")
@click.option(
    "--backup",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where --in-place copies FILE first (default: FILE.bak).",
)
@click.option("--force", is_flag=True, help="Replace an existing OUT.")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@from_option("Read FILE as this format instead of detecting it.")
@config_option
def redact(
    file: str,
    out: Path | None,
    in_place: bool,
    backup: Path | None,
    force: bool,
    as_json: bool,
    fmt: str | None,
    config: str | None,
) -> None:
    """Replace every secret in FILE with <redacted:KIND:HASH8> and write OUT.

    \b
    Secrets: what `check --secrets` finds, and values at the config's redact.paths.
    Args digests are recomputed; replay redacts live args the same way.
    Exit status: 0 written, 2 bad usage, unreadable input or an existing output.
    """
    _check_usage(out, in_place, backup)
    cassette, secrets = _open_input(file, fmt, config, in_place)
    target = Path(file) if in_place else out
    assert target is not None
    keep = (backup or Path(file + ".bak")) if in_place else None
    try:
        with progress_on_stderr() as sink:
            result = run_job(
                redact_job(
                    cassette, target, config=secrets, overwrite=force or in_place, backup=keep
                ),
                sink,
            )
    except (CassetteError, OSError) as exc:
        _fail(exc)
    _report(file, result, as_json)
    sys.exit(EXIT_CLEAN)


def _check_usage(out: Path | None, in_place: bool, backup: Path | None) -> None:
    """Exit with status 2 unless exactly one of -o OUT and --in-place is given, and
    --backup only with --in-place."""
    if (out is None) == (not in_place):
        _fail("give exactly one of -o OUT or --in-place")
    if backup is not None and not in_place:
        _fail("--backup goes with --in-place")


def _open_input(
    file: str, fmt: str | None, config: str | None, in_place: bool
) -> tuple[Cassette, SecretConfig]:
    """FILE opened under the config's rules, and the config's secret settings. Exits with
    status 2 on a bad config or input, or --in-place on a file that is not a cassette."""
    try:
        project = ProjectConfig.load(config)
        secrets = load_secret_config(project)
        if in_place and detect_format(file, fmt=fmt) != "cassette":
            _fail(f"{file}: --in-place needs a cassette (JSONL); write this one with -o OUT")
        return open_cassette(file, fmt=fmt, rules=project.rules()), secrets
    except (CassetteError, ValueError, OSError) as exc:
        _fail(exc)


def _report(file: str, result: RedactResult, as_json: bool) -> None:
    """What was written: JSON with ``--json``, else one line."""
    if as_json:
        echo_json(
            {
                "file": file,
                "out": str(result.out),
                "entries": result.entries,
                "replaced": result.replaced,
                "changed_entries": result.changed_entries,
                "backup": str(result.backup) if result.backup else None,
            }
        )
        return
    line = (
        f"{safe(file)}: {result.replaced} secret(s) replaced in "
        f"{result.changed_entries} of {plural(result.entries, 'entry')} -> {safe(result.out)}"
    )
    if result.backup is not None:
        line += f" (original kept as {safe(result.backup)})"
    click.echo(line)
