"""A small real team for card tests: actor system, orchestrator, human proxy, BaseAgents.

Card plugins test end to end with it, the scripted OpenAI-compatible server
(:class:`~akgentic.llm.scripted_server.ScriptedLLMServer`) and the bounded wait
:func:`~akgentic.testing.waiting.wait_until`::

    with ScriptedTeam(llm_server) as team:
        member = team.spawn("@Worker", [MyTool()])
        team.say(member, "Go.")
        wait_until(lambda: llm_server.served == 1, timeout=30)
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from akgentic.agent import AgentConfig, BaseAgent, HumanProxy
from akgentic.agent.messages import AgentMessage
from akgentic.core import ActorSystem, BaseConfig, EventSubscriber, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.tool import ToolCard

if TYPE_CHECKING:
    from akgentic.core import AgentCard
    from akgentic.team.card import TeamCard


__all__ = ["ScriptedTeam", "human_led_team"]


def human_led_team(name: str, description: str, *members: AgentCard) -> TeamCard:
    """A team card entered through ``@Human`` (a HumanProxy), ``members`` its supervisors."""
    from akgentic.core import AgentCard
    from akgentic.team import TeamCard, TeamCardMember

    human = AgentCard(
        description="The human",
        agent_class=HumanProxy,
        config=BaseConfig(name="@Human", role="Human"),
    )
    return TeamCard(
        name=name,
        description=description,
        entry_point=TeamCardMember(card=human),
        members=[TeamCardMember(card=member) for member in members],
        message_types=[AgentMessage],
    )


class ScriptedTeam:
    """Orchestrator, a human proxy, and members started from tool cards.

    Members are :class:`~akgentic.agent.BaseAgent` instances whose model is the
    scripted server's; ``messages`` keeps every message the orchestrator recorded.
    """

    def __init__(self, server: ScriptedLLMServer) -> None:
        self.server = server
        self.system = ActorSystem()
        self.orchestrator = self.system.createActor(
            Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
        )
        self.proxy = self.system.proxy_ask(self.orchestrator, Orchestrator)
        self.recorder = _Recorder()
        self.proxy.subscribe(self.recorder)
        self.human = self.proxy.createActor(
            HumanProxy, config=BaseConfig(name="@Human", role="Human")
        )

    def __enter__(self) -> ScriptedTeam:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def spawn(self, name: str, tools: list[ToolCard], **config_fields: Any) -> ActorAddress:
        """Start a member named ``name`` carrying ``tools`` on the scripted model."""
        config_fields.setdefault("model_cfg", self.server.model_config())
        config = AgentConfig(name=name, role="Worker", tools=tools, **config_fields)
        address: ActorAddress = self.proxy.createActor(BaseAgent, config=config)
        return address

    def say(self, to: ActorAddress, content: str) -> None:
        """The human sends ``content`` to ``to`` (queued when this returns)."""
        human = self.system.proxy_ask(self.human, HumanProxy)
        human.send(to, AgentMessage(content=content, type="request"))

    def request_text(self, index: int) -> str:
        """The ``index``-th request body the model server received, as JSON text."""
        return json.dumps(self.server.requests[index])

    def sent_to(self, name: str) -> list[AgentMessage]:
        """AgentMessages sent to the member named ``name``, in order."""
        return [
            m.message
            for m in self.recorder.snapshot()
            if isinstance(m, SentMessage)
            and isinstance(m.message, AgentMessage)
            and m.recipient.name == name
        ]

    def shutdown(self) -> None:
        """Stop every actor of the team."""
        self.system.shutdown(timeout=10)


class _Recorder(EventSubscriber):
    """Keeps every message the orchestrator publishes (thread-safe)."""

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._lock = threading.Lock()

    def on_message(self, msg: Message) -> None:
        with self._lock:
            self._messages.append(msg)

    def snapshot(self) -> list[Message]:
        with self._lock:
            return list(self._messages)
