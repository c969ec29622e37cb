"""Over MCP alone a client gets the whole task: the opening request as a prompt, the policy and KB as resources."""

from __future__ import annotations

import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

import thinkingbox_env as tb
from thinkingbox_env.tasks.domain import load_domain


def test_opening_request_prompt_and_policy_and_kb_resources_over_stdio():
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "thinkingbox_env.cli", "serve", "retail/ST030_001", "--transport", "stdio"])

    async def main():
        async with Client(params, mode="legacy") as client:
            prompts = await client.list_prompts()
            opening = await client.get_prompt("opening_request", {})
            listed = await client.list_resources()
            texts = {}
            for r in listed.resources:
                read = await client.read_resource(str(r.uri))
                texts[str(r.uri)] = read.contents[0].text
            try:
                await client.read_resource("thinkingbox://retail/golden")
                missing = None
            except Exception as exc:  # noqa: BLE001 - the client raises the server's error
                missing = str(exc)
            return prompts, opening, texts, missing

    prompts, opening, texts, missing = anyio.run(main)
    assert [p.name for p in prompts.prompts] == ["opening_request"]
    assert opening.messages[0].role == "user"
    assert opening.messages[0].content.text == tb.load_task("retail/ST030_001").user.opening
    env = tb.make("retail/ST030_001")
    obs, _ = env.reset(seed=0)
    env_policy = obs["messages"][1]["content"]
    env.close()
    assert texts["thinkingbox://retail/policy"] == env_policy  # the same text the environment shows the agent
    kb = load_domain("retail").kb_documents()
    assert kb and all(texts[f"thinkingbox://retail/kb/{name}"] == text for name, text in kb.items())
    assert missing is not None and "unknown resource" in missing
