"""``cassette-tui check PATH...``: validate and lint cassettes (headless; no Textual).

PATH is a cassette file (or any importable recording, or ``FILE#task=N,trial=K``), a
folder (every ``*.jsonl`` under it, recursively, in name order, and every ``*.mcp.json``
server-facts sidecar ``mcp record`` wrote: those are scanned for secrets, not linted) or a
glob (``'runs/*.jsonl'``, ``'runs/**/*.yaml'``; quoted so the shell leaves it to us). Many
inputs are checked in one process, with one summary line at the end; an unreadable file is
reported (naming it) and the others are still checked.

``--json``: one plain FILE argument prints the object ``{"file", "entries", "findings"}``
(the shape of a single check), or ``{"file", "error"}`` when it cannot be read; several
arguments, a folder or a glob print a list of those objects, one per file, where an
unreadable file is ``{"file", "error"}``. The shape depends on the command line only, never
on how many files a glob matched.

Progress (files checked) is a bar on stderr when it is a terminal, nothing otherwise.

Exit status: 0 clean, 1 findings, 2 an unreadable input or a bad config (even when other
files had findings).
"""

from __future__ import annotations

import glob
import os
import sys
import textwrap
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from cassette_tui.core.format.constants import EXIT_BAD_INPUT, EXIT_CLEAN, EXIT_FINDINGS
from cassette_tui.core.format.errors import CassetteError
from cassette_tui.core.format.jobs import Progress, run_job
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.keys.config import ProjectConfig
from cassette_tui.core.keys.normalize import NormalizationRules, rules_of
from cassette_tui.core.scan.check import lint_and_scan
from cassette_tui.core.scan.lint import KINDS, LintFinding
from cassette_tui.core.scan.redact_config import SecretConfig, load_secret_config
from cassette_tui.core.scan.run_files import (
    RUN_FILE_SUFFIXES,
    is_run_file,
    read_run_file,
    run_file_hits,
)
from cassette_tui.core.scan.secrets import check_rows, hit_finding
from cassette_tui.core.scan.sidecar import SIDECAR_SUFFIX, is_sidecar, read_sidecar, sidecar_hits
from rich.console import Console
from rich.text import Text

from ..text.plural import plural
from ._options import config_option, from_option
from ._output import Layout, echo_json, echo_plain_json, fail, safe, stdout_console
from ._progress import progress_on_stderr

_KIND_STYLE = {
    "stale_digest": "yellow",
    "repeated_key": "magenta",
    "volatile_arg": "cyan",
    "binary_as_text": "red",
    "seq_order": "red",
    "secret": "red",
    "dropped_lines": "red",
}

#: what a folder argument contributes: cassette files, at any depth
FOLDER_PATTERN = "*.jsonl"
#: and the server-facts sidecars ``mcp record`` writes beside its cassettes
SIDECAR_PATTERN = "*" + SIDECAR_SUFFIX
#: and what a runs folder holds beside its call logs (scan.run_files): scanned for secrets
RUN_FILE_PATTERNS = tuple("*" + suffix for suffix in RUN_FILE_SUFFIXES)
_GLOB_CHARS = frozenset("*?[")


@dataclass
class Checked:
    """The check of one file: its findings (as ``check --json`` rows), or the error that
    made it unreadable."""

    file: str
    entries: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    dropped: int | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.error is not None:
            return {"file": self.file, "error": self.error}
        out: dict[str, Any] = {"file": self.file, "entries": self.entries, "findings": self.rows}
        if self.dropped is not None:
            out["dropped_lines"] = self.dropped
        return out


@dataclass(frozen=True)
class Unmatched:
    """An argument that names no file (a glob with no match, an empty folder): ``message``
    says why; ``position`` is how many files the arguments before it named (where it
    stands in ``--json``'s list)."""

    arg: str
    message: str
    position: int


