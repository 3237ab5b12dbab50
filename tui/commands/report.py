"""``cassette-tui report A B -o pair.html``: a one-file HTML report of a pair, for a review.

The page is self-contained (no network access when opened, no external asset): the
aligned rows with their marks (drawn as they scroll, so a 100k-step pair stays usable),
the drift of each step, the findings, and a gate's verdict with ``--gate GATE.json`` (a
``gate --json`` document). Secrets are masked as ``diff`` masks them, and the finished
page is scanned again: one left in it refuses the write (exit 2), as does an existing
``-o`` file without ``--force``. Written atomically.

Exit status: 0 written (whatever the pair's differences), 2 bad usage, unreadable input,
a secret in the page, or an existing output without ``--force``. Does not import Textual.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from cassette_tui.core.format.constants import EXIT_CLEAN

from ._options import config_option, from_option
from ._output import fail


@click.command("report")
@click.argument("a", metavar="A", type=str)
@click.argument("b", metavar="B", type=str)
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False),
              help="The HTML file to write.")  # fmt: skip
@click.option("--align", type=click.Choice(["auto", "seq", "key"]), default="auto",
              show_default=True, help="As in diff.")  # fmt: skip
@click.option("--gate", "gate_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="A `gate --json` document to show its verdict in the report.")  # fmt: skip
@from_option("Read both inputs as this format instead of detecting it.")
@config_option
@click.option("--force", is_flag=True, help="Replace an existing output file.")
def report(
    a: str,
    b: str,
    output: str,
    align: str,
    gate_file: str | None,
    fmt: str | None,
    config: str | None,
    force: bool,
) -> None:
    """Write a self-contained HTML report of A (failing) against B (passing).

    \b
    Opens from file:// with no network; keys in the page: j/k move, n/N next/previous
    difference, f first divergence, g/G first/last row.
    Exit status: 0 written, 2 bad usage, unreadable input, a secret in the page, or an
    existing output without --force.
    """
    from cassette_tui.core.diff.result import diff_job
    from cassette_tui.core.format.atomic import check_new_file, write_atomic
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.format.jobs import run_job
    from cassette_tui.core.importers.sources import open_cassette
    from cassette_tui.core.keys.config import load_rules

    from ..text.html_report import check_no_secret, report_html, report_payload
    from ._progress import progress_on_stderr

    try:
        if not force:
            check_new_file(output)
        gate = _read_gate(gate_file) if gate_file else None
        rules = load_rules(config)
        cassette_a = open_cassette(a, fmt=fmt, rules=rules)
        cassette_b = open_cassette(b, fmt=fmt, rules=rules)
        with progress_on_stderr(None) as sink:
            result = run_job(diff_job(cassette_a, cassette_b, align, outcomes=True), sink)
            payload = report_payload(result, gate=gate, sink=sink)
        check_no_secret(payload)
        write_atomic(output, [report_html(payload)], overwrite=force)
    except (CassetteError, OSError, ValueError) as exc:
        fail("report", exc)
    rows = len(payload["rows"])
    click.echo(f"wrote {output} ({rows} rows; open it in a browser, no network needed)")
    sys.exit(EXIT_CLEAN)


def _read_gate(path: str) -> dict:
    """The ``gate --json`` document at ``path``.

    Raises:
        ValueError: not JSON, or not a gate document (no ``verdict``).
    """
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a gate --json document ({exc})") from None
    if not isinstance(doc, dict) or "verdict" not in doc:
        raise ValueError(f"{path}: not a gate --json document (no verdict)")
    return doc
