"""Configuration models of the LLM layer.

Everything here is plain pydantic (no pydantic-ai import), so agent cards and
team YAML can carry it cheaply. Models are strict about unknown keys: a typo in
a YAML file fails loudly with the field name instead of being silently ignored.
"""

from __future__ import annotations

import os
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

__all__ = [
    "NATIVE_OUTPUT_PROVIDERS",
    "PROVIDERS",
    "AgentUsageLimits",
    "CompactionConfig",
    "HttpClientConfig",
    "LlmSettings",
    "ModelConfig",
    "OpenRouterRouting",
    "Provider",
    "ReactAgentConfig",
    "ResolvedHttp",
    "RunUsageLimits",
    "RuntimeConfig",
    "TokenUsageLimits",
    "model_roster_key",
    "normalize_model_roster",
    "resolve_http",
    "supports_native_output",
    "validate_unique_roster_keys",
]

Provider: TypeAlias = Literal[
    "openai",
    "openai-chat",
    "azure",
    "azure-chat",
    "anthropic",
    "google-gla",
    "mistral",
    "openrouter",
]
PROVIDERS: tuple[str, ...] = (
    "openai",
    "openai-chat",
    "azure",
    "azure-chat",
    "anthropic",
    "google-gla",
    "mistral",
    "openrouter",
)
NATIVE_OUTPUT_PROVIDERS: frozenset[str] = frozenset(
    {"openai", "openai-chat", "azure", "azure-chat", "anthropic"}
)
_OPENROUTER_NATIVE_PREFIXES = ("openai/gpt-", "google/gemini", "x-ai/grok")

# What a SecretStr looks like once dumped to JSON/YAML. A config restored from such
# a dump must fall back to the environment rather than send the mask as a key.
_MASKED_SECRET = "**********"

ReasoningEffort: TypeAlias = Literal["low", "medium", "high", "xhigh", "max"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OpenRouterRouting(_Strict):
    """Provider routing preferences for OpenRouter (its ``provider`` request object)."""

    order: list[str] | None = None
    only: list[str] | None = None
    ignore: list[str] | None = None
    allow_fallbacks: bool | None = None
    require_parameters: bool | None = None
    zdr: bool | None = None
    data_collection: Literal["allow", "deny"] | None = None
    quantizations: list[str] | None = None
    sort: Literal["price", "throughput", "latency"] | None = None

    def as_settings(self) -> dict[str, Any]:
        """The routing object as sent to OpenRouter (unset fields left out)."""
        return self.model_dump(exclude_none=True)


def supports_native_output(provider: str, model: str) -> bool:
    """Whether ``provider``/``model`` can constrain its reply to a JSON schema natively."""
    if provider in NATIVE_OUTPUT_PROVIDERS:
        return True
    if provider == "openrouter":
        return model.lstrip("~").startswith(_OPENROUTER_NATIVE_PREFIXES)
    return False


class ModelConfig(_Strict):
    """Which model an agent talks to, and how.

    ``provider`` picks the client: ``openai`` and ``azure`` use the Responses API,
    the ``*-chat`` variants use Chat Completions. ``base_url`` points a provider at
    another endpoint; with ``openai-chat`` that is any OpenAI-compatible server
    (Ollama, vLLM, llama.cpp, LM Studio...). The API key comes from the provider's
    usual environment variable unless ``api_key`` or ``api_key_env`` says otherwise.
    ``context_length`` (the model's context window in tokens) turns automatic
    compaction on; when it is unset, the context a local server reports is used
    (see :mod:`akgentic.llm.context_size`).
    """

    provider: Provider = "openai"
    model: str = "gpt-5.2"
    base_url: str | None = None
    api_key: SecretStr | None = None
    api_key_env: str | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    seed: int | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    #: A reply cut off at ``max_tokens`` is asked again once with this larger cap;
    #: None: a cut-off reply fails the turn at once (never resent as it was).
    max_tokens_retry: int | None = Field(default=None, gt=0)
    context_length: int | None = Field(default=None, gt=0)
    reasoning_effort: ReasoningEffort | None = None
    fallback_models: list[ModelConfig] = Field(default_factory=list)
    openrouter_provider: OpenRouterRouting | None = None
    #: Per-model HTTP settings (None: the agent's http_client_config, the environment,
    #: the built-in default; see :func:`resolve_http`).
    timeout: float | None = Field(default=None, gt=0)
    connect_timeout: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0)

    @field_validator("api_key", mode="before")
    @classmethod
    def _drop_masked_key(cls, value: Any) -> Any:
        if value == _MASKED_SECRET:
            return None
        return value

    @model_validator(mode="after")
    def _check_consistency(self) -> ModelConfig:
        if self.openrouter_provider is not None and self.provider != "openrouter":
            raise ValueError(
                "openrouter_provider is only valid with provider 'openrouter' "
                f"(got provider {self.provider!r})"
            )
        if self.api_key is not None and self.api_key_env is not None:
            raise ValueError("give either api_key or api_key_env, not both")
        if (
            self.max_tokens_retry is not None
            and self.max_tokens is not None
            and self.max_tokens_retry <= self.max_tokens
        ):
            raise ValueError(
                f"max_tokens_retry ({self.max_tokens_retry}) must be larger than "
                f"max_tokens ({self.max_tokens})"
            )
        native = self.supports_native_output
        for i, fallback in enumerate(self.fallback_models):
            if fallback.fallback_models:
                raise ValueError(
                    f"fallback_models[{i}] has its own fallback_models; the chain must be flat"
                )
            if fallback.supports_native_output != native:
                raise ValueError(
                    f"fallback_models[{i}] ({fallback.provider}:{fallback.model}) does not agree "
                    f"with the primary model on native structured-output support"
                )
        return self

    @property
    def supports_native_output(self) -> bool:
        """True when this provider/model enforces a JSON schema on its output natively."""
        return supports_native_output(self.provider, self.model)

    def resolved_api_key(self) -> str | None:
        """The API key to use: ``api_key``, else ``$api_key_env``, else None (provider default)."""
        if self.api_key is not None:
            return self.api_key.get_secret_value()
        if self.api_key_env is not None:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ValueError(f"environment variable {self.api_key_env} is not set")
            return key
        return None


