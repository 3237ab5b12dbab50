"""The network guard: loaded into an agent's Python processes during a replay when no
network namespace can be had (``core/loop/_isolation.py`` puts this folder first on
``PYTHONPATH``; Python imports the first ``sitecustomize`` it finds at start-up).

With ``CASSETTE_GUARD_LOG`` set, every connection is refused except to local unix sockets:
``socket.connect``/``connect_ex`` and ``sendto``/``sendmsg`` to any other address family,
and DNS lookups of names (numeric addresses still parse, then fail to connect). Refusals
raise :class:`NetworkBlocked` (a ``ConnectionRefusedError``) and are appended to the log as
JSON lines (``{"event": "refused", "what", "address", "pid"}``), after an
``{"event": "installed", "pid", "python"}`` line per process, so the debugger can say the
guard was in force and what it stopped.

Then the ``sitecustomize`` this one shadows, if any (a distribution's, a virtual
environment's), is found on the rest of ``sys.path`` and run, and this folder leaves
``sys.path``. Standard library only: it runs before anything else in the agent.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
from typing import Any

GUARD_LOG_ENV = "CASSETTE_GUARD_LOG"


class NetworkBlocked(ConnectionRefusedError):
    """A connection the replay's network guard refused (the network is off in replay)."""


def _log(event: dict[str, Any]) -> None:
    path = os.environ.get(GUARD_LOG_ENV)
    if not path:
        return
    event["pid"] = os.getpid()
    line = json.dumps(event, default=repr) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "backslashreplace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def _refuse(what: str, address: Any) -> NetworkBlocked:
    _log({"event": "refused", "what": what, "address": repr(address)})
    return NetworkBlocked(
        errno.ECONNREFUSED,
        f"cassette-tui network guard: {what} {address!r} refused (the network is off during "
        "replay; only local unix sockets are allowed)",
    )


def install() -> None:
    """Patch the socket module of this process (idempotent)."""
    if getattr(socket.socket, "_cassette_guard", False):
        return
    _guard_sockets(socket.socket, getattr(socket, "AF_UNIX", None))
    _guard_lookups()
    socket.socket._cassette_guard = True  # type: ignore[attr-defined]
    _log({"event": "installed", "python": sys.executable})


def _guard_sockets(cls: type[socket.socket], unix: Any) -> None:
    """Refuse connections and datagrams of every family but ``unix``."""
    real_connect, real_connect_ex = cls.connect, cls.connect_ex
    real_sendto, real_sendmsg = cls.sendto, cls.sendmsg

    def connect(self: socket.socket, address: Any) -> None:
        if self.family != unix:
            raise _refuse("connection to", address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if self.family != unix:
            raise _refuse("connection to", address)
        return real_connect_ex(self, address)

    def sendto(self: socket.socket, data: Any, *args: Any) -> int:
        if self.family != unix:
            raise _refuse("datagram to", args[-1] if args else None)
        return real_sendto(self, data, *args)  # type: ignore[arg-type]

    def sendmsg(self: socket.socket, buffers: Any, *args: Any) -> int:
        if self.family != unix and len(args) >= 3 and args[2] is not None:
            raise _refuse("message to", args[2])
        return real_sendmsg(self, buffers, *args)

    cls.connect = connect  # type: ignore[method-assign,assignment]
    cls.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
    cls.sendto = sendto  # type: ignore[method-assign,assignment]
    cls.sendmsg = sendmsg  # type: ignore[method-assign,assignment]


def _guard_lookups() -> None:
    """Refuse DNS lookups of names (a numeric address still parses)."""
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(
        host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0
    ) -> Any:
        if host is not None:
            try:  # a numeric address needs no lookup: parse it, the connect is refused
                return real_getaddrinfo(
                    host, port, family, type, proto, flags | socket.AI_NUMERICHOST
                )
            except socket.gaierror:
                raise _refuse("name lookup of", host) from None
        return real_getaddrinfo(host, port, family, type, proto, flags)

    def gethostbyname(name: str) -> str:
        raise _refuse("name lookup of", name)

    def gethostbyname_ex(name: str) -> Any:
        raise _refuse("name lookup of", name)

    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex


def _chain() -> None:
    """Run the ``sitecustomize`` this file shadows, and take this folder off ``sys.path``."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if __name__ == "sitecustomize":
    if os.environ.get(GUARD_LOG_ENV):
        install()
    _chain()
