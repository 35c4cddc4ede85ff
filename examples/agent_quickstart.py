"""The Quick Start of the agent guide, as a script: a human asks a manager agent for work.

The team code below is the guide's, unchanged. The model is ``openai:gpt-4.1`` through
the Responses API; where it is served from is the only thing the environment decides:

- ``OPENAI_API_KEY=... python examples/agent_quickstart.py`` talks to OpenAI;
- ``OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 python examples/agent_quickstart.py`` talks
  to any OpenAI-compatible server with the Responses API, such as
  ``akgentic.llm.scripted_server.ScriptedLLMServer`` (that is how the test-suite runs it,
  in-process, in ``tests/agent/test_quickstart_example.py``).

Run as a script, it then waits (at most a minute) for an answer to reach @Human, prints
the conversation and shuts the actor system down.
"""

import time

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent, HumanProxy
from akgentic.core import ActorSystem, AgentCard, BaseConfig, Orchestrator
from akgentic.llm import ModelConfig, PromptTemplate

# The actor runtime and the team's orchestrator.
actor_system = ActorSystem()
orchestrator_addr = actor_system.createActor(
    Orchestrator, config=BaseConfig(name="@Orchestrator", role="Orchestrator")
)
orchestrator_proxy = actor_system.proxy_ask(orchestrator_addr, Orchestrator)

# A role blueprint. The role is read from config.role (AgentCard has no role= argument).
manager_card = AgentCard(
    description="Project manager who coordinates specialists",
    skills=["coordination", "delegation"],
    agent_class="akgentic.agent.BaseAgent",
    config=AgentConfig(
        name="@Manager",
        role="Manager",
        prompt=PromptTemplate(template="You are a project manager. Delegate to specialists."),
        model_cfg=ModelConfig(provider="openai", model="gpt-4.1"),
    ),
    routes_to=["Developer", "QA"],  # routing hint kept on the card
)
# Registered cards form the role catalog: these roles can be hired by name.
orchestrator_proxy.register_agent_profiles([manager_card])

# Where the human enters the team.
human_addr = orchestrator_proxy.createActor(
    HumanProxy, config=BaseConfig(name="@Human", role="Human")
)
human_proxy = actor_system.proxy_tell(human_addr, HumanProxy)

# Start the manager from its blueprint.
manager_addr = orchestrator_proxy.createActor(BaseAgent, config=manager_card.get_config_copy())

time.sleep(0.3)

# The human's first message.
human_proxy.send(manager_addr, AgentMessage(content="Plan the next sprint."))


def _print_conversation_when_answered(timeout: float = 60.0) -> None:
    from akgentic.core.messages.orchestrator import SentMessage

    deadline = time.monotonic() + timeout
    sent: list[SentMessage] = []
    while time.monotonic() < deadline:
        sent = [m for m in orchestrator_proxy.get_messages() if isinstance(m, SentMessage)]
        if any(m.recipient.name == "@Human" for m in sent):
            break
        time.sleep(0.2)  # polling a demo script, not synchronising tests
    for message in sent:
        sender = message.sender.name if message.sender is not None else "?"
        print(f"{sender} -> {message.recipient.name}: {getattr(message.message, 'content', '')}")


if __name__ == "__main__":
    try:
        _print_conversation_when_answered()
    finally:
        actor_system.shutdown()
