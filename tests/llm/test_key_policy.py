"""A card cannot send the host's API key to a URL, or read a variable, the operator did not allow.

Each test builds the model from a hostile config and makes a real request to the
scripted server, then checks the ``Authorization`` header that server received.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pydantic_ai import Agent

from akgentic.llm import ModelConfig, create_model
from akgentic.llm.key_policy import ModelKeyNotAllowedError
from akgentic.llm.scripted_server import ScriptedLLMServer

HOST_KEY = "sk-host-secret-key"
_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AKGENTIC_MODEL_ALLOWED_ENV",
    "AKGENTIC_MODEL_ALLOWED_URLS",
    "ANTHROPIC_API_KEY",
    "MY_TEAM_KEY",
)


@pytest.fixture(autouse=True)
def host_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", HOST_KEY)


@pytest.fixture
def attacker() -> Iterator[ScriptedLLMServer]:
    """The server a hostile card points ``base_url`` at."""
    with ScriptedLLMServer(fallback="hello") as server:
        yield server


def _card(server: ScriptedLLMServer, **fields: str) -> ModelConfig:
    return ModelConfig(
        provider="openai-chat", model=server.model, base_url=server.base_url, **fields
    )


def _auth_seen(config: ModelConfig, server: ScriptedLLMServer) -> str:
    # Not run_sync: pydantic-ai would create the thread's event loop and never close it,
    # and its self-pipe socket would warn in whichever later test the GC frees it.
    asyncio.run(Agent(create_model(config)).run("hi"))
    return server.request_headers[-1].get("authorization", "")


def test_a_card_base_url_does_not_receive_the_host_key(attacker: ScriptedLLMServer) -> None:
    seen = _auth_seen(_card(attacker), attacker)
    assert HOST_KEY not in seen
    assert seen == "Bearer not-needed"


def test_the_operators_openai_base_url_receives_the_host_key(
    attacker: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", attacker.base_url + "/")
    assert _auth_seen(_card(attacker), attacker) == f"Bearer {HOST_KEY}"


def test_an_allow_listed_url_receives_the_host_key(
    attacker: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = f"https://other.example/v1, {attacker.base_url}"
    monkeypatch.setenv("AKGENTIC_MODEL_ALLOWED_URLS", listed)
    assert _auth_seen(_card(attacker), attacker) == f"Bearer {HOST_KEY}"


def test_a_card_naming_the_default_variable_for_its_own_url_is_refused(
    attacker: ScriptedLLMServer,
) -> None:
    with pytest.raises(ModelKeyNotAllowedError, match="AKGENTIC_MODEL_ALLOWED_URLS"):
        create_model(_card(attacker, api_key_env="OPENAI_API_KEY"))
    assert attacker.request_headers == []


def test_a_card_naming_an_unlisted_host_variable_is_refused(
    attacker: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_TEAM_KEY", "team-secret")
    with pytest.raises(ModelKeyNotAllowedError, match=r"'MY_TEAM_KEY'.*AKGENTIC_MODEL_ALLOWED_ENV"):
        create_model(_card(attacker, api_key_env="MY_TEAM_KEY"))
    assert attacker.request_headers == []


def test_a_listed_host_variable_is_sent_where_the_card_says(
    attacker: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_TEAM_KEY", "team-secret")
    monkeypatch.setenv("AKGENTIC_MODEL_ALLOWED_ENV", "OTHER,MY_TEAM_KEY")
    assert _auth_seen(_card(attacker, api_key_env="MY_TEAM_KEY"), attacker) == "Bearer team-secret"


def test_a_key_written_in_the_card_is_its_own(attacker: ScriptedLLMServer) -> None:
    assert _auth_seen(_card(attacker, api_key="card-key"), attacker) == "Bearer card-key"


def test_a_provider_that_needs_its_key_is_refused_for_an_unallowed_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host")
    pytest.importorskip("anthropic")
    config = ModelConfig(provider="anthropic", model="claude", base_url="http://127.0.0.1:9/")
    with pytest.raises(ModelKeyNotAllowedError, match="ANTHROPIC_API_KEY"):
        create_model(config)


def test_a_fallback_model_is_held_to_the_same_rule(attacker: ScriptedLLMServer) -> None:
    primary = ModelConfig(provider="openai-chat", model="gpt-4.1")
    hostile = _card(attacker, api_key_env="OPENAI_API_KEY")
    with pytest.raises(ModelKeyNotAllowedError):
        create_model(primary.model_copy(update={"fallback_models": [hostile]}))


def test_the_providers_own_endpoint_named_in_a_card_gets_the_key() -> None:
    from akgentic.llm.key_policy import host_api_key

    config = ModelConfig(provider="openai-chat", base_url="https://api.openai.com/v1/")
    own = ("https://api.openai.com/v1",)
    assert host_api_key(config, default_env=("OPENAI_API_KEY",), own_urls=own) == HOST_KEY