def expand(paths: tuple[str, ...]) -> tuple[list[str], list[Unmatched]]:
    """The files the arguments name, in order without repeats, and one ``Unmatched`` per
    argument that names none (a glob with no match, an empty folder). A plain argument is
    kept as given (its own error, if any, comes when it is read)."""
    files: list[str] = []
    seen: set[str] = set()
    unmatched: list[Unmatched] = []
    for arg in paths:
        if os.path.isdir(arg):
            found = sorted(
                str(p)
                for pattern in (FOLDER_PATTERN, SIDECAR_PATTERN, *RUN_FILE_PATTERNS)
                for p in Path(arg).rglob(pattern)
                if p.is_file()
            )
            if not found:
                message = f"{arg}: a folder with no {FOLDER_PATTERN} file in it"
                unmatched.append(Unmatched(arg, message, len(files)))
        elif not os.path.lexists(arg) and _GLOB_CHARS & set(arg) and "#" not in arg:
            found = [f for f in sorted(glob.glob(arg, recursive=True)) if os.path.isfile(f)]
            if not found:
                message = f"{arg}: no file matches this pattern"
                unmatched.append(Unmatched(arg, message, len(files)))
        else:
            found = [arg]
        for f in found:
            if f not in seen:
                seen.add(f)
                files.append(f)
    return files, unmatched


def in_order(results: list[Checked], unmatched: list[Unmatched]) -> list[Checked]:
    """The checked files and the arguments that named none (as ``Checked`` with their
    ``error``), in the order of the command line."""
    out: list[Checked] = []
    pending = sorted(unmatched, key=lambda u: u.position)
    for i, result in enumerate(results):
        while pending and pending[0].position <= i:
            u = pending.pop(0)
            out.append(Checked(u.arg, error=u.message))
        out.append(result)
    out.extend(Checked(u.arg, error=u.message) for u in pending)
    return out


def check_one(
    file: str,
    fmt: str | None,
    lenient: bool,
    rules: NormalizationRules,
    secrets: SecretConfig | None = None,
    lint_too: bool = True,
) -> Checked:
    """Open and lint ``file`` and scan it for secrets (``secrets``: the scan's config;
    ``None`` skips it; ``lint_too=False`` runs the scan alone); an unreadable file is a
    ``Checked`` with its ``error``."""
    if is_sidecar(file) and fmt is None:
        return _check_sidecar(file, secrets)
    if is_run_file(file) and fmt is None:
        return _check_run_file(file, secrets)
    try:
        cassette = open_cassette(file, fmt=fmt, lenient=lenient, rules=rules)
        # one read of the entries for both, over two processes on a large file
        findings, found = lint_and_scan(cassette, secrets, lint_too)
        secret_rows = check_rows(found)
    except (CassetteError, ValueError, OSError) as exc:
        message = str(exc)
        if isinstance(exc, OSError) and file not in message:
            message = f"{file}: {exc.strerror or exc}"
        return Checked(file, error=message)
    rows = [f.to_dict() for f in findings] + secret_rows
    dropped = cassette.report.dropped_lines
    if dropped:
        rows.insert(
            0,
            LintFinding(
                kind="dropped_lines",
                message=f"{dropped} line(s) dropped by the lenient load: {cassette.report.reason}",
            ).to_dict(),
        )
    return Checked(
        file,
        entries=len(cassette),
        rows=rows,
        rules=rules_of(cassette).describe(),
        dropped=dropped if lenient else None,
    )


def _check_sidecar(file: str, secrets: SecretConfig | None) -> Checked:
    """An MCP server-facts sidecar (``*.mcp.json``, written by ``mcp record``): its secret
    findings (``scan.sidecar``; no seq: the path is from the document's root); nothing to
    lint. ``entries``: its exchanges."""
    try:
        doc = read_sidecar(file)
    except CassetteError as exc:
        return Checked(file, error=str(exc))
    exchanges = doc.get("exchanges")
    count = len(exchanges) if isinstance(exchanges, list) else 0
    if secrets is None:
        return Checked(file, entries=count)
    rows = check_rows(hit_finding(0, hit) for hit in sidecar_hits(doc, secrets))
    for row in rows:
        row["seq"], row["seqs"] = None, []
    return Checked(file, entries=count, rows=rows)


