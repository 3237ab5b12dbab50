"""``ToolCassette``: one cassette for a framework's tool calls, on ``wrap_dispatcher``.

A framework calls its tools with a context object (pydantic-ai's ``RunContext``, the
Agents SDK's ``ToolContext``, LangGraph's ``ToolCallRequest``) that is neither JSON nor
part of what makes two calls one. The adapter passes ``(tool, args)`` to the wrapped
dispatcher and the live call itself (a closure over that context) in a ``ContextVar`` set
for the length of the call: each thread and each asyncio task sees its own, so parallel
calls never cross, and the context never enters the args digest. In replay the closure is
never called.

Values: the cassette holds JSON. ``encode`` turns what the live tool returned into the
recorded response, ``decode`` turns a recorded response back into the framework's type;
a live or recorded run hands back the live value itself (not a decoded copy). This is
where the adapters' encoders (pydantic ``TypeAdapter``\\s, LangChain message dicts,
smolagents agent types) apply; what ``encode`` leaves typed (a ``datetime`` in a ``dict``)
is recorded by the ``codec`` given (``wrap_dispatcher(codec=...)``) with its types, and
comes back typed.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ..format.errors import ToolError
from ..replay.codec import Codec
from ..replay.turn import CALL_SLOT, CallSlot
from ..replay.wrap import wrap_dispatcher

Encode = Callable[[Any], Any]
Decode = Callable[[Any], Any]

_UNSET: Any = object()


def _same(value: Any) -> Any:
    return value


class _LiveCall:
    """The live side of one call: runs it, keeps the live value, hands the recorder JSON."""

    def __init__(self, run: Callable[[], Any], encode: Encode) -> None:
        self.run = run
        self.encode = encode
        self.value: Any = _UNSET

    def kept(self, value: Any) -> Any:
        self.value = value
        return self.encode(value)


_LIVE: ContextVar[_LiveCall | None] = ContextVar("cassette_live_call", default=None)


class ToolCassette:
    """A framework's tool calls recorded to, or replayed from, one cassette.

    Args:
        asynchronous: the framework awaits its tools (``acall``); ``call`` then still
            serves a synchronous call (LangGraph's ``invoke`` and ``ainvoke`` on one
            middleware).
        mode, path, report, config, repeat, overwrite, codec: as ``wrap_dispatcher``
            (default: the ``CASSETTE_*`` environment, no codec).

    Raises:
        as ``wrap_dispatcher``: ValueError, FileExistsError, CassetteFormatError,
        ReportPathError.
    """

    def __init__(
        self,
        *,
        asynchronous: bool,
        mode: str | None = None,
        path: str | Path | None = None,
        report: str | Path | None = None,
        config: str | Path | None = None,
        repeat: str = "error",
        overwrite: bool = False,
        codec: Codec | None = None,
    ) -> None:
        self.asynchronous = asynchronous
        dispatch = self._adispatch if asynchronous else self._dispatch
        self.dispatcher = wrap_dispatcher(
            dispatch,
            mode=mode,
            path=path,
            report=report,
            config=config,
            repeat=repeat,
            overwrite=overwrite,
            codec=codec,
        )

    @property
    def mode(self) -> str:
        """``"record"``, ``"replay"`` or ``"live"``."""
        return str(self.dispatcher.mode)  # type: ignore[attr-defined]

    def report(self) -> dict[str, Any]:
        """The wrapped dispatcher's report (``wrap_dispatcher``'s ``.report()``)."""
        return dict(self.dispatcher.report())  # type: ignore[attr-defined]

    def close(self) -> None:
        """Flush a recording (also done at exit)."""
        self.dispatcher.close()  # type: ignore[attr-defined]

    # -- the dispatcher wrap_dispatcher wraps: the live call comes from the ContextVar -----
    @staticmethod
    def _current(tool: str) -> _LiveCall:
        live = _LIVE.get()
        if live is None:  # the dispatcher is only ever called from call/acall
            raise RuntimeError(f"tool {tool!r}: live call outside a cassette adapter call")
        return live

    def _dispatch(self, tool: str, args: Any) -> Any:
        live = self._current(tool)
        return live.kept(live.run())

    async def _adispatch(self, tool: str, args: Any) -> Any:
        live = self._current(tool)
        value = live.run()
        if inspect.isawaitable(value):
            value = await value
        return live.kept(value)

    # -- what the adapters call -------------------------------------------------------------
    def call(
        self,
        tool: str,
        args: Any,
        run: Callable[[], Any],
        encode: Encode = _same,
        decode: Decode = _same,
        slot: CallSlot | None = None,
    ) -> Any:
        """One synchronous call: ``run()`` live (recorded) or the recording decoded.

        Args:
            tool: the tool name as the cassette keys it.
            args: the call's JSON arguments (the args digest is taken over them).
            run: the live call, with the framework's context bound; never called in replay.
            encode: live value -> recorded JSON; decode: recorded JSON -> the live type.
            slot: the call's place in its model turn, when the framework tells it
                (``replay/turn.py``): its seq and ``batch`` then follow the model's order.

        Raises:
            whatever the live tool raised (record, live); in replay the recorded error,
            as ``ToolError`` of the recorded class whose ``str()`` is the recorded
            message (``_as_recorded``), ``CassetteMiss``, ``ReplayExhausted``.
        """
        live = _LiveCall(run, encode)
        token, placed = _LIVE.set(live), CALL_SLOT.set(slot)
        try:
            if self.asynchronous:
                response = _finish_now(self.dispatcher(tool, args))
            else:
                response = self.dispatcher(tool, args)
        except ToolError as exc:
            raise _as_recorded(exc) from None
        finally:
            CALL_SLOT.reset(placed)
            _LIVE.reset(token)
        return live.value if live.value is not _UNSET else decode(response)

    async def acall(
        self,
        tool: str,
        args: Any,
        run: Callable[[], Awaitable[Any] | Any],
        encode: Encode = _same,
        decode: Decode = _same,
        slot: CallSlot | None = None,
    ) -> Any:
        """``call`` for a framework that awaits its tools (``run()`` may return an
        awaitable). Raises as ``call``."""
        if not self.asynchronous:
            raise TypeError("this ToolCassette is synchronous: use call()")
        live = _LiveCall(run, encode)
        token, placed = _LIVE.set(live), CALL_SLOT.set(slot)
        try:
            response = await self.dispatcher(tool, args)
        except ToolError as exc:
            raise _as_recorded(exc) from None
        finally:
            CALL_SLOT.reset(placed)
            _LIVE.reset(token)
        return live.value if live.value is not _UNSET else decode(response)


def _finish_now(coro: Any) -> Any:
    """Run a coroutine that never suspends (the async wrapped dispatcher around a live
    call that is synchronous, or a replay) to its end, without an event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("the cassette dispatcher suspended in a synchronous call")


def _as_recorded(exc: ToolError) -> BaseException:
    """``exc``, a replayed ``ToolError`` of the recorded class: its ``str()``, ``repr()``
    and ``.args`` are the live exception's already (``errors.ToolError``), so a framework
    that writes them into the conversation (LangChain's ``ToolRetryMiddleware``, the
    Agents SDK's failure text, smolagents' step errors) writes the bytes the live run
    wrote."""
    return exc
