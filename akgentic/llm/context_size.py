"""The model's context window in tokens: the card's ``context_length``, else what the server says.

Local servers tell their context size, each in its own place:

- llama.cpp: ``GET /props`` → ``default_generation_settings.n_ctx`` (the size the
  server was started with), or ``GET /v1/models`` → ``data[].meta.n_ctx_train``;
- vLLM: ``GET /v1/models`` → ``data[].max_model_len``;
- Ollama: ``POST /api/show`` → ``model_info["<arch>.context_length"]``, or ``num_ctx``
  in its ``parameters``.

The server is asked once per ``(base_url, model)`` in a process, with a short bounded
timeout; any failure (no such path, no field, a refused or slow connection) means
"unknown" and is cached too, so a turn never waits on it twice. Hosted providers
(no ``base_url``) are not asked: their card should say ``context_length``.

Token counts before a request are estimated at about four characters per token
(:func:`akgentic.llm.compaction.estimate_tokens`): no tokenizer is needed, and the
estimate only decides when to compact early or to keep a message out.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import httpx

from akgentic.llm.config import ModelConfig

__all__ = ["PROBE_TIMEOUT", "clear_probe_cache", "context_length_of", "probe_context_length"]

logger = logging.getLogger(__name__)

#: Seconds the whole probe of one server may take (all its requests together).
PROBE_TIMEOUT = 2.0

_cache: dict[tuple[str, str], int | None] = {}


def clear_probe_cache() -> None:
    """Forget every probed size (tests, or a server restarted with another context)."""
    _cache.clear()


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _from_models(payload: Any, model: str) -> int | None:
    """vLLM's ``max_model_len`` or llama.cpp's ``meta.n_ctx_train`` of ``model``.

    When no entry has ``model``'s id, a single served model is taken as it.
    """
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        meta = entry.get("meta")
        found = _positive(entry.get("max_model_len")) or (
            _positive(meta.get("n_ctx_train")) if isinstance(meta, dict) else None
        )
        if found:
            return found
    return None


def _from_props(payload: Any) -> int | None:
    settings = payload.get("default_generation_settings") if isinstance(payload, dict) else None
    return _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None


def _from_ollama(payload: Any) -> int | None:
    if not isinstance(payload, dict):
        return None
    params = payload.get("parameters")
    if isinstance(params, str):  # "num_ctx 8192\nstop ..." — what the Modelfile sets wins
        found = re.search(r"^\s*num_ctx\s+(\d+)", params, re.MULTILINE)
        if found:
            return int(found.group(1))
    info = payload.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if str(key).endswith(".context_length") and _positive(value):
                return int(value)
    return None


async def _ask(client: httpx.AsyncClient, base_url: str, model: str) -> int | None:
    root = re.sub(r"/v1/?$", "", base_url.rstrip("/"))
    attempts: list[tuple[str, str, Any]] = [
        ("GET", f"{root}/props", _from_props),
        ("GET", f"{base_url.rstrip('/')}/models", lambda p: _from_models(p, model)),
        ("POST", f"{root}/api/show", _from_ollama),
    ]
    for method, url, read in attempts:
        try:
            body = {"model": model} if method == "POST" else None
            response = await client.request(method, url, json=body)
            if response.status_code != 200:
                continue
            found = read(response.json())
        except (httpx.HTTPError, ValueError) as exc:
            logger.debug("context size probe %s %s failed: %s", method, url, exc)
            continue
        if found:
            return int(found)
    return None


async def probe_context_length(
    base_url: str, model: str, timeout: float = PROBE_TIMEOUT
) -> int | None:
    """The context size the server at ``base_url`` reports for ``model``, or None (cached)."""
    key = (base_url, model)
    if key in _cache:
        return _cache[key]
    # No lock: agents run on loops of their own, and two agents probing at once
    # only ask twice.
    found: int | None = None
    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            found = await asyncio.wait_for(_ask(client, base_url, model), timeout)
    except (TimeoutError, httpx.HTTPError) as exc:
        logger.debug("context size probe of %s timed out or failed: %s", base_url, exc)
    _cache[key] = found
    return found


async def context_length_of(cfg: ModelConfig) -> int | None:
    """``cfg.context_length`` when the card sets it, else the probed size (None: unknown)."""
    if cfg.context_length is not None:
        return cfg.context_length
    if not cfg.base_url:
        return None
    return await probe_context_length(cfg.base_url, cfg.model)
