"""A hostile agent for the network guard's tests: ``net_routes.py ROUTE TARGET`` replays
its first recorded call (``lookup`` a), then tries one way out to TARGET and prints one
JSON line ``{"route", "reached": bool, "error"}``; exit 0 when it reached TARGET, 3 when
refused. TARGET is a TCP port on 127.0.0.1, a unix socket path, or an abstract name.
``net_routes.py all PORT PATH NAME`` tries every route (PATH for ``unix-path``, NAME for
``unix-abstract``, PORT for the others) and prints ``{route: {"reached", "error"}}``,
exit 0.

Routes: ``c-socket`` (``_socket.socket`` directly), ``super-connect``
(``super(socket.socket, s).connect``), ``mro-connect`` (the C type dug out of the MRO),
``connect-ex``, ``udp`` (``sendto``), ``sendmsg``, ``unix-path``, ``unix-abstract``,
``unix-abstract-own`` (binds the abstract name itself, then connects to it),
``gethostbyaddr``, ``getfqdn`` (reached: it did a reverse lookup), ``getnameinfo``,
``getnameinfo-numeric`` (allowed: no lookup), ``ctypes-connect`` (libc's connect through
ctypes), ``child-python-I``, ``child-env-cleared``, ``child-bash-tcp``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from cassette_tui.core import wrap_dispatcher


def live(tool: str, args: object) -> object:
    raise RuntimeError(f"live tool {tool} called in a test")


def tcp(target: str) -> tuple[str, int]:
    return ("127.0.0.1", int(target))


CHILD = "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 5)"


def attempt(route: str, target: str) -> None:
    """Raise on refusal; return when TARGET was reached."""
    if route == "c-socket":
        import _socket

        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        s.connect(tcp(target))
    elif route == "super-connect":
        s = socket.socket()
        super(socket.socket, s).connect(tcp(target))
    elif route == "mro-connect":
        s = socket.socket()
        c_type = socket.socket.__mro__[-2]
        c_type.connect(s, tcp(target))
    elif route == "connect-ex":
        code = socket.socket().connect_ex(tcp(target))
        if code:
            raise OSError(code, "connect_ex failed")
    elif route == "udp":
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.sendto(b"x", tcp(target))
    elif route == "sendmsg":
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.sendmsg([b"x"], [], 0, tcp(target))
    elif route == "unix-path":
        s = socket.socket(socket.AF_UNIX)
        s.connect(target)
    elif route == "unix-abstract":
        s = socket.socket(socket.AF_UNIX)
        s.connect("\0" + target)
    elif route == "unix-abstract-own":
        server = socket.socket(socket.AF_UNIX)
        server.bind("\0" + target)
        server.listen()
        s = socket.socket(socket.AF_UNIX)
        s.connect("\0" + target)
    elif route == "gethostbyaddr":
        socket.gethostbyaddr("127.0.0.1")
    elif route == "getfqdn":
        before = "127.0.0.1"
        if socket.getfqdn(before) == before:
            raise OSError("getfqdn did no reverse lookup")
    elif route == "getnameinfo":
        socket.getnameinfo(("127.0.0.1", 80), 0)
    elif route == "getnameinfo-numeric":
        socket.getnameinfo(("127.0.0.1", 80), socket.NI_NUMERICHOST | socket.NI_NUMERICSERV)
    elif route == "ctypes-connect":
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fd = socket.socket()
        addr = bytes([2, 0]) + int(target).to_bytes(2, "big") + bytes([127, 0, 0, 1]) + bytes(8)
        buf = ctypes.create_string_buffer(addr, len(addr))
        if libc.connect(fd.fileno(), buf, len(addr)) != 0:
            raise OSError(ctypes.get_errno(), "libc connect failed")
    elif route in ("child-python-I", "child-env-cleared"):
        argv = [sys.executable, *(["-I"] if route == "child-python-I" else []), "-c", CHILD]
        env = {} if route == "child-env-cleared" else None
        done = subprocess.run([*argv, target], env=env, capture_output=True, timeout=60)
        if done.returncode != 0:
            raise OSError(done.stderr.decode(errors="replace").strip().splitlines()[-1])
    elif route == "child-bash-tcp":
        done = subprocess.run(["bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{target}"], timeout=60)
        if done.returncode != 0:
            raise OSError("bash could not connect")
    else:
        raise SystemExit(f"unknown route {route!r}")


ROUTES = [
    "c-socket",
    "super-connect",
    "mro-connect",
    "connect-ex",
    "udp",
    "sendmsg",
    "unix-path",
    "unix-abstract",
    "unix-abstract-own",
    "gethostbyaddr",
    "getfqdn",
    "getnameinfo",
    "getnameinfo-numeric",
    "ctypes-connect",
    "child-python-I",
    "child-env-cleared",
    "child-bash-tcp",
]


def every_route(port: str, path: str, name: str) -> int:
    wrap_dispatcher(live)("lookup", {"key": "a"})
    found = {}
    for route in ROUTES:
        target = {"unix-path": path, "unix-abstract": name}.get(route, port)
        if route == "unix-abstract-own":
            target = f"own-{os.getpid()}"
        try:
            attempt(route, target)
            found[route] = {"reached": True, "error": ""}
        except OSError as exc:
            found[route] = {"reached": False, "error": str(exc)}
    print(json.dumps(found), flush=True)
    return 0


def main(route: str, target: str) -> int:
    wrap_dispatcher(live)("lookup", {"key": "a"})
    try:
        attempt(route, target)
    except OSError as exc:
        print(json.dumps({"route": route, "reached": False, "error": str(exc)}), flush=True)
        return 3
    print(json.dumps({"route": route, "reached": True, "error": ""}), flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    if sys.argv[1] == "all":
        sys.exit(every_route(*sys.argv[2:5]))
    sys.exit(main(sys.argv[1], sys.argv[2]))
