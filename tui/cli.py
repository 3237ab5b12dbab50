"""The ``cassette-tui`` command line.

``cassette-tui A [B]`` opens the app; subcommands run the same engine headless. Each
subcommand lives in its own module under ``tui/commands`` and is imported only when used,
so ``cassette-tui check`` never pays for importing Textual.

Exit status everywhere (README, "The debug loop, headless"): 0 clean, 1 findings, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click
from cassette_tui.core.constants import EXIT_BAD_INPUT

#: subcommand name -> "module:attribute" of its click command
COMMANDS: dict[str, str] = {
    "open": "cassette_tui.tui.commands.open_app:open_app",
    "check": "cassette_tui.tui.commands.check:check",
    "diff": "cassette_tui.tui.commands.diff:diff",
    "import": "cassette_tui.tui.commands.import_:import_cmd",
    "replay": "cassette_tui.tui.commands.replay:replay",
    "gate": "cassette_tui.tui.commands.gate:gate",
    "pin": "cassette_tui.tui.commands.pin:pin",
    "record": "cassette_tui.tui.commands.record:record",
    "mcp": "cassette_tui.tui.commands.mcp:mcp",
    "redact": "cassette_tui.tui.commands.redact:redact",
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

    def invoke(self, ctx: click.Context) -> Any:
        # The last line of defence: bad input found deep in a command (an entry parsed on
        # demand, say) is a one-line error and exit status 2, never a traceback.
        from cassette_tui.core.errors import CassetteFormatError

        try:
            return super().invoke(ctx)
        except CassetteFormatError as exc:
            from .commands._output import safe

            click.echo(f"cassette-tui: {safe(exc)}", err=True)
            sys.exit(EXIT_BAD_INPUT)

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
    return cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="cassette-tui")


if __name__ == "__main__":
    main()
