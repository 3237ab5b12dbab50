"""``cassette-tui mcp record|replay``: record and replay any MCP server over stdio.

An MCP host is pointed at ``cassette-tui mcp record -o RUN.jsonl -- SERVER_CMD ARGS...``
instead of ``SERVER_CMD ARGS...`` to record, and at ``cassette-tui mcp replay RUN.jsonl`` to
replay offline. The proxy and the stand-in server live in ``cassette_tui.core.mcp`` and are
imported only here, when one of the two runs (the MCP SDK is never loaded by other
commands, nor by the engine). The SDK is an extra (``pip install 'cassette-tui[mcp]'``);
without it both commands say so in one line and exit 2.

Exit status: ``record`` 0, or the server's status when it crashed mid-session, 2 when the
cassette or its sidecar exists or the server cannot be started; ``replay`` 0 when every
request was answered from the recording, 1 on a miss, 2 for an unreadable cassette.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import click
from cassette_tui.core.format.atomic import check_new_file, write_atomic
from cassette_tui.core.format.constants import (
    ENV_FIXTURES,
    ENV_PATH,
    ENV_REPORT,
    EXIT_BAD_INPUT,
    EXIT_CLEAN,
    EXIT_FINDINGS,
)
from cassette_tui.core.format.errors import CassetteFormatError

from ._options import config_option
from ._output import json_text, safe


def no_cassette(command: str, what: str) -> str:
    """Why ``mcp COMMAND`` has no cassette, and how to pass one: the MCP SDK's stdio client
    (``mcp.client.stdio``) starts a server with only ``HOME``, ``LOGNAME``, ``PATH``,
    ``SHELL``, ``TERM`` and ``USER`` of the host's environment, so a ``CASSETTE_PATH``
    exported in the host's shell never reaches this process."""
    given = "-o FILE" if command == "record" else "CASSETTE"
    return (
        f"cassette-tui mcp {command}: no cassette to {what}: pass {given} "
        f"or set {ENV_PATH}. An MCP host that starts this command over stdio (the MCP SDK's "
        "stdio client) passes it only HOME, LOGNAME, PATH, SHELL, TERM and USER of its own "
        f"environment: name the variable in the server's env=, e.g. StdioServerParameters("
        f'command="cassette-tui", args=[...], env={{"{ENV_PATH}": "runs/git.jsonl"}}) (the '
        'host\'s config: "env" of the server entry), or pass the path as an argument.'
    )


REPORT_HELP = f"Write the session report as JSON to this file (default: ${ENV_REPORT})."
#: the modules of the MCP SDK that cassette_tui.core.mcp imports
SDK_MODULES = ("mcp", "mcp_types", "anyio")
INSTALL_HINT = "the MCP SDK is not installed: pip install 'cassette-tui[mcp]'"


@click.group("mcp")
def mcp() -> None:
    """Record and replay an MCP server's tool calls through a stdio proxy.

    \b
    cassette-tui mcp record -o RUN.jsonl -- SERVER_CMD [ARGS...]
    cassette-tui mcp replay RUN.jsonl
    """


