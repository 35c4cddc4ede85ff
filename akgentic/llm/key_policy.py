"""Which host API key a model config may use, and where it may be sent.

A team card is input: it may come from a file someone uploaded to the console. A card
that could name any host variable (``api_key_env``) or point a provider at any URL
(``base_url``) while the host's key for that provider is attached could send the
operator's key to a server of its choosing. So the operator consents explicitly:

- ``api_key_env`` may name the provider's own default variable (``OPENAI_API_KEY``
  for ``openai``...) or a variable listed in ``AKGENTIC_MODEL_ALLOWED_ENV``
  (comma-separated names); any other name is refused;
- a host key read from the provider's default variable goes to the provider's own
  endpoint, to the URL the operator set in the provider's URL variable
  (``OPENAI_BASE_URL``, ``AZURE_OPENAI_ENDPOINT``), or to a URL listed in
  ``AKGENTIC_MODEL_ALLOWED_URLS`` (comma-separated). Loopback addresses get no
  exception: any local user or container can listen there, and local model servers
  need no key. An OpenAI-compatible config whose URL is not allowed runs without the
  host key (a placeholder is sent); other providers, and a card that asked for the
  default variable by name, are refused.

A variable the operator listed in ``AKGENTIC_MODEL_ALLOWED_ENV`` is consent for any
card to use it with any URL, as ``AKGENTIC_MCP_ALLOWED_ENV`` is for MCP cards. A key
written in the card itself (``api_key``) is the card's own and goes where it says.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from akgentic.llm.config import ModelConfig

__all__ = [
    "ALLOWED_ENV_VAR",
    "ALLOWED_URLS_VAR",
    "ModelKeyNotAllowedError",
    "allowed_env_names",
    "allowed_urls",
    "host_api_key",
]

ALLOWED_ENV_VAR = "AKGENTIC_MODEL_ALLOWED_ENV"
"""The operator's comma-separated list of host variables a card's ``api_key_env`` may name."""
ALLOWED_URLS_VAR = "AKGENTIC_MODEL_ALLOWED_URLS"
"""The operator's comma-separated list of ``base_url`` values that may receive a host key."""


class ModelKeyNotAllowedError(ValueError):
    """A model config asks for a host key the operator did not allow it to use."""


def _listed(variable: str) -> list[str]:
    return [item.strip() for item in os.environ.get(variable, "").split(",") if item.strip()]


def _same_url(url: str) -> str:
    return url.strip().rstrip("/").lower()


def allowed_env_names() -> frozenset[str]:
    """The host variables cards may name in ``api_key_env`` beyond the provider's own."""
    return frozenset(_listed(ALLOWED_ENV_VAR))


def allowed_urls(url_vars: Sequence[str] = ()) -> frozenset[str]:
    """``base_url`` values a host key may go to: ``url_vars``' values and the allow-list."""
    urls = _listed(ALLOWED_URLS_VAR) + [os.environ.get(v, "") for v in url_vars]
    return frozenset(_same_url(u) for u in urls if u.strip())


def host_api_key(
    config: ModelConfig,
    *,
    default_env: Sequence[str],
    url_vars: Sequence[str] = (),
    key_optional: bool = False,
    own_urls: Sequence[str] = (),
) -> str | None:
    """The API key ``config`` may use, applying the operator's consent (see the module doc).

    ``default_env`` are the provider's own key variables, in order of preference;
    ``url_vars`` the variables by which the operator points the provider elsewhere;
    ``own_urls`` the provider's own endpoints (a card may name them).
    With ``key_optional`` (OpenAI-compatible servers) a host key that may not go to
    ``config.base_url`` is left out (None) instead of refused.

    Raises:
        ModelKeyNotAllowedError: naming the variable or URL and the setting to change.
        ValueError: ``api_key_env`` names an allowed variable that is not set.
    """
    if config.api_key is not None:
        return config.api_key.get_secret_value()
    label = f"{config.provider}:{config.model}"
    named = config.api_key_env
    if named is not None:
        listed = named in allowed_env_names()
        if not listed and named not in default_env:
            raise ModelKeyNotAllowedError(
                f"model {label}: api_key_env names the host variable {named!r}, which the "
                f"operator has not allowed; list it in {ALLOWED_ENV_VAR} to let cards read it"
            )
        key = os.environ.get(named)
        if not key:
            raise ValueError(f"environment variable {named} is not set")
        if listed:
            return key
        source = named
    else:
        source = next((name for name in default_env if os.environ.get(name)), "")
        key = os.environ.get(source) if source else None
        if key is None:
            return None
    url = config.base_url
    own = {_same_url(u) for u in own_urls}
    if url is None or _same_url(url) in own or _same_url(url) in allowed_urls(url_vars):
        return key
    if key_optional and named is None:
        return None
    where = " or ".join([*url_vars, ALLOWED_URLS_VAR])
    raise ModelKeyNotAllowedError(
        f"model {label}: base_url {url!r} is not allowed to receive the host key {source}; "
        f"set {where} to that URL to allow it, or give the card its own api_key"
    )
