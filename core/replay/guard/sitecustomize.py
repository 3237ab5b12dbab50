"""The network guard: loaded into an agent's Python processes during a replay when no
network namespace can be had (``core/loop/_isolation.py`` puts this folder first on
``PYTHONPATH``; Python imports the first ``sitecustomize`` it finds at start-up).

With ``CASSETTE_GUARD_LOG`` set, the process gets an audit hook (``sys.addaudithook``: it
cannot be removed, and the C socket type raises its events, so ``_socket.socket`` used
directly, ``super(socket.socket, s).connect`` and every subclass are covered) that refuses:

- a connection or a datagram (``connect``, ``connect_ex``, ``sendto``, ``sendmsg``) to any
  address family but unix; a unix socket with a path is allowed (as in a network
  namespace, which keeps the file system), an abstract one (``"\\0name"``) only when a
  guarded process of the same run bound it (a namespace has its own abstract names);
- a DNS lookup of a name (``getaddrinfo``, ``gethostbyname``, ``gethostbyname_ex``;
  a numeric address still parses, its connection is then refused), and every reverse
  lookup (``gethostbyaddr``, hence ``getfqdn``; ``getnameinfo`` unless asked for numbers
  only with ``NI_NUMERICHOST``);
- a ``ctypes`` look-up of a libc function that reaches the network (``connect``,
  ``sendto``, ``getaddrinfo``...).

Refusals raise :class:`NetworkBlocked` (a ``ConnectionRefusedError``) and are appended to
the log as JSON lines (``{"event": "refused", "what", "address", "pid"}``), after an
``{"event": "installed", "pid", "ppid", "python"}`` line per process. A program the process
starts that the guard will not be in (not Python; Python with ``-I``, ``-E`` or ``-S``; an
environment without ``CASSETTE_GUARD_LOG``/this folder on ``PYTHONPATH``) is logged as
``{"event": "uncovered", "argv", "why", "pid"}``, so the run's result can name it.

Not covered, and said wherever a result names the guard: those programs, a C extension
that calls ``connect()`` itself, and a raw system call.

Then the ``sitecustomize`` this one shadows, if any (a distribution's, a virtual
environment's), is found on the rest of ``sys.path`` and run, and this folder leaves
``sys.path``. Standard library only, and lazily: it runs before anything else in the
agent, whose every start pays for it.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

GUARD_LOG_ENV = "CASSETTE_GUARD_LOG"
HERE = os.path.dirname(os.path.abspath(__file__))
#: libc functions a ``ctypes`` look-up of is refused: they reach the network
_C_NETWORK = """connect sendto sendmsg sendmmsg getaddrinfo gethostbyname gethostbyname2
gethostbyname_r gethostbyname2_r gethostbyaddr gethostbyaddr_r getnameinfo res_query
res_search res_send res_nquery res_nsearch res_nsend res_init __res_query __res_search
__res_send"""
C_NETWORK = frozenset(_C_NETWORK.split())
#: Python's flags that keep this file from loading in a child (``-I`` isolated, ``-E``
#: ignore PYTHON* variables, ``-S`` no site)
SKIP_FLAGS = {"I": "-I (isolated mode ignores PYTHONPATH)",
              "E": "-E (ignores PYTHONPATH)", "S": "-S (no site, no sitecustomize)"}  # fmt: skip

_local = threading.local()


class NetworkBlocked(ConnectionRefusedError):
    """A connection the replay's network guard refused (the network is off in replay)."""


def _log(event: dict[str, Any]) -> None:
    path = os.environ.get(GUARD_LOG_ENV)
    if not path:
        return
    import json

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
        111,  # ECONNREFUSED
        f"cassette-tui network guard: {what} {address!r} refused (the network is off during "
        "replay; only unix sockets of this machine are allowed)",
    )


def _numeric(host: Any) -> bool:
    """Whether ``host`` is an IP address (no lookup needed): ``1.2.3.4``, ``::1``,
    ``fe80::1%eth0``."""
    import _socket

    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    for family, text in ((_socket.AF_INET, host), (_socket.AF_INET6, host.split("%", 1)[0])):
        try:
            _socket.inet_pton(family, text)
            return True
        except (OSError, ValueError):
            continue
    return False


def _abstract(address: Any) -> bool:
    return isinstance(address, (str, bytes)) and address[:1] in ("\0", b"\0")


def _bound_here(address: Any) -> bool:
    """Whether a guarded process of this run bound the abstract unix ``address``."""
    path = os.environ.get(GUARD_LOG_ENV)
    if not path:
        return False
    import json

    wanted = repr(address.encode() if isinstance(address, str) else address)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if '"bound"' in line:
                    try:
                        if json.loads(line).get("address") == wanted:
                            return True
                    except ValueError:
                        continue
    except OSError:
        return False
    return False


def _sock_family(sock: Any) -> int | None:
    try:
        return int(sock.family)
    except (AttributeError, TypeError, ValueError, OSError):
        return None


def _check_send(what: str, sock: Any, address: Any, unix: int | None) -> None:
    """Refuse ``what`` to ``address`` on ``sock`` unless the guard allows it."""
    if _sock_family(sock) != unix:
        raise _refuse(what, address)
    if _abstract(address) and not _bound_here(address):
        raise _refuse(f"{what} abstract unix socket", address)


