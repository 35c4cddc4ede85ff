# The guide imports cards from seed paths (akgentic.tool.planning, akgentic.tool.search)
# that plugin packages serve at run time through the alias finder; no file stands there
# for mypy to read, and the guide's block below must stay as the guide has it.
# mypy: disable-error-code="import-not-found"
"""The Quick Start of the tool guide (docs/tool-quickstart.md), as a script.

The block between the two ``# ----`` lines is the guide's code, unchanged (the
comments are ours): three catalog cards (workspace, planning, search) wired to one
agent by a ``ToolFactory``, then what each channel serves. It needs those three
plugins installed (``make install`` does).

Inside a team, ``BaseAgent`` builds this factory itself, with itself as ``agent``. A
script is not an agent, so here ``agent`` is a stand-in member of a real team: a real
actor system and orchestrator (the planning card asks it for the team's
``#PlanningTool`` actor), with the observer protocol of
:class:`akgentic.tool.testing.RecordingObserver`. Nothing leaves the machine: files go
under ``$AKGENTIC_WORKSPACES_ROOT`` (default ``./workspaces``), and ``SearchTool``
without ``TAVILY_API_KEY`` tells the model it is unavailable instead of searching.

Run: ``python examples/tool_quickstart.py``; it prints what each channel serves and
calls one command and one
tool. ``tests/tool/test_tool_quickstart.py`` runs this file.
"""

# ruff: noqa: E402, I001 - the guide's block is kept as written, imports mid-file included

from typing import Any

from pydantic_ai import ModelRetry

from akgentic.core import ActorSystem, BaseConfig, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.tool.testing import RecordingObserver

actor_system = ActorSystem()
orchestrator = actor_system.createActor(
    Orchestrator, config=BaseConfig(name="@Orchestrator", role="Orchestrator")
)


class TeamMember(RecordingObserver):
    """Plays the agent: records its events, and reaches the actors of a real team."""

    @property
    def orchestrator(self) -> ActorAddress | None:
        return orchestrator

    def proxy_ask(self, actor: Any, actor_type: Any = None, timeout: float | None = None) -> Any:
        return actor_system.proxy_ask(actor, actor_type, timeout=timeout or 30.0)

    def proxy_tell(self, actor: Any, actor_type: Any = None) -> Any:
        return actor_system.proxy_tell(actor, actor_type)


agent = TeamMember(name="@Developer")

# fmt: off
# ---- the guide's Quick Start, unchanged --------------------------------------------
from akgentic.tool import (
    ToolFactory,
    WorkspaceTool,
)
from akgentic.tool.planning import PlanningTool
from akgentic.tool.search import SearchTool

# One factory serving three cards
factory = ToolFactory(
    tool_cards=[
        WorkspaceTool(),          # the team's files, reads and writes
        PlanningTool(),           # tasks shared by the whole team
        SearchTool(),             # web search and page fetch (Tavily)
    ],
    observer=agent,               # the agent the tools act for
    retry_exception=ModelRetry,   # what a card's retriable error becomes
)

# What an agent hands to pydantic-ai
tools = factory.get_tools()            # functions the model may call
prompts = factory.get_system_prompts() # text added to the system prompt
states = factory.get_context_states()  # per-turn state, sent as changes
commands = factory.get_commands()      # calls made by code, not the model
# ---- end of the Quick Start --------------------------------------------------------
# fmt: on


def main() -> None:
    """Print what each channel serves, call a command as code would, then a tool."""
    print("tools:", ", ".join(tool.__name__ for tool in tools))
    print("system prompts:", len(prompts))
    print("context states:", ", ".join(state.__name__ for state in states))
    print("commands:", ", ".join(f"{p.__name__}->{c.__name__}" for p, c in commands.items()))
    write = next(c for p, c in commands.items() if c.__name__ == "workspace_write")
    print(write("hello.md", "written by a command\n"))
    # Tools are wrapped: a card's RetriableError reaches pydantic-ai as ModelRetry.
    read = next(tool for tool in tools if tool.__name__ == "workspace_read")
    try:
        read("missing.md")
    except ModelRetry as retry:
        print("ModelRetry:", retry.message.splitlines()[0])


if __name__ == "__main__":
    try:
        main()
    finally:
        actor_system.shutdown()
