"""``AgentConfig`` (what an agent is built from) and ``AgentState`` (what it persists)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.llm.config import (
    AgentUsageLimits,
    CompactionConfig,
    ModelConfig,
    ReactAgentConfig,
    RuntimeConfig,
    RunUsageLimits,
    normalize_model_roster,
)
from akgentic.llm.prompts import PromptTemplate
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.state import ToolState

__all__ = ["AgentConfig", "AgentState"]


class AgentConfig(BaseConfig):
    """Configuration of an LLM agent; every field can be written in YAML.

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
    model_cfg: ModelConfig = Field(default_factory=ModelConfig)
    model_roster: list[ModelConfig] = Field(default_factory=list)
    runtime_cfg: RuntimeConfig = Field(default_factory=RuntimeConfig)
    run_usage_limits: RunUsageLimits = Field(default_factory=RunUsageLimits)
    agent_usage_limits: AgentUsageLimits = Field(default_factory=AgentUsageLimits)
    compaction_cfg: CompactionConfig = Field(default_factory=CompactionConfig)
    tools: list[ToolCard] = Field(default_factory=list)
    command_senders: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _roster_from_list(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("model_cfg"), list):
            data = dict(data)
            active, roster = normalize_model_roster(data["model_cfg"], data.get("model_roster"))
            data["model_cfg"], data["model_roster"] = active, roster
        return data

    def react_agent_config(self) -> ReactAgentConfig:
        """The LLM-layer configuration these fields describe (validated there)."""
        return ReactAgentConfig(
            model_cfg=self.model_cfg,
            model_roster=self.model_roster,
            runtime_cfg=self.runtime_cfg,
            run_usage_limits=self.run_usage_limits,
            agent_usage_limits=self.agent_usage_limits,
            compaction_cfg=self.compaction_cfg,
        )


class AgentState(BaseState):
    """What an agent checkpoints: its rendered backstory and the tool layer's slot."""

    backstory: str = ""
    tool_state: ToolState = Field(default_factory=ToolState)
