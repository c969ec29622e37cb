"""Solve retail/ST030_001 by hand through `thinkingbox serve`, with the official MCP client.

The server is started as a subprocess over stdio, exactly as a desktop agent or an
IDE would start it. The operator API (verdict, diff) runs on a private Unix socket
that the agent side never sees.
"""

import json
import os
import sys
import tempfile

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from thinkingbox_env.serving.backend import OperatorClient

EMAIL = "anders.achterberg98@example.org"


async def main() -> None:
    socket_path = os.path.join(tempfile.mkdtemp(), "operator.sock")
    operator_token = "example-operator-token"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "thinkingbox_env.cli", "serve", "retail/ST030_001", "--transport", "stdio", "--operator-socket", socket_path],
        env={**os.environ, "THINKINGBOX_OPERATOR_TOKEN": operator_token},
    )
    async with Client(server, mode="legacy") as client:
        tools = await client.list_tools()
        print("tools:", ", ".join(t.name for t in tools.tools))

        async def call(name: str, **arguments):
            result = await client.call_tool(name, arguments)
            data = json.loads(result.content[0].text)
            print(f"{name}({arguments}) -> {'ERROR ' if result.is_error else ''}{json.dumps(data)[:100]}")
            return data

        profile = await call("get_customer_profile", email=EMAIL)
        users = await call("search_tickets", table="users", filter=f"email eq '{EMAIL}'")
        requester = users["items"][0]["id"]
        await call("get_membership", customer_id=profile["id"])
        ticket = await call("create_ticket", requester_id=requester, subject="Join Brightwell Plus", category="membership")
        await call("update_membership", customer_id=profile["id"], action="upgrade")
        await call("update_ticket", ticket_id=ticket["id"], status="solved")

        operator = OperatorClient(operator_token, socket_path=socket_path)
        verdict = operator.verdict("default", final_message="You are now a Brightwell Plus member until 2027-03-02.")
        print("verdict:", verdict["verdict"])
        for name, passed in verdict["checks"].items():
            print(f"  {'PASS' if passed else 'FAIL'}  {name}")


if __name__ == "__main__":
    anyio.run(main)
