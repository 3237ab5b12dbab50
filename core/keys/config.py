"""The project's configuration: ``[tool.cassette]`` in ``pyproject.toml``, or ``cassette.toml``.

One reader for every setting (``ProjectConfig``): the normalization rules (``normalize``),
the redaction settings (``redact``, read by ``scan.secrets.load_secret_config``), the
agent command template (``agent``, read by ``loop.agent.resolve_agent``) and the tools
``verify`` may call live (``verify.allow``, read by ``verify_allow``). Which file
applies, first match wins: the one named (``--config``), the ``CASSETTE_CONFIG``
environment variable, else the nearest ``cassette.toml`` or ``pyproject.toml`` with a
``[tool.cassette]`` table in the start folder or its parents (``ProjectConfig.find``).

A file is read and parsed once per process (``ProjectConfig.read`` keeps what it read by
path, and reads again only when the file's size, times or inode changed, or when it had
changed in the seconds before it was read), so a replay or a record that asks for the
rules and then the redaction settings reads it once.

In ``pyproject.toml`` the sections are under ``[tool.cassette]``; in any other file at the
top level (or under ``[tool.cassette]`` if that is where they are)::

    [tool.cassette]
    agent = "python agent.py --cassette {cassette}"

    [tool.cassette.normalize]
    presets = ["uuid"]

    [tool.cassette.redact]
    record = true

    [tool.cassette.verify]
    allow = ["search_docs", "read_file"]
"""

from __future__ import annotations

import os
import re
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..format.constants import ENV_CONFIG
from .normalize import NormalizationConfigError, NormalizationRules

#: path (as given, and absolute) -> (the file's stat signature when read, its TOML document)
_READ: dict[tuple[Path, Path], tuple[tuple[int, ...], dict[str, Any]]] = {}
#: a file changed this close before it was read is not kept: a file system stamps times
#: coarsely (a clock tick, up to 2 s), so a second change as quick would not show in them
_RACY_NS = 3_000_000_000


@dataclass(frozen=True)
class ProjectConfig:
    """The ``[tool.cassette]`` settings of one config file, each section as written (a
    section's reader says what is wrong with it, when it is asked: a bad ``redact`` table
    does not stop a command that only needs the rules).

    Attributes:
        path: the config file; ``None`` when the project has none (every section absent).
        normalize: the ``normalize`` table (``rules()`` reads it), ``None`` when absent.
        redact: the ``redact`` section: ``true``/``false`` or a table
            (``scan.secrets.load_secret_config`` reads it), ``None`` when absent.
        agent: the ``agent`` command template, a string (``loop.agent.resolve_agent``
            reads it), ``None`` when absent.
        verify: the ``verify`` table (``verify_allow()`` reads it), ``None`` when absent.
    """

    path: Path | None = None
    normalize: Any = None
    redact: Any = None
    agent: Any = None
    verify: Any = None

    @classmethod
    def load(
        cls, config: str | Path | None = None, root: str | Path | None = None
    ) -> ProjectConfig:
        """The project's config: the file ``config`` names, else the one the
        ``CASSETTE_CONFIG`` environment variable names, else ``find(root)``.

        Raises:
            NormalizationConfigError: a named config file is missing or unreadable, or
                the TOML is invalid (``line`` set).
        """
        explicit = config if config is not None else os.environ.get(ENV_CONFIG) or None
        if explicit is not None:
            return cls.read(explicit)
        return cls.find(root)

    @classmethod
    def find(cls, start: str | Path | None = None) -> ProjectConfig:
        """The config that applies in ``start`` (default: the current folder) or its
        nearest parent: ``cassette.toml`` first, then a ``pyproject.toml`` that has a
        ``[tool.cassette]`` table. ``ProjectConfig()`` (no file) when there is none.

        Raises:
            NormalizationConfigError: the file found cannot be read or parsed.
        """
        path = _find_path(start)
        return cls() if path is None else cls.read(path)

    @classmethod
    def read(cls, path: str | Path) -> ProjectConfig:
        """The config in the file ``path`` (read once per process while it is unchanged).

        Raises:
            NormalizationConfigError: the file is missing or unreadable, or the TOML is
                invalid (``line`` set).
        """
        path = Path(path)
        if not path.is_file():
            raise NormalizationConfigError(path, None, None, "config file not found")
        data = _document(path)
        return cls(
            path,
            normalize=_section(path, data, "normalize"),
            redact=_section(path, data, "redact"),
            agent=_section(path, data, "agent"),
            verify=_section(path, data, "verify"),
        )

    def rules(self, root: str | Path | None = None) -> NormalizationRules:
        """The normalization rules of the ``normalize`` section: the empty rules (strict)
        when there is no config file or no such section. ``root`` (default: the config
        file's folder) is the project root of the ``path`` preset.

        Raises:
            NormalizationConfigError: the section is not a table, or a rule is bad
                (``field`` set).
        """
        if self.path is None:
            return NormalizationRules()
        if self.normalize is None:
            return NormalizationRules(source=str(self.path))
        if not isinstance(self.normalize, Mapping):
            raise NormalizationConfigError(self.path, None, "normalize", "expected a table")
        return NormalizationRules.from_mapping(
            self.normalize, root=root if root is not None else self.path.parent, source=self.path
        )

    def verify_allow(self) -> list[str]:
        """The tools ``cassette-tui verify`` may re-issue live besides those the MCP
        server annotates ``readOnlyHint``: ``allow`` of the ``verify`` table, in order
        (``[]`` when absent). A tool listed here is one the user vouches is safe to call
        again (no write, no payment, no message sent).

        Raises:
            NormalizationConfigError: the section is not a table, or ``allow`` is not a
                list of strings (``field`` set: ``verify.allow``).
        """
        if self.path is None or self.verify is None:
            return []
        if not isinstance(self.verify, Mapping):
            raise NormalizationConfigError(self.path, None, "verify", "expected a table")
        allow = self.verify.get("allow", [])
        if not isinstance(allow, list) or not all(isinstance(t, str) for t in allow):
            raise NormalizationConfigError(
                self.path, None, "verify.allow", "expected a list of tool names (strings)"
            )
        return list(allow)


