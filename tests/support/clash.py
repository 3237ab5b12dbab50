"""Stand-ins for the diff tests: a token whose hash many others share, and a digest
column no column is."""

from __future__ import annotations


class Clash:
    """A token whose hash is shared by many others (``value % 3``): every slot crowded,
    so the alignment's hash partitions and anchors meet clashing tokens."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __hash__(self) -> int:
        return self.value % 3

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Clash) and other.value == self.value


class NotADigestColumn:
    """Stands for ``DigestColumn`` in ``core.diff._run_keys``: no column is one, so the
    keys are the ``(tool, digest)`` tuples (what a digest of another form makes them)."""
