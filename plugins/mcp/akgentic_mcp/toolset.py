"""Building one server's toolset, and the guard that keeps a bad server from hurting a turn.

The MCP client (pydantic-ai's ``MCPToolset`` over a fastmcp transport) is imported
here only, inside the functions that build it, so listing cards or loading a team
file never imports it. The guard (:class:`MCPGuard`):

- turns a failure to connect into "no tools from this server for this run" and one
  WARNING per outage, instead of a failed turn; the next run tries again;
- drops tool names a model API would refuse or that would shadow the agent's own
  output tool, and repeated names, one WARNING per name;
- cuts tool descriptions longer than ``max_description_chars`` and replaces an input
  schema longer than ``max_schema_chars`` (as JSON) by a permissive object schema,
  each with a note, and offers at most ``max_tools`` tools, since every description
  and schema goes into every model request;
- cuts results longer than ``max_result_chars``;
- refuses to connect when the card reads a host variable the operator did not allow
  (``AKGENTIC_MCP_ALLOWED_ENV``), with one WARNING naming the variable and the setting.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset

from akgentic_mcp.config import (
    EnvNotAllowedError,
    MCPHTTPConnectionConfig,
    MCPStdioConnectionConfig,
    describe_server,
    read_allowed_env,
)

__all__ = [
    "MCPGuard",
    "build_mcp_toolset",
    "build_transport",
    "cap_result",
    "cap_tool",
    "child_environment",
]

logger = logging.getLogger(__name__)

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_RESERVED_PREFIX = "final_result"

Connection = MCPHTTPConnectionConfig | MCPStdioConnectionConfig


def child_environment(connection: MCPStdioConnectionConfig) -> dict[str, str]:
    """What a stdio child sees: the SDK's safe defaults, ``stdio_env``, ``stdio_env_from``
    and the token variable.

    Nothing else of the parent's environment (API keys in particular) reaches it.

    Raises:
        EnvNotAllowedError: a host variable named is not allowed by the operator.
    """
    from mcp.client.stdio import get_default_environment

    env = dict(get_default_environment())
    given, lost = connection.given_env()
    if lost:
        logger.warning(
            "%s: stdio_env %s not stored (secrets are kept out of the log); the child "
            "starts without them: name host variables in stdio_env_from instead",
            describe_server(connection),
            ", ".join(sorted(lost)),
        )
    env.update(given)
    for child, host in (connection.stdio_env_from or {}).items():
        value = read_allowed_env(host, "stdio_env_from")
        if value is not None:
            env[child] = value
    token = connection.token()
    if token is not None and connection.stdio_token_env_var is not None:
        env[connection.stdio_token_env_var] = token
    return env


def build_transport(connection: Connection) -> Any:
    """The fastmcp transport object for ``connection`` (auth header on the transport)."""
    from fastmcp.client.transports import SSETransport, StdioTransport, StreamableHttpTransport

    if isinstance(connection, MCPStdioConnectionConfig):
        return StdioTransport(
            command=connection.stdio_command,
            args=list(connection.stdio_args),
            env=child_environment(connection),
            cwd=connection.stdio_cwd,
            keep_alive=False,  # the child lives as long as the session, no longer
        )
    token = connection.token()
    headers = {"Authorization": f"Bearer {token}"} if token else None
    if connection.transport == "sse":
        return SSETransport(
            connection.url, headers=headers, sse_read_timeout=connection.read_timeout
        )
    return StreamableHttpTransport(connection.url, headers=headers)


def build_mcp_toolset(connection: Connection) -> AbstractToolset[Any]:
    """The bare toolset of one server: no guard, prefixed when ``tool_prefix`` is set.

    No sampling model or elicitation handler is given, so requests the server
    initiates are refused; the server's instructions never reach the model.
    """
    from pydantic_ai.mcp import MCPToolset

    toolset: AbstractToolset[Any] = MCPToolset(
        build_transport(connection),
        init_timeout=connection.timeout,
        read_timeout=connection.read_timeout,
        include_instructions=False,
        max_retries=None,
    )
    if connection.tool_prefix:
        toolset = toolset.prefixed(connection.tool_prefix)
    return toolset


def _cut(text: str, limit: int) -> str:
    return f"{text[:limit]}[… truncated: {len(text) - limit} characters omitted]"


def cap_tool(
    tool: ToolsetTool[Any], max_description: int | None, max_schema: int | None
) -> tuple[ToolsetTool[Any], list[str]]:
    """``tool`` with its description and input schema within the caps, and what was cut."""
    definition = tool.tool_def
    description = definition.description or ""
    schema = definition.parameters_json_schema
    cut: list[str] = []
    if max_schema is not None:
        size = len(json.dumps(schema, ensure_ascii=False, default=str))
        if size > max_schema:
            schema = {"type": "object", "additionalProperties": True}
            description += f"\n[input schema omitted: {size} characters, over the cap]"
            cut.append(f"input schema of {size} characters")
    if max_description is not None and len(description) > max_description:
        cut.append(f"description of {len(description)} characters")
        description = _cut(description, max_description)
    if not cut:
        return tool, cut
    changed = dataclasses.replace(
        definition, description=description, parameters_json_schema=schema
    )
    return dataclasses.replace(tool, tool_def=changed), cut


def cap_result(result: Any, limit: int | None) -> Any:
    """``result`` unchanged when short enough, else its text cut to ``limit`` plus a marker."""
    if limit is None:
        return result
    if isinstance(result, str):
        text = result
    else:
        try:
            text = json.dumps(result, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(result)
    if len(text) <= limit:
        return result
    return _cut(text, limit)


def _cause(error: BaseException) -> str:
    """A one-line cause, looking inside exception groups (anyio wraps failures in them)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"


