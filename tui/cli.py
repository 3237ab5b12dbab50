"""The ``cassette-tui`` command line.

``cassette-tui A [B]`` opens the app; subcommands run the same engine headless. Each
subcommand lives in its own module under ``tui/commands`` and is imported only when used,
so ``cassette-tui check`` never pays for importing Textual.

Exit status everywhere (README, "The debug loop, headless"): 0 clean, 1 findings, 2 bad
usage or unreadable input; 141 (128 + SIGPIPE) when the reader of stdout went away (``| head
-1``), quietly.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import Any, NoReturn

import click
from cassette_tui.core.format.constants import EXIT_BAD_INPUT, EXIT_CANCELLED

#: the status of a command whose reader went away (``| head -1``): 128 + SIGPIPE, what a
#: shell reports for a program the signal ended (``yes | head -1``), never 1 ("findings")
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def _exit_broken_pipe() -> NoReturn:
    """End quietly after stdout's reader closed the pipe: no traceback, no message (the
    reader asked for no more), status ``EXIT_BROKEN_PIPE``.

    Why not ``signal(SIGPIPE, SIG_DFL)``, the usual C-tool way: the signal would kill the
    process at once, skipping the ``finally`` blocks that end an agent's process group
    (``replay``, ``gate``, ``record``) or remove a temporary file. Python ignores SIGPIPE
    and raises ``BrokenPipeError`` instead; click turns that into status 1, which means
    "findings" here, so it is caught before click sees it. stdout is pointed at
    ``/dev/null`` so the interpreter's last flush of the buffered rest cannot fail again
    (``Exception ignored ... BrokenPipeError``, status 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real stdout: nothing left to flush
        pass
    sys.exit(EXIT_BROKEN_PIPE)


#: subcommand name -> "module:attribute" of its click command
COMMANDS: dict[str, str] = {
    "open": "cassette_tui.tui.commands.open_app:open_app",
    "check": "cassette_tui.tui.commands.check:check",
    "diff": "cassette_tui.tui.commands.diff:diff",
    "import": "cassette_tui.tui.commands.import_:import_cmd",
    "replay": "cassette_tui.tui.commands.replay:replay",
    "gate": "cassette_tui.tui.commands.gate:gate",
    "bisect": "cassette_tui.tui.commands.bisect:bisect",
    "minimise": "cassette_tui.tui.commands.minimise:minimise",
    "group": "cassette_tui.tui.commands.group:group",
    "verify": "cassette_tui.tui.commands.verify:verify",
    "pin": "cassette_tui.tui.commands.pin:pin",
    "record": "cassette_tui.tui.commands.record:record",
    "mcp": "cassette_tui.tui.commands.mcp:mcp",
    "redact": "cassette_tui.tui.commands.redact:redact",
    "report": "cassette_tui.tui.commands.report:report",
    "serve": "cassette_tui.tui.commands.serve:serve",
}


class CassetteGroup(click.Group):
    """A group whose subcommands load lazily, and where ``cassette-tui FILE...`` (no
    subcommand) means ``cassette-tui open FILE...``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None  # that subcommand is not built yet
            raise
        command: click.Command = getattr(module, attr)
        return command

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:  # `cassette-tui --help | head -1` prints the help here
            return super().make_context(*args, **kwargs)
        except BrokenPipeError:
            _exit_broken_pipe()

    def invoke(self, ctx: click.Context) -> Any:
        # The last line of defence: bad input found deep in a command (an entry parsed on
        # demand, say) is a one-line error and exit status 2, never a traceback.
        from cassette_tui.core.format.errors import CassetteFormatError

        try:
            return super().invoke(ctx)
        except CassetteFormatError as exc:
            from .commands._output import safe

            click.echo(f"cassette-tui: {safe(exc)}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except BrokenPipeError:  # every command: the reader of stdout went away
            _exit_broken_pipe()
        except KeyboardInterrupt:
            # Ctrl-C in any command exits 130 (128 + SIGINT), as a shell reports it, not
            # click's 1 ("Aborted!"), which CI would read as "findings"
            click.echo("cassette-tui: cancelled", err=True)
            sys.exit(EXIT_CANCELLED)

    #: the group's own options; anything else before the files belongs to ``open``
    GROUP_OPTIONS = frozenset({"-h", "--help", "--version"})

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # `cassette-tui A B` and `cassette-tui --align key A B` both mean `open ...`
        if args and args[0] not in COMMANDS and args[0] not in self.GROUP_OPTIONS:
            args = ["open", *args]
        return super().parse_args(ctx, args)


@click.group(cls=CassetteGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cassette-tui")
def cli() -> None:
    """A terminal debugger for flaky AI-agent runs.

    \b
    cassette-tui FAIL.jsonl FIX.jsonl   open two cassettes side by side
    cassette-tui RUN.jsonl              open one cassette
    cassette-tui SUBCOMMAND --help      headless commands (same engine)
    """


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point."""
    from .commands._output import tolerant_streams

    tolerant_streams()  # an ASCII locale must not crash a command on a mark or a name
    try:
        return cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="cassette-tui")
    finally:
        # what is still buffered goes out now, where a closed pipe can be handled
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _exit_broken_pipe()
        except (OSError, ValueError):  # a closed stdout: nothing to say it on
            pass


if __name__ == "__main__":
    main()
