"""A raw HTTP/1.1 request read off a socket by a hand-written test remote (one that must
answer in ways no server library would: a lying length, a 401, a close mid-answer)."""

from __future__ import annotations

import json
from typing import Any, BinaryIO


def read_request(stream: BinaryIO) -> tuple[dict[bytes, bytes], Any] | None:
    """The head fields (names lower-cased) and the JSON body of the next request on
    ``stream`` (read by its ``content-length``); ``None`` when the host closed first."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = stream.readline()
        if not line:
            return None
        head += line
    fields = dict(line.split(b":", 1) for line in head.strip().split(b"\r\n")[1:] if b":" in line)
    fields = {k.strip().lower(): v.strip() for k, v in fields.items()}
    return fields, json.loads(stream.read(int(fields[b"content-length"])))
