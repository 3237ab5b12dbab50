"""Open any supported recording as a ``Cassette``: a cassette file (JSONL, format v1) or,
through the importers, another format detected from the content (tau-bench results,
OpenAI chat logs, inspect_ai logs, VCR cassettes, and what agent frameworks write:
pydantic-ai, OpenTelemetry GenAI spans, OpenAI Responses items and Agents SDK traces,
LangChain/LangGraph, smolagents, Anthropic Messages; see ``core.importers``).

Every command and the app open their inputs through ``open_cassette`` so that they all
accept the same formats and the same **path spec**::

    FILE                       a cassette, or a file holding one run
    FILE#task=31,trial=2       one run of a multi-run file (tau-bench, inspect_ai)
    FILE#task=31,trial=2,from=tau-bench     ... with the format forced
    FILE#from=vcr              any file, format forced

The part after the last ``#`` is a selector only when it is a comma-separated list of
``task=``, ``trial=`` and ``from=`` items and ``FILE`` exists; a file whose name really
contains such a ``#`` opens as it is. Any other suffix after an existing ``FILE``
(``FILE#bogus``) is an error saying what a selector looks like, not "no such file".
Keyword arguments override nothing silently: a keyword that contradicts the spec is an error.

``list_runs`` lists the runs of a file (task, trial, reward, call count) for a selector;
``task_pairs`` groups them into pass/fail pairs of the same task, the debug loop's
"diff the failing run against a passing one".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..format.cassette import Cassette, load
from ..format.errors import CassetteFormatError
from ..format.multi_run import RunInfo, RunSelectionError, TaskPair, spec_suffix, task_pairs
from ..keys.normalize import NormalizationRules
from . import FORMATS, canonical_format
from .detect import import_file, sniff

_SPEC_KEYS = ("task", "trial", "from")
#: what a run selector looks like, for the errors about one
SELECTOR_HELP = (
    "a selector looks like FILE#task=N,trial=K (one run of a multi-run file; "
    "from=FORMAT forces the format; `cassette-tui import FILE --list` lists the runs)"
)


@dataclass(frozen=True)
class PathSpec:
    """A parsed path spec (see the module docstring).

    Attributes:
        path: the file.
        task: the task id as text, or ``None``.
        trial: the trial number, or ``None``.
        fmt: a canonical format name, or ``None`` to detect.
    """

    path: Path
    task: str | None = None
    trial: int | None = None
    fmt: str | None = None

    def __str__(self) -> str:
        return str(self.path) + spec_suffix(self.task, self.trial, self.fmt)


def parse_path_spec(spec: str | Path) -> PathSpec:
    """Split ``FILE#task=31,trial=2[,from=FORMAT]`` into a ``PathSpec``.

    A ``Path`` is read like its text (click hands ``Path`` objects over). A spec whose
    suffix after the last ``#`` is not a selector, or whose full text names an existing
    file, is a plain file name.

    Raises:
        CassetteFormatError: a selector with a bad value (``trial=x``, ``from=nope``) or a
            key given twice, naming the file and the key as the field; a suffix that is
            not a selector (``FILE#bogus``, ``FILE#task=1,run=2``) after a file that
            exists (the full text names no file), saying what a selector looks like.
    """
    text = str(spec)
    base, sep, suffix = text.rpartition("#")
    if not sep or not base or Path(text).exists():
        return PathSpec(Path(text))
    items = [item.strip() for item in suffix.split(",") if item.strip()]
    bad = [i for i in items if "=" not in i or i.split("=", 1)[0].strip() not in _SPEC_KEYS]
    if not items or bad:
        if Path(base).exists():
            # the file is there: the part after '#' was meant as a selector and is wrong
            why = f"{bad[0]!r} is not a selector item" if bad else "nothing after '#'"
            raise CassetteFormatError(base, None, None, f"bad run selector {'#' + suffix!r}: "
                                      f"{why}; {SELECTOR_HELP}")  # fmt: skip
        return PathSpec(Path(text))
    values: dict[str, str] = {}
    for item in items:
        key, value = (part.strip() for part in item.split("=", 1))
        if key in values:
            raise CassetteFormatError(base, None, key, f"given twice in the path spec {text!r}")
        if not value:
            raise CassetteFormatError(base, None, key, f"empty value in the path spec {text!r}")
        values[key] = value
    trial: int | None = None
    if "trial" in values:
        try:
            trial = int(values["trial"])
        except ValueError:
            raise CassetteFormatError(
                base, None, "trial", f"expected an integer, got {values['trial']!r}"
            ) from None
    fmt: str | None = None
    if "from" in values:
        try:
            fmt = canonical_format(values["from"])
        except ValueError as exc:
            raise CassetteFormatError(base, None, "from", str(exc)) from None
    return PathSpec(Path(base), values.get("task"), trial, fmt)


def resolve_spec(
    path: str | Path,
    fmt: str | None = None,
    task: str | int | None = None,
    trial: int | None = None,
) -> PathSpec:
    """A path spec merged with options given beside it (``--from``, ``--task``,
    ``--trial``), for commands that take both.

    Raises:
        CassetteFormatError: an unknown format, or an option that contradicts the spec.
    """
    spec = parse_path_spec(path)
    forced = spec.fmt
    if fmt is not None:
        try:
            fmt_c = canonical_format(fmt)
        except ValueError as exc:
            raise CassetteFormatError(spec.path, None, "from", str(exc)) from None
        if forced is not None and forced != fmt_c:
            raise CassetteFormatError(
                spec.path,
                None,
                "from",
                f"the path spec says from={forced} but the format given is {fmt_c}",
            )
        forced = fmt_c
    task_s = str(task) if task is not None else None
    for name, given, in_spec in (("task", task_s, spec.task), ("trial", trial, spec.trial)):
        if given is not None and in_spec is not None and given != in_spec:
            raise CassetteFormatError(
                spec.path,
                None,
                name,
                f"the path spec says {name}={in_spec} but {name}={given} was given too",
            )
    return PathSpec(
        spec.path,
        task_s if task_s is not None else spec.task,
        trial if trial is not None else spec.trial,
        forced,
    )


def detect_format(path: str | Path, *, fmt: str | None = None) -> str:
    """The canonical format name of a path spec's file (``"cassette"``, ``"tau-bench"``,
    ...), detected from the content unless forced.

    Raises:
        CassetteFormatError: unreadable, or none of the formats fits.
    """
    spec = resolve_spec(path, fmt, None, None)
    if spec.fmt is not None:
        return spec.fmt
    if sniff(spec.path) == "cassette":
        return "cassette"
    return import_file(spec.path).fmt


def open_cassette(
    path: str | Path,
    *,
    fmt: str | None = None,
    task: str | int | None = None,
    trial: int | None = None,
    lenient: bool = False,
    rules: NormalizationRules | None = None,
) -> Cassette:
    """Open ``path`` (a path spec: ``FILE`` or ``FILE#task=31,trial=2``) as a cassette.

    A cassette file opens through ``load`` (the lazy index; only its first line is read to
    detect it). Any other format is imported into an in-memory cassette whose ``path`` is
    the path spec of the run (``gpt-4o-airline.json#task=31,trial=2``) and whose
    ``metadata`` says where it came from (``format``, ``source``, ``label``, ``run`` with
    task, trial, reward, passed, calls; tau-bench adds ``info``).

    Args:
        path: the file, or a path spec.
        fmt: force a format (``"cassette"`` or an importer's name, see
            ``importers.FORMATS``); ``None`` detects it from the content.
        task, trial: pick one run from a file that holds many (tau-bench task_id and
            trial; inspect_ai sample id and epoch). Also accepted in the path spec.
        lenient: see ``cassette.load`` (cassette files only).
        rules: normalization rules for the replay keys.

    Raises:
        RunSelectionError: (a ``CassetteFormatError``) a multi-run file without a selector
            ("holds 200 runs (50 tasks, trials 0-3); pass task and trial: ..."), a
            selector that matches no run, or one given for a single-run file. Its ``runs``
            lists every run, for a selector.
        CassetteFormatError: unreadable input, naming the file, line and field; a file of
            no known format (the message lists the formats tried and why each failed).
    """
    spec = resolve_spec(path, fmt, task, trial)
    kind = spec.fmt or sniff(spec.path)
    if kind == "cassette":
        if spec.task is not None or spec.trial is not None:
            raise RunSelectionError(
                spec.path, "is a cassette (one run); task and trial do not apply", [], "cassette"
            )
        return load(spec.path, lenient=lenient, rules=rules)
    imported = import_file(spec.path, spec.fmt)
    index = imported.select(spec.task, spec.trial)
    return imported.cassette(index, rules)


def list_runs(path: str | Path, *, fmt: str | None = None) -> list[RunInfo]:
    """The runs in a file, in file order: ``RunInfo(task, trial, reward, calls, index)``
    with ``passed`` and ``label``. A cassette or other single-run file gives one run
    whose task and trial are ``None``.

    Raises:
        CassetteFormatError: see ``open_cassette``.
    """
    spec = resolve_spec(path, fmt, None, None)
    kind = spec.fmt or sniff(spec.path)
    if kind == "cassette":
        return [RunInfo(task=None, trial=None, reward=None, calls=len(load(spec.path)))]
    return list(import_file(spec.path, spec.fmt).runs)


def is_multi_run(path: str | Path, *, fmt: str | None = None) -> bool:
    """True when the file holds runs told apart by task and trial (a selector is needed)."""
    runs = list_runs(path, fmt=fmt)
    return any(r.task is not None or r.trial is not None for r in runs)


def pair_specs(path: str | Path, task: str | int) -> tuple[str, str]:
    """Path specs ``(passing, failing)`` of one task's default pass/fail pair, ready for
    ``open_cassette`` or ``cassette-tui diff``.

    Raises:
        RunSelectionError: the task is unknown or has no passing and failing trial.
    """
    spec = parse_path_spec(path)
    runs = list_runs(spec.path, fmt=spec.fmt)
    pair = task_pairs(runs).get(str(task))
    chosen = pair.default() if pair else None
    if chosen is None:
        fmt = spec.fmt or "tau-bench"
        why = (
            f"has no run of task {task}"
            if pair is None
            else f"task {task} has no passing and failing trial to pair"
        )
        raise RunSelectionError(spec.path, why, runs, fmt)
    good, bad = chosen
    return str(spec.path) + good.spec_suffix(), str(spec.path) + bad.spec_suffix()


__all__ = [
    "FORMATS",
    "PathSpec",
    "RunInfo",
    "RunSelectionError",
    "TaskPair",
    "detect_format",
    "is_multi_run",
    "list_runs",
    "open_cassette",
    "pair_specs",
    "parse_path_spec",
    "resolve_spec",
    "task_pairs",
]
