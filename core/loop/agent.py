"""The agent command: a template the debugger runs as a subprocess
(docs/format.md, "Environment contract").

The template comes from ``--agent "python agent.py --task retry-budget"`` or from
``agent = "..."`` under ``[tool.cassette]`` in ``pyproject.toml`` (top level in
``cassette.toml``). It is split once with :func:`shlex.split` (POSIX rules) into an argument
list and always run as that list, never through a shell. Placeholders are substituted
inside each argument after the split, so a value holding spaces, quotes or ``;`` stays one
argument and cannot inject anything:

``{cassette}``  the cassette's absolute path (also in ``CASSETTE_PATH``)
``{report}``    where the replay report goes (also in ``CASSETTE_REPORT``)
``{run}``       the run's 1-based number (a gate's run index)

The agent runs with the ``CASSETTE_*`` environment of ``constants.py`` and passes when it
exits with status 0.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..format.errors import CassetteError
from ..keys.config import ProjectConfig


class AgentCommandError(CassetteError, ValueError):
    """No usable agent command: none given, an empty one, or a template shlex cannot split
    (an unclosed quote). The message says where the template came from."""


class AgentNotStarted(CassetteError):
    """The agent command could not be started at all (not found, not executable)."""


@dataclass(frozen=True)
class AgentCommand:
    """A parsed agent command.

    Attributes:
        template: the command as written.
        argv: its arguments after ``shlex.split`` (placeholders not yet substituted).
        source: where it came from: ``"--agent"`` or the config file's path.
        cwd: the folder to run it in: the config file's folder for a command from the
            config (its relative paths are relative to the project), else ``None`` (the
            current folder).
    """

    template: str
    argv: tuple[str, ...]
    source: str = "--agent"
    cwd: Path | None = None

    @classmethod
    def parse(cls, template: str, source: str = "--agent", cwd: Path | None = None) -> AgentCommand:
        """Split ``template`` with shlex.

        Raises:
            AgentCommandError: the template is empty or cannot be split.
        """
        try:
            argv = tuple(shlex.split(template))
        except ValueError as exc:
            raise AgentCommandError(f"{source}: agent command {template!r}: {exc}") from None
        if not argv:
            raise AgentCommandError(f"{source}: the agent command is empty")
        return cls(template, argv, source, cwd)

    def render(self, values: Mapping[str, str]) -> list[str]:
        """The argument list with ``{name}`` placeholders replaced by ``values[name]``
        (``cassette``, ``report``, ``run``); each value stays inside its argument."""
        out = []
        for arg in self.argv:
            for name, value in values.items():
                arg = arg.replace("{" + name + "}", value)
            out.append(arg)
        return out


def resolve_agent(
    agent: str | None, config: ProjectConfig | str | Path | None = None
) -> AgentCommand:
    """The agent command: ``agent`` when given (``--agent``), else ``agent`` from the
    config (``[tool.cassette]`` in ``pyproject.toml``, the top level of ``cassette.toml``):
    ``config``, a read ``ProjectConfig``, else the file ``ProjectConfig.load(config)``
    finds.

    Raises:
        AgentCommandError: neither gives a command, or the config's value is not a string.
        NormalizationConfigError: the config file is missing, unreadable or bad TOML.
    """
    if agent is not None:
        return AgentCommand.parse(agent)
    project = config if isinstance(config, ProjectConfig) else ProjectConfig.load(config)
    path, value = project.path, project.agent
    if path is not None and value is not None:
        if not isinstance(value, str):
            raise AgentCommandError(
                f"{path}: field 'agent': expected a string (a command line), "
                f"got {type(value).__name__}"
            )
        return AgentCommand.parse(value, source=f"{path}: field 'agent'", cwd=path.parent)
    raise AgentCommandError(
        'no agent command: pass --agent CMD or set agent = "..." under [tool.cassette] '
        "in pyproject.toml (or at the top of cassette.toml)"
    )
