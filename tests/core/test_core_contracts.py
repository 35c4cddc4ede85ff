"""The kernel's own agent class and message types run the shared contract kits."""

from __future__ import annotations

import pytest

from akgentic.core import UserProxy
from akgentic.core.messages.message import CancelMessage, Message, ResultMessage, UserMessage
from akgentic.testing import AgentClassContract, MessageTypeContract


class TestUserProxyContract(AgentClassContract):
    """UserProxy, registered as ``UserProxy`` by the ``core`` built-in plugin."""

    agent_name = "UserProxy"
    plugin = "akgentic.builtin.core"

    @pytest.fixture
    def agent_class(self) -> type[UserProxy]:
        return UserProxy

    @pytest.fixture
    def sample_messages(self) -> list[Message]:
        return [UserMessage(content="Hello from the team.")]


class TestUserMessageContract(MessageTypeContract):
    """UserMessage, registered under its class name by the ``core`` built-in plugin."""

    message_name = "UserMessage"
    plugin = "akgentic.builtin.core"

    @pytest.fixture
    def message(self) -> Message:
        return UserMessage(content="Multi-line\ntext with unicode: \u00e9\u6f22\U0001f600")


class TestResultMessageContract(MessageTypeContract):
    """ResultMessage, registered under its class name by the ``core`` built-in plugin."""

    message_name = "ResultMessage"
    plugin = "akgentic.builtin.core"

    @pytest.fixture
    def message(self) -> Message:
        return ResultMessage(content="42", display_type="other")


class TestCancelMessageContract(MessageTypeContract):
    """CancelMessage, registered under its class name by the ``core`` built-in plugin."""

    message_name = "CancelMessage"
    plugin = "akgentic.builtin.core"

    @pytest.fixture(params=["with a reason", "empty reason"])
    def message(self, request: pytest.FixtureRequest) -> Message:
        return CancelMessage(reason="superseded" if request.param == "with a reason" else "")
