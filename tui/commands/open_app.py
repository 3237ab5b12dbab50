"""``cassette-tui open FILES...`` (also plain ``cassette-tui A [B]``): the app.

Inputs are opened and validated before the terminal is taken over, so a bad file is a
plain error message and exit status 2, never a broken screen; a bad line found after the
start (entries are parsed by workers) ends the app the same way once the terminal is back.
Without a terminal (stdin, stdout or stderr not one: CI, cron, ``ssh`` without ``-t``), or
on ``TERM=dumb``, the command exits with status 2 and one line pointing to
``cassette-tui diff``, writing no escape sequences. Every such line goes to stderr, and also
to stdout (or ``/dev/tty``) when stderr is not a terminal, so ``2>err.log`` still shows why.

A folder (``cassette-tui runs/``: cassettes, a gate's ``--runs-dir``) starts on the tree
of its runs grouped by where they part (``group --app``). One file that holds many runs
(tau-bench results, an inspect_ai log) opened without a selector starts on the run
selector; ``--task 31`` (or ``FILE#task=31``) opens that task's
failing trial against a passing one at once, with the selector behind it (``q``);
``--task 31 --trial 2`` (or ``FILE#task=31,trial=2``) opens that run alone.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

import click
from cassette_tui.core.format.constants import EXIT_BAD_INPUT

from ._loop import agent_option
from ._options import config_option, from_option
from ._progress import progress_on_stderr

if TYPE_CHECKING:
    from cassette_tui.core.format.cassette import Cassette
    from cassette_tui.core.keys.config import ProjectConfig
    from cassette_tui.core.keys.normalize import NormalizationRules
    from cassette_tui.core.loop.agent import AgentCommand

    from ..screens.select import RunSource


#: set by ``cassette-tui serve`` for the app processes textual-serve starts
SERVED_ENV = "CASSETTE_TUI_SERVED"


def terminal_problem() -> str | None:
    """Why the app cannot run here, or ``None``: it reads keys from stdin and draws on the
    terminal, so stdin, stdout and stderr (where Textual writes) must all be terminals.
    Without one (CI, cron, ``ssh host cmd`` without ``-t``, a pipe) the app would wait for
    keys for ever and write escape sequences into a log. ``TERM=dumb`` (Emacs'
    ``M-x shell``, some CI consoles) is a terminal that cannot move its cursor: a
    full-screen app would draw garbage there, so it is refused the same way."""
    if os.environ.get(SERVED_ENV) == "1" and "web_driver" in os.environ.get("TEXTUAL_DRIVER", ""):
        return None  # `cassette-tui serve`: textual-serve's driver draws in a browser
    streams = {"stdin": sys.stdin, "stdout": sys.stdout, "stderr": sys.__stderr__}
    missing = [name for name, stream in streams.items() if not _isatty(stream)]
    plain_output = (
        "for text output use `cassette-tui diff A B` (or `cassette-tui check FILE` for one file)"
    )
    if missing:
        return f"the app needs a terminal ({'/'.join(missing)} is not one); {plain_output}"
    if os.environ.get("TERM", "") == "dumb":
        return f"the app needs a full-screen terminal (TERM=dumb cannot draw one); {plain_output}"
    return None


def _isatty(stream: TextIO | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed or odd streams
        return False


def _fail(message: str) -> NoReturn:
    """Say ``message`` (``_say``) and exit with status 2."""
    _say(message)
    sys.exit(EXIT_BAD_INPUT)


def _say(message: str) -> None:
    """``cassette-tui: message`` on stderr, and also where the user looks when stderr is
    not a terminal (``2>err.log``): on stdout if it is a terminal, else on ``/dev/tty``
    when there is one. Otherwise the app would quit with nothing on the screen, its
    reason only in a log. One plain line, never an escape sequence."""
    from ..text.safe import printable

    line = f"cassette-tui: {printable(message)}"
    click.echo(line, err=True)
    if _isatty(sys.stderr):
        return
    if _isatty(sys.stdout):
        click.echo(line)
        return
    try:
        with open("/dev/tty", "w", encoding="utf-8", errors="replace") as tty:
            tty.write(line + "\n")
    except OSError:  # no controlling terminal (cron, CI, setsid): stderr is all there is
        pass


@click.command("open")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--align",
    type=click.Choice(["auto", "seq", "key"]),
    default="auto",
    show_default=True,
    help="Align the two runs by seq, or by call key (keeps inserted steps apart); auto: "
    "key when the runs part at an inserted step, else seq (a toggles).",
)
@from_option("Force the input format instead of detecting it from the content.")
@click.option(
    "--task",
    default=None,
    metavar="ID",
    help="In a file of many runs: open this task's failing vs passing trial.",
)
@click.option(
    "--trial",
    default=None,
    type=int,
    metavar="N",
    help="With --task: open this trial alone.",
)
@click.option(
    "--theme",
    default=None,
    metavar="NAME",
    help="Textual theme (default ansi-dark: the terminal's own colours).",
)
@config_option
@agent_option
@click.option(
    "--keys",
    "keys_file",
    default=None,
    type=click.Path(path_type=Path),
    help="Keymap file: a [keys] table of binding id -> key "
    "(default ~/.config/cassette-tui/keys.toml when present).",
)
def open_app(
    files: tuple[Path, ...],
    align: str,
    fmt: str | None,
    task: str | None,
    trial: int | None,
    theme: str | None,
    config: str | None,
    agent: str | None,
    keys_file: Path | None,
) -> None:
    """Open one cassette, or two side by side (A = failing run, B = passing run); a file of
    many runs opens on a selector of its runs; a folder of runs, on their tree (group)."""
    if len(files) == 1 and files[0].is_dir() and task is None and trial is None:
        from .group import open_tree  # a folder of runs: where they part (issue 28)

        open_tree([str(files[0])], None, config, theme=theme, keys_file=keys_file, command=None)
        return
    _check_files(files, task, trial)
    project, rules = _read_config(config)
    agent_command, agent_problem = _resolve_agent(agent, project)
    reading = _heads_of_large_pair(files, fmt, task, trial, rules)
    alone = _large_cassette_alone(files, fmt, task, trial, rules) if reading is None else None
    if reading is not None:
        cassettes, source = list(reading[0]), None
    elif alone is not None:
        cassettes, source = [alone], None
    else:
        cassettes, source = _open_inputs(files, fmt, task, trial, rules)
    keymap = _load_keymap(keys_file)
    # after the inputs and the keymap are checked (their errors come first)
    problem = terminal_problem()
    if problem is not None:
        _fail(problem)

    from ..app import CassetteApp
    from ..colours import plain_colours

    app = CassetteApp(
        cassettes[0] if cassettes else None,
        cassettes[1] if len(cassettes) > 1 else None,
        run_source=source,
        align=align,
        theme=theme,
        keymap=keymap,
        handle_signals=True,
        plain=plain_colours(),
        agent=agent_command,
        agent_problem=agent_problem,
        config=config,
        reading=reading[1] if reading is not None else None,
    )
    app.run()
    if app.bad_input is not None:  # a bad line found after the start (the terminal is back)
        _fail(app.bad_input)
    # non-zero after a crash (Textual has printed the traceback) or a SIGTERM / SIGHUP
    if app.return_code:
        sys.exit(app.return_code)


def _check_files(files: tuple[Path, ...], task: str | None, trial: int | None) -> None:
    """Exit with status 2 unless there are one or two files, and one with --task/--trial."""
    if len(files) > 2:
        _fail(f"open takes one or two files, got {len(files)}")
    if (task is not None or trial is not None) and len(files) != 1:
        _fail(
            "--task and --trial pick runs of one file; for two runs use path specs: "
            '"FILE#task=31,trial=2" "FILE#task=31,trial=3"'
        )


def _read_config(config: str | None) -> tuple[ProjectConfig, NormalizationRules]:
    """The project's config (``--config``, else found) and its normalization rules: the
    same rules as ``diff`` and ``check``, so the app shows the same statuses. Exits with
    status 2 on a bad config."""
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.keys.config import ProjectConfig

    try:
        project = ProjectConfig.load(config)
        return project, project.rules()
    except (CassetteError, OSError, ValueError) as exc:
        _fail(str(exc))


def _resolve_agent(
    agent: str | None, project: ProjectConfig
) -> tuple[AgentCommand | None, str | None]:
    """The loop's agent and, without one, why: ``--agent`` (a bad one exits with status
    2), else the config's (its absence is fine: Diff and Pin work without one, and the loop
    panel says how to configure it)."""
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.loop.agent import AgentCommandError, resolve_agent

    try:
        return resolve_agent(agent, project), None
    except AgentCommandError as exc:
        if agent is not None:
            _fail(str(exc))
        return None, str(exc)
    except (CassetteError, OSError, ValueError) as exc:
        _fail(str(exc))


def _open_inputs(
    files: tuple[Path, ...],
    fmt: str | None,
    task: str | None,
    trial: int | None,
    rules: NormalizationRules,
) -> tuple[list[Cassette], RunSource | None]:
    """The cassettes of ``files``, or the run selector's input for one file of many runs
    opened without picking one. Exits with status 2 on a file that cannot be opened."""
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.importers.sources import RunSelectionError, open_cassette

    cassettes = []
    source = None
    for path in files:
        try:
            cassettes.append(open_cassette(path, fmt=fmt, task=task, trial=trial, rules=rules))
        except RunSelectionError as exc:
            source = _run_source(path, fmt, task, trial, exc, rules) if len(files) == 1 else None
            if source is None:
                _fail(str(exc))
        except CassetteError as exc:
            _fail(str(exc))
        except (OSError, ValueError) as exc:
            _fail(f"{path}: {exc}")
    return cassettes, source


#: two cassette files of which one is this large or larger open on the rows of their first
#: lines, then are read whole in the app with progress on screen (a 1M-entry file takes
#: seconds to read: the terminal would show nothing meanwhile)
READ_IN_APP_BYTES = 16 * 1024 * 1024


def _heads_of_large_pair(
    files: tuple[Path, ...],
    fmt: str | None,
    task: str | None,
    trial: int | None,
    rules: NormalizationRules,
) -> tuple[tuple[Cassette, Cassette], tuple[Path, Path]] | None:
    """For two cassette files, one of them ``READ_IN_APP_BYTES`` or larger: their first
    lines (``load_head``: a bad first line, or a file that is not a cassette, is still an
    error before the terminal is taken) and the two paths, which the app reads whole.
    ``None`` for anything else (opened whole here, as before). Exits with status 2 on a
    bad first line."""
    from cassette_tui.core.format.cassette import load_head
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.importers.detect import sniff
    from cassette_tui.core.importers.sources import resolve_spec

    if len(files) != 2 or task is not None or trial is not None:
        return None
    paths = []
    try:
        for path in files:
            spec = resolve_spec(path, fmt, None, None)
            if spec.task is not None or spec.trial is not None:
                return None
            if (spec.fmt or sniff(spec.path)) != "cassette":
                return None
            paths.append(Path(spec.path))
        if max(path.stat().st_size for path in paths) < READ_IN_APP_BYTES:
            return None
    except (CassetteError, OSError, ValueError):
        return None  # the plain open says what is wrong
    try:
        a, b = (load_head(path, rules=rules) for path in paths)
    except CassetteError as exc:
        _fail(str(exc))
    return (a, b), (paths[0], paths[1])


def _large_cassette_alone(
    files: tuple[Path, ...],
    fmt: str | None,
    task: str | None,
    trial: int | None,
    rules: NormalizationRules,
) -> Cassette | None:
    """One cassette file of ``READ_IN_APP_BYTES`` or more, opened alone: indexed here, before
    the terminal is taken, with its lines counted on stderr's progress bar (a 1M-entry
    file takes seconds: the terminal would stay blank). ``None`` for anything else (opened
    as before). Exits with status 2 on a bad line."""
    from cassette_tui.core.format.cassette import load_job
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.format.jobs import run_job
    from cassette_tui.core.importers.detect import sniff
    from cassette_tui.core.importers.sources import resolve_spec

    if len(files) != 1 or task is not None or trial is not None:
        return None
    try:
        spec = resolve_spec(files[0], fmt, None, None)
        if spec.task is not None or spec.trial is not None:
            return None
        if (spec.fmt or sniff(spec.path)) != "cassette":
            return None
        if Path(spec.path).stat().st_size < READ_IN_APP_BYTES:
            return None
    except (CassetteError, OSError, ValueError):
        return None  # the plain open says what is wrong
    try:
        with progress_on_stderr() as sink:
            return run_job(load_job(spec.path, rules=rules, unit="lines"), sink)
    except CassetteError as exc:
        _fail(str(exc))


def _load_keymap(keys_file: Path | None) -> dict[str, str] | None:
    """The keymap of ``--keys``, else of the default file when present, else ``None``.
    Exits with status 2 on a bad keymap."""
    from ..keymap import default_keymap_path, load_keymap

    keys_path = keys_file or default_keymap_path()
    if keys_file is None and not keys_path.is_file():
        return None
    try:
        return load_keymap(keys_path)
    except ValueError as exc:
        _fail(str(exc))


def _run_source(
    path: Path,
    fmt: str | None,
    task: str | None,
    trial: int | None,
    exc: Exception,
    rules: NormalizationRules,
) -> RunSource | None:
    """The run selector's input when ``exc`` says a file of many runs needs a selector
    (none given, or a task of several trials without a trial); ``None`` when the error
    stands (an unknown task or trial, a selector on a single-run file)."""
    from cassette_tui.core.importers.sources import resolve_spec

    from ..screens.select import RunSource

    runs = getattr(exc, "runs", None) or []
    spec = resolve_spec(path, fmt, task, trial)
    if spec.trial is not None or not any(r.task is not None or r.trial is not None for r in runs):
        return None
    if spec.task is not None and not any(r.task == spec.task for r in runs):
        return None
    return RunSource(spec.path, runs, getattr(exc, "fmt", None) or spec.fmt, spec.task, rules)
