"""The least a recording HTTP proxy can do, as a floor for ``bench_mcp_http.py --floor``
(issue 31: the proxy within 1.5x of a direct connection): not a product, a measure.

One host connection at a time, one connection to the remote, blocking sockets. Each
request's head is read, its body received by ``recv_into`` into one buffer and each piece
sent on as it comes; once the body has gone whole, its sha256 is computed and the body
written to a file (what a recording must do at least: hash and write each byte); then
the answer (read by its ``content-length``) is relayed. No JSON is read, nothing checked,
no framework: what is left between this and ``mcp record --url`` is the recording's
other work and the HTTP stack's.

    python benchmarks/floor_recording_proxy.py PORT REMOTE_PORT OUT_FILE
"""

from __future__ import annotations

import contextlib
import hashlib
import socket
import sys


def read_head(sock: socket.socket, rest: bytes) -> tuple[bytes, int, bytes]:
    """``(head, content_length, bytes past the head)`` of the next message on ``sock``."""
    data = rest
    while b"\r\n\r\n" not in data:
        got = sock.recv(65536)
        if not got:
            raise EOFError
        data += got
    head, _, rest = data.partition(b"\r\n\r\n")
    size = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            size = int(value)
    return head, size, rest


def main() -> None:
    port, remote_port, out_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(8)
    print(f"http://127.0.0.1:{port}/mcp", flush=True)
    remote = socket.create_connection(("127.0.0.1", remote_port))
    remote.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buffer = bytearray(64 << 20)
    view = memoryview(buffer)
    with open(out_path, "wb") as out:
        while True:
            host, _ = listener.accept()
            rest = remote_rest = b""
            try:
                while True:
                    head, size, rest = read_head(host, rest)
                    remote.sendall(head + b"\r\n\r\n")
                    got = min(len(rest), size)
                    buffer[:got] = rest[:got]
                    rest = rest[got:]
                    if got:
                        remote.sendall(view[:got])
                    while got < size:
                        n = host.recv_into(view[got:size])
                        if not n:
                            raise EOFError
                        remote.sendall(view[got : got + n])
                        got += n
                    hashlib.sha256(view[:size]).hexdigest()
                    out.write(view[:size])
                    out.flush()
                    answer_head, answer_size, remote_rest = read_head(remote, remote_rest)
                    answer = remote_rest[:answer_size]
                    remote_rest = remote_rest[answer_size:]
                    while len(answer) < answer_size:
                        answer += remote.recv(answer_size - len(answer))
                    host.sendall(answer_head + b"\r\n\r\n" + answer)
            except (EOFError, ConnectionError):
                host.close()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):  # the benchmark's stop
        main()
