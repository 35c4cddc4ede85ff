"""``--model provider:name`` / ``--base-url URL``: one model for every agent of a card.

The commands that start a team from a card (``run``, ``team create``, ``demo``) and
``team resume`` take these options; without them ``AKGENTIC_MODEL`` (and
``OPENAI_BASE_URL`` for its server) does the same. The model replaces the card's for
every member and every profile it may hire, so a card written for a hosted model runs
on a local one unchanged. On resume it replaces the recorded model of every agent
for that run only. A ``--base-url`` given on the command line is the operator's own choice,
so it may receive the provider's key (see :mod:`akgentic.llm.key_policy`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Annotated

import typer

from akgentic.cli.session import fail

if TYPE_CHECKING:
    from akgentic.core.agent_config import BaseConfig
    from akgentic.llm.config import ModelConfig
    from akgentic.team.card import TeamCard

__all__ = [
    "BASE_URL_ENV_VAR",
    "MODEL_ENV_VAR",
    "BaseUrlOption",
    "ModelOption",
    "model_override",
    "resume_model_options",
    "use_model",
]

MODEL_ENV_VAR = "AKGENTIC_MODEL"
BASE_URL_ENV_VAR = "OPENAI_BASE_URL"

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="provider:name replacing every agent's model, e.g. openai-chat:llama3.2 "
        f"(default: ${MODEL_ENV_VAR}).",
        show_default=False,
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="Server of the --model, e.g. http://127.0.0.1:8080/v1 "
        f"(default: ${BASE_URL_ENV_VAR}).",
        show_default=False,
    ),
]


def model_override(
    model: str | None,
    base_url: str | None,
    env: Mapping[str, str] | None = None,
) -> ModelConfig | None:
    """The model every agent runs on: ``--model``, else ``$AKGENTIC_MODEL``; None keeps the card's.

    Invalid input (a spec that is not ``provider:name``, ``--base-url`` alone) is
    one error line, exit 2.
    """
    from akgentic.llm.config import PROVIDERS, ModelConfig

    env = os.environ if env is None else env
    given = "--model" if model else MODEL_ENV_VAR
    spec = (model or env.get(MODEL_ENV_VAR, "")).strip()
    if not spec:
        if base_url:
            fail(f"--base-url needs --model provider:name (or {MODEL_ENV_VAR})", 2)
        return None
    provider, sep, name = spec.partition(":")
    if not sep or not name or provider not in PROVIDERS:
        fail(
            f"{given} must be provider:model with a provider among {', '.join(PROVIDERS)}; "
            f"got {spec!r}",
            2,
        )
    url = base_url or env.get(BASE_URL_ENV_VAR) or None
    return ModelConfig(provider=provider, model=name, base_url=url)


def allow_base_url(url: str, env: MutableMapping[str, str] | None = None) -> None:
    """Record ``url`` (given on the command line) as allowed to receive the provider's key."""
    from akgentic.llm.key_policy import ALLOWED_URLS_VAR

    env = os.environ if env is None else env
    listed = env.get(ALLOWED_URLS_VAR, "")
    env[ALLOWED_URLS_VAR] = f"{listed},{url}" if listed else url


def describe(config: ModelConfig) -> str:
    """``provider:name`` and where it is served, for a one-line banner."""
    where = f" at {config.base_url}" if config.base_url else ""
    return f"{config.provider}:{config.model}{where}"


def use_model(card: TeamCard, config: ModelConfig) -> None:
    """Make every LLM agent of ``card`` (members and profiles) run on ``config``."""
    from akgentic.agent.config import AgentConfig

    cards = [node.card for node, _parent in card.iter_members()] + list(card.agent_profiles)
    for agent_card in cards:
        if isinstance(agent_card.config, AgentConfig):
            agent_card.config.model_cfg = config.model_copy()


def apply_model_options(card: TeamCard, model: str | None, base_url: str | None) -> str | None:
    """Apply ``--model``/``--base-url`` (or the environment) to ``card``; its banner or None."""
    config = model_override(model, base_url)
    if config is None:
        return None
    if base_url:
        allow_base_url(base_url)
    use_model(card, config)
    return describe(config)


def resume_model_options(
    model: str | None, base_url: str | None
) -> Callable[[BaseConfig], BaseConfig] | None:
    """``--model``/``--base-url`` (or the environment) for a resumed team.

    The config transform :meth:`~akgentic.team.manager.TeamManager.resume_team`
    applies to every restored agent and hireable profile; None keeps the recorded models.
    """
    config = model_override(model, base_url)
    if config is None:
        return None
    if base_url:
        allow_base_url(base_url)

    def configure(agent_config: BaseConfig) -> BaseConfig:
        from akgentic.agent.config import AgentConfig

        if isinstance(agent_config, AgentConfig):
            agent_config.model_cfg = config.model_copy()
        return agent_config

    return configure
