"""Where a call stands in its model turn, when the framework says so: the seq and the
``batch`` mark of parallel calls by the model's own order, not by timing.

The recorder gives each call its seq as it starts and marks ``batch`` on calls that
overlapped in time (``recorder.py``). A framework that runs one turn's calls in a thread
pool (LangGraph's ``ToolNode``) starts them in whatever order the threads reach the lock,
and fast tools may never overlap: two recordings of the same run then differ in seq order
and in their ``batch`` marks. An adapter that knows the turn (the AI message and the
call's place in its ``tool_calls``) sets ``CALL_SLOT`` for the length of the call; the
recorder then gives the turn's calls consecutive seqs in the model's order and marks them
one batch whenever the turn has several calls.
"""

from __future__ import annotations

from collections.abc import Hashable
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class CallSlot:
    """One call's place in its model turn.

    Attributes:
        turn: what names the turn in this recording (an AI message's id).
        index: the call's 0-based position among the turn's calls, as the model wrote them.
        count: how many calls the turn holds (``index < count``).
    """

    turn: Hashable
    index: int
    count: int


#: the slot of the call in progress in this thread or task (``None``: not known)
CALL_SLOT: ContextVar[CallSlot | None] = ContextVar("cassette_call_slot", default=None)
