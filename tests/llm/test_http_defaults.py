"""Model HTTP timeouts and retries: bounded defaults, per card and per environment."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import ValidationError
from pydantic_ai.exceptions import ModelHTTPError

from akgentic.llm import ModelConfig, ReactAgent, ReactAgentConfig
from akgentic.llm.config import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_RETRIES,
    DEFAULT_READ_TIMEOUT,
    HttpClientConfig,
    RuntimeConfig,
)
from akgentic.llm.providers import create_model
from akgentic.llm.scripted_server import ScriptedLLMServer, error, text

_ENV = ("AKGENTIC_MODEL_TIMEOUT", "AKGENTIC_MODEL_CONNECT_TIMEOUT", "AKGENTIC_MODEL_MAX_RETRIES")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


def _client(cfg: ModelConfig, http: HttpClientConfig | None = None) -> Any:
    return create_model(cfg, http).client  # type: ignore[attr-defined]


def _local(**fields: Any) -> ModelConfig:
    return ModelConfig(
        provider="openai-chat", model="m", base_url="http://127.0.0.1:9/v1", **fields
    )


def test_the_built_client_gets_bounded_defaults_with_a_read_timeout_in_minutes() -> None:
    client = _client(_local())
    timeout: httpx.Timeout = client.timeout
    assert (timeout.connect, timeout.read) == (DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT)
    assert client.max_retries == DEFAULT_MAX_RETRIES
    assert DEFAULT_READ_TIMEOUT >= 120 and DEFAULT_CONNECT_TIMEOUT <= 30
    assert DEFAULT_MAX_RETRIES <= 3


def test_the_environment_overrides_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AKGENTIC_MODEL_TIMEOUT", "900")
    monkeypatch.setenv("AKGENTIC_MODEL_CONNECT_TIMEOUT", "3.5")
    monkeypatch.setenv("AKGENTIC_MODEL_MAX_RETRIES", "0")
    client = _client(_local())
    assert (client.timeout.connect, client.timeout.read, client.max_retries) == (3.5, 900.0, 0)


def test_a_card_beats_the_agent_setting_which_beats_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AKGENTIC_MODEL_TIMEOUT", "900")
    monkeypatch.setenv("AKGENTIC_MODEL_MAX_RETRIES", "4")
    shared = HttpClientConfig(timeout=60.0, max_retries=3)
    client = _client(_local(timeout=30.0, connect_timeout=1.0), shared)
    assert (client.timeout.connect, client.timeout.read, client.max_retries) == (1.0, 30.0, 3)


@pytest.mark.parametrize("value", ["soon", "-1", "0"])
def test_a_bad_environment_value_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("AKGENTIC_MODEL_TIMEOUT", value)
    with pytest.raises(ValueError, match="AKGENTIC_MODEL_TIMEOUT"):
        _client(_local())


@pytest.mark.parametrize("field", ["timeout", "connect_timeout"])
def test_a_card_refuses_a_non_positive_timeout(field: str) -> None:
    with pytest.raises(ValidationError):
        _local(**{field: 0})


def test_a_5xx_is_retried_only_max_retries_times() -> None:
    with ScriptedLLMServer([error(500)] * 10, fallback=text("late")) as server:
        config = ReactAgentConfig(model_cfg=server.model_config(max_retries=1))
        with ReactAgent[None](config) as agent, pytest.raises(ModelHTTPError, match="500"):
            agent.run_sync("hello")
        assert len(server.requests) == 2  # the first attempt and one retry, then it gives up


def test_the_agent_level_setting_reaches_the_client_too() -> None:
    with ScriptedLLMServer([error(503)] * 10) as server:
        config = ReactAgentConfig(
            model_cfg=server.model_config(),
            runtime_cfg=RuntimeConfig(http_client_config=HttpClientConfig(max_retries=0)),
        )
        with ReactAgent[None](config) as agent, pytest.raises(ModelHTTPError, match="503"):
            agent.run_sync("hello")
        assert len(server.requests) == 1
