"""Model factories: one per provider, environment handling, optional SDKs, output types."""

from __future__ import annotations

import sys

import pytest
from pydantic import BaseModel
from pydantic_ai import NativeOutput
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

from akgentic.llm import (
    HttpClientConfig,
    ModelConfig,
    OpenRouterRouting,
    create_model,
    create_model_settings,
    get_output_type,
)

ENV_VARS = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "OPENAI_API_VERSION",
    "OPENROUTER_API_KEY",
    "ANTHROPIC_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "MISTRAL_API_KEY",
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


class Answer(BaseModel):
    value: int


def test_openai_uses_the_responses_api_and_openai_chat_chat_completions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert isinstance(create_model(ModelConfig(provider="openai")), OpenAIResponsesModel)
    assert isinstance(create_model(ModelConfig(provider="openai-chat")), OpenAIChatModel)


def test_openai_without_a_key_or_base_url_names_the_variable() -> None:
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        create_model(ModelConfig(provider="openai-chat"))


def test_base_url_points_openai_chat_at_a_local_server_without_a_key() -> None:
    model = create_model(
        ModelConfig(provider="openai-chat", model="llama3.2", base_url="http://127.0.0.1:11434/v1")
    )
    assert isinstance(model, OpenAIChatModel)
    assert model.model_name == "llama3.2"
    assert str(model.client.base_url).startswith("http://127.0.0.1:11434/v1")


def test_openai_base_url_environment_variable_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    model = create_model(ModelConfig(provider="openai-chat", model="m"))
    assert str(model.client.base_url).startswith("http://127.0.0.1:8000/v1")  # type: ignore[attr-defined]


def test_http_config_sets_sdk_retries_and_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = create_model(
        ModelConfig(provider="openai-chat"), HttpClientConfig(timeout=7.0, max_retries=1)
    )
    client = model.client  # type: ignore[attr-defined]
    assert client.max_retries == 1
    assert client.timeout.read == 7.0


def test_explicit_api_key_overrides_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    model = create_model(ModelConfig(provider="openai-chat", api_key="explicit"))
    assert model.client.api_key == "explicit"  # type: ignore[attr-defined]


def test_azure_requires_an_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="AZURE_OPENAI_ENDPOINT"):
        create_model(ModelConfig(provider="azure"))
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://x.openai.azure.com")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    assert isinstance(create_model(ModelConfig(provider="azure")), OpenAIResponsesModel)
    assert isinstance(create_model(ModelConfig(provider="azure-chat")), OpenAIChatModel)


def test_openrouter_needs_a_key_and_a_vendor_model_id(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="vendor/model"):
        create_model(ModelConfig(provider="openrouter", model="gpt-4.1"))
    with pytest.raises(ValueError, match="OPENROUTER_API_KEY"):
        create_model(ModelConfig(provider="openrouter", model="openai/gpt-4.1"))
    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    routing = OpenRouterRouting(order=["openai"], zdr=True)
    cfg = ModelConfig(provider="openrouter", model="openai/gpt-4.1", openrouter_provider=routing)
    model = create_model(cfg)
    assert model.model_name == "openai/gpt-4.1"
    assert create_model_settings(cfg)["openrouter_provider"] == {"order": ["openai"], "zdr": True}  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    "provider, module, extra, key_env",
    [
        ("anthropic", "pydantic_ai.models.anthropic", "anthropic", "ANTHROPIC_API_KEY"),
        ("google-gla", "pydantic_ai.models.google", "google", "GOOGLE_API_KEY"),
        ("mistral", "pydantic_ai.models.mistral", "mistral", "MISTRAL_API_KEY"),
    ],
)
def test_optional_sdks_name_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, provider: str, module: str, extra: str, key_env: str
) -> None:
    monkeypatch.setenv(key_env, "k")
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if the SDK were missing
    with pytest.raises(ImportError, match=rf"pip install 'akgentic\[{extra}\]'"):
        create_model(ModelConfig.model_validate({"provider": provider, "model": "m"}))


def test_fallback_models_are_built_eagerly_into_a_fallback_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    cfg = ModelConfig(
        provider="openai-chat",
        model="a",
        fallback_models=[ModelConfig(provider="openai", model="b")],
    )
    model = create_model(cfg)
    assert isinstance(model, FallbackModel)
    assert [m.model_name for m in model.models] == ["a", "b"]
    broken = ModelConfig(
        provider="openai-chat",
        model="a",
        fallback_models=[ModelConfig(provider="azure", model="b")],
    )
    with pytest.raises(ValueError, match="AZURE_OPENAI_ENDPOINT"):
        create_model(broken)


def test_model_settings_carry_sampling_and_reasoning_options() -> None:
    cfg = ModelConfig(temperature=0.1, max_tokens=99, seed=7, reasoning_effort="high")
    assert create_model_settings(cfg) == {
        "temperature": 0.1,
        "max_tokens": 99,
        "seed": 7,
        "thinking": "high",
    }
    mistral = ModelConfig(provider="mistral", model="m", reasoning_effort="high")
    assert create_model_settings(mistral) == {"parallel_tool_calls": False}


def test_output_type_is_native_only_where_supported() -> None:
    assert get_output_type(ModelConfig(), str) is str
    assert get_output_type(ModelConfig(), None) is None
    native = get_output_type(ModelConfig(provider="openai-chat"), Answer)
    assert isinstance(native, NativeOutput) and native.strict is True
    assert get_output_type(ModelConfig(provider="mistral", model="m"), Answer) is Answer