@mcp.command(
    "record",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.option(
    "-o",
    "--output",
    envvar=ENV_PATH,
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The cassette to create (never overwritten; default: $CASSETTE_PATH); {n} in the "
    "name is the first free number (runs/git-{n}.jsonl). The server facts go to RUN.mcp.json.",
)
@click.option("--report", type=click.Path(dir_okay=False), default=None, help=REPORT_HELP)
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=2.0,
    show_default=True,
    help="Seconds the server gets to exit once the host is done, before SIGTERM/SIGKILL.",
)
@click.option(
    "--url",
    default=None,
    help="Record a remote server over Streamable HTTP instead of starting COMMAND: the "
    "host connects to the loopback URL printed on stdout.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="With --url: the loopback port to listen on (0: a free one).",
)
@config_option
@click.argument("command", nargs=-1, required=False, type=click.UNPROCESSED)
def record(
    output: Path | None,
    report: str | None,
    grace: float,
    url: str | None,
    port: int,
    config: str | None,
    command: tuple[str, ...],
) -> None:
    """Start the MCP server COMMAND and record its tool calls while forwarding every
    message between the host (this process's stdin/stdout) and the server unchanged; or,
    with --url, stand on a loopback port in front of a remote server over Streamable HTTP
    until interrupted (Ctrl-C, SIGTERM)."""
    if output is None:  # an MCP host's stdio client passes few variables: say how
        click.echo(no_cassette("record", "record to"), err=True)
        sys.exit(EXIT_BAD_INPUT)
    _require_sdk("record")
    from cassette_tui.core.keys.config import ProjectConfig
    from cassette_tui.core.mcp.record import RecordingProxy

    if os.environ.get(ENV_FIXTURES):  # `record --fixture` around an MCP host: say so
        click.echo(
            f"cassette-tui mcp record: {ENV_FIXTURES} is not applied: every call goes to "
            "the server and is recorded as it answers",
            err=True,
        )
    if bool(url) == bool(command):
        click.echo("cassette-tui mcp record: give a server COMMAND or --url, not both", err=True)
        sys.exit(EXIT_BAD_INPUT)
    from cassette_tui.core.scan.redact import record_redactor
    from cassette_tui.core.scan.redact_config import load_secret_config

    try:
        project = ProjectConfig.load(config)
        rules = project.rules()
        redactor = record_redactor(load_secret_config(project))  # record = true
        check_new_file(output)  # a read-only folder: said before the server starts
        _check_report(report)
        if url:
            from cassette_tui.core.mcp.http import HttpRecordingProxy

            proxy: RecordingProxy = HttpRecordingProxy(
                url, output, port=port, rules=rules, grace=grace, redactor=redactor
            )
        else:
            proxy = RecordingProxy(
                list(command), output, rules=rules, grace=grace, redactor=redactor
            )
    except (OSError, CassetteFormatError, ValueError) as exc:
        click.echo(f"cassette-tui mcp record: {safe(exc)}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    summary = proxy.run()
    _write_report(report, summary.report(), "record")
    if summary.server_exit == 127 and summary.server_crashed and summary.entries == 0:
        sys.exit(EXIT_BAD_INPUT)
    sys.exit(summary.exit_status())


@mcp.command("replay")
@click.argument(
    "cassette", envvar=ENV_PATH, required=False, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option("--report", type=click.Path(dir_okay=False), default=None, help=REPORT_HELP)
@click.option(
    "--repeat",
    type=click.Choice(["auto", "error", "last"]),
    default="auto",
    show_default=True,
    help="Past the last recording of a call: a miss (error) or the last answer again "
    "(last); auto: last for the tools recorded as readOnlyHint or idempotentHint, error "
    "for the others.",
)
@click.option(
    "--facts",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The server-facts file (default: CASSETTE's name with .mcp.json).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Recorded calls left unused fail the replay (exit 1; they are named either way).",
)
@click.option(
    "--fixture",
    "fixtures",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A pinned fixture (cassette-tui pin) that answers its key first (repeatable; "
    "default: $CASSETTE_FIXTURES, paths joined by the path separator).",
)
@click.option(
    "--http",
    "http",
    is_flag=True,
    help="Serve Streamable HTTP on a loopback port (its URL printed on stdout) instead of "
    "stdin/stdout, until interrupted (Ctrl-C, SIGTERM).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="With --http: the loopback port (0: a free one).",
)
@config_option
def replay(
    cassette: Path | None,
    report: str | None,
    repeat: str,
    facts: Path | None,
    strict: bool,
    fixtures: tuple[Path, ...],
    http: bool,
    port: int,
    config: str | None,
) -> None:
    """Stand in for the recorded MCP server on stdin/stdout (or --http), offline:
    initialize and the list calls as recorded, each tools/call from CASSETTE (default:
    $CASSETTE_PATH); a miss is a JSON-RPC error. At the end, recorded calls left unused
    are named on stderr."""
    if cassette is None:  # an MCP host's stdio client passes few variables: say how
        click.echo(no_cassette("replay", "replay"), err=True)
        sys.exit(EXIT_BAD_INPUT)
    _require_sdk("replay")
    from cassette_tui.core.keys.config import load_rules
    from cassette_tui.core.mcp.replay import ReplayServer

    try:
        _check_report(report)
        pinned: list[str | Path] = list(fixtures) or [
            p for p in os.environ.get(ENV_FIXTURES, "").split(os.pathsep) if p
        ]
        server = ReplayServer(
            cassette, rules=load_rules(config), repeat=repeat, facts=facts, fixtures=pinned
        )
    except (CassetteFormatError, ValueError, OSError) as exc:
        click.echo(f"cassette-tui mcp replay: {safe(exc)}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    try:
        if http:
            from cassette_tui.core.mcp.http import HttpReplay

            try:
                HttpReplay(server, port=port).run()
            except OSError as exc:
                click.echo(f"cassette-tui mcp replay: {safe(exc)}", err=True)
                sys.exit(EXIT_BAD_INPUT)
        else:
            server.run_stdio()
    except KeyboardInterrupt:
        pass
    finally:
        _write_report(report, server.report(), "replay")
    unused = server.replayer.replay_report().unused_seqs
    if unused:  # named in every replay result; the host's stdout stays the protocol's
        shown = ", ".join(map(str, unused[:20])) + (" ..." if len(unused) > 20 else "")
        why = " (--strict: the replay fails)" if strict else ""
        click.echo(f"cassette-tui mcp replay: unused entries: seq {shown}{why}", err=True)
    sys.exit(EXIT_FINDINGS if server.missed or (strict and unused) else EXIT_CLEAN)


def _require_sdk(command: str) -> None:
    """Exit 2 with one line saying how to install the MCP SDK when it is missing (the plain
    install leaves it out); nothing is imported here, only looked up."""
    for name in SDK_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # blocked (a None in sys.modules) or broken
            found = False
        if not found:
            click.echo(f"cassette-tui mcp {command}: {INSTALL_HINT}", err=True)
            sys.exit(EXIT_BAD_INPUT)


def _check_report(report: str | None) -> None:
    """The report's folder must exist (checked before the session; never created)."""
    from cassette_tui.core.replay.report_sink import check_report_folder

    target = report or os.environ.get(ENV_REPORT) or None
    if target is not None:
        check_report_folder(target)


def _write_report(report: str | None, doc: dict[str, object], mode: str) -> None:
    """Write the session report to ``--report`` / ``CASSETTE_REPORT``, if given. A report
    the folder refuses (made read-only, or the path taken by a folder, while the session
    ran) is said, naming the file, and the command exits ``EXIT_BAD_INPUT``; the
    session's cassette and sidecar are kept as they are."""
    target = report or os.environ.get(ENV_REPORT) or None
    if target is None:
        return
    data = json_text(doc) + "\n"  # strict: a NaN argument as {"$numberDouble": "NaN"}
    try:
        write_atomic(target, [data.encode("utf-8")], overwrite=True, make_parents=False)
    except OSError as exc:
        why = f"{exc.strerror} (errno {exc.errno})" if exc.strerror else safe(exc)
        click.echo(
            f"cassette-tui mcp {mode}: cannot write the report {safe(target)}: {why}",
            err=True,
        )
        sys.exit(EXIT_BAD_INPUT)
