"""MCP record and replay: a stdio proxy that records a real MCP server's ``tools/call``
exchanges into a cassette (``record``), and a stand-in server that answers a host from that
cassette offline (``replay``).

Imported only by ``cassette-tui mcp`` (``tui/commands/mcp.py``): the engine
(``cassette_tui.core``) never imports the MCP SDK, anyio or pydantic.

Modules: ``_facts`` (the server-facts sidecar: what replay needs besides the tool calls),
``_wire`` (one JSON-RPC line <-> SDK message types; tools/call <-> cassette entry),
``_stdio`` (the stdio transport's two ends), ``record`` (the recording proxy), ``replay``
(the stand-in server), ``host`` (``server_params``: an MCP SDK host's server behind
``cassette-tui mcp``).
"""
