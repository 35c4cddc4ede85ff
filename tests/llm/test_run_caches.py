"""Work ReactAgent does not repeat: tool schemas, prompt thread hand-offs, output schemas."""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel
from pydantic_ai import Tool
from pydantic_ai.messages import ModelMessage, ModelResponse, SystemPromptPart, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.llm.agent import ReactAgent, _as_tool
from akgentic.llm.output_spec import OutputSpec


def make_tool(doc: str) -> Any:
    def lookup(query: str, limit: int = 3) -> str:
        return f"{query}:{limit}"

    lookup.__doc__ = doc
    return lookup


DOC = """Look something up.

Args:
    query: What to look for.
    limit: How many results.
"""


def test_a_cached_tool_has_the_schema_pydantic_ai_would_build() -> None:
    first, second = make_tool(DOC), make_tool(DOC)
    built = Tool(first)
    cached_first, cached_second = _as_tool(first), _as_tool(second)
    for cached, func in ((cached_first, first), (cached_second, second)):
        assert isinstance(cached, Tool)
        assert cached.function is func
        assert cached.function_schema.function is func
        assert cached.name == built.name
        assert cached.description == built.description
        assert cached.function_schema.json_schema == built.function_schema.json_schema
    # One analysis, shared: same validator; the JSON schemas are separate copies.
    assert cached_first.function_schema.validator is cached_second.function_schema.validator
    assert cached_first.function_schema.json_schema is not cached_second.function_schema.json_schema


def test_a_different_docstring_gets_its_own_schema() -> None:
    plain = _as_tool(make_tool("Look.\n\nArgs:\n    query: What to look for."))
    instructed = _as_tool(make_tool("Look.\n\nAdditional Instructions:\nBe careful."))
    assert plain.description == Tool(make_tool("Look.\n\nArgs:\n    query: What.")).description
    assert instructed.description == "Look.\n\nAdditional Instructions:\nBe careful."
    assert plain.function_schema.json_schema["properties"]["query"]["description"] == (
        "What to look for."
    )


def test_other_callables_pass_through() -> None:
    class Callable:
        def __call__(self, x: int) -> int:
            return x

    obj = Callable()
    tool = Tool(make_tool(DOC))
    assert _as_tool(obj) is obj
    assert _as_tool(tool) is tool


def test_system_prompts_keep_their_dynamic_ref_and_run_on_the_callers_thread() -> None:
    threads: list[threading.Thread] = []

    def backstory() -> str:
        threads.append(threading.current_thread())
        return "You are terse."

    seen: list[list[ModelMessage]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(parts=[TextPart("ok")])

    react: ReactAgent[None]
    with ReactAgent(model=FunctionModel(answer)) as react:
        react.system_prompt(backstory)
        assert react.run_sync("hi") == "ok"
    parts = [p for p in seen[0][0].parts if isinstance(p, SystemPromptPart)]
    assert [(p.content, p.dynamic_ref) for p in parts] == [
        ("You are terse.", backstory.__qualname__)
    ]
    assert threads == [threading.current_thread()]


class Answer(BaseModel):
    text: str


def test_runs_share_one_output_spec_per_type_and_mode() -> None:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart('{"text": "fine"}')])

    react: ReactAgent[None]
    with ReactAgent(model=FunctionModel(answer), result_type=Answer) as react:
        assert react._output_spec(None) is react._output_spec(Answer)
        native = react.active_model().supports_native_output
        assert react._output_spec(None) is OutputSpec.for_type(Answer, native=native)
        assert react._output_spec(str) is not react._output_spec(Answer)
        assert not react._output_spec(str).structured
        assert react.run_sync("hi", output_type=Answer) == Answer(text="fine")
        assert react.run_sync("hi", output_type=str) == '{"text": "fine"}'
