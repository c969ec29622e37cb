"""A tiny benchmark-style tool server for the tests: three reserved tools, two shop tools, and a
``search_policy`` that (like the real one without its search service) cannot answer.

State is a dict of orders held in this process, so one process is one episode.
``__reserved__init`` applies the ``data_patch`` and computes the golden state by
replaying ``golden_test_case.tool_interactions`` on a copy; it refuses a config
that still carries ``sources``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

STATE: dict = {"orders": {}, "golden": {}, "initial": {}, "rubrics": []}


def _hash(orders: dict) -> str:
    return hashlib.sha256(json.dumps(orders, sort_keys=True).encode()).hexdigest()


def get_order(orders: dict, order_id: str) -> dict:
    if order_id not in orders:
        raise ValueError(f"no order {order_id}")
    return {"order_id": order_id, **orders[order_id]}


def cancel_order(orders: dict, order_id: str, reason: str) -> dict:
    order = orders.get(order_id)
    if order is None:
        raise ValueError(f"no order {order_id}")
    if order["status"] != "pending":
        raise ValueError(f"order {order_id} is {order['status']} and cannot be cancelled")
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    return {"order_id": order_id, "status": "cancelled"}


TOOLS = {"get_order": get_order, "cancel_order": cancel_order}


def init(config: dict) -> dict:
    if "sources" in config:
        raise ValueError("sources need the search service, which is not running")
    orders = copy.deepcopy(config.get("orders") or {})
    for oid, change in ((config.get("data_patch") or {}).get("orders") or {}).items():
        orders[oid] = {**orders.get(oid, {}), **change}
    golden = copy.deepcopy(orders)
    for step in (config.get("golden_test_case") or {}).get("tool_interactions") or []:
        TOOLS[step["name"]](golden, **step["arguments"])
    STATE.update(orders=orders, golden=golden, initial=copy.deepcopy(orders), rubrics=list(config.get("rubrics_yesno") or []))
    return {}


def effects() -> dict:
    orders, initial = STATE["orders"], STATE["initial"]
    diff = {oid: {"before": initial.get(oid), "after": row} for oid, row in orders.items() if initial.get(oid) != row}
    return {"result_db_hash": _hash(orders), "golden_db_hash": _hash(STATE["golden"]), "diff": diff,
            "rubrics_yesno": STATE["rubrics"]}


def _schema(**props: str) -> dict:
    return {"type": "object", "properties": {k: {"type": "string", "description": v} for k, v in props.items()},
            "required": list(props)}


LISTED = [
    types.Tool(name="__reserved__init", description="reserved", input_schema={"type": "object", "properties": {"config": {"type": "object"}}}),
    types.Tool(name="__reserved__geteffects", description="reserved", input_schema={"type": "object", "properties": {}}),
    types.Tool(name="__reserved__teardown", description="reserved", input_schema={"type": "object", "properties": {}}),
    types.Tool(name="get_order", description="Look up an order by its id.", input_schema=_schema(order_id="the order id, e.g. O1"),
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="cancel_order", description="Cancel a pending order.",
               input_schema=_schema(order_id="the order id", reason="why the customer cancels")),
    types.Tool(name="search_policy", description="Search the shop policy.", input_schema=_schema(query="what to look for")),
]


async def on_list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=LISTED)


async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = dict(params.arguments or {})
    try:
        if params.name == "__reserved__init":
            out = init(args["config"])
        elif params.name == "__reserved__geteffects":
            out = effects()
        elif params.name == "__reserved__teardown":
            out = {}
        elif params.name in TOOLS:
            out = TOOLS[params.name](STATE["orders"], **args)
        else:
            raise ValueError(f"{params.name} is not available: search service unreachable")
    except Exception as exc:  # noqa: BLE001 - every failure is a tool error the client sees
        return types.CallToolResult(content=[types.TextContent(text=json.dumps({"error": str(exc)}))], is_error=True)
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(out))])


async def main() -> None:
    server = Server("toy-shop", version="1.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    sys.exit(anyio.run(main))