def model_roster_key(cfg: ModelConfig) -> str:
    """The key a model is selected by in a roster: ``"<provider>:<model>"``."""
    return f"{cfg.provider}:{cfg.model}"


def validate_unique_roster_keys(roster: list[ModelConfig]) -> None:
    """Raise ValueError when two roster entries share a ``provider:model`` key."""
    seen: set[str] = set()
    for cfg in roster:
        key = model_roster_key(cfg)
        if key in seen:
            raise ValueError(f"model_roster has two entries for {key!r}")
        seen.add(key)


def normalize_model_roster(
    model_cfg: ModelConfig | list[ModelConfig], roster: list[ModelConfig] | None = None
) -> tuple[ModelConfig, list[ModelConfig]]:
    """Split a ``model_cfg`` given as a list into (active model, roster).

    A list names the roster and its first element is the active model. Giving a
    list and an explicit non-empty roster at once is an error.
    """
    if isinstance(model_cfg, list):
        if not model_cfg:
            raise ValueError("model_cfg given as a list must not be empty")
        if roster:
            raise ValueError("give the roster either as a model_cfg list or as model_roster")
        return model_cfg[0], list(model_cfg)
    return model_cfg, list(roster or [])


class TokenUsageLimits(_Strict):
    """Token caps shared by both budget tiers (None means no cap)."""

    input_tokens_limit: int | None = Field(default=None, gt=0)
    output_tokens_limit: int | None = Field(default=None, gt=0)
    total_tokens_limit: int | None = Field(default=None, gt=0)


class RunUsageLimits(TokenUsageLimits):
    """Budget of one ``run()``: enforced by pydantic-ai while the run goes, reset every run.

    ``run_request_limit`` (50 by default) is the safety brake against a model
    looping on tool calls.
    """

    run_request_limit: int | None = Field(default=50, gt=0)
    tool_calls_limit: int | None = Field(default=None, gt=0)


