"""Build pydantic-ai models from :class:`~akgentic.llm.config.ModelConfig`.

This module imports pydantic-ai; the provider SDKs that are optional
(anthropic, google, mistral) are imported only inside their own factory and
name the extra to install when missing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pydantic_ai import NativeOutput
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from akgentic.llm.config import PROVIDERS, HttpClientConfig, ModelConfig, resolve_http
from akgentic.llm.key_policy import host_api_key

__all__ = ["create_model", "create_model_settings", "get_output_type"]

_NO_REASONING = frozenset({"google-gla", "mistral"})


def _missing_sdk(extra: str, exc: ImportError) -> ImportError:
    err = ImportError(
        f"the {extra} provider needs an optional dependency: pip install 'akgentic[{extra}]'"
    )
    err.__cause__ = exc
    return err


def create_model_settings(
    config: ModelConfig, *, tool_calls_fallback: bool = True
) -> ModelSettings:
    """The per-model request settings a config asks for.

    With ``tool_calls_fallback`` (the default) models without native structured
    output also get ``parallel_tool_calls=False``, which makes tool-based output
    extraction more reliable.
    """
    settings: dict[str, Any] = {}
    if config.temperature is not None:
        settings["temperature"] = config.temperature
    if config.max_tokens is not None:
        settings["max_tokens"] = config.max_tokens
    if config.seed is not None:
        settings["seed"] = config.seed
    if config.reasoning_effort is not None and config.provider not in _NO_REASONING:
        settings["thinking"] = config.reasoning_effort
    if config.openrouter_provider is not None:
        settings["openrouter_provider"] = config.openrouter_provider.as_settings()
    if tool_calls_fallback and not config.supports_native_output:
        settings["parallel_tool_calls"] = False
    return settings  # type: ignore[return-value]


def get_output_type(config: ModelConfig, output_type: Any) -> Any:
    """Wrap a structured ``output_type`` in ``NativeOutput`` when the model supports it.

    ``str`` and None pass through; other models get the raw type, which
    pydantic-ai extracts through an output tool.
    """
    if output_type is None or output_type is str:
        return output_type
    if config.supports_native_output:
        return NativeOutput(output_type, strict=True)
    return output_type


def _client_http(config: ModelConfig, http: HttpClientConfig) -> dict[str, Any]:
    """The ``timeout`` and ``max_retries`` keyword arguments of an OpenAI-SDK client."""
    import httpx

    chosen = resolve_http(config, http)
    return {
        "timeout": httpx.Timeout(chosen.read_timeout, connect=chosen.connect_timeout),
        "max_retries": chosen.max_retries,
    }


def _openai_client(config: ModelConfig, http: HttpClientConfig, default_base: str | None) -> Any:
    from openai import AsyncOpenAI

    base_url = config.base_url or os.environ.get("OPENAI_BASE_URL") or default_base
    api_key = host_api_key(
        config,
        default_env=("OPENAI_API_KEY",),
        url_vars=("OPENAI_BASE_URL",),
        key_optional=True,
        own_urls=("https://api.openai.com/v1",),
    )
    if api_key is None:
        if base_url is None:
            raise ValueError(
                "OPENAI_API_KEY is not set: export it, or set api_key/api_key_env, or point "
                "base_url at an OpenAI-compatible server"
            )
        # Local OpenAI-compatible servers rarely check keys, but the SDK needs one.
        api_key = "not-needed"
    return AsyncOpenAI(api_key=api_key, base_url=base_url, **_client_http(config, http))


def _openai(config: ModelConfig, http: HttpClientConfig) -> Model:
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(openai_client=_openai_client(config, http, None))
    settings = create_model_settings(config, tool_calls_fallback=False)
    if config.provider == "openai":
        return OpenAIResponsesModel(config.model, provider=provider, settings=settings)
    return OpenAIChatModel(config.model, provider=provider, settings=settings)


def _azure(config: ModelConfig, http: HttpClientConfig) -> Model:
    from openai import AsyncAzureOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.azure import AzureProvider

    endpoint = config.base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
    if not endpoint:
        raise ValueError("AZURE_OPENAI_ENDPOINT is not set (or give base_url)")
    api_key = host_api_key(
        config, default_env=("AZURE_OPENAI_API_KEY",), url_vars=("AZURE_OPENAI_ENDPOINT",)
    )
    client = AsyncAzureOpenAI(
        azure_endpoint=endpoint,
        api_key=api_key,
        api_version=os.environ.get("OPENAI_API_VERSION"),
        **_client_http(config, http),
    )
    provider = AzureProvider(openai_client=client)
    settings = create_model_settings(config, tool_calls_fallback=False)
    if config.provider == "azure":
        return OpenAIResponsesModel(config.model, provider=provider, settings=settings)
    return OpenAIChatModel(config.model, provider=provider, settings=settings)


def _openrouter(config: ModelConfig, http: HttpClientConfig) -> Model:
    from pydantic_ai.models.openrouter import OpenRouterModel
    from pydantic_ai.providers.openrouter import OpenRouterProvider

    if "/" not in config.model:
        raise ValueError(f"OpenRouter models are named 'vendor/model' (got {config.model!r})")
    api_key = host_api_key(
        config, default_env=("OPENROUTER_API_KEY",), own_urls=("https://openrouter.ai/api/v1",)
    )
    if not api_key:
        raise ValueError("OPENROUTER_API_KEY is not set (or set api_key/api_key_env)")
    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        api_key=api_key,
        base_url=config.base_url or "https://openrouter.ai/api/v1",
        **_client_http(config, http),
    )
    provider = OpenRouterProvider(openai_client=client)
    return OpenRouterModel(config.model, provider=provider, settings=create_model_settings(config))


def _anthropic(config: ModelConfig, http: HttpClientConfig) -> Model:
    try:
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider
    except ImportError as exc:
        raise _missing_sdk("anthropic", exc) from exc
    api_key = host_api_key(config, default_env=("ANTHROPIC_API_KEY",))
    if not api_key:
        raise ValueError("ANTHROPIC_API_KEY is not set (or set api_key/api_key_env)")
    provider = AnthropicProvider(api_key=api_key, base_url=config.base_url)
    return AnthropicModel(config.model, provider=provider, settings=create_model_settings(config))


def _google(config: ModelConfig, http: HttpClientConfig) -> Model:
    try:
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider
    except ImportError as exc:
        raise _missing_sdk("google", exc) from exc
    api_key = host_api_key(config, default_env=("GOOGLE_API_KEY", "GEMINI_API_KEY"))
    if not api_key:
        raise ValueError("set GOOGLE_API_KEY or GEMINI_API_KEY (or api_key/api_key_env)")
    provider = GoogleProvider(api_key=api_key, base_url=config.base_url)
    return GoogleModel(config.model, provider=provider, settings=create_model_settings(config))


def _mistral(config: ModelConfig, http: HttpClientConfig) -> Model:
    try:
        from pydantic_ai.models.mistral import MistralModel
        from pydantic_ai.providers.mistral import MistralProvider
    except ImportError as exc:
        raise _missing_sdk("mistral", exc) from exc
    api_key = host_api_key(config, default_env=("MISTRAL_API_KEY",))
    if not api_key:
        raise ValueError("MISTRAL_API_KEY is not set (or set api_key/api_key_env)")
    provider = MistralProvider(api_key=api_key, base_url=config.base_url)
    return MistralModel(config.model, provider=provider, settings=create_model_settings(config))


_FACTORIES: dict[str, Callable[[ModelConfig, HttpClientConfig], Model]] = {
    "openai": _openai,
    "openai-chat": _openai,
    "azure": _azure,
    "azure-chat": _azure,
    "openrouter": _openrouter,
    "anthropic": _anthropic,
    "google-gla": _google,
    "mistral": _mistral,
}
assert set(_FACTORIES) == set(PROVIDERS)


def _create_one(config: ModelConfig, http: HttpClientConfig) -> Model:
    factory = _FACTORIES.get(config.provider)
    if factory is None:
        raise ValueError(f"unknown provider {config.provider!r}; supported: {', '.join(PROVIDERS)}")
    return factory(config, http)


def create_model(config: ModelConfig, http: HttpClientConfig | None = None) -> Model:
    """Build the pydantic-ai model for ``config`` (a ``FallbackModel`` when it has fallbacks).

    Every fallback entry is built now, so a missing key or SDK fails at
    construction rather than in the middle of an outage.
    """
    http = http or HttpClientConfig()
    primary = _create_one(config, http)
    if not config.fallback_models:
        return primary
    from pydantic_ai.models.fallback import FallbackModel

    fallbacks = [_create_one(cfg, http) for cfg in config.fallback_models]
    return FallbackModel(primary, *fallbacks)
