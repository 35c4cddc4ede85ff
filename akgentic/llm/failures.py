"""Why a turn failed, in plain words: one place maps the model-side errors to one line.

:func:`describe_failure` turns what a run raised (pydantic-ai's model errors, the
OpenAI SDK's, a usage limit, a reply cut off at ``max_tokens``, retries used up on an
unknown tool or bad arguments) into a ``(kind, cause)`` pair: ``cause`` is the line a
person reads ("the model server at 127.0.0.1:8091 answered HTTP 500: ..."), ``kind``
a short name a program can branch on (see :class:`~akgentic.llm.events.TurnFailed`).
The traceback stays with the exception, for the log.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from akgentic.llm.errors import ContextOverflowError, ReplyTruncatedError, UsageLimitError

if TYPE_CHECKING:
    from akgentic.llm.config import ModelConfig

__all__ = ["describe_failure"]

_LIMIT = 200
# What a person can do about a context overflow (the message itself is already left out).
CONTEXT_ADVICE = (
    "; it was left out of the history — raise the context (context_length / the server's "
    "n_ctx), /compact, or send a smaller input"
)
# OpenAI and vLLM: "maximum context length is 2048 tokens. However, you requested 10119 tokens"
_CONTEXT_SENTENCE = re.compile(
    r"maximum context length is (\d+) tokens.*?(\d+) tokens", re.IGNORECASE | re.DOTALL
)


def _one_line(text: Any, limit: int = _LIMIT) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _server(model: ModelConfig | None) -> str:
    if model is None:
        return "the model server"
    if model.base_url:
        host = urlsplit(model.base_url).netloc or model.base_url
        return f"the model server at {host}"
    return f"the {model.provider} model server"


def _error_fields(body: Any) -> dict[str, Any]:
    """The ``error`` object of an OpenAI-style error body (or the body itself)."""
    if isinstance(body, dict):
        inner = body.get("error")
        return inner if isinstance(inner, dict) else body
    return {}


def _context_overflow(body: Any, message: str) -> tuple[int, int] | None:
    """(prompt tokens, context) when the server said the prompt exceeds the context."""
    fields = _error_fields(body)
    prompt, context = fields.get("n_prompt_tokens"), fields.get("n_ctx")  # llama.cpp
    if isinstance(prompt, int) and isinstance(context, int):
        return prompt, context
    found = _CONTEXT_SENTENCE.search(str(fields.get("message") or message))
    if found:
        return int(found.group(2)), int(found.group(1))
    return None


def _http(exc: Any, model: ModelConfig | None) -> tuple[str, str]:
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    fields = _error_fields(body)
    message = fields.get("message") or (body if isinstance(body, str) else "") or str(exc)
    overflow = _context_overflow(body, str(message))
    if overflow is not None:
        prompt, context = overflow
        return (
            "context_length",
            f"the prompt ({prompt:,} tokens) exceeds the model's context ({context:,})"
            + CONTEXT_ADVICE,
        )
    if type(exc).__name__ == "ModelContextWindowExceededError":
        return (
            "context_length",
            f"the prompt exceeds the model's context: {_one_line(message, 120)}" + CONTEXT_ADVICE,
        )
    return "http_error", f"{_server(model)} answered HTTP {status}: {_one_line(message)}"


def _feedback(detail: Any) -> str:
    """The first validation message of a retry's feedback, or the feedback itself."""
    if isinstance(detail, list) and detail and isinstance(detail[0], dict):
        first = detail[0]
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "")
        text = str(first.get("msg", ""))
        return f"{where}: {text}" if where else text
    return _one_line(detail, 120)


def _is_json_error(detail: Any) -> bool:
    return (
        isinstance(detail, list)
        and bool(detail)
        and isinstance(detail[0], dict)
        and detail[0].get("type") == "json_invalid"
    )


def _retries(exc: Any) -> tuple[str, str]:
    cause, tool, tries, detail = exc.cause, exc.tool_name, exc.tries, exc.detail
    times = f"({tries} tries)"
    if cause == "unknown_tool":
        return "unknown_tool", f"the model called an unknown tool {tool!r} {times}"
    if cause == "no_output":
        return "bad_output", f"the model's replies had neither text nor a tool call {times}"
    if tool is None:
        if _is_json_error(detail):
            return "bad_output", f"the model answered in prose where JSON was expected {times}"
        what = f"the model's answer did not have the expected form {times}"
        return "bad_output", f"{what}: {_feedback(detail)}"
    if cause == "model_retry":
        return (
            "tool_retry",
            f"tool {tool!r} kept asking the model to retry {times}: {_feedback(detail)}",
        )
    if _is_json_error(detail):
        return "bad_arguments", f"the model sent malformed JSON arguments to {tool!r} {times}"
    return (
        "bad_arguments",
        f"the model's arguments to {tool!r} were invalid {times}: {_feedback(detail)}",
    )


def describe_failure(exc: BaseException, model: ModelConfig | None = None) -> tuple[str, str]:
    """``(kind, cause)`` for what a run raised; ``model`` names the server in the line."""
    from pydantic_ai.exceptions import (
        ModelAPIError,
        ModelHTTPError,
        ModelTimeoutError,
        OutputTokenLimitExceeded,
        UnexpectedModelBehavior,
        UsageLimitExceeded,
    )

    from akgentic.llm.turn import RetriesExhausted

    if isinstance(exc, ReplyTruncatedError):
        return "truncated", str(exc)
    if isinstance(exc, ContextOverflowError):
        return "context_length", str(exc) + CONTEXT_ADVICE
    if isinstance(exc, RetriesExhausted):
        return _retries(exc)
    if isinstance(exc, UsageLimitError | UsageLimitExceeded):
        return "usage_limit", f"the run went over its usage limit: {_one_line(exc)}"
    if isinstance(exc, ModelHTTPError):
        return _http(exc, model)
    if isinstance(exc, ModelTimeoutError):
        return "timeout", f"{_server(model)} did not answer in time"
    if isinstance(exc, ModelAPIError):
        status = getattr(exc.__cause__, "status_code", None)
        if status is not None:  # an SDK status error pydantic-ai did not type as HTTP
            return _http(exc.__cause__, model)
        reason = _one_line(exc.__cause__ or exc, 120)
        return "connection", f"{_server(model)} could not be reached: {reason}"
    if isinstance(exc, OutputTokenLimitExceeded):
        return "truncated", "the model's reply was cut off at its output-token limit"
    if isinstance(exc, UnexpectedModelBehavior):
        return "model_behavior", f"the model misbehaved: {_one_line(exc.message)}"
    # The provider SDK's own errors, when they arrive unwrapped (the OpenAI SDK's names).
    names = {cls.__name__ for cls in type(exc).__mro__}
    if isinstance(getattr(exc, "status_code", None), int):
        return _http(exc, model)
    if "APITimeoutError" in names:
        return "timeout", f"{_server(model)} did not answer in time"
    if "APIConnectionError" in names:
        return "connection", f"{_server(model)} could not be reached: {_one_line(exc, 120)}"
    return "error", f"{type(exc).__name__}: {_one_line(exc)}"
