"""The network off inside this process while a replay runs (the pytest plugin's replayed
tests and ``--cassette-gate`` runs), with hosts the user allows.

The rules are the replay network guard's (``guard/sitecustomize.py``, loaded from its
file, not copied): an audit hook refuses a connection or a datagram to any address family
but unix, a name lookup (a numeric address still parses; its connection is then refused)
and a reverse lookup, raising ``NetworkBlocked`` (a ``ConnectionRefusedError``). Here the
hook is added once per process and does nothing outside ``blocked()`` (an audit hook cannot
be removed), and an allowed host passes: its name in a lookup, its addresses (the numbers
given, and those its name resolved to when the block began) in a connection.

Not covered, as for the guard: a C extension that calls ``connect()`` itself, a raw system
call, and programs the test starts (those the replay's isolation covers).
"""

from __future__ import annotations

import importlib.util
import socket
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

#: the guard whose rules apply (its folder is package data, not a package)
GUARD_FILE = Path(__file__).resolve().parent / "guard" / "sitecustomize.py"
#: the audit events the guard's socket rules judge
SOCKET_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "socket.getnameinfo",
    }
)

_lock = threading.Lock()
_guard: ModuleType | None = None
_hooked = False
#: ``None`` when the network is on; else the allowed names and addresses, and the hint
_block: tuple[frozenset[str], str] | None = None


def guard_rules() -> ModuleType:
    """The guard module (``guard/sitecustomize.py``) loaded under a private name: it does
    not install itself there (it does only as ``sitecustomize``)."""
    global _guard
    if _guard is None:
        spec = importlib.util.spec_from_file_location(f"{__name__}._guard", GUARD_FILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _guard = module
    return _guard


def _text(host: Any) -> str | None:
    if isinstance(host, bytes):
        return host.decode("ascii", "replace")
    return host if isinstance(host, str) else None


def _host_of(event: str, args: tuple[Any, ...]) -> str | None:
    """The host name or address an event reaches, or ``None`` (a unix path...)."""
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        address = args[1]
        return _text(address[0]) if isinstance(address, tuple) and address else None
    if event == "socket.getnameinfo":
        address = args[0]
        return _text(address[0]) if isinstance(address, tuple) and address else None
    return _text(args[0])


def _hook(event: str, args: tuple[Any, ...]) -> None:
    block = _block
    if block is None or event not in SOCKET_EVENTS:
        return
    allowed, hint = block
    host = _host_of(event, args)
    if host is not None and (host in allowed or host.split("%", 1)[0] in allowed):
        return
    guard = guard_rules()
    try:
        guard._socket_event(event, args)
    except guard.NetworkBlocked as exc:
        raise guard.NetworkBlocked(exc.errno, f"{exc.strerror}; {hint}") from None


def _addresses(hosts: Iterable[str]) -> frozenset[str]:
    """``hosts`` and the addresses each name resolves to now (a name that does not
    resolve stays allowed by name)."""
    found = set()
    for host in hosts:
        host = host.strip()
        if not host:
            continue
        found.add(host)
        try:
            for info in socket.getaddrinfo(host, None):
                found.add(str(info[4][0]))
        except (OSError, UnicodeError):
            continue
    return frozenset(found)


@contextmanager
def blocked(
    allowed_hosts: Iterable[str] = (),
    hint: str = "allow a host with --allowed-hosts",
) -> Iterator[frozenset[str]]:
    """The network off in this process (every thread) inside the ``with``, but for
    ``allowed_hosts`` (names or addresses; ``localhost`` is not allowed unless named).
    Yields the allowed names and addresses. Not reentrant across threads: one block at a
    time (the innermost one holds, the outer one comes back after it).

    Raises (inside the block, from the call that reached the network):
        NetworkBlocked: a connection, datagram or lookup the rules refuse, its message
            ending with ``hint``.
    """
    global _block, _hooked
    allowed = _addresses(allowed_hosts)  # resolved before the block: lookups then refused
    with _lock:
        if not _hooked:
            guard_rules()
            sys.addaudithook(_hook)
            _hooked = True
        outer, _block = _block, (allowed, hint)
    try:
        yield allowed
    finally:
        with _lock:
            _block = outer
