"""The base of the app's screens: typed against the app, so ``self.app.session`` is a
``Session`` to the type checker, not an attribute it cannot see."""

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

    @property
    def session(self) -> Session:
        """The app's ``Session``: the open cassettes and their diffs."""
        return self.app.session