@dataclass
class MCPGuard(WrapperToolset[Any]):
    """One MCP server's toolset, made safe for the turn it serves (see the module docstring).

    Attributes:
        server: How logs name the server (command, or URL without credentials).
        max_result_chars: Longest result text passed on; None for no cap.
        max_description_chars: Longest tool description passed on; None for no cap.
        max_schema_chars: Longest input schema (as JSON) passed on; None for no cap.
        max_tools: Most tools offered (the first listed); None for no cap.
        refusal: Why this server may not be reached at all (a host variable the
            operator did not allow); None when it may.
    """

    server: str = "MCP server"
    max_result_chars: int | None = 100_000
    max_description_chars: int | None = 4_000
    max_schema_chars: int | None = 20_000
    max_tools: int | None = 100
    refusal: str | None = None
    _entries: list[bool] = field(default_factory=list, init=False, repr=False)
    _warned: set[str] = field(default_factory=set, init=False, repr=False)
    _outage: str | None = field(default=None, init=False, repr=False)

    async def __aenter__(self) -> MCPGuard:
        if self.refusal is not None:
            if self.refusal not in self._warned:
                self._warned.add(self.refusal)
                logger.warning("%s is not reached: %s", self.server, self.refusal)
            self._entries.append(False)
            return self
        try:
            await self.wrapped.__aenter__()
        except Exception as error:
            cause = _cause(error)
            # Once per outage: the same failure again (the next attempt of the same run,
            # or later runs while the server stays down) is only logged at DEBUG.
            level = logging.DEBUG if cause == self._outage else logging.WARNING
            self._outage = cause
            logger.log(
                level, "%s is unavailable; this run has none of its tools (%s)", self.server, cause
            )
            self._entries.append(False)
        else:
            self._outage = None
            self._entries.append(True)
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        entered = self._entries.pop() if self._entries else False
        if not entered:
            return None
        try:
            await self.wrapped.__aexit__(*args)
        except Exception as error:
            logger.warning("closing the connection to %s failed (%s)", self.server, _cause(error))
        return None

    @property
    def connected(self) -> bool:
        """True while at least one entry of this toolset reached the server."""
        return any(self._entries)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        if not self.connected:
            return {}
        try:
            tools = await self.wrapped.get_tools(ctx)
        except Exception as error:
            logger.warning("%s did not list its tools (%s)", self.server, _cause(error))
            return {}
        kept: dict[str, ToolsetTool[Any]] = {}
        for name, tool in tools.items():
            reason = self._refusal(name, kept)
            if reason is None:
                kept[name], cut = cap_tool(tool, self.max_description_chars, self.max_schema_chars)
                if cut and f"cut:{name}" not in self._warned:
                    self._warned.add(f"cut:{name}")
                    logger.warning("%s: tool %r cut: %s", self.server, name, ", ".join(cut))
            elif name not in self._warned:
                self._warned.add(name)
                logger.warning("%s: tool %r dropped: %s", self.server, name[:100], reason)
        if self.max_tools is not None and len(kept) > self.max_tools:
            if "max_tools" not in self._warned:
                self._warned.add("max_tools")
                logger.warning(
                    "%s offers %d tools; only the first %d are offered (max_tools)",
                    self.server,
                    len(kept),
                    self.max_tools,
                )
            kept = dict(list(kept.items())[: self.max_tools])
        return kept

    @staticmethod
    def _refusal(name: str, kept: dict[str, Any]) -> str | None:
        if not _TOOL_NAME.fullmatch(name):
            return "a tool name must be 1 to 64 letters, digits, '_' or '-'"
        if name.startswith(_RESERVED_PREFIX):
            return f"names starting with {_RESERVED_PREFIX!r} are the agent's own"
        if name in kept:
            return "the name repeats an earlier tool"
        return None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        result = await self.wrapped.call_tool(name, tool_args, ctx, tool)
        return cap_result(result, self.max_result_chars)


def guarded(
    connection: Connection,
    max_result_chars: int | None,
    max_description_chars: int | None = 4_000,
    max_schema_chars: int | None = 20_000,
    max_tools: int | None = 100,
) -> MCPGuard:
    """The bare toolset of ``connection`` inside its guard (nothing connects yet).

    A connection reading a host variable the operator did not allow gets a guard
    that never connects and says why (the variable is not read).
    """
    from pydantic_ai.toolsets import FunctionToolset

    refusal: str | None = None
    wrapped: AbstractToolset[Any]
    try:
        connection.check_allowed_env()
        wrapped = build_mcp_toolset(connection)
    except EnvNotAllowedError as error:
        refusal, wrapped = str(error), FunctionToolset()
    return MCPGuard(
        wrapped,
        server=describe_server(connection),
        max_result_chars=max_result_chars,
        max_description_chars=max_description_chars,
        max_schema_chars=max_schema_chars,
        max_tools=max_tools,
        refusal=refusal,
    )
