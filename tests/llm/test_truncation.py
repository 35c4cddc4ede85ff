"""A reply cut off at max_tokens is never resent as it was: one larger retry, or a failure.

Real OpenAI client, real ReactAgent, the scripted server; the assertions are on the
request bodies the server recorded.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from akgentic.llm import ModelConfig, ReactAgentConfig
from akgentic.llm.agent import ReactAgent
from akgentic.llm.errors import ReplyTruncatedError
from akgentic.llm.failures import describe_failure
from akgentic.llm.scripted_server import ScriptedLLMServer, text, truncated


def _cap(body: dict[str, Any]) -> int | None:
    """The output cap a Chat Completions body asks for (either spelling)."""
    value = body.get("max_completion_tokens", body.get("max_tokens"))
    return value if isinstance(value, int) else None


def _agent(server: ScriptedLLMServer, **model: Any) -> ReactAgent[Any]:
    return ReactAgent(ReactAgentConfig(model_cfg=server.model_config(**model)))


def test_without_a_retry_cap_a_cut_off_reply_fails_at_once_and_is_not_resent(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add(truncated("The answer is that the sky is blue because"), text("unused"))
    agent = _agent(llm_server, max_tokens=20)
    with agent, pytest.raises(ReplyTruncatedError) as caught:
        agent.run_sync("Why is the sky blue?")
    assert len(llm_server.requests) == 1, "a cut-off reply must not be asked again as it was"
    assert describe_failure(caught.value) == (
        "truncated",
        "the model's reply was cut off at max_tokens=20 (1 try)",
    )
    assert agent.context.messages[-1].kind == "request", "the cut-off reply is not kept"


def test_with_a_retry_cap_the_one_retry_asks_for_more_tokens(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add(truncated("The sky is blue because of Rayleigh"), text("Rayleigh scattering."))
    agent = _agent(llm_server, max_tokens=20, max_tokens_retry=400)
    with agent:
        assert agent.run_sync("Why is the sky blue?") == "Rayleigh scattering."
        first, retry = llm_server.requests
        assert (_cap(first), _cap(retry)) == (20, 400)
        assert retry["messages"] == first["messages"], "the retry asks the same question"
        replies = [m for m in agent.context.messages if m.kind == "response"]
        assert len(replies) == 1, "only the complete reply joins the history"


def test_a_retry_cut_off_again_fails_the_turn_after_two_requests(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.fallback = truncated('{"city": "Paris", "celsius"', tool="final_result")
    agent = _agent(llm_server, max_tokens=20, max_tokens_retry=100)
    with agent, pytest.raises(ReplyTruncatedError) as caught:
        agent.run_sync("Weather?")
    assert [_cap(b) for b in llm_server.requests] == [20, 100]
    assert str(caught.value) == "the model's reply was cut off at max_tokens=100 (2 tries)"


def test_a_retry_cap_not_above_the_cap_is_refused() -> None:
    with pytest.raises(ValidationError, match="max_tokens_retry"):
        ModelConfig(max_tokens=200, max_tokens_retry=200)
