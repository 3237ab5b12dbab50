"""``cassette-tui verify CASSETTE --mcp "CMD ARGS" | --url URL | --dispatcher MOD:FUNC``:
is the recording stale? The recorded calls marked safe are re-issued to the live tools, with no
agent and no model, and each live answer is compared with the recorded one under the
project's rules (``core/why/verify.py``): fresh, stale (the paths that differ), error live,
or nondeterministic (``--repeat N`` answers that differ among themselves).

Safe: a tool the live MCP server annotates ``readOnlyHint: true``, or one named by
``--allow TOOL`` or by ``allow`` under ``[tool.cassette.verify]``; every other entry is
listed as not re-issued. The live answers are written as a cassette (``-o``, default
``CASSETTE.live.jsonl`` beside it, never overwritten without ``--force``), and the next
command to run is printed: ``cassette-tui diff CASSETTE OUT``.

Exit status: 0 every re-issued entry fresh, 1 stale, live errors or nondeterministic
answers, 2 bad usage, unreadable input, nothing safe to re-issue, or a server that exited
(the check is incomplete); 130 cancelled. Does not import Textual; the MCP SDK only with
``--mcp`` or ``--url``.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from cassette_tui.core.format.constants import ENV_MODE, EXIT_CANCELLED

from ._options import config_option
from ._output import echo_json, fail

if TYPE_CHECKING:
    from cassette_tui.core.format.cassette import Cassette
    from cassette_tui.core.why._live import LiveTools
    from cassette_tui.core.why.verify import VerifyResult

#: calls past which a progress bar shows on a terminal's stderr
PROGRESS_FROM = 20


@click.command("verify")
@click.argument("cassette")
@click.option("--mcp", "mcp_command", default=None, metavar='"CMD ARGS"',
              help="The live MCP server to re-issue the calls to, over stdio (one string, "
              "split as a shell would).")  # fmt: skip
@click.option("--url", default=None, metavar="URL",
              help="The live MCP server over Streamable HTTP (http://host/mcp).")  # fmt: skip
@click.option("--dispatcher", default=None, metavar="MODULE:FUNCTION",
              help="The live Python dispatcher, dispatch(tool, args) -> response (the one "
              "wrap_dispatcher wraps), run with CASSETTE_MODE=live.")  # fmt: skip
@click.option("--path", "paths", multiple=True, type=click.Path(file_okay=False),
              help="A folder to import the dispatcher's module from (repeatable).")  # fmt: skip
@click.option("--allow", multiple=True, metavar="TOOL",
              help="A tool safe to call again live (repeatable); also [verify] allow in the "
              "config. MCP tools annotated readOnlyHint are safe already.")  # fmt: skip
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Live calls per entry: answers that differ among themselves are "
              "nondeterministic, not stale.")  # fmt: skip
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False), default=None,
              help="The live cassette to write (default: CASSETTE.live.jsonl).")  # fmt: skip
@click.option("--force", is_flag=True, help="Replace the live cassette if it exists.")
@click.option("--no-write", is_flag=True, help="Compare only; write no live cassette.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0,
              show_default=True, help="Seconds an MCP server may take per request.")  # fmt: skip
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def verify(
    cassette: str,
    mcp_command: str | None,
    url: str | None,
    dispatcher: str | None,
    paths: tuple[str, ...],
    allow: tuple[str, ...],
    repeat: int,
    out: str | None,
    force: bool,
    no_write: bool,
    timeout: float,
    config: str | None,
    as_json: bool,
) -> None:
    """Re-issue CASSETTE's safe calls to the live tools and say which recorded answers
    are stale.

    \b
    Exit status: 0 all fresh, 1 stale, live errors or nondeterministic answers,
    2 bad usage, unreadable input, nothing safe to re-issue or a server that exited,
    130 cancelled.
    """
    from cassette_tui.core.format.atomic import TargetExists, check_new_file, file_kind
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.importers.sources import open_cassette
    from cassette_tui.core.keys.config import ProjectConfig
    from cassette_tui.core.why.verify import default_out, verify_job, write_live

    from ._loop import run_cancellable

    if sum(x is not None for x in (mcp_command, url, dispatcher)) != 1:
        raise click.UsageError("give the live tools: --mcp \"CMD ARGS\", --url URL or "
                               "--dispatcher MODULE:FUNCTION (one of them)")  # fmt: skip
    if dispatcher is None and not _sdk_installed():  # before anything is read or started
        from .mcp import INSTALL_HINT

        fail("verify", f"{'--mcp' if mcp_command is not None else '--url'}: {INSTALL_HINT}")
    try:
        project = ProjectConfig.load(config)
        rules = project.rules()
        config_allow = project.verify_allow()
        recording = open_cassette(cassette, rules=rules)
    except (CassetteError, OSError, ValueError) as exc:
        fail("verify", exc)
    target = Path(out) if out else default_out(cassette)
    if not no_write:
        try:
            if file_kind(target) is not None and not force:
                raise TargetExists(target)
            check_new_file(target)
        except (CassetteError, OSError) as exc:
            fail("verify", exc, file=target)
    live = _open_live(cassette, recording, mcp_command, url, dispatcher, list(paths), timeout)
    try:
        # a bar only for a long check: a short one would leave its traces on the terminal
        result: VerifyResult = run_cancellable(
            lambda token: verify_job(
                recording, live, spec=cassette, repeat=repeat, allow=list(allow),
                config_allow=config_allow, recorded_read_only=_recorded_read_only(cassette),
                cancel=token,
            ),
            progress=None if len(recording) * repeat > PROGRESS_FROM else False,
        )  # fmt: skip
        if not no_write:
            write_live(result, target, rules, overwrite=force, live=live)
    except (CassetteError, OSError) as exc:
        fail("verify", exc, file=target)
    finally:
        close = getattr(live, "close", None)
        if close is not None:
            close()
    if as_json:
        echo_json(_masked_json(result.to_json()))
    else:
        for line in verify_lines(result):
            click.echo(line)
    sys.exit(EXIT_CANCELLED if result.cancelled else result.exit_status)


def _open_live(
    cassette: str, recording: Cassette, mcp_command: str | None, url: str | None,
    dispatcher: str | None, paths: list[str], timeout: float,
) -> LiveTools:  # fmt: skip
    """The live tools the options name, started; ``fail`` (exit 2) when they cannot be."""
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.why._live import (
        DispatcherTools,
        McpTools,
        handshake_of_responses,
        load_dispatcher,
        recorded_handshake,
    )

    if dispatcher is not None:
        # a dispatcher wrapped with wrap_dispatcher follows CASSETTE_MODE: live, never replay
        os.environ[ENV_MODE] = "live"
        try:
            return DispatcherTools(dispatcher, load_dispatcher(dispatcher, paths))
        except CassetteError as exc:
            fail("verify", exc)
    command: list[str] = []
    if mcp_command is not None:
        try:
            command = shlex.split(mcp_command)
        except ValueError as exc:
            fail("verify", f"--mcp {mcp_command!r}: {exc}")
        if not command:
            fail("verify", "--mcp: no server command given")
    elif not str(url).startswith(("http://", "https://")):
        fail("verify", f"--url {url!r}: expected an http:// or https:// URL")
    facts = _recorded_facts(cassette)
    if facts is not None:
        handshake, version = recorded_handshake(facts)
    else:  # no sidecar: the recorded results show the protocol they were answered in
        handshake, version = handshake_of_responses(
            recording.entry_view(i).response for i in range(min(len(recording), 50))
        )
    try:
        return McpTools.open(
            command, timeout=timeout, protocol_version=version, handshake=handshake, url=url
        )
    except CassetteError as exc:
        fail("verify", exc)


def _sdk_installed() -> bool:
    """Whether the MCP SDK ``--mcp`` and ``--url`` need can be imported (looked up, not
    imported; the plain install leaves it out: the ``mcp`` extra)."""
    from .mcp import SDK_MODULES

    for name in SDK_MODULES:
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):  # blocked (a None in sys.modules) or broken
            return False
    return True


def _recorded_facts(cassette: str) -> Any:
    """The recording's server-facts sidecar (``RUN.mcp.json``), or ``None`` when it has
    none (or it cannot be read: verify needs it only to say where annotations changed)."""
    from cassette_tui.core.format.errors import CassetteError
    from cassette_tui.core.mcp._facts import ServerFacts, sidecar_path

    path = sidecar_path(cassette.partition("#")[0])
    if not path.is_file():
        return None
    try:
        return ServerFacts.read(path)
    except CassetteError:
        return None


def _recorded_read_only(cassette: str) -> dict[str, bool] | None:
    from cassette_tui.core.why._live import read_only_tools

    facts = _recorded_facts(cassette)
    if facts is None:
        return None
    tools: list[Any] = []
    for exchange in facts.exchanges:
        if exchange.method == "tools/list" and isinstance(exchange.result, dict):
            tools.extend(exchange.result.get("tools") or [])
    return read_only_tools(tools) if tools else None


def _masked_json(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with every secret in a drift value, a message or a path masked, as
    ``diff --json`` masks them (``text/masked.py``)."""
    from cassette_tui.core.scan.masking import mask_text

    from ..text.masked import masked_row

    entries = []
    for entry in doc["entries"]:
        shown = masked_row(entry)
        for key in ("why", "live_error", "recorded_error"):
            if isinstance(shown.get(key), str):
                shown = {**shown, key: mask_text(shown[key])}
        entries.append({**shown, "paths": [mask_text(p) for p in entry["paths"]]})
    stale = [{**s, "paths": [mask_text(p) for p in s["paths"]]} for s in doc["stale"]]
    problem = doc["problem"]
    return {**doc, "entries": entries, "stale": stale,
            "problem": mask_text(problem) if isinstance(problem, str) else problem}  # fmt: skip