def _check_run_file(file: str, secrets: SecretConfig | None) -> Checked:
    """A file of a runs folder (an agent's captured output, a replay report, a run's
    result): its secret findings, each at the line it is on (``scan.run_files``); nothing
    to lint. ``entries``: its lines that hold text."""
    try:
        doc = read_run_file(file)
    except CassetteError as exc:
        return Checked(file, error=str(exc))
    count = sum(1 for line in doc.values() if line.strip())
    if secrets is None:
        return Checked(file, entries=count)
    rows = check_rows(hit_finding(0, hit) for hit in run_file_hits(doc, secrets))
    for row in rows:
        row["seq"], row["seqs"] = None, []
    return Checked(file, entries=count, rows=rows)


def check_job(
    files: list[str],
    fmt: str | None,
    lenient: bool,
    rules: NormalizationRules,
    secrets: SecretConfig | None = None,
    lint_too: bool = True,
) -> Generator[Progress, None, list[Checked]]:
    """Check ``files`` one by one: yields ``Progress(stage="check", unit="files")``."""
    results: list[Checked] = []
    total = len(files)
    for done, file in enumerate(files):
        yield Progress("check", done, total, "files", Path(file).name)
        results.append(check_one(file, fmt, lenient, rules, secrets, lint_too))
    yield Progress("check", total, total, "files")
    return results


#: what ``check --help`` says after a finding kind's name
_KIND_NOTES = {
    "malformed_args": "the model's arguments not valid JSON",
    "empty": "no calls",
    "secret": "values shown masked; --secrets runs the scan alone",
    "dropped_lines": "with --lenient",
}
#: every finding kind ``check`` reports: lint's (one table, ``lint.KINDS``) and its own
CHECK_KINDS = (*KINDS, "dropped_lines")


def _check_help() -> str:
    kinds = ", ".join(
        f"{kind} ({_KIND_NOTES[kind]})" if kind in _KIND_NOTES else kind for kind in CHECK_KINDS
    )
    lines = textwrap.wrap(f"Findings: {kinds}.", width=76, break_on_hyphens=False)
    return "\n".join(
        [
            "Validate and lint cassettes: files, folders (every *.jsonl and *.mcp.json in "
            "them) or globs.",
            "",
            "\b",
            *lines,
            '--json: one FILE gives an object ({"file", "error"} when unreadable); several',
            "paths, a folder or a glob give a list.",
            "Exit status: 0 clean, 1 findings, 2 unreadable input.",
        ]
    )


CHECK_HELP = _check_help()


@click.command("check", help=CHECK_HELP)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--lenient", is_flag=True, help="Keep the entries before a bad last line and report it."
)
@click.option(
    "--secrets",
    "secrets_only",
    is_flag=True,
    help="Run the secret scan alone (no lint).",
)
@click.option("--no-secrets", is_flag=True, help="Lint only, without the secret scan.")
@from_option("Read every input as this format instead of detecting it.")
@config_option
def check(
    paths: tuple[str, ...],
    as_json: bool,
    lenient: bool,
    secrets_only: bool,
    no_secrets: bool,
    fmt: str | None,
    config: str | None,
) -> None:
    # the help is CHECK_HELP (the finding kinds listed from lint.KINDS)
    if secrets_only and no_secrets:
        fail("check", "--secrets and --no-secrets exclude each other")
    try:
        project = ProjectConfig.load(config)
        rules = project.rules()
        secrets = None if no_secrets else load_secret_config(project)
    except (CassetteError, ValueError, OSError) as exc:
        fail("check", exc, file=config)
    files, missing = expand(paths)
    single = len(paths) == 1 and files == [paths[0]] and not missing
    with progress_on_stderr(None if len(files) > 1 else False) as sink:
        results = run_job(check_job(files, fmt, lenient, rules, secrets, not secrets_only), sink)

    for problem in missing:
        click.echo(f"cassette-tui check: {safe(problem.message)}", err=True)
    if as_json:
        _print_json(results, missing, single)
    else:
        _print_text(results, missing, single)
    unreadable = bool(missing) or any(r.error is not None for r in results)
    findings = any(r.rows for r in results)
    sys.exit(EXIT_BAD_INPUT if unreadable else EXIT_FINDINGS if findings else EXIT_CLEAN)


