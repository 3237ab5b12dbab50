"""Values JSON changes or refuses: an enum, an int subclass, a str subclass. The recorder
names the first path where one stands (tests of record and replay fidelity)."""

from __future__ import annotations

import enum


class Colour(enum.Enum):
    RED = "red"


class Size(enum.IntEnum):
    S = 1


class Name(str):
    pass
