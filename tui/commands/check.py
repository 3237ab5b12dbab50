"""``cassette-tui check FILE``: validate and lint one cassette (headless; no Textual).

Exit status: 0 clean, 1 findings, 2 unreadable input or a bad config.
"""

from __future__ import annotations

import sys
import textwrap
from typing import Any

import click
from cassette_tui.core.constants import EXIT_BAD_INPUT, EXIT_CLEAN, EXIT_FINDINGS
from cassette_tui.core.errors import CassetteFormatError
from cassette_tui.core.lint import LintFinding, lint
from cassette_tui.core.normalize import load_rules
from cassette_tui.core.sources import open_cassette
from rich.console import Console
from rich.text import Text

from ._options import config_option, from_option
from ._output import echo_json, safe

_KIND_STYLE = {
    "stale_digest": "yellow",
    "repeated_key": "magenta",
    "volatile_arg": "cyan",
    "binary_as_text": "red",
    "seq_order": "red",
    "secret": "red",
    "dropped_lines": "red",
}


@click.command("check")
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--lenient", is_flag=True, help="Keep the entries before a bad last line and report it."
)
@from_option("Read FILE as this format instead of detecting it.")
@config_option
def check(file: str, as_json: bool, lenient: bool, fmt: str | None, config: str | None) -> None:
    """Validate and lint the cassette FILE.

    \b
    Findings: stale_digest, repeated_key, volatile_arg, binary_as_text, seq_order.
    Exit status: 0 clean, 1 findings, 2 unreadable input.
    """
    try:
        rules = load_rules(config)
        cassette = open_cassette(file, fmt=fmt, lenient=lenient, rules=rules)
        findings = lint(cassette)
    except (CassetteFormatError, ValueError) as exc:
        click.echo(f"cassette-tui check: {safe(exc)}", err=True)
        sys.exit(EXIT_BAD_INPUT)

    dropped = cassette.report.dropped_lines
    rows = [f.to_dict() for f in findings]
    if dropped:
        rows.insert(
            0,
            LintFinding(
                kind="dropped_lines",
                message=f"{dropped} line(s) dropped by the lenient load: {cassette.report.reason}",
            ).to_dict(),
        )
    if as_json:
        out: dict[str, Any] = {"file": file, "entries": len(cassette), "findings": rows}
        if lenient:
            out["dropped_lines"] = dropped
        echo_json(out)
    else:
        _print_human(file, len(cassette), rows, cassette.rules.describe())
    sys.exit(EXIT_FINDINGS if rows else EXIT_CLEAN)


def _print_human(file: str, entries: int, rows: list[dict[str, Any]], rules: list[str]) -> None:
    console = Console(highlight=False, soft_wrap=False)
    head = Text()
    head.append(safe(file), style="bold")
    head.append(f": {entries} entr{'y' if entries == 1 else 'ies'}, ")
    if rows:
        head.append(f"{len(rows)} finding{'s' if len(rows) != 1 else ''}", style="bold yellow")
    else:
        head.append("no findings", style="bold green")
    console.print(head)
    if rules:
        console.print(Text(safe("normalization rules: " + "; ".join(rules)), style="dim"))
    for row in rows:
        line = Text("  ")
        line.append(safe(row["kind"]), style=_KIND_STYLE.get(row["kind"], "bold"))
        if row["seq"] is not None:
            line.append(f"  seq {row['seq']}")
        if row["path"]:
            line.append(f"  {safe(row['path'])}", style="dim")
        console.print(line)
        # cassette text is data: Text never interprets markup such as "[bold]"
        wrapped = textwrap.fill(
            safe(row["message"]),
            width=max(console.width - 1, 40),
            initial_indent="    ",
            subsequent_indent="    ",
            break_long_words=True,
            break_on_hyphens=False,
        )
        console.print(Text(wrapped))
