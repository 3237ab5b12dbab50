"""``cassette-tui redact FILE -o OUT``: replace every secret with a stable placeholder
(headless; no Textual).

    cassette-tui redact runs/fail.jsonl -o runs/fail.redacted.jsonl
    cassette-tui redact runs/fail.jsonl --in-place        # the original kept in the cache
    cassette-tui redact runs/fail.mcp.json --in-place     # an MCP server-facts sidecar

Each secret the scan of ``check`` finds, and each value at a ``redact.paths`` pattern of
the config, becomes ``<redacted:KIND:HASH8>`` (the same secret, the same placeholder);
every ``args_digest`` is recomputed. Replay redacts the agent's live args the same way, so
the redacted cassette still matches the real calls. FILE may be any format ``check``
reads (a VCR cassette, say); the output is a cassette (JSONL). The output is written
atomically; an existing OUT is only replaced with ``--force``; ``--in-place`` first copies
FILE outside the repository, under the user's cache folder
(``$XDG_CACHE_HOME/cassette-tui/backups/``, else ``~/.cache/...``), so no plaintext copy
sits where it would be committed; ``--backup PATH`` names another place (never over an
existing file). Where the original went is said on stdout.

A cassette's MCP server-facts sidecar (``RUN.mcp.json`` beside ``RUN.jsonl``, written by
``mcp record``) is redacted with it (to OUT's sidecar, or in place), with the secrets found
in the cassette too; a sidecar can also be given as FILE alone.

Exit status: 0 written, 2 bad usage, unreadable input or an existing output.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click
from cassette_tui.core.format.atomic import write_atomic
from cassette_tui.core.format.constants import EXIT_CLEAN
from cassette_tui.core.format.errors import CassetteError
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.format.jsonvalue import dumps_strict
from cassette_tui.core.importers.sources import detect_format, open_cassette
from cassette_tui.core.keys.config import ProjectConfig
from cassette_tui.core.scan.redact import Redactor, redact_job
from cassette_tui.core.scan.redact_config import load_secret_config
from cassette_tui.core.scan.run_files import is_run_file, read_run_file, redact_run_file
from cassette_tui.core.scan.sidecar import SIDECAR_SUFFIX, is_sidecar, read_sidecar, redact_sidecar

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
@click.option(
    "--in-place",
    is_flag=True,
    help="Replace FILE itself (the original is kept under the user's cache folder).",
)
@click.option(
    "--backup",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where --in-place copies FILE first (default: under ~/.cache/cassette-tui/backups).",
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
    target = Path(file) if in_place else out
    assert target is not None
    keep = (backup or default_backup(Path(file))) if in_place else None
    if is_sidecar(file) and fmt is None:
        _redact_sidecar_file(file, target, config, force or in_place, keep, as_json)
        sys.exit(EXIT_CLEAN)
    if is_run_file(file) and fmt is None:
        _redact_run_file(file, target, config, force or in_place, keep, as_json)
        sys.exit(EXIT_CLEAN)
    cassette, secrets = _open_input(file, fmt, config, in_place)
    side_src, side_out = sidecar_of(file), sidecar_of(target)
    has_side = side_src.is_file() and fmt is None
    if has_side and not (force or in_place) and os.path.lexists(side_out):
        # said before anything is written: the cassette and its sidecar go together
        _fail(f"{side_out}: exists (the sidecar of {target}); pass --force to replace it")
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
    side = None
    if has_side:
        if keep is not None:  # --in-place: the sidecar's original is kept beside FILE's
            _keep_copy(side_src, keep.with_name(keep.name + SIDECAR_SUFFIX))
        side = _redact_sidecar(side_src, side_out, secrets, force or in_place, result.known)
    _report(file, result, as_json, side)
    sys.exit(EXIT_CLEAN)


def default_backup(file: Path) -> Path:
    """Where ``--in-place`` keeps the original by default: outside any repository, under
    the user's cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``):
    ``cassette-tui/backups/NAME.YYYYmmddTHHMMSSZ[.N].bak``, a name no file has yet."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = root / "cassette-tui" / "backups"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = folder / f"{file.name}.{stamp}.bak"
    n = 1
    while os.path.lexists(path):
        n += 1
        path = folder / f"{file.name}.{stamp}.{n}.bak"
    folder.mkdir(parents=True, exist_ok=True)
    return path


