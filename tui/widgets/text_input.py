"""``TextInput``: Textual's ``Input`` with its keys applied in the order they were typed.

Every text input of the app is one (the search bar, the task filter, the gate's N).
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class TextInput(Input):
    """An ``Input`` that applies a key handled by a binding (backspace, delete, left/right,
    home/end, ctrl+w, enter, the screen's and the app's keys, remapped keys included) at
    once, in order with the keys and pastes typed before and after it.

    Why: Textual 8.2's ``App.on_event`` forwards each ``Key`` to the focused widget's
    message queue (``Widget._forward_event``). ``Input._on_key`` types a printable key there
    and then, but a key that a *binding* handles only runs once its ``Key`` has bubbled up
    the DOM (``MessagePump._on_message`` -> ``Message._bubble_to``: a post to each parent's
    queue) back to the App, whose ``App._on_key`` calls ``App._check_bindings``. When keys
    arrive in one burst (over SSH, a fast typist, a paste of keystrokes) the App has
    already forwarded the later keys by then, so ``backspace x`` typed ``x`` and then
    deleted it (``abc`` stayed ``abc``, not ``abx``), and a paste after an arrow key landed
    before the cursor moved.

    Here a key this input does not type runs ``App._check_bindings`` (the very call the App
    would make a few messages later: the focused widget's bindings, then its ancestors',
    the screen's and the app's, as the user's keymap has them; priority bindings were run
    by the App before it forwarded the key) in this input's own key handler, before the
    next key or paste in its queue. The ``Key`` is then stopped, so the App does not run the
    binding a second time. A printable key the input does not consume
    (``check_consume_key``) is never typed: with no binding for it, it is dropped, as the
    App would drop it. Any other key goes on as in ``Input``.
    """

    async def _on_key(self, event: events.Key) -> None:
        # Runs before Input._on_key (the handlers are called down the class's MRO), which
        # is skipped when the default is prevented.
        if self.check_consume_key(event.key, event.character):
            return
        self._restart_blink()
        if await self.app._check_bindings(event.key) or event.is_printable:
            event.prevent_default()
            event.stop()
