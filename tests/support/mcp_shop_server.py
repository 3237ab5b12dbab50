"""An order-desk MCP server for the MCP user's walk (tests/cli/test_mcp_user_walk.py),
built on the official SDK's ``MCPServer`` (FastMCP in SDK 1.x), run over stdio or
Streamable HTTP (``--http PORT``).

``--contract 1`` (default) or ``2``: the server's release. Release 2 changed the ``refund``
tool's contract (its description, and ``amount_cents: int`` became ``amount: str`` plus a
required ``currency``) and ``get_order``'s answer (a ``currency`` field), so a host written
for release 1 fails on release 2 and a recording of release 1 is stale against it.

Tools:
- ``get_order(order_id)`` (``readOnlyHint``): the order, with a log message;
- ``set_status(order_id, status)`` (``idempotentHint``, a write);
- ``sync_catalog()``: two progress notifications, a log message and
  ``notifications/tools/list_changed``, then the catalogue size;
- ``summarize(order_id)``: asks the host to sample (``sampling/createMessage``) and
  answers with the host's text;
- ``confirm_cancel(order_id)``: asks the host to confirm (``elicitation/create``);
- ``refund``: see above.

A resource ``shop://policy``, a template ``shop://orders/{order_id}``, a prompt
``apology(customer)``. ``--api-key KEY`` is echoed by the ``shop://config`` resource, the
log message of ``get_order`` and the first progress message of ``sync_catalog`` (a secret
that must not reach a recording in clear).
"""

from __future__ import annotations

import sys
import warnings

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import SamplingMessage, TextContent, ToolAnnotations
from pydantic import BaseModel

# the 2026-07-28 protocol deprecates logging and sampling; this server still speaks them
warnings.simplefilter("ignore", MCPDeprecationWarning)


def _option(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


CONTRACT = int(_option("--contract", "1"))
API_KEY = _option("--api-key", "")
server = MCPServer("order-desk", version=f"{CONTRACT}.0")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def get_order(order_id: str, ctx: Context) -> dict[str, object]:
    """The order's status and total (read only)."""
    # a server that logs its configuration: the key in a notification and a progress text
    await ctx.info(f"looking up {order_id}" + (f" with api_key={API_KEY}" if API_KEY else ""))
    order: dict[str, object] = {"order_id": order_id, "status": "late", "total_cents": 1250}
    if CONTRACT >= 2:
        order["currency"] = "EUR"
    return order


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=True))
def set_status(order_id: str, status: str) -> dict[str, str]:
    """Set the order's status (idempotent)."""
    return {"order_id": order_id, "status": status}


@server.tool()
async def sync_catalog(ctx: Context) -> dict[str, int]:
    """Refresh the catalogue: reports progress and announces a changed tool list."""
    await ctx.report_progress(1, 2, "fetching" + (f" with {API_KEY}" if API_KEY else ""))
    await ctx.report_progress(2, 2, "indexing")
    await ctx.info("catalogue synced")
    # the session-level notification (ctx.notify_tools_changed reaches only the 2026-07-28
    # subscriptions/listen streams)
    await ctx.session.send_tool_list_changed()
    await ctx.notify_tools_changed()  # and to the 2026-07-28 subscriptions/listen streams
    return {"items": 42}


@server.tool()
async def summarize(order_id: str, ctx: Context) -> str:
    """A one-line summary of the order, written by the host's model (sampling)."""
    message = SamplingMessage(
        role="user", content=TextContent(type="text", text=f"Summarize order {order_id}")
    )
    result = await ctx.session.create_message(messages=[message], max_tokens=50)
    content = result.content
    return content.text if isinstance(content, TextContent) else str(content)


class Confirm(BaseModel):
    confirm: bool


@server.tool()
async def confirm_cancel(order_id: str, ctx: Context) -> str:
    """Ask the user to confirm the cancellation (elicitation)."""
    answer = await ctx.elicit(f"Cancel order {order_id}?", Confirm)
    confirmed = answer.action == "accept" and bool(answer.data and answer.data.confirm)
    return "cancelled" if confirmed else "kept"


if CONTRACT == 1:

    @server.tool(annotations=ToolAnnotations(destructiveHint=True))
    def refund(order_id: str, amount_cents: int) -> dict[str, object]:
        """Refund part of an order, in cents."""
        return {"order_id": order_id, "refunded_cents": amount_cents}

else:

    @server.tool(annotations=ToolAnnotations(destructiveHint=True))
    def refund(order_id: str, amount: str, currency: str) -> dict[str, object]:
        """Refund part of an order: a decimal amount in the given currency."""
        return {"order_id": order_id, "refunded": amount, "currency": currency}


@server.resource("shop://policy")
def policy() -> str:
    """The refund policy."""
    return "Refunds within 30 days."


@server.resource("shop://config")
def config() -> str:
    """The server's configuration (holds its API key)."""
    return f'{{"api_key": "{API_KEY}"}}'


@server.resource("shop://orders/{order_id}")
def order_note(order_id: str) -> str:
    """The order's note."""
    return f"order {order_id}: customer waited 9 days"


@server.prompt()
def apology(customer: str) -> str:
    """An apology to the customer."""
    return f"Write a short apology to {customer}."


if __name__ == "__main__":
    if "--http" in sys.argv:
        server.run("streamable-http", host="127.0.0.1", port=int(_option("--http", "0")))
    else:
        server.run("stdio")
