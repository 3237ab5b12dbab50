"""Which files a marked test's cassettes are: its default name and where names are found.

The default name is ``<module>/<test>.jsonl`` under ``cassette_dir``, where ``<test>`` is
the test's name with its parametrize id (``test_temp[Lisbon]``) and, for a method, its
class (``TestRefund.test_full[Lisbon]``), as pytest-recording names its cassettes: each
parameter records and replays its own file. The gate's own parameter (``gate3``) is left
out, so every run of a gate replays the one cassette. Characters outside
``[A-Za-z0-9._,=+@[]-]`` become ``-`` (``/`` in an id never makes a folder), and a name
longer than ``MAX_NAME`` keeps its start and a hash of the whole.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

#: the longest default name kept whole (file systems take 255 bytes)
MAX_NAME = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._,=+@\[\]-]")


def sanitize(name: str) -> str:
    """``name`` made one safe file name (see the module doc)."""
    safe = _UNSAFE.sub("-", name)
    if safe.startswith("."):
        safe = "-" + safe[1:]  # never a hidden file, never ".."
    if len(safe) > MAX_NAME:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        safe = f"{safe[: MAX_NAME - 13]}-{digest}"
    return safe


def params_id(item: pytest.Item, gate_run: int | None) -> str:
    """The item's parametrize id without the gate's ``gateN`` part (``""`` when none)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return ""
    ident = str(callspec.id)
    if gate_run is None:
        return ident
    token = f"gate{gate_run}"
    if ident == token:
        return ""
    if ident.endswith(f"-{token}"):
        return ident[: -len(token) - 1]
    if ident.startswith(f"{token}-"):
        return ident[len(token) + 1 :]
    return ident.replace(f"-{token}-", "-", 1)


def default_name(item: pytest.Item, gate_run: int | None) -> str:
    """``<module>/<Class.>test[params].jsonl`` for ``item`` (see the module doc)."""
    function = item if isinstance(item, pytest.Function) else None
    test = function.originalname if function is not None else item.name
    cls = getattr(item, "cls", None)
    if cls is not None:
        test = f"{cls.__name__}.{test}"
    params = params_id(item, gate_run)
    if params:
        test = f"{test}[{params}]"
    return f"{Path(str(item.path)).stem}/{sanitize(test)}.jsonl"


def resolve(item: pytest.Item, cassette_dir: str, name: str) -> Path:
    """The file of the cassette ``name`` for ``item``: an absolute name as it is, else
    under ``cassette_dir`` beside the test file, else beside the test file itself, else
    (neither exists) where it would be under ``cassette_dir``. No suffix: ``.jsonl``."""
    test_dir = Path(str(item.path)).parent
    base = test_dir / cassette_dir
    candidate = Path(name)
    if not candidate.suffix:
        candidate = candidate.with_suffix(".jsonl")
    if candidate.is_absolute():
        return candidate
    for folder in (base, test_dir):
        if (folder / candidate).exists():
            return folder / candidate
    return base / candidate
