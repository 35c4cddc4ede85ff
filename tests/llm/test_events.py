"""LLM events persist: through the core serializer and through plain dict forms."""

from __future__ import annotations

import dataclasses
import json

import pytest
from pydantic import TypeAdapter
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from akgentic.llm.events import (
    LlmContextClearedEvent,
    LlmContextCompactedEvent,
    LlmMessageEvent,
    LlmSystemPromptEvent,
    LlmUsageEvent,
    SystemPromptPartSnapshot,
    ToolCallEvent,
    ToolReturnEvent,
)

REQUEST = ModelRequest(
    parts=[SystemPromptPart("be brief", dynamic_ref="sp"), UserPromptPart("hello")], run_id="r1"
)
RESPONSE = ModelResponse(
    parts=[TextPart("thinking aloud"), ToolCallPart("lookup", {"q": "x"}, tool_call_id="c1")],
    usage=RequestUsage(input_tokens=12, output_tokens=5, cache_read_tokens=2),
    model_name="gpt-x",
    provider_name="openai",
    run_id="r1",
)
RETURN = ModelRequest(parts=[ToolReturnPart("lookup", {"hits": [1, 2]}, tool_call_id="c1")])

SIMPLE_EVENTS = [
    ToolCallEvent("r1", "lookup", "c1", '{"q":"x"}'),
    ToolReturnEvent("r1", "lookup", "c1", success=False),
    LlmUsageEvent("r1", "gpt-x", "openai", 10, 4, 1, 0, 1, 0.002),
    LlmSystemPromptEvent("r1", (SystemPromptPartSnapshot("be brief", "sp"),), "abc"),
    LlmContextCompactedEvent("r1", "summarize", "so far", 6, "v1", 900, 80),
    LlmContextClearedEvent("r2", 7),
]


def test_events_are_frozen_dataclasses() -> None:
    event = ToolCallEvent("r", "t", "c", "{}")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.tool_name = "other"  # type: ignore[misc]


@pytest.mark.parametrize("message", [REQUEST, RESPONSE, RETURN])
def test_message_event_round_trips_through_the_core_serializer(message: object) -> None:
    serializer = pytest.importorskip("akgentic.core.utils.serializer")
    event = LlmMessageEvent(message)  # type: ignore[arg-type]
    data = serializer.serialize(event)
    assert data["__model__"] == "akgentic.llm.events.LlmMessageEvent"
    stored = json.loads(json.dumps(data))
    restored = serializer.deserialize_object(stored)
    assert isinstance(restored, LlmMessageEvent)
    assert restored.message == message


@pytest.mark.parametrize("event", SIMPLE_EVENTS, ids=lambda e: type(e).__name__)
def test_simple_events_round_trip_through_the_core_serializer(event: object) -> None:
    serializer = pytest.importorskip("akgentic.core.utils.serializer")
    stored = json.loads(json.dumps(serializer.serialize(event)))
    assert serializer.deserialize_object(stored) == event


def test_message_event_accepts_pydantic_ai_dict_form() -> None:
    data = ModelMessagesTypeAdapter.dump_python([RESPONSE], mode="json")[0]
    event = LlmMessageEvent(data)
    assert event.message == RESPONSE


def test_message_event_round_trips_through_dataclasses_asdict() -> None:
    event = LlmMessageEvent(RESPONSE)
    assert LlmMessageEvent(**dataclasses.asdict(event)) == event


def test_message_event_round_trips_through_a_json_type_adapter() -> None:
    adapter = TypeAdapter(LlmMessageEvent)
    dumped = adapter.dump_python(LlmMessageEvent(REQUEST), mode="json")
    restored = adapter.validate_python(json.loads(json.dumps(dumped)))
    assert restored.message == REQUEST


def test_usage_event_keeps_tokens_and_reports_totals() -> None:
    event = LlmUsageEvent("r", "m", "p", input_tokens=3, output_tokens=4)
    assert event.total_tokens == 7
    assert event.requests == 1