def _python_child(argv: list[str], executable: Any) -> bool:
    """Whether the program ``argv`` runs is a Python (by its name, or a ``#!`` line)."""
    import re

    prog = os.fsdecode(executable) if executable is not None else (argv[0] if argv else "")
    name = os.path.basename(prog)
    if re.fullmatch(r"python[0-9.]*[a-z]*(\.exe)?", name) or (
        os.path.realpath(prog) == os.path.realpath(sys.executable)
    ):
        return True
    try:  # a script whose #! line names a Python
        with open(prog if "/" in prog else "", "rb") as fh:
            first = fh.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def _uncovered_why(argv: list[str], executable: Any, env: Any) -> str | None:
    """Why a program started with ``argv``/``env`` (``None``: inherited) runs without the
    guard, or ``None`` when it loads it."""
    if not _python_child(argv, executable):
        return "not Python: the guard does not apply"
    i = 1
    while i < len(argv):  # the interpreter's flags, up to the script, -c or -m
        arg = argv[i]
        if arg == "-" or not arg.startswith("-") or arg.startswith("--"):
            break
        for n, letter in enumerate(arg[1:]):
            if letter in SKIP_FLAGS:
                return f"Python started with {SKIP_FLAGS[letter]}"
            if letter in "cm":
                i = len(argv)
                break
            if letter in "WX":  # takes a value: the rest of this word or the next one
                i += 0 if arg[n + 2 :] else 1
                break
        i += 1
    if env is not None:
        get = env.get if hasattr(env, "get") else dict(env).get

        def text(key: str) -> str:
            value = get(key) if get(key) is not None else get(key.encode())
            return os.fsdecode(value) if value is not None else ""

        paths = [os.path.abspath(p) for p in text("PYTHONPATH").split(os.pathsep) if p]
        if not text(GUARD_LOG_ENV) or HERE not in paths:
            return "Python started with an environment without the guard's variables"
    return None


def _child(argv: Any, executable: Any, env: Any) -> None:
    """Log a program being started that the guard will not be in."""
    if isinstance(argv, (str, bytes)):
        argv = [argv]
    try:
        args = [os.fsdecode(a) for a in argv]
    except TypeError:
        return
    why = _uncovered_why(args, executable, env)
    if why is not None:
        _log({"event": "uncovered", "argv": args[:8], "why": why})


def _exec_event(event: str, args: tuple[Any, ...]) -> None:
    if event == "subprocess.Popen":
        _child(args[1], args[0], args[3])
    elif event in ("os.exec", "os.posix_spawn"):
        _child(args[1], args[0], args[2])
    elif event == "os.spawn":
        _child(args[2], args[1], args[3])
    else:  # os.system
        _log({"event": "uncovered", "argv": ["/bin/sh", "-c", os.fsdecode(args[0])],
              "why": "a shell command (os.system): not Python"})  # fmt: skip


def _ctypes_event(event: str, args: tuple[Any, ...]) -> None:
    name = args[1]
    if isinstance(name, bytes):
        name = name.decode("ascii", "replace")
    if isinstance(name, str) and name in C_NETWORK:
        raise _refuse("ctypes look-up of the C function", name)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    handler = _HANDLERS.get(event)  # every audit event of the process comes here: one get
    if handler is not None:
        handler(event, args)


def _socket_event(event: str, args: tuple[Any, ...]) -> None:
    import _socket

    unix = getattr(_socket, "AF_UNIX", None)
    if event == "socket.connect":
        _check_send("connection to", args[0], args[1], unix)
    elif event == "socket.sendto":
        _check_send("datagram to", args[0], args[1], unix)
    elif event == "socket.sendmsg":
        if args[1] is not None:
            _check_send("message to", args[0], args[1], unix)
    elif event == "socket.bind":
        if _sock_family(args[0]) == unix and _abstract(args[1]):
            address = args[1].encode() if isinstance(args[1], str) else args[1]
            _log({"event": "bound", "address": repr(address)})
    elif event == "socket.getaddrinfo":
        host = args[0]
        if host is not None and not _numeric(host):
            raise _refuse("name lookup of", host)
    elif event == "socket.gethostbyname":
        host = args[0]
        if not _numeric(host):
            raise _refuse("name lookup of", host)
    elif (
        event == "socket.gethostbyaddr"
        or event == "socket.getnameinfo"
        and not getattr(_local, "numeric", False)
    ):
        raise _refuse("reverse lookup of", args[0])


_HANDLERS = {
    **dict.fromkeys(
        ("socket.connect", "socket.sendto", "socket.sendmsg", "socket.bind",
         "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
         "socket.getnameinfo"),
        _socket_event,
    ),
    **dict.fromkeys(("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system"),
                    _exec_event),
    **dict.fromkeys(("ctypes.dlsym", "ctypes.dlsym/handle"), _ctypes_event),
}  # fmt: skip


def _guard_getnameinfo() -> None:
    """``getnameinfo`` with ``NI_NUMERICHOST`` asks for no lookup: let it through the hook
    (its audit event does not carry the flags)."""
    import _socket

    real = _socket.getnameinfo

    def getnameinfo(sockaddr: Any, flags: int) -> Any:
        if not flags & _socket.NI_NUMERICHOST:
            raise _refuse("reverse lookup of", sockaddr)
        _local.numeric = True
        try:
            return real(sockaddr, flags)
        finally:
            _local.numeric = False

    _socket.getnameinfo = getnameinfo
    module = sys.modules.get("socket")
    if module is not None:  # imported before this file ran (a .pth file)
        module.getnameinfo = getnameinfo  # type: ignore[attr-defined]


def install() -> None:
    """Add the audit hook to this process (idempotent)."""
    if getattr(sys, "_cassette_guard", False):
        return
    _guard_getnameinfo()
    sys.addaudithook(_hook)
    sys._cassette_guard = True  # type: ignore[attr-defined]
    _log({"event": "installed", "python": sys.executable, "ppid": os.getppid()})


def _chain() -> None:
    """Run the ``sitecustomize`` this file shadows, and take this folder off ``sys.path``."""
    import importlib.machinery
    import importlib.util

    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
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