def _print_json(results: list[Checked], missing: list[Unmatched], single: bool) -> None:
    """``--json``: one file's document (an unreadable one exits with status 2 at once), or
    the list of every file's, in the order of the arguments; each error also on stderr."""
    if single:
        (only,) = results
        if only.error is not None:
            # still a document on stdout (`{"file", "error"}`), so `| jq` reads why
            click.echo(f"cassette-tui check: {safe(only.error)}", err=True)
            echo_json(only.to_json())
            sys.exit(EXIT_BAD_INPUT)
        echo_plain_json(only.to_json())  # the same bytes as ``echo_json``, faster
        return
    for r in results:
        if r.error is not None:
            click.echo(f"cassette-tui check: {safe(r.error)}", err=True)
    # an argument that named no file is in the list too, as {"file", "error"}
    echo_plain_json([r.to_json() for r in in_order(results, missing)])


def _print_text(results: list[Checked], missing: list[Unmatched], single: bool) -> None:
    """Each file's findings (an unreadable one's error on stderr), then, for more than one
    file, the summary line."""
    console, layout = stdout_console()
    for r in results:
        if r.error is not None:
            click.echo(f"cassette-tui check: {safe(r.error)}", err=True)
        else:
            _print_human(console, layout, r)
    if not single:
        console.print(Text(_summary(results, missing)))


def _summary(results: list[Checked], missing: list[Unmatched]) -> str:
    """``checked 200 files: 150 clean, 45 with findings (120 findings), 5 unreadable``,
    then ``; 2 arguments named no file`` when some did (a glob that matched nothing, a
    folder with no ``*.jsonl``): they are no file, so the file counts add up to the total."""
    unreadable = sum(1 for r in results if r.error is not None)
    with_findings = [r for r in results if r.error is None and r.rows]
    clean = sum(1 for r in results if r.error is None and not r.rows)
    parts = [f"{clean} clean", f"{len(with_findings)} with findings"]
    if with_findings:
        parts[-1] += f" ({plural(sum(len(r.rows) for r in with_findings), 'finding')})"
    parts.append(f"{unreadable} unreadable")
    line = f"checked {plural(len(results), 'file')}: " + ", ".join(parts)
    if missing:
        line += f"; {plural(len(missing), 'argument')} named no file"
    return line


def _print_human(console: Console, layout: Layout, result: Checked) -> None:
    rows = result.rows
    head = Text()
    head.append(safe(result.file), style="bold")
    if is_sidecar(result.file):  # an MCP server-facts file counts its exchanges
        head.append(f": {plural(result.entries, 'exchange')}, ")
    elif is_run_file(result.file):  # a run's output or report counts its lines
        head.append(f": {plural(result.entries, 'line')}, ")
    else:
        head.append(f": {plural(result.entries, 'entry', 'entries')}, ")
    if rows:
        head.append(plural(len(rows), "finding"), style="bold yellow")
    else:
        head.append("no findings", style="bold green")
    console.print(head)
    if result.rules:
        console.print(Text(safe("normalization rules: " + "; ".join(result.rules)), style="dim"))
    for row in rows:
        line = Text("  ")
        line.append(safe(row["kind"]), style=_KIND_STYLE.get(row["kind"], "bold"))
        if row["seq"] is not None:
            line.append(f"  seq {row['seq']}")
        if row["path"]:
            line.append(f"  {safe(row['path'])}", style="dim")
        console.print(line)
        # cassette text is data: Text never interprets markup such as "[bold]"
        message = "    " + safe(row["message"])
        if layout.wrap:
            message = textwrap.fill(
                safe(row["message"]),
                width=max(layout.width - 1, 40),
                initial_indent="    ",
                subsequent_indent="    ",
                break_long_words=True,
                break_on_hyphens=False,
            )
        console.print(Text(message))