def load_rules(
    config: str | Path | None = None, root: str | Path | None = None
) -> NormalizationRules:
    """Read normalization rules from a config file.

    Where they come from, first match wins: ``config``; the ``CASSETTE_CONFIG`` environment
    variable; the nearest config file in ``root`` or its parents (``ProjectConfig.find``).
    In ``pyproject.toml`` the table is ``[tool.cassette.normalize]``; in any other file the
    top-level ``[normalize]`` table (or ``[tool.cassette.normalize]`` if that is what it
    has). No config file, or a config without the table, gives the empty rules (strict).
    ``root`` (default: the config file's folder, else the current one) is the project root
    of the ``path`` preset.

    Raises:
        NormalizationConfigError: an explicitly named config file is missing or unreadable,
            the TOML is invalid (``line`` set), or a rule is bad (``field`` set).
    """
    return ProjectConfig.load(config, root).rules(root)


def _find_path(start: str | Path | None) -> Path | None:
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "cassette.toml"
        if candidate.is_file():
            return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = _document(pyproject)
            except NormalizationConfigError:
                return pyproject  # reading it reports the problem
            if "cassette" in data.get("tool", {}):
                return pyproject
    return None


def _section(path: Path, data: dict[str, Any], key: str) -> Any:
    """The value of ``key`` in the project's table: ``[tool.cassette]`` in
    ``pyproject.toml``; in any other file the top level (or ``[tool.cassette]`` if that is
    where it is). ``None`` when absent."""
    tool_value = data.get("tool", {}).get("cassette", {}).get(key)
    return tool_value if path.name == "pyproject.toml" else data.get(key, tool_value)


def _document(path: Path) -> dict[str, Any]:
    """The TOML document in ``path``, parsed once while the file is unchanged.

    Raises:
        NormalizationConfigError: the file cannot be read or is not valid TOML.
    """
    key = (path, path.absolute())
    signature = _signature(path)
    cached = _READ.get(key)
    if cached is not None and signature is not None and cached[0] == signature:
        return cached[1]
    read_at = time.time_ns()
    data = _parse(path)
    if signature is not None and signature[0] < read_at - _RACY_NS:
        _READ[key] = (signature, data)
    return data


def _signature(path: Path) -> tuple[int, ...] | None:
    """``(mtime_ns, size, ctime_ns, inode, device)`` of ``path``; ``None`` when it cannot
    be told (the file is then read every time)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino, st.st_dev)


def _parse(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise NormalizationConfigError(path, None, None, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise NormalizationConfigError(path, None, None, f"not UTF-8 at byte {exc.start}") from None
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _toml_line(str(exc))
        raise NormalizationConfigError(path, line, None, f"not valid TOML: {exc}") from None


def _toml_line(message: str) -> int | None:
    m = re.search(r"line (\d+)", message)
    return int(m.group(1)) if m else None
