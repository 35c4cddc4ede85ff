"""Fixtures for the agent tests: real actors, scripted models, a small team builder.

Teams are built with the actor core directly (ActorSystem, Orchestrator,
register_agent_profiles, createActor). Models are either pydantic-ai FunctionModels
(``ScriptedAgent`` picks one per role from a :class:`ModelBook`) or the real OpenAI
client talking to the scripted server through ``base_url``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pykka
import pytest
from pydantic import BaseModel
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentConfig, BaseAgent, HumanProxy
from akgentic.agent.messages import AgentMessage
from akgentic.core import ActorSystem, AgentCard, BaseConfig, EventSubscriber, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import EventMessage, SentMessage
from akgentic.plugins import PluginHost
from akgentic.testing.plugins import inline_plugin
from akgentic.testing.waiting import wait_until

Reply = ModelResponse | BaseModel | str | Callable[[list[ModelMessage], AgentInfo], Any]


wait_for = wait_until  # ``helpers.wait_for(predicate, timeout=10.0)``


def as_response(reply: Any) -> ModelResponse:
    """A FunctionModel reply from a model, a text, or a ready ModelResponse."""
    if isinstance(reply, ModelResponse):
        return reply
    if isinstance(reply, BaseModel):
        return ModelResponse(parts=[TextPart(reply.model_dump_json())])
    if isinstance(reply, dict):
        return ModelResponse(parts=[TextPart(json.dumps(reply))])
    return ModelResponse(parts=[TextPart(str(reply))])


def call(tool: str, **args: Any) -> ModelResponse:
    """A model response calling ``tool`` with ``args``."""
    return ModelResponse(parts=[ToolCallPart(tool_name=tool, args=args)])


class Script:
    """A FunctionModel body replaying replies in order and keeping what it was sent."""

    def __init__(self, replies: list[Reply], default: Reply | None = None) -> None:
        self.replies = list(replies)
        self.default = default
        self.seen: list[list[ModelMessage]] = []
        self._lock = threading.Lock()

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        with self._lock:
            self.seen.append(list(messages))
            if self.replies:
                reply = self.replies.pop(0)
            elif self.default is not None:
                reply = self.default
            else:
                raise AssertionError("the script ran out of replies")
        if callable(reply) and not isinstance(reply, BaseModel):
            reply = reply(messages, info)
        return as_response(reply)


class ModelBook:
    """Which script each role's agents run (shared by every ScriptedAgent)."""

    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}

    def script(self, role: str, *replies: Reply, default: Reply | None = None) -> Script:
        script = self.scripts[role] = Script(list(replies), default)
        return script


BOOK = ModelBook()


class ScriptedAgent(BaseAgent):
    """A BaseAgent whose model is the FunctionModel scripted for its role."""

    def create_llm_model(self) -> Any:
        script = BOOK.scripts.get(self.config.role)
        if script is None:
            raise AssertionError(f"no script for role {self.config.role!r}")
        return FunctionModel(script)


class Recorder(EventSubscriber):
    """Orchestrator subscriber keeping every message, thread-safe."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._lock = threading.Lock()

    def on_message(self, msg: Message) -> None:
        with self._lock:
            self.messages.append(msg)

    def snapshot(self) -> list[Message]:
        with self._lock:
            return list(self.messages)

    def events(self, cls: type[Any]) -> list[Any]:
        return [
            m.event
            for m in self.snapshot()
            if isinstance(m, EventMessage) and isinstance(m.event, cls)
        ]

    def sent(self, to: str | None = None, by: str | None = None) -> list[AgentMessage]:
        """AgentMessages sent (optionally to / by a member name), in order."""
        return [
            m.message
            for m in self.snapshot()
            if isinstance(m, SentMessage)
            and isinstance(m.message, AgentMessage)
            and (to is None or m.recipient.name == to)
            and (by is None or (m.sender is not None and m.sender.name == by))
        ]


class Team:
    """A team on the actor core: orchestrator, a human proxy and a recorder."""

    def __init__(self) -> None:
        self.system = ActorSystem()
        self.orchestrator = self.system.createActor(
            Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
        )
        self.proxy = self.system.proxy_ask(self.orchestrator, Orchestrator)
        self.recorder = Recorder()
        self.proxy.subscribe(self.recorder)
        self.human = self.proxy.createActor(
            HumanProxy, config=BaseConfig(name="@Human", role="Human")
        )

    def card(
        self,
        role: str,
        *,
        agent_class: type[BaseAgent] = ScriptedAgent,
        register: bool = True,
        description: str = "",
        **config: Any,
    ) -> AgentCard:
        """A role blueprint; registered in the catalog (so hireable) unless ``register=False``.

        The card keeps the core default ``can_be_hired=False``: catalog membership alone
        decides who can be hired.
        """
        card = AgentCard(
            description=description or f"The team's {role}",
            agent_class=agent_class,
            config=AgentConfig(name=f"@{role}", role=role, **config),
        )
        if register:
            self.proxy.register_agent_profiles([card])
        return card

    def spawn(self, card: AgentCard, name: str | None = None) -> ActorAddress:
        """Start a member from ``card`` as a child of the orchestrator."""
        config = card.get_config_copy()
        if name is not None:
            config.name = name
        address: ActorAddress = self.proxy.createActor(card.get_agent_class(), config=config)
        return address

    def say(self, to: ActorAddress, content: str, type: str = "request") -> None:
        """The human sends ``content`` to ``to``; returns once it sits in ``to``'s mailbox.

        A blocking proxy makes the delivery synchronous, so a test that says
        something mid-run knows it is queued before the run's next step.
        """
        human = self.system.proxy_ask(self.human, HumanProxy)
        human.send(to, AgentMessage(content=content, type=type))

    def to_human(self) -> list[str]:
        return [m.content for m in self.recorder.sent(to="@Human")]

    def agent(self, address: ActorAddress) -> BaseAgent:
        """A blocking proxy on an agent."""
        return self.system.proxy_ask(address, BaseAgent)


@pytest.fixture(autouse=True)
def _stop_all_actors() -> Iterator[None]:
    yield
    pykka.ActorRegistry.stop_all(block=True, timeout=10)
    BOOK.scripts.clear()


@pytest.fixture
def book() -> ModelBook:
    """Scripts per role for ScriptedAgent."""
    return BOOK


@pytest.fixture
def team() -> Iterator[Team]:
    """A fresh team (orchestrator + @Human); every actor is stopped after the test."""
    built = Team()
    yield built
    built.system.shutdown(timeout=5)


@pytest.fixture
def builtin_cards(plugin_host: PluginHost) -> Iterator[PluginHost]:
    """The plugin host with the two built-in card plugins registered."""
    from akgentic.builtin import mailbox_tool, team_tool

    with (
        inline_plugin(plugin_host, team_tool, "team-tool"),
        inline_plugin(plugin_host, mailbox_tool, "mailbox"),
    ):
        yield plugin_host


@pytest.fixture
def helpers() -> Any:
    """Module-level helpers (test modules cannot import the conftest)."""

    class _Helpers:
        wait_for = staticmethod(wait_for)
        call = staticmethod(call)
        as_response = staticmethod(as_response)
        ScriptedAgent = ScriptedAgent
        Script = Script

    return _Helpers
