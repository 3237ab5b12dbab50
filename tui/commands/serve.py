"""``cassette-tui serve A [B]``: the app in a browser, through textual-serve, for a
colleague who has no terminal at hand or a review on a shared screen.

Each browser tab gets its own app process (``cassette-tui open A B`` with the same
options), drawn in the page by textual-serve's terminal. The server listens on loopback
(127.0.0.1) by default: the app can run the agent (replay, gate, and ``R``, which
re-records LIVE), so anyone who reaches the port can make it call the real tools. Another
address needs ``--allow-remote`` and prints a warning. textual-serve is an extra
(``pip install 'cassette-tui[serve]'``); without it the command says so and exits 2.

The page itself loads textual-serve's own script and styles from this server; its template
also names a web font, which a machine without network access simply does not get.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import shlex
import sys
from pathlib import Path

import click
from cassette_tui.core.format.constants import EXIT_BAD_INPUT

INSTALL_HINT = "textual-serve is not installed: pip install 'cassette-tui[serve]'"


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("serve")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on (loopback unless --allow-remote).")  # fmt: skip
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="The port to listen on.")  # fmt: skip
@click.option("--allow-remote", is_flag=True,
              help="Allow an address other than loopback: anyone who reaches it can drive "
              "the app, which can run the agent live.")  # fmt: skip
@click.option("--align", type=click.Choice(["auto", "seq", "key"]), default=None,
              help="Passed to the app.")  # fmt: skip
def serve(
    files: tuple[str, ...], host: str, port: int, allow_remote: bool, align: str | None
) -> None:
    """Serve the app on A [B] in a web browser (textual-serve), on loopback by default.

    \b
    Open the printed address; each tab runs its own app. Ctrl+C stops the server.
    Exit status: 0 stopped, 2 bad usage, a port in use, textual-serve missing, or a remote address
    without --allow-remote.
    """
    if len(files) > 2:
        raise click.UsageError("serve takes one or two cassettes")
    if not is_loopback(host) and not allow_remote:
        click.echo(
            f"cassette-tui serve: {host} is not a loopback address; anyone who reaches it could "
            "drive the app, which can run the agent live (R re-records). Pass --allow-remote "
            "to listen there anyway.",
            err=True,
        )
        sys.exit(EXIT_BAD_INPUT)
    if importlib.util.find_spec("textual_serve") is None:
        click.echo(f"cassette-tui serve: {INSTALL_HINT}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    from textual_serve.server import Server

    from .open_app import SERVED_ENV

    if not is_loopback(host):
        click.echo(
            f"warning: serving on {host}:{port}: anyone who reaches it can drive the app, "
            "which can run your agent against live tools",
            err=True,
        )
    command = [sys.executable, "-m", "cassette_tui.tui.cli", "open"]
    if align:
        command += ["--align", align]
    command += [str(Path(f).resolve()) for f in files]
    title = "cassette-tui " + " ".join(Path(f).name for f in files)
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"serving {title} at http://{shown}:{port} (Ctrl+C stops)", err=True)
    os.environ[SERVED_ENV] = "1"  # the app processes inherit it: no terminal, a browser
    try:
        Server(shlex.join(command), host=host, port=port, title=title).serve()
    except OSError as exc:  # the port in use, an address not of this machine: bad usage
        click.echo(f"cassette-tui serve: cannot listen on {shown}:{port}: {exc.strerror or exc}",
                   err=True)  # fmt: skip
        sys.exit(EXIT_BAD_INPUT)