def verify_lines(result: VerifyResult) -> list[str]:
    """The text report: one line per entry, the stale entries named with their paths, the
    live cassette and the next command."""
    from cassette_tui.core.scan.masking import mask_text
    from cassette_tui.core.why.verify import Status

    from ..text.plural import plural
    from ..text.safe import safe

    def shown(text: str) -> str:
        return safe(mask_text(text))

    reissued = result.reissued
    skipped = result.of(Status.NOT_REISSUED)
    calls = f", {result.repeat} calls each" if result.repeat > 1 else ""
    lines = [
        f"verify  {safe(result.cassette)}  against the live {result.live_kind} "
        f"{safe(result.live_target)}",
        f"{plural(len(result.entries), 'entry')}: {len(reissued)} re-issued{calls}, "
        f"{len(skipped)} not re-issued",
    ]
    for note in result.annotations:
        lines.append(
            f"  annotations: {shown(note['tool'])} readOnlyHint is {_hint(note['live'])} on the "
            f"live server, {_hint(note['recorded'])} in the recording (the live one decides)"
        )
    width = max((len(str(c.seq)) for c in result.entries), default=1)
    for c in result.entries:
        word = {Status.ERROR: "error live", Status.NOT_REISSUED: "not re-issued"}.get(
            c.status, c.status.value
        )
        detail = c.why
        if c.status is Status.NOT_REISSUED:
            detail = detail.removeprefix("not re-issued ").strip("()")
        elif c.status is Status.NONDETERMINISTIC:
            detail = f"{c.distinct} different answers in {len(c.answers)} calls"
        elif c.status is Status.STALE:
            detail = (
                f"{plural(len(c.paths), 'path')} differ"
                if len(c.paths) != 1
                else ("1 path differs")
            )
        tail = f"  ({shown(detail)})" if detail else ""
        lines.append(f"  seq {c.seq:>{width}}  {shown(c.tool)}  {word}{tail}")
    stale = result.of(Status.STALE)
    if stale:
        lines.append(
            f"stale: {plural(len(stale), 'entry')} (the recorded response is out of date: "
            "re-record, then diff)"
        )
        for c in stale:
            was = f" (recorded: {c.recorded_error})" if c.recorded_error else ""
            lines.append(f"  seq {c.seq} {shown(c.tool)}: {shown(', '.join(c.paths) + was)}")
    varying = result.of(Status.NONDETERMINISTIC)
    if varying:
        seqs = ", ".join(str(c.seq) for c in varying)
        lines.append(
            f"nondeterministic: seq {seqs}: the live tool answers the same args differently; "
            "re-recording rolls the dice again (not stale)"
        )
    lines.append(_verdict_line(result))
    if result.problem:
        lines.append(f"incomplete: {shown(result.problem)}")
    if result.out is not None:
        lines.append(f"live answers  {safe(str(result.out))}")
        lines.append(
            f"next: cassette-tui diff {shlex.quote(result.cassette)} {shlex.quote(str(result.out))}"
        )
    return lines


def _hint(value: bool | None) -> str:
    return "absent" if value is None else str(value).lower()


def _verdict_line(result: VerifyResult) -> str:
    from cassette_tui.core.why.verify import Status

    verdict = result.verdict
    if not result.entries:
        return "nothing to verify: the cassette has no calls"
    if verdict == "nothing_safe":
        how = "readOnlyHint on the server, " if result.live_kind == "mcp" else ""
        return (
            "nothing re-issued: no entry is marked safe to call live (mark tools with "
            f"{how}--allow TOOL or [verify] allow in the config); nothing was verified"
        )
    counts = ", ".join(
        f"{len(result.of(s))} {s.value.replace('_', ' ')}"
        for s in (Status.FRESH, Status.STALE, Status.ERROR, Status.NONDETERMINISTIC)
        if result.of(s)
    ).replace("error", "error live")
    words = {
        "fresh": "every re-issued entry is fresh",
        "stale": "stale recording",
        "live_error": "the live tools fail where the recording did not",
        "nondeterministic": "nondeterministic tools",
        "incomplete": "incomplete",
    }
    return f"verdict: {words[verdict]} ({counts})"
