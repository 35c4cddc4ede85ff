"""``AgentConfig`` (what an agent is built from) and ``AgentState`` (what it persists)."""

from __future__ import annotations

from pydantic import Field

from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.llm.config import LlmSettings, ReactAgentConfig
from akgentic.llm.prompts import PromptTemplate
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.state import ToolState

__all__ = ["AgentConfig", "AgentState"]


class AgentConfig(LlmSettings, BaseConfig):
    """Configuration of an LLM agent; every field can be written in YAML.

    The model, roster, retries, budgets and compaction fields (and the rule that a
    ``model_cfg`` list is the roster) come from :class:`~akgentic.llm.config.LlmSettings`.

    Attributes:
        prompt: The backstory, rendered once at start into ``AgentState.backstory`` and
            given to the model as its system prompt.
        model_cfg: The model; a list makes the first entry active and the whole list
            the roster the agent may switch between.
        model_roster: Models the agent may switch to at run time.
        runtime_cfg: Retries and tool-call end strategy.
        run_usage_limits: Budget of one run (reset every run).
        agent_usage_limits: Budget of the agent's whole life (survives restores).
        compaction_cfg: How older history is folded when it grows.
        tools: Tool cards. MailboxTool and TeamTool are added at start when absent.
        command_senders: Members besides humans whose ``/command`` lines this agent
            runs, each by name (``@Lead``) or role (``Lead``). A human (a user proxy)
            may always run them; from anyone else a line starting with ``/`` is
            ordinary text for the model.
    """

    prompt: PromptTemplate = Field(default_factory=PromptTemplate)
    tools: list[ToolCard] = Field(default_factory=list)
    command_senders: list[str] = Field(default_factory=list)

    def react_agent_config(self) -> ReactAgentConfig:
        """The LLM-layer configuration these fields describe (validated there)."""
        return ReactAgentConfig(**self.llm_settings())


class AgentState(BaseState):
    """What an agent checkpoints: its rendered backstory and the tool layer's slot."""

    backstory: str = ""
    tool_state: ToolState = Field(default_factory=ToolState)
