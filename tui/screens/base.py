"""The base of the app's screens: typed against the app, so ``self.app.session`` is a
``Session`` to the type checker, not an attribute it cannot see. A screen may be given a
session of its own (runs opened from a loop screen), which leaves the app's untouched."""

from __future__ import annotations

from typing import ClassVar

from textual import getters
from textual.screen import Screen

from ..app import CassetteApp
from ..session import Session


class AppScreen(Screen[None]):
    """A screen of ``CassetteApp``.

    Attributes:
        KEYMAP_NAME: how the keymap check names this screen in its errors ("main screen").
    """

    KEYMAP_NAME: ClassVar[str] = ""

    app = getters.app(CassetteApp)

    def __init__(self, session: Session | None = None) -> None:
        super().__init__()
        self._own_session = session

    @property
    def session(self) -> Session:
        """The ``Session`` this screen shows: its own when it was given one (two runs of a
        gate opened side by side over the user's pair), else the app's."""
        return self._own_session if self._own_session is not None else self.app.session
