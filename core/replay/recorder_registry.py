"""One recording per cassette file in a process: wrappers that record to the same file share
its recorder.

An agent and its sub-agent each wrap their dispatcher with ``wrap_dispatcher()`` and both
record to ``CASSETTE_PATH``: opening a second ``Recorder`` on that file would raise
``FileExistsError`` (the first one created it) or, with ``overwrite``, race it. Instead
the second wrapper joins the first one's recorder, so both append to one file under one
``seq`` counter, in call order. The registry is keyed by the resolved path and holds a
reference count: every ``acquire`` is matched by a ``release`` (a wrapper's ``close()``,
or exit), and the last release closes the recording.

An owner may also ``register`` a recording it opened itself (the pytest plugin opens one
per test, staged beside the cassette, and decides at the test's end whether it replaces
the cassette): wrappers that record to that path join it, and the owner's ``unregister``
takes it out whatever the count (a later ``release`` of it is then a no-op).

An entry made by another process (a ``fork``) is never joined: its file handle is the
parent's.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


class SharedRecording(Protocol):
    """What a shared recording offers its wrappers (``Recorder``, ``NewEpisodes``)."""

    def wrap(self, dispatch: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]: ...

    def report(self) -> dict[str, Any]: ...

    def close(self) -> Any: ...


@dataclass
class _Held:
    recording: SharedRecording
    pid: int
    count: int
    owned: bool  # registered by an owner: only ``unregister`` closes it


_lock = threading.Lock()
_held: dict[Path, _Held] = {}


def _key(path: str | Path) -> Path:
    return Path(os.path.abspath(Path(path).expanduser())).resolve()


def acquire(path: str | Path, open_new: Callable[[], SharedRecording]) -> SharedRecording:
    """The recording open for ``path`` in this process (one more reference to it), or a new
    one from ``open_new()`` registered with one reference.

    Raises:
        whatever ``open_new`` raises (``FileExistsError`` for a cassette that exists).
    """
    key = _key(path)
    with _lock:
        held = _held.get(key)
        if held is not None and held.pid == os.getpid():
            held.count += 1
            return held.recording
        recording = open_new()
        _held[key] = _Held(recording, os.getpid(), 1, owned=False)
        return recording


def release(path: str | Path, recording: SharedRecording) -> None:
    """Drop one reference to ``recording``; the last one closes it (a recording that is no
    longer registered for ``path``, such as an owner's after ``unregister``, is left as
    it is).

    Raises:
        OSError: the recording could not be finished (a full disk).
    """
    key = _key(path)
    with _lock:
        held = _held.get(key)
        if held is None or held.recording is not recording or held.pid != os.getpid():
            return
        held.count -= 1
        if held.count > 0 or held.owned:
            return
        del _held[key]
    recording.close()


def register(path: str | Path, recording: SharedRecording) -> None:
    """Make ``recording`` the one wrappers recording to ``path`` join, owned by the caller
    (closed by it, never by a wrapper's release).

    Raises:
        FileExistsError: a recording of ``path`` is open in this process already.
    """
    key = _key(path)
    with _lock:
        held = _held.get(key)
        if held is not None and held.pid == os.getpid():
            raise FileExistsError(f"{path}: a recording of this cassette is open already")
        _held[key] = _Held(recording, os.getpid(), 0, owned=True)


def unregister(path: str | Path, recording: SharedRecording) -> None:
    """Take the owner's ``recording`` out of the registry (the owner closes it)."""
    key = _key(path)
    with _lock:
        held = _held.get(key)
        if held is not None and held.recording is recording:
            del _held[key]
