"""Drop-in record/replay for agent frameworks: one module per framework, each imported only
when used (the framework is an optional dependency, the ``[frameworks]`` extra pins the
versions tested).

- ``cassette_tui.core.adapters.pydantic_ai``: ``CassetteCapability`` / ``CassetteToolset``
- ``cassette_tui.core.adapters.langchain``: ``CassetteMiddleware`` (``wrap_tool_call``,
  ``awrap_tool_call``; also a LangGraph ``ToolNode``'s wrappers)
- ``cassette_tui.core.adapters.openai_agents``: ``cassette_agent`` / ``cassette_tools``
- ``cassette_tui.core.adapters.smolagents``: ``cassette_agent``

Each builds on ``replay.wrap.wrap_dispatcher`` through ``ToolCassette`` (``_bridge.py``), so
the environment contract (``CASSETTE_MODE``, ``CASSETTE_PATH``, ``CASSETTE_REPORT``) drives
a framework agent under ``cassette-tui record|replay|gate --agent`` unchanged; pass one
``ToolCassette`` (``cassette=``) to the adapters of several agents of one run. This package
imports no framework.
"""

from ._bridge import ToolCassette

__all__ = ["ToolCassette"]