def sidecar_of(cassette: str | Path) -> Path:
    """``RUN.jsonl`` -> ``RUN.mcp.json`` (as ``mcp record`` names it)."""
    path = Path(cassette)
    return path.with_name((path.stem if path.suffix else path.name) + SIDECAR_SUFFIX)


def _redact_sidecar(
    src: Path, out: Path, secrets: SecretConfig, overwrite: bool, known: frozenset[str]
) -> tuple[Path, int]:
    """Write ``src`` (a sidecar) redacted to ``out``: ``(out, secrets replaced)``. Exits
    with status 2 on an unreadable sidecar or an existing ``out`` without ``overwrite``."""
    try:
        doc = read_sidecar(src)
        new, count = redact_sidecar(doc, Redactor(secrets), known)
        if out != src or new is not doc:
            text = dumps_strict(new, indent=2, ensure_ascii=False) + "\n"
            write_atomic(out, [text.encode("utf-8")], overwrite=overwrite)
    except (CassetteError, ValueError, OSError) as exc:
        _fail(exc)
    return out, count


def _keep_copy(src: Path, keep: Path) -> None:
    """Copy ``src`` to ``keep`` (a new file); exit with status 2 when that fails."""
    try:
        if os.path.lexists(keep):
            raise FileExistsError(f"{keep}: a backup exists already; move it away first")
        write_atomic(keep, [src.read_bytes()])
    except OSError as exc:
        _fail(exc)


def _redact_sidecar_file(
    file: str, target: Path, config: str | None, overwrite: bool, keep: Path | None, as_json: bool
) -> None:
    """``redact RUN.mcp.json``: the sidecar alone, the original first copied to ``keep``."""
    try:
        secrets = load_secret_config(ProjectConfig.load(config))
    except (CassetteError, ValueError, OSError) as exc:
        _fail(exc)
    if keep is not None:
        _keep_copy(Path(file), keep)
    out, count = _redact_sidecar(Path(file), target, secrets, overwrite, frozenset())
    if as_json:
        echo_json({"file": file, "out": str(out), "replaced": count, "backup": _str_or_none(keep)})
        return
    line = f"{safe(file)}: {count} secret(s) replaced -> {safe(out)}"
    if keep is not None:
        line += f" (original kept as {safe(keep)})"
    click.echo(line)


def _redact_run_file(
    file: str, target: Path, config: str | None, overwrite: bool, keep: Path | None, as_json: bool
) -> None:
    """``redact run-01.stdout`` (any file of a runs folder: ``scan.run_files``): its text
    with every secret replaced, the original first copied to ``keep``."""
    try:
        secrets = load_secret_config(ProjectConfig.load(config))
        new, count = redact_run_file(read_run_file(file), Redactor(secrets), file)
        if keep is not None:
            _keep_copy(Path(file), keep)
        if target != Path(file) or count:
            write_atomic(target, [new], overwrite=overwrite)
    except (CassetteError, ValueError, OSError) as exc:
        _fail(exc)
    if as_json:
        echo_json(
            {"file": file, "out": str(target), "replaced": count, "backup": _str_or_none(keep)}
        )
        return
    line = f"{safe(file)}: {count} secret(s) replaced -> {safe(target)}"
    if keep is not None:
        line += f" (original kept as {safe(keep)})"
    click.echo(line)


def _str_or_none(path: Path | None) -> str | None:
    return str(path) if path is not None else None


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


def _report(
    file: str, result: RedactResult, as_json: bool, side: tuple[Path, int] | None = None
) -> None:
    """What was written: JSON with ``--json``, else one line (and one for the sidecar)."""
    if as_json:
        doc = {
            "file": file,
            "out": str(result.out),
            "entries": result.entries,
            "replaced": result.replaced,
            "changed_entries": result.changed_entries,
            "backup": str(result.backup) if result.backup else None,
        }
        if side is not None:
            doc["sidecar"] = {"out": str(side[0]), "replaced": side[1]}
        echo_json(doc)
        return
    line = (
        f"{safe(file)}: {result.replaced} secret(s) replaced in "
        f"{result.changed_entries} of {plural(result.entries, 'entry')} -> {safe(result.out)}"
    )
    if result.backup is not None:
        line += f" (original kept as {safe(result.backup)})"
    click.echo(line)
    if side is not None:
        line = f"  its sidecar: {side[1]} secret(s) replaced -> {safe(side[0])}"
        if result.backup is not None:
            line += f" (original kept as {safe(result.backup)}{SIDECAR_SUFFIX})"
        click.echo(line)
