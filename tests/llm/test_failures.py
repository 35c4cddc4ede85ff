"""describe_failure: the errors no scripted server produces, put in words too."""

from __future__ import annotations

import httpx2  # the HTTP client the OpenAI SDK is built on
import openai
from pydantic_ai.exceptions import ModelHTTPError, UnexpectedModelBehavior, UsageLimitExceeded

from akgentic.llm import ModelConfig, RunUsageLimitError, describe_failure

LOCAL = ModelConfig(provider="openai-chat", model="m", base_url="http://10.0.0.5:8080/v1")
REQUEST = httpx2.Request("POST", "http://10.0.0.5:8080/v1/chat/completions")


def test_unwrapped_sdk_errors_name_the_server() -> None:
    refused = openai.APIConnectionError(request=REQUEST)
    assert describe_failure(refused, LOCAL) == (
        "connection",
        "the model server at 10.0.0.5:8080 could not be reached: Connection error.",
    )
    timed_out = openai.APITimeoutError(request=REQUEST)
    assert describe_failure(timed_out, LOCAL) == (
        "timeout",
        "the model server at 10.0.0.5:8080 did not answer in time",
    )


def test_an_http_error_without_base_url_names_the_provider_and_keeps_one_line() -> None:
    error = ModelHTTPError(502, "gpt", {"message": "bad\ngateway   from upstream"})
    kind, cause = describe_failure(error, ModelConfig(provider="openai"))
    assert (kind, cause) == (
        "http_error",
        "the openai model server answered HTTP 502: bad gateway from upstream",
    )


def test_usage_limits_and_other_errors_are_one_line() -> None:
    assert describe_failure(UsageLimitExceeded("request_limit of 3"))[0] == "usage_limit"
    assert describe_failure(RunUsageLimitError("too many"))[1] == (
        "the run went over its usage limit: too many"
    )
    assert describe_failure(UnexpectedModelBehavior("odd\nreply")) == (
        "model_behavior",
        "the model misbehaved: odd reply",
    )
    assert describe_failure(KeyError("x")) == ("error", "KeyError: 'x'")
