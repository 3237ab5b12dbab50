"""Pause Python's cyclic garbage collector during one large pass over a cassette.

Loading, linting or aligning 100k entries allocates millions of objects that hold no
reference cycles (parsed JSON, findings, rows). The cyclic collector still runs full
passes over everything alive as they pile up, which cost more than the work itself
(measured: a tenth of ``check`` on the 100k text cassette, half of ``load``). Reference
counting frees them as ever; only cycles wait for the collector, which is on again after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Disable the cyclic collector inside the ``with`` block; re-enable it after (only if
    it was enabled before, so blocks nest)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
