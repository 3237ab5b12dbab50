"""``cassette-tui import SRC -o OUT``: turn another tool's recording into cassettes
(headless; no Textual).

    cassette-tui import run.yaml -o run.jsonl              one run -> the file OUT
    cassette-tui import gpt-4o-airline.json --task 31 --trial 2 -o t31-2.jsonl
    cassette-tui import gpt-4o-airline.json -o runs/        every run -> OUT/task-31_trial-2.jsonl
    cassette-tui import gpt-4o-airline.json --list          the runs: task, trial, reward, calls

SRC is a path spec (``FILE#task=31,trial=2`` works as well as the options). A multi-run
import also writes ``OUT/runs.json``: every run's task, trial, reward, passed, call count
and file, so the rewards of runs with no tool call (empty cassettes) are kept too.
Nothing is overwritten without ``--force``; every file is written atomically.

Exit status: 0 written, 2 bad usage, unreadable input or an existing output.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any, NoReturn

import click
from cassette_tui.core.format.atomic import write_atomic
from cassette_tui.core.format.cassette import Cassette, save
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.format.jobs import Progress, run_job
from cassette_tui.core.format.jsonvalue import dumps_strict
from cassette_tui.core.importers import FORMATS, RunInfo, RunSelectionError
from cassette_tui.core.importers.detect import import_file
from cassette_tui.core.importers.sources import detect_format, open_cassette, resolve_spec

from ..text.plural import plural
from ._options import from_option
from ._output import echo_json, fail, safe
from ._progress import progress_on_stderr

INDEX_NAME = "runs.json"


def _fail(message: object, file: object = None) -> NoReturn:
    fail("import", message, file=file)


@click.command("import")
@click.argument("src", type=str)
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(path_type=Path),
    default=None,
    help="The cassette file to write; a directory when SRC holds many runs and no run is selected.",
)
@from_option(f"Read SRC as this format instead of detecting it ({', '.join(FORMATS)}).")
@click.option("--task", default=None, metavar="N", help="The task of the run to import.")
@click.option("--trial", type=int, default=None, metavar="K", help="The trial of that task.")
@click.option("--force", is_flag=True, help="Replace existing output files.")
@click.option("--list", "list_only", is_flag=True, help="List the runs in SRC; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def import_cmd(
    src: str,
    out: Path | None,
    fmt: str | None,
    task: str | None,
    trial: int | None,
    force: bool,
    list_only: bool,
    as_json: bool,
) -> None:
    """Import SRC (tau-bench results, OpenAI chat log, inspect_ai log, VCR YAML, an
    agent framework's own file: pydantic-ai, OpenTelemetry GenAI spans, OpenAI Responses
    items or Agents SDK traces, LangChain/LangGraph, smolagents, Anthropic Messages) as
    cassettes.

    \b
    With --task/--trial (or SRC#task=N,trial=K) the one run goes to the file OUT.
    A multi-run SRC without a selector writes one cassette per run into the directory
    OUT, named task-<N>_trial-<K>.jsonl, plus runs.json.
    Exit status: 0 written, 2 bad usage, unreadable input or an existing output.
    """
    try:
        spec = resolve_spec(src, fmt, task, trial)
        kind = detect_format(str(spec.path), fmt=spec.fmt)
    except (CassetteFormatError, ValueError) as exc:
        _fail(exc)
        return

    if list_only:
        _list(spec.path, kind, as_json)
        return
    if out is None:
        _fail("missing -o/--output (or pass --list to see the runs)")
        return

    selected = spec.task is not None or spec.trial is not None
    try:
        if kind != "cassette" and not selected:
            imported = import_file(spec.path, spec.fmt)
            if imported.multi_run and len(imported.runs) > 1:
                _write_all(imported.runs, imported, out, force, as_json, kind)
                return
        cassette = open_cassette(str(spec.path), fmt=spec.fmt, task=spec.task, trial=spec.trial)
    except (CassetteFormatError, ValueError) as exc:
        _fail(exc)
        return
    _write_one(cassette, out, force)
    _report_one(cassette, out, str(spec.path), kind, as_json)


def _write_one(cassette: Cassette, out: Path, force: bool) -> None:
    """Write the one run to the file ``out`` (an existing one only with ``force``). Exits
    with status 2 when ``out`` is a directory, exists or cannot be written."""
    if out.is_dir():
        _fail(f"{out}: is a directory; one run is written to a file (give a file name)", file=out)
    try:
        save(cassette, out, overwrite=force)
    except FileExistsError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(f"{out}: cannot write: {exc.strerror or exc}", file=out)


def _report_one(cassette: Cassette, out: Path, source: str, kind: str, as_json: bool) -> None:
    """What was written: one JSON line with ``--json``, else one sentence with the run's
    reward and whether it hit its step limit."""
    run = cassette.metadata.get("run") or {}
    outcome = cassette.metadata.get("run_outcome")
    record = {"file": str(out), "entries": len(cassette), **_run_fields(run), "outcome": outcome}
    pairing = cassette.metadata.get("pairing")
    if pairing is not None:
        record["pairing"] = pairing
    if as_json:
        echo_json({"source": source, "format": kind, "written": [record]}, indent=None)
    else:
        click.echo(
            safe(f"wrote {out} ({plural(len(cassette), 'entry')}) from {kind} {cassette.path}")
            + _reward_note(run)
            + _limit_note(outcome)
            + (f"; {PAIRING_WORDS[pairing]}" if pairing in PAIRING_WORDS and len(cassette) else "")
        )


#: how an import paired each call with its result (the run's ``pairing``, core/importers)
PAIRING_WORDS = {
    "id": "results paired with their calls by id",
    "position": "results paired with their calls by position (call ids repeat)",
    "span": "each call and its result read from one span",
    "step": "results taken from each step's observations, in call-id order",
}


def _run_fields(run: dict[str, Any]) -> dict[str, Any]:
    return {k: run.get(k) for k in ("task", "trial", "reward", "passed")}


def _reward_note(run: dict[str, Any]) -> str:
    if run.get("reward") is None:
        return ""
    return f", reward {run['reward']} ({'pass' if run.get('passed') else 'fail'})"


def _limit_note(outcome: Any) -> str:
    """``, step limit reached (30 steps)`` when the run hit its limit (core/format/context.py)."""
    if not isinstance(outcome, dict) or not outcome.get("limit_reached"):
        return ""
    from cassette_tui.core.format.context import outcome_from_json

    parsed, _ = outcome_from_json(outcome)
    limit = parsed.limit_words() if parsed is not None else None
    return f", {limit}" if limit is not None else ""


def _write_all(
    runs: list[RunInfo], imported: Any, out: Path, force: bool, as_json: bool, kind: str
) -> None:
    if out.exists() and not out.is_dir():
        _fail(
            f"{out}: is a file; a multi-run source ({len(runs)} runs) is written to a "
            "directory, or pass --task and --trial to write one run"
        )
    targets = [out / f"{run.label}.jsonl" for run in runs]
    if len(set(targets)) != len(targets):
        _fail(f"{imported.path}: two runs share a task and trial; import them one by one")
    existing = [t for t in [*targets, out / INDEX_NAME] if t.exists()]
    if existing and not force:
        shown = ", ".join(str(t) for t in existing[:3])
        more = f" and {len(existing) - 3} more" if len(existing) > 3 else ""
        _fail(f"{shown}{more}: exist; use --force to replace them (nothing was written)")
    written: list[dict[str, Any]] = []
    try:
        with progress_on_stderr() as sink:
            written = run_job(_write_runs(runs, targets, imported, force), sink)
        index = {"source": str(imported.path), "format": kind, "runs": written}
        write_atomic(
            out / INDEX_NAME, [(dumps_strict(index, indent=1) + "\n").encode()], overwrite=force
        )
    except CassetteFormatError as exc:
        _fail(exc)
    except FileExistsError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(f"{out}: cannot write: {exc.strerror or exc}", file=out)
    if as_json:
        echo_json(
            {
                "source": str(imported.path),
                "format": kind,
                "written": written,
                "index": str(out / INDEX_NAME),
            },
            indent=None,
        )
        return
    empty = sum(1 for w in written if w["entries"] == 0)
    passed = sum(1 for w in written if w["passed"])
    click.echo(
        safe(
            f"wrote {len(written)} cassettes to {out}/ ({passed} passing, "
            f"{len(written) - passed} not; {empty} with no tool call) and {out / INDEX_NAME}"
        )
    )


def _write_runs(
    runs: list[RunInfo], targets: list[Path], imported: Any, force: bool
) -> Generator[Progress, None, list[dict[str, Any]]]:
    """Build every run's cassette first (so bad input writes nothing), then write them;
    yields ``Progress("read", ..., unit="runs")``, then ``Progress("write", ...)``."""
    cassettes = []
    for done, run in enumerate(runs):
        yield Progress("read", done, len(runs), "runs", run.label)
        cassettes.append(imported.cassette(run.index))
    written: list[dict[str, Any]] = []
    for done, (run, target, cassette) in enumerate(zip(runs, targets, cassettes, strict=True)):
        yield Progress("write", done, len(runs), "runs", target.name)
        save(cassette, target, overwrite=force)
        written.append(
            {
                "file": str(target),
                "entries": len(cassette),
                **_run_fields(run.to_json()),
                # how the run ended: kept here for a run with no call too (an empty file)
                "outcome": cassette.metadata.get("run_outcome"),
            }
        )
    yield Progress("write", len(runs), len(runs), "runs")
    return written


def _list(path: Path, kind: str, as_json: bool) -> None:
    from cassette_tui.core.importers.sources import list_runs

    try:
        runs = list_runs(str(path), fmt=kind)
    except (CassetteFormatError, RunSelectionError) as exc:
        _fail(exc)
        return
    if as_json:
        echo_json(
            {"source": str(path), "format": kind, "runs": [r.to_json() for r in runs]}, indent=None
        )
        return
    click.echo(safe(f"{path}: {kind}, {len(runs)} run(s)"))
    click.echo(f"{'task':>8} {'trial':>5} {'reward':>6} {'result':>6} {'calls':>5}  spec")
    for r in runs:
        result = {True: "pass", False: "fail", None: "-"}[r.passed]
        reward = "-" if r.reward is None else f"{r.reward:g}"
        task = safe(r.task or "-")
        click.echo(
            f"{task:>8} {'-' if r.trial is None else r.trial:>5} {reward:>6} "
            f"{result:>6} {r.calls:>5}  {safe(path.name + r.spec_suffix())}"
        )