class AgentUsageLimits(TokenUsageLimits):
    """Budget of an agent's whole life, checked before each run starts.

    The run counter is taken before the run executes (a failing run still
    counts). Token caps decide whether a run may *start*: the run that crosses
    the line completes, the next one is refused. All None (the default) never
    blocks.
    """

    agent_request_limit: int | None = Field(default=None, gt=0)

    @property
    def unlimited(self) -> bool:
        """True when no cap is set."""
        return (
            self.agent_request_limit is None
            and self.input_tokens_limit is None
            and self.output_tokens_limit is None
            and self.total_tokens_limit is None
        )


#: Built-in HTTP defaults of a model client (seconds; retries after the first attempt).
#: The read timeout is minutes, not seconds: a local model on a CPU can think that long
#: before its first token. Retries are few: each waits a full read timeout in the worst case.
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 300.0
DEFAULT_MAX_RETRIES = 2

#: Environment variables overriding the built-in defaults (a card's setting wins over them).
ENV_READ_TIMEOUT = "AKGENTIC_MODEL_TIMEOUT"
ENV_CONNECT_TIMEOUT = "AKGENTIC_MODEL_CONNECT_TIMEOUT"
ENV_MAX_RETRIES = "AKGENTIC_MODEL_MAX_RETRIES"


class HttpClientConfig(_Strict):
    """HTTP behaviour of the provider client: timeouts and SDK retries (None: the default).

    ``timeout`` is the read timeout (how long a reply may take to come), ``connect_timeout``
    how long reaching the server may take, ``max_retries`` how many times a failed request
    (connection error, timeout, 408/409/429/5xx) is sent again, with exponential backoff.
    An unset field falls back to its environment variable, then to the built-in default;
    see :func:`resolve_http`.
    """

    timeout: float | None = Field(default=None, gt=0)
    connect_timeout: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0)


class ResolvedHttp(BaseModel):
    """The HTTP settings a model client is built with, every one decided."""

    model_config = ConfigDict(frozen=True)

    connect_timeout: float
    read_timeout: float
    max_retries: int


def _env_number(name: str, kind: type[float] | type[int]) -> float | int | None:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return None
    try:
        value = kind(raw.strip())
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None
    if value < 0 or (kind is float and value == 0):
        raise ValueError(f"{name}={raw!r} is out of range")
    return value


def resolve_http(model: ModelConfig, http: HttpClientConfig | None = None) -> ResolvedHttp:
    """The client settings for ``model``: its card, then ``http``, then the environment.

    Each setting is taken from the first that sets it: the model's own ``timeout`` /
    ``connect_timeout`` / ``max_retries``, the agent's ``runtime_cfg.http_client_config``,
    ``$AKGENTIC_MODEL_TIMEOUT`` / ``$AKGENTIC_MODEL_CONNECT_TIMEOUT`` /
    ``$AKGENTIC_MODEL_MAX_RETRIES``, the built-in default.
    """
    http = http or HttpClientConfig()

    def pick(own: Any, shared: Any, env: str, kind: type[float] | type[int], default: Any) -> Any:
        for value in (own, shared, _env_number(env, kind)):
            if value is not None:
                return value
        return default

    return ResolvedHttp(
        connect_timeout=pick(
            model.connect_timeout,
            http.connect_timeout,
            ENV_CONNECT_TIMEOUT,
            float,
            DEFAULT_CONNECT_TIMEOUT,
        ),
        read_timeout=pick(
            model.timeout, http.timeout, ENV_READ_TIMEOUT, float, DEFAULT_READ_TIMEOUT
        ),
        max_retries=pick(
            model.max_retries, http.max_retries, ENV_MAX_RETRIES, int, DEFAULT_MAX_RETRIES
        ),
    )


class RuntimeConfig(_Strict):
    """How pydantic-ai drives a run: tool/output retries and the end strategy."""

    retries: int = Field(default=3, ge=0)
    end_strategy: Literal["early", "graceful", "exhaustive"] = "exhaustive"
    http_client_config: HttpClientConfig = Field(default_factory=HttpClientConfig)


