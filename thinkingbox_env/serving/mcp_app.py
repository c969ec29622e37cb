"""The agent side: a plain MCP server over the episode host.

Tool names, descriptions and input schemas come from the same ``@tool`` definitions the
environment uses, and a call runs through the same ``Toolbox.call`` error contract; the
task's opening request is a prompt, the policy and the knowledge base are resources. Tool
calls of different sessions run concurrently on worker threads while one session's calls
run one at a time in arrival order.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError

from ..tasks.domain import Domain
from ..version import __version__
from .episodes import EpisodeHost, SessionError

ERROR_KIND_META = "thinkingbox/error_kind"
WRITES_META = "thinkingbox/writes"


def _session_key(ctx: Any) -> str | None:
    """The server-issued session id of an HTTP request (checked by :class:`SessionGate`); None elsewhere."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


OPENING_PROMPT = "opening_request"


def _policy_text(domain: Domain) -> str:
    """The policy as the environment's opening observation gives it (title and frozen clock first)."""
    return f"# {domain.spec.title}\n\nCurrent time: {domain.spec.clock.isoformat()}\n\n{domain.policy.strip()}\n"


def _documents(domain: Domain) -> dict[str, tuple[str, str, str]]:
    """``uri -> (name, description, text)``: what an agent may read besides the tools (policy and knowledge base)."""
    docs = {f"thinkingbox://{domain.name}/policy": (
        "policy", f"The {domain.spec.title} policy the agent must follow, with the current time", _policy_text(domain))}
    for name, text in domain.kb_documents().items():
        docs[f"thinkingbox://{domain.name}/kb/{name}"] = (f"kb/{name}", f"Knowledge-base document {name}", text)
    return docs


def build_mcp_server(host: EpisodeHost) -> Server:
    """The agent side, so an MCP client gets the whole task over MCP.

    The tools, the task's opening request as a prompt, and the policy and KB as resources.
    """
    documents = _documents(host.domain)
    tools = [
        types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
        for t in host.toolbox.tools.values()
    ]

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            ep = host.episode(_session_key(ctx))
            if ep.order is None:
                ep.order = anyio.Lock()  # FIFO: the session's calls run in the order they arrived
            async with ep.order:  # queued here, on the loop, so a flood of one session's calls holds no thread
                result = await anyio.to_thread.run_sync(host.call_on, ep, params.name, params.arguments, limiter=host.limiter())
        except SessionError as exc:  # expired between the gate and the call: refuse, never run on another state
            raise MCPError(types.INVALID_REQUEST, str(exc)) from exc
        return types.CallToolResult(
            content=[types.TextContent(text=result.text())],
            is_error=not result.ok,
            _meta={ERROR_KIND_META: result.error_kind, WRITES_META: result.writes},
        )

    async def on_list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=OPENING_PROMPT, description="The customer's opening request of this session's task")])

    async def on_get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != OPENING_PROMPT:
            raise ValueError(f"unknown prompt '{params.name}'; this server has '{OPENING_PROMPT}'")
        task = host.episode(_session_key(ctx)).task
        return types.GetPromptResult(description=f"The opening request of task {task.full_id}", messages=[
            types.PromptMessage(role="user", content=types.TextContent(text=task.user.opening))])

    async def on_list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=name, description=desc, mime_type="text/markdown", size=len(text.encode()))
            for uri, (name, desc, text) in documents.items()])

    async def on_read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri not in documents:
            raise ValueError(f"unknown resource '{uri}'; list_resources names the policy and the knowledge-base documents")
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown",
                                                                             text=documents[uri][2])])

    return Server(
        "thinkingbox",
        version=__version__,
        instructions=f"Tools of the {host.domain.spec.title} backend. The prompt '{OPENING_PROMPT}' is the customer's "
                     "request; the resources are the policy to follow and the knowledge base.",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
        on_list_resources=on_list_resources,
        on_read_resource=on_read_resource,
    )
