"""Fixtures for the LLM-layer tests: event recorders, scripted models, the scripted server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.llm import ReactAgentConfig
from akgentic.llm.agent import ReactAgent
from akgentic.llm.scripted_server import ScriptedLLMServer

Reply = ModelResponse | str
Replier = Callable[[list[ModelMessage], AgentInfo], Reply]


class Recorder:
    """A ContextObserver that keeps every event it is told about."""

    def __init__(self) -> None:
        self.events: list[object] = []

    def notify_event(self, event: object) -> None:
        self.events.append(event)

    def of(self, cls: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]

    def names(self) -> list[str]:
        return [type(e).__name__ for e in self.events]


class ScriptedFunction:
    """A FunctionModel body replaying replies in order and recording what it saw."""

    def __init__(self, replies: list[Reply | Replier]) -> None:
        self.replies = list(replies)
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        if not self.replies:
            raise AssertionError("the scripted function model ran out of replies")
        reply = self.replies.pop(0)
        if callable(reply):
            reply = reply(messages, info)
        if isinstance(reply, str):
            return ModelResponse(parts=[TextPart(reply)])
        return reply


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


AgentFactory = Callable[..., tuple[ReactAgent[Any], ScriptedFunction]]


@pytest.fixture
def make_agent(recorder: Recorder) -> Iterator[AgentFactory]:
    """Build ReactAgents on a scripted FunctionModel; all are closed after the test."""
    built: list[ReactAgent[Any]] = []

    def make(
        replies: list[Reply | Replier], config: ReactAgentConfig | None = None, **kwargs: Any
    ) -> tuple[ReactAgent[Any], ScriptedFunction]:
        fn = ScriptedFunction(replies)
        kwargs.setdefault("observer", recorder)
        agent: ReactAgent[Any] = ReactAgent(config, model=FunctionModel(fn), **kwargs)
        built.append(agent)
        return agent, fn

    yield make
    for agent in built:
        agent.close()


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server