class CompactionConfig(_Strict):
    """Context compaction: which strategy folds old history, and when it triggers.

    Automatic compaction only runs when the active model's context is known (its
    ``context_length``, or what its server reports): it fires before a run once the
    previous request used, or the estimate of the history plus the new prompt comes
    to, more than ``trigger_ratio * context`` input tokens. ``strategy`` is a
    registered id (``summarize``, ``sliding_window``, ``none``) or the dotted path
    of a factory.
    """

    strategy: str = "summarize"
    auto_trigger: bool = True
    trigger_ratio: float = Field(default=0.85, gt=0.0, le=1.0)
    keep_recent_messages: int = Field(default=4, ge=0)
    summary_target_tokens: int = Field(default=2000, gt=0)
    summarizer_prompt_version: str = "v1"
    summary_model_cfg: ModelConfig | None = None


class LlmSettings(BaseModel):
    """The model, its roster, retries, both budget tiers and compaction: one definition.

    :class:`ReactAgentConfig` and the agent layer's ``AgentConfig`` both derive from it,
    so the fields and the list-to-roster rule exist once. ``model_cfg`` may be a list:
    its first entry becomes the active model and the whole list the ``model_roster``
    the agent can switch between.
    """

    model_cfg: ModelConfig = Field(default_factory=ModelConfig)
    model_roster: list[ModelConfig] = Field(default_factory=list)
    runtime_cfg: RuntimeConfig = Field(default_factory=RuntimeConfig)
    run_usage_limits: RunUsageLimits = Field(default_factory=RunUsageLimits)
    agent_usage_limits: AgentUsageLimits = Field(default_factory=AgentUsageLimits)
    compaction_cfg: CompactionConfig = Field(default_factory=CompactionConfig)

    @model_validator(mode="before")
    @classmethod
    def _roster_from_list(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("model_cfg"), list):
            data = dict(data)
            active, roster = normalize_model_roster(data["model_cfg"], data.get("model_roster"))
            data["model_cfg"], data["model_roster"] = active, roster
        return data

    def llm_settings(self) -> dict[str, Any]:
        """These fields' values by name (not copied), e.g. to build a ReactAgentConfig."""
        return {name: getattr(self, name) for name in LlmSettings.model_fields}


class ReactAgentConfig(LlmSettings, _Strict):
    """Everything a :class:`~akgentic.llm.agent.ReactAgent` is built from.

    The :class:`LlmSettings` plus ``max_messages``, a sliding window over the history.
    """

    max_messages: int | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _check(self) -> ReactAgentConfig:
        if (
            self.max_messages is not None
            and self.compaction_cfg.auto_trigger
            and (self.model_cfg.context_length is not None)
        ):
            raise ValueError(
                "max_messages (sliding window) and automatic compaction exclude each other: "
                "unset max_messages or set compaction_cfg.auto_trigger=false"
            )
        check_compaction_bounds(self.model_cfg, self.compaction_cfg, self.run_usage_limits)
        if self.model_roster:
            validate_unique_roster_keys(self.model_roster)
            keys = [model_roster_key(m) for m in self.model_roster]
            if model_roster_key(self.model_cfg) not in keys:
                raise ValueError(
                    f"active model {model_roster_key(self.model_cfg)!r} is not in model_roster "
                    f"({', '.join(keys)})"
                )
        return self


def compaction_threshold(model_cfg: ModelConfig, compaction: CompactionConfig) -> int | None:
    """Input-token count above which auto-compaction fires, or None when it is off."""
    if not compaction.auto_trigger or model_cfg.context_length is None:
        return None
    return int(model_cfg.context_length * compaction.trigger_ratio)


def check_compaction_bounds(
    model_cfg: ModelConfig, compaction: CompactionConfig, run_limits: RunUsageLimits
) -> None:
    """Refuse a compaction threshold that a run-tier token cap would always beat.

    If a run is stopped by its input/total token cap before the history grows
    past the threshold, auto-compaction can never help; that is a config error.
    """
    threshold = compaction_threshold(model_cfg, compaction)
    if threshold is None:
        return
    for name in ("input_tokens_limit", "total_tokens_limit"):
        cap = getattr(run_limits, name)
        if cap is not None and threshold >= cap:
            raise ValueError(
                f"compaction threshold {threshold} (context_length * trigger_ratio) must be "
                f"below run_usage_limits.{name}={cap}"
            )
