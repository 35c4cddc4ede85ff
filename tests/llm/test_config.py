"""Configuration models: defaults, validation and YAML friendliness."""

from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from akgentic.llm import (
    AgentUsageLimits,
    CompactionConfig,
    ModelConfig,
    OpenRouterRouting,
    PromptTemplate,
    ReactAgentConfig,
    RunUsageLimits,
    model_roster_key,
    normalize_model_roster,
    validate_unique_roster_keys,
)


def test_model_config_rejects_unknown_keys_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="temprature"):
        ModelConfig.model_validate({"provider": "openai", "temprature": 0.2})


def test_model_config_rejects_an_unknown_provider() -> None:
    with pytest.raises(ValidationError, match="provider"):
        ModelConfig(provider="nope")


@pytest.mark.parametrize(
    "field, value", [("temperature", 2.5), ("max_tokens", 0), ("context_length", -1)]
)
def test_model_config_bounds_are_enforced(field: str, value: float) -> None:
    with pytest.raises(ValidationError, match=field):
        ModelConfig.model_validate({field: value})


def test_model_config_loads_from_yaml_with_a_local_base_url() -> None:
    data = yaml.safe_load(
        """
        provider: openai-chat
        model: llama3.2
        base_url: http://localhost:11434/v1
        context_length: 8192
        """
    )
    cfg = ModelConfig.model_validate(data)
    assert cfg.base_url == "http://localhost:11434/v1"
    assert cfg.context_length == 8192
    assert ModelConfig.model_validate(cfg.model_dump()) == cfg


def test_api_key_is_masked_in_dumps_and_a_masked_key_loads_as_unset() -> None:
    cfg = ModelConfig(api_key="sk-secret")
    dumped = cfg.model_dump(mode="json")
    assert "sk-secret" not in str(dumped)
    assert ModelConfig.model_validate(dumped).api_key is None
    assert cfg.resolved_api_key() == "sk-secret"


def test_api_key_env_names_the_variable_holding_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_LLM_KEY", "k-123")
    assert ModelConfig(api_key_env="MY_LLM_KEY").resolved_api_key() == "k-123"
    monkeypatch.delenv("MY_LLM_KEY")
    with pytest.raises(ValueError, match="MY_LLM_KEY"):
        ModelConfig(api_key_env="MY_LLM_KEY").resolved_api_key()


def test_openrouter_routing_is_only_accepted_with_the_openrouter_provider() -> None:
    routing = OpenRouterRouting(order=["anthropic"], allow_fallbacks=False)
    ModelConfig(provider="openrouter", model="openai/gpt-4.1", openrouter_provider=routing)
    with pytest.raises(ValidationError, match="openrouter_provider"):
        ModelConfig(provider="openai", openrouter_provider=routing)
    with pytest.raises(ValidationError, match="extra"):
        OpenRouterRouting.model_validate({"bogus": 1})


@pytest.mark.parametrize(
    "provider, model, native",
    [
        ("openai", "gpt-5.2", True),
        ("openai-chat", "llama3", True),
        ("azure-chat", "gpt-4o", True),
        ("anthropic", "claude-sonnet-4-5", True),
        ("google-gla", "gemini-2.5-pro", False),
        ("mistral", "mistral-large-latest", False),
        ("openrouter", "openai/gpt-4.1", True),
        ("openrouter", "~google/gemini-2.5-pro", True),
        ("openrouter", "meta-llama/llama-3.3-70b", False),
    ],
)
def test_native_structured_output_support_per_provider(
    provider: str, model: str, native: bool
) -> None:
    cfg = ModelConfig.model_validate({"provider": provider, "model": model})
    assert cfg.supports_native_output is native


def test_fallback_chain_must_be_flat_and_agree_on_native_output() -> None:
    inner = ModelConfig(provider="openai-chat", model="b")
    with pytest.raises(ValidationError, match="flat"):
        ModelConfig(fallback_models=[ModelConfig(fallback_models=[inner])])
    with pytest.raises(ValidationError, match="native structured-output"):
        ModelConfig(fallback_models=[ModelConfig(provider="mistral", model="m")])
    ok = ModelConfig(fallback_models=[inner])
    assert ok.fallback_models == [inner]


def test_run_limits_default_to_a_fifty_request_brake_and_agent_limits_to_none() -> None:
    assert RunUsageLimits().run_request_limit == 50
    assert AgentUsageLimits().unlimited
    with pytest.raises(ValidationError):
        RunUsageLimits(run_request_limit=0)
    with pytest.raises(ValidationError):
        AgentUsageLimits(request_limit=3)  # type: ignore[call-arg]


def test_model_cfg_given_as_a_list_becomes_the_roster() -> None:
    a, b = ModelConfig(model="a"), ModelConfig(model="b")
    cfg = ReactAgentConfig.model_validate({"model_cfg": [a.model_dump(), b.model_dump()]})
    assert cfg.model_cfg.model == "a"
    assert [model_roster_key(m) for m in cfg.model_roster] == ["openai:a", "openai:b"]
    with pytest.raises(ValidationError, match="empty"):
        ReactAgentConfig.model_validate({"model_cfg": []})
    with pytest.raises(ValidationError, match="either"):
        ReactAgentConfig.model_validate({"model_cfg": [a], "model_roster": [b]})


def test_roster_keys_must_be_unique_and_contain_the_active_model() -> None:
    a = ModelConfig(model="a")
    with pytest.raises(ValueError, match="two entries"):
        validate_unique_roster_keys([a, a])
    with pytest.raises(ValidationError, match="not in model_roster"):
        ReactAgentConfig(model_cfg=a, model_roster=[ModelConfig(model="b")])
    assert normalize_model_roster(a) == (a, [])


def test_compaction_threshold_must_stay_below_run_token_caps() -> None:
    with pytest.raises(ValidationError, match="input_tokens_limit"):
        ReactAgentConfig(
            model_cfg=ModelConfig(context_length=10_000),
            run_usage_limits=RunUsageLimits(input_tokens_limit=8_000),
        )
    ReactAgentConfig(
        model_cfg=ModelConfig(context_length=10_000),
        run_usage_limits=RunUsageLimits(input_tokens_limit=9_000),
    )


def test_sliding_window_and_auto_compaction_exclude_each_other() -> None:
    with pytest.raises(ValidationError, match="max_messages"):
        ReactAgentConfig(model_cfg=ModelConfig(context_length=1000), max_messages=10)
    ReactAgentConfig(
        model_cfg=ModelConfig(context_length=1000),
        max_messages=10,
        compaction_cfg=CompactionConfig(auto_trigger=False),
    )


def test_react_agent_config_round_trips_through_yaml() -> None:
    cfg = ReactAgentConfig(
        model_cfg=ModelConfig(provider="anthropic", model="claude-x", reasoning_effort="high"),
        run_usage_limits=RunUsageLimits(run_request_limit=5, total_tokens_limit=9),
        agent_usage_limits=AgentUsageLimits(agent_request_limit=3),
    )
    text = yaml.safe_dump(cfg.model_dump(mode="json"))
    assert ReactAgentConfig.model_validate(yaml.safe_load(text)) == cfg


def test_prompt_template_renders_params_and_reports_a_missing_one() -> None:
    template = PromptTemplate(template="Hi {name}, {{x}}", params={"name": "Ada"})
    assert template.render() == "Hi Ada, {x}"
    with pytest.raises(KeyError):
        PromptTemplate(template="Hi {name}").render()
    assert PromptTemplate().render() == "You are a useful assistant"
