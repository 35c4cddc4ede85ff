"""The team layer's message type runs the shared MessageTypeContract."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from akgentic.core.messages.message import Message
from akgentic.plugins import MessageTypeSpec, hookimpl
from akgentic.team.messages import WelcomeMessage
from akgentic.testing import MessageTypeContract


class TestWelcomeMessageContract(MessageTypeContract):
    """WelcomeMessage, registered under its class name by the ``core`` built-in plugin."""

    message_name = "WelcomeMessage"
    plugin = "akgentic.builtin.core"

    @pytest.fixture
    def message(self) -> Message:
        return WelcomeMessage(content="Welcome to the team.\nAsk us anything.")


class Relocated(Message):
    """A message type whose class moved: logs written before name its former path."""

    note: str = ""


class RelocatedPlugin:
    """Hook implementations registering :class:`Relocated` with its former path."""

    @staticmethod
    @hookimpl
    def akgentic_message_types() -> Iterable[MessageTypeSpec]:
        """``Relocated``, formerly ``akgentic_contract_example.old_messages.Relocated``."""
        return [
            MessageTypeSpec(
                name="Relocated",
                message_class=Relocated,
                aliases=("akgentic_contract_example.old_messages.Relocated",),
            )
        ]


class TestRelocatedMessageContract(MessageTypeContract):
    """A plugin message type with an alias: stored logs under the former path must load."""

    message_name = "Relocated"
    plugin = RelocatedPlugin

    @pytest.fixture
    def message(self) -> Message:
        return Relocated(note="moved")
