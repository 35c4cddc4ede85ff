"""The agent layer's classes and its message type run the shared contract kits."""

from __future__ import annotations

import pytest

from akgentic.agent import AgentConfig, BaseAgent, HumanProxy, StructuredOutput
from akgentic.agent.messages import AgentMessage
from akgentic.core.agent_config import BaseConfig
from akgentic.core.messages.message import CancelMessage, Message, UserMessage
from akgentic.llm import PromptTemplate
from akgentic.llm.scripted_server import ScriptedLLMServer, structured
from akgentic.testing import AgentClassContract, MessageTypeContract


class TestBaseAgentContract(AgentClassContract):
    """BaseAgent, registered as ``BaseAgent`` by the ``agent`` built-in plugin.

    Its model is the scripted OpenAI-compatible server: every request is answered
    with an empty StructuredOutput, so a turn runs the real model client and sends
    nothing.
    """

    agent_name = "BaseAgent"
    plugin = "akgentic.builtin.agent"

    @pytest.fixture
    def agent_class(self) -> type[BaseAgent]:
        return BaseAgent

    @pytest.fixture
    def config(self, llm_server: ScriptedLLMServer) -> BaseConfig:
        llm_server.fallback = structured(StructuredOutput())
        return AgentConfig(
            name="@Reviewer",
            role="Reviewer",
            prompt=PromptTemplate(template="You review {thing}.", params={"thing": "contracts"}),
            # No api_key: secrets are masked in dumps, so they never round-trip.
            model_cfg=llm_server.model_config(api_key=None),
        )

    @pytest.fixture
    def sample_messages(self) -> list[Message]:
        return [
            AgentMessage(content="Please review clause 4.", type="request"),
            CancelMessage(reason="nothing is running"),
        ]


class TestHumanProxyContract(AgentClassContract):
    """HumanProxy, registered as ``HumanProxy`` by the ``agent`` built-in plugin."""

    agent_name = "HumanProxy"
    plugin = "akgentic.builtin.agent"

    @pytest.fixture
    def agent_class(self) -> type[HumanProxy]:
        return HumanProxy

    @pytest.fixture
    def config(self) -> BaseConfig:
        return BaseConfig(name="@Human", role="Human")

    @pytest.fixture
    def sample_messages(self) -> list[Message]:
        return [
            AgentMessage(content="Which format do you want?", type="request"),
            UserMessage(content="Typed by a person."),
        ]


class TestAgentMessageContract(MessageTypeContract):
    """AgentMessage, registered as ``AgentMessage`` by the ``agent`` built-in plugin."""

    message_name = "AgentMessage"
    plugin = "akgentic.builtin.agent"

    @pytest.fixture(params=["request", "response", "notification", "instruction", "acknowledgment"])
    def message(self, request: pytest.FixtureRequest) -> Message:
        return AgentMessage(content=f"A {request.param}, with\na second line.", type=request.param)
