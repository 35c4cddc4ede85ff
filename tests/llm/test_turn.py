"""The run loop (akgentic.llm.turn) on pydantic-ai's FunctionModel: tools, output, retries."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.toolsets import FunctionToolset, WrapperToolset
from pydantic_ai.usage import RequestUsage

from akgentic.llm import ModelConfig, ReactAgentConfig, RunUsageLimitError, RunUsageLimits
from akgentic.llm.budget import RaiseOnLimit
from akgentic.llm.config import RuntimeConfig
from akgentic.llm.events import ToolReturnEvent
from akgentic.llm.output_spec import FINAL_RESULT_TOOL, OutputSpec
from akgentic.llm.run_hooks import RunHook, RunView


class Answer(BaseModel):
    """What the model concludes."""

    text: str


def calls(*parts: ToolCallPart | TextPart) -> ModelResponse:
    return ModelResponse(parts=list(parts))


def final(**args: Any) -> ToolCallPart:
    return ToolCallPart(FINAL_RESULT_TOOL, args)


def config(provider: str = "mistral", **runtime: Any) -> ReactAgentConfig:
    """Mistral has no native structured output: the run offers the ``final_result`` tool."""
    return ReactAgentConfig(
        model_cfg=ModelConfig(provider=provider, model="m"),
        runtime_cfg=RuntimeConfig(**runtime),
    )


def parts_of(messages: list[ModelMessage], kind: type[Any]) -> list[Any]:
    return [p for m in messages for p in m.parts if isinstance(p, kind)]


def test_bad_tool_arguments_go_back_to_the_model_and_the_corrected_call_runs(
    make_agent: Any, recorder: Any
) -> None:
    agent, fn = make_agent(
        [
            calls(ToolCallPart("double", {"n": "many"})),
            calls(ToolCallPart("double", {"n": 4})),
            "8 it is",
        ]
    )
    seen: list[int] = []

    def double(ctx: RunContext[Any], n: int) -> int:
        seen.append(n)
        return n * 2

    agent.tool(double)
    assert agent.run_sync("double four") == "8 it is"
    assert seen == [4]
    retried = [p for p in parts_of(fn.seen[1], ToolReturnPart) if p.outcome == "retried"]
    assert len(retried) == 1 and retried[0].tool_name == "double"
    assert [e.success for e in recorder.of(ToolReturnEvent)] == [False, True]


def test_an_unknown_tool_is_answered_with_the_names_that_exist(make_agent: Any) -> None:
    agent, fn = make_agent([calls(ToolCallPart("nope", {})), "fine"])
    agent.tool(lambda ctx: "x")
    assert agent.run_sync("go") == "fine"
    (retried,) = [p for p in parts_of(fn.seen[1], ToolReturnPart) if p.outcome == "retried"]
    assert "Unknown tool name: 'nope'" in str(retried.content)
    assert "'<lambda>'" in str(retried.content)


def test_a_tool_that_keeps_asking_for_retries_ends_the_run(make_agent: Any) -> None:
    agent, _ = make_agent([calls(ToolCallPart("flaky", {}))] * 3, config(retries=1))

    def flaky(ctx: RunContext[Any]) -> str:
        raise ModelRetry("try again")

    agent.tool(flaky)
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 1"):
        agent.run_sync("go")


def test_a_final_result_call_is_the_output_and_leaves_no_open_call(make_agent: Any) -> None:
    agent, _ = make_agent([calls(final(text="done"))], config(), result_type=Answer)
    assert agent.run_sync("go") == Answer(text="done")
    info_tools = agent._output_spec(None).tool_def
    assert info_tools is not None and info_tools.description == "What the model concludes."
    last = agent.context.messages[-1]
    assert isinstance(last, ModelRequest)
    assert [(p.tool_name, p.content) for p in parts_of([last], ToolReturnPart)] == [
        (FINAL_RESULT_TOOL, "Final result processed.")
    ]


def test_invalid_output_is_sent_back_with_the_errors_until_retries_run_out(
    make_agent: Any,
) -> None:
    agent, fn = make_agent(
        [calls(final(txt="oops")), calls(final(text="ok"))], config(), result_type=Answer
    )
    assert agent.run_sync("go") == Answer(text="ok")
    (retried,) = [p for p in parts_of(fn.seen[1], ToolReturnPart) if p.outcome == "retried"]
    assert "text" in str(retried.content)

    stubborn, _ = make_agent(["not json"] * 3, config(retries=2), result_type=Answer)
    with pytest.raises(UnexpectedModelBehavior, match=r"maximum retries \(2\)"):
        stubborn.run_sync("go")


def test_native_output_reads_json_text_even_inside_a_fence(make_agent: Any) -> None:
    agent, _ = make_agent(
        ['Here you go:\n```json\n{"text": "fenced"}\n```'], config("openai"), result_type=Answer
    )
    assert agent.run_sync("go") == Answer(text="fenced")


def test_early_end_skips_tools_next_to_the_final_output(make_agent: Any) -> None:
    ran: list[str] = []
    agent, _ = make_agent(
        [calls(ToolCallPart("side_effect", {}), final(text="done"))],
        config(end_strategy="early"),
        result_type=Answer,
    )

    def side_effect(ctx: RunContext[Any]) -> str:
        ran.append("x")
        return "ran"

    agent.tool(side_effect)
    assert agent.run_sync("go") == Answer(text="done")
    assert ran == []
    answers = {
        p.tool_name: p.content for p in parts_of(agent.context.messages[-1:], ToolReturnPart)
    }
    assert "Tool not executed" in str(answers["side_effect"])
    assert answers[FINAL_RESULT_TOOL] == "Final result processed."


def test_exhaustive_end_runs_tools_and_a_retry_sets_the_output_aside(make_agent: Any) -> None:
    tries: list[int] = []

    def check(ctx: RunContext[Any]) -> str:
        tries.append(1)
        if len(tries) == 1:
            raise ModelRetry("check again")
        return "checked"

    agent, fn = make_agent(
        [
            calls(ToolCallPart("check", {}), final(text="premature")),
            calls(ToolCallPart("check", {}), final(text="settled")),
        ],
        config(end_strategy="exhaustive"),
        result_type=Answer,
    )
    agent.tool(check)
    assert agent.run_sync("go") == Answer(text="settled")
    assert len(tries) == 2 and len(fn.seen) == 2


def test_structured_text_next_to_tool_calls_does_not_end_an_exhaustive_run(
    make_agent: Any,
) -> None:
    agent, fn = make_agent(
        [
            calls(ToolCallPart("look", {}), TextPart('{"text": "guess"}')),
            '{"text": "after looking"}',
        ],
        config("openai"),
        result_type=Answer,
    )

    def look(ctx: RunContext[Any]) -> str:
        return "seen"

    agent.tool(look)
    assert agent.run_sync("go") == Answer(text="after looking")
    assert len(fn.seen) == 2


def test_an_empty_response_is_answered_with_feedback(make_agent: Any) -> None:
    agent, _ = make_agent([ModelResponse(parts=[]), "here"])
    assert agent.run_sync("go") == "here"
    stored = parts_of(agent.context.messages, RetryFeedbackPart)
    assert len(stored) == 1 and stored[0].retry.cause == "no_output"


def test_a_non_object_output_type_travels_wrapped(make_agent: Any) -> None:
    agent, _ = make_agent([calls(final(response=[1, 2, 3]))], config(), result_type=list[int])
    assert agent.run_sync("go") == [1, 2, 3]
    spec = OutputSpec.for_type(list[int], native=False)
    assert spec.tool_def is not None
    assert spec.tool_def.parameters_json_schema["required"] == ["response"]


def test_the_tool_call_limit_is_a_run_tier_breach(make_agent: Any) -> None:
    cfg = config()
    cfg = cfg.model_copy(update={"run_usage_limits": RunUsageLimits(tool_calls_limit=1)})
    agent, _ = make_agent(
        [calls(ToolCallPart("t", {}), ToolCallPart("t", {}))], cfg, limit_recovery=RaiseOnLimit()
    )
    agent.tool(lambda ctx: "x")
    with pytest.raises(RunUsageLimitError, match="tool_calls_limit of 1"):
        agent.run_sync("go")


class Notes(RunHook):
    def __init__(self) -> None:
        self.runs: set[str] = set()
        self.refused = 0

    async def before_model_request(self, view: RunView) -> None:
        if view.run_id not in self.runs:
            self.runs.add(view.run_id)
            view.enqueue("note: be brief")

    async def after_output(self, view: RunView, output: Any) -> Any:
        if output == "too long answer" and view.output_retries < view.max_output_retries:
            self.refused += 1
            raise ModelRetry("shorter, please")
        return output


def test_hooks_add_notes_to_the_request_and_can_refuse_an_output(make_agent: Any) -> None:
    hook = Notes()
    agent, fn = make_agent(["too long answer", "short"], hooks=[hook])
    assert agent.run_sync("go") == "short"
    first_request = fn.seen[0][-1]
    assert [p.content for p in first_request.parts if isinstance(p, UserPromptPart)] == [
        "go",
        "note: be brief",
    ]
    assert hook.refused == 1
    feedback = parts_of(agent.context.messages, RetryFeedbackPart)
    assert [f.content for f in feedback] == ["shorter, please"]


def test_a_changed_system_prompt_reaches_the_model_but_history_keeps_the_first(
    make_agent: Any,
) -> None:
    story = {"text": "You are new here."}
    agent, fn = make_agent(["a", "b"])
    agent.system_prompt(lambda: story["text"])
    agent.run_sync("one")
    story["text"] = "You are the lead now."
    agent.run_sync("two")
    sent = parts_of(fn.seen[1][:1], SystemPromptPart)
    stored = parts_of(agent.context.messages[:1], SystemPromptPart)
    assert [p.content for p in sent] == ["You are the lead now."]
    assert [p.content for p in stored] == ["You are new here."]


def test_adjacent_requests_reach_the_model_as_one(make_agent: Any) -> None:
    agent, fn = make_agent(["a", "b"])
    agent.run_sync("one")
    agent.context.append_user_prompt("a note between runs")
    agent.run_sync("two")
    last = fn.seen[1][-1]
    assert isinstance(last, ModelRequest)
    texts = [p.content for p in last.parts if isinstance(p, UserPromptPart)]
    assert texts == ["a note between runs", "two"]
    kinds = [type(m).__name__ for m in fn.seen[1]]
    assert kinds == ["ModelRequest", "ModelResponse", "ModelRequest"]


def test_a_tool_sees_its_retry_count_and_the_run_deps(make_agent: Any) -> None:
    agent, _ = make_agent(
        [calls(ToolCallPart("probe", {})), calls(ToolCallPart("probe", {})), "done"]
    )
    seen: list[tuple[Any, int, str | None]] = []

    def probe(ctx: RunContext[Any]) -> str:
        seen.append((ctx.deps, ctx.retry, ctx.tool_name))
        if len(seen) == 1:
            raise ModelRetry("again")
        return "ok"

    agent.tool(probe)
    assert agent.run_sync("go", deps="D") == "done"
    assert seen == [("D", 0, "probe"), ("D", 1, "probe")]


def test_the_model_is_given_function_and_output_tools(make_agent: Any) -> None:
    infos: list[AgentInfo] = []

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        infos.append(info)
        return calls(final(text="x"))

    agent, _ = make_agent([reply], config(), result_type=Answer)
    agent.tool(lambda ctx, q: q)
    agent.run_sync("go")
    (info,) = infos
    assert [t.name for t in info.function_tools] == ["<lambda>"]
    assert [t.name for t in info.output_tools] == [FINAL_RESULT_TOOL]
    assert info.allow_text_output is False


class StopOnce(RunHook):
    def __init__(self) -> None:
        self.stopped = False

    async def before_model_request(self, view: RunView) -> None:
        if not self.stopped:
            self.stopped = True
            raise RuntimeError("stopped by the operator")


def test_a_run_stopped_before_its_first_request_keeps_the_prompt(make_agent: Any) -> None:
    agent, fn = make_agent(["answered both"], hooks=[StopOnce()])
    with pytest.raises(RuntimeError, match="stopped by the operator"):
        agent.run_sync("first question")
    assert fn.seen == []
    assert agent.run_sync("second question") == "answered both"
    (request,) = fn.seen[0]
    assert isinstance(request, ModelRequest)
    assert [p.content for p in request.parts if isinstance(p, UserPromptPart)] == [
        "first question",
        "second question",
    ]


@dataclass
class CountingToolset(WrapperToolset[Any]):
    """Counts connections as an MCP server's toolset makes them: on the first entry only.

    Entering again while entered is a count, as in pydantic-ai's ``MCPToolset``; the
    task that connects must be the one that disconnects (anyio task groups inside).
    """

    depth: int = 0
    connects: int = 0
    disconnects: int = 0
    tasks: list[Any] = field(default_factory=list)

    async def __aenter__(self) -> CountingToolset:
        if self.depth == 0:
            self.connects += 1
            self.tasks.append(asyncio.current_task())
        self.depth += 1
        await super().__aenter__()
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        self.depth -= 1
        if self.depth == 0:
            self.disconnects += 1
            self.tasks.append(asyncio.current_task())
        return await super().__aexit__(*args)


def test_a_toolset_connects_once_for_the_agents_life_and_disconnects_on_close(
    make_agent: Any,
) -> None:
    def lookup(city: str) -> str:
        return f"sunny in {city}"

    toolset = CountingToolset(FunctionToolset([lookup]))
    agent, fn = make_agent(
        [
            calls(ToolCallPart("lookup", {"city": "Oslo"})),
            calls(ToolCallPart("lookup", {"city": "Rome"})),
            "both sunny",
            "again",
        ],
        toolsets=[toolset],
    )
    assert agent.run_sync("weather?") == "both sunny"
    assert agent.run_sync("and now?") == "again"
    assert (toolset.connects, toolset.disconnects) == (1, 0)
    returns = parts_of(fn.seen[2], ToolReturnPart)
    assert [r.content for r in returns] == ["sunny in Oslo", "sunny in Rome"]
    agent.close()
    assert (toolset.connects, toolset.disconnects) == (1, 1)
    connected_in, disconnected_in = toolset.tasks
    assert connected_in is disconnected_in


def test_back_to_back_json_outputs_are_merged_when_the_type_can_merge(make_agent: Any) -> None:
    from akgentic.agent.output_models import Request, StructuredOutput

    first = Request(message_type="notification", message="on it", recipient="@Human")
    final_ = Request(message_type="response", message="done", recipient="@Human")
    commentary = StructuredOutput(messages=[first]).model_dump_json()
    answer = StructuredOutput(messages=[first, final_]).model_dump_json()
    agent, fn = make_agent([commentary + "\n" + answer], config("openai"))
    output = agent.run_sync("go", output_type=StructuredOutput)
    assert output == StructuredOutput(messages=[first, final_])
    assert len(fn.seen) == 1  # accepted as it came, no retry

    plain, _ = make_agent(['{"text": "a"}{"text": "b"}', '{"text": "c"}'], config("openai"))
    assert plain.run_sync("go", output_type=Answer) == Answer(text="c")  # no merge: retried


def test_a_tool_budget_counts_failing_steps_and_starts_afresh_after_a_success(
    make_agent: Any,
) -> None:
    outcomes = iter(["fail", "fail", "ok", "fail", "ok"])

    def moody(ctx: RunContext[Any], n: int) -> str:
        if next(outcomes) == "fail":
            raise ModelRetry("not now")
        return "fine"

    agent, fn = make_agent(
        [
            # Two failing calls in one step use one unit of a budget of one.
            calls(ToolCallPart("moody", {"n": 1}), ToolCallPart("moody", {"n": 2})),
            calls(ToolCallPart("moody", {"n": 3})),  # succeeds: the budget is whole again
            calls(ToolCallPart("moody", {"n": 4})),  # fails: would exceed without the reset
            calls(ToolCallPart("moody", {"n": 5})),
            "done",
        ],
        config(retries=1),
    )
    agent.tool(moody)
    assert agent.run_sync("go") == "done"
    assert len(fn.seen) == 5


def test_a_response_over_a_token_limit_is_kept_interrupted_and_the_recovery_answers(
    make_agent: Any,
) -> None:
    usage = RequestUsage(input_tokens=10, output_tokens=500)
    cfg = config().model_copy(update={"run_usage_limits": RunUsageLimits(output_tokens_limit=100)})
    agent, fn = make_agent(
        [ModelResponse(parts=[TextPart("a very long answer")], usage=usage), "in short: yes"], cfg
    )
    assert agent.run_sync("go") == "in short: yes"
    responses = [m for m in agent.context.messages if isinstance(m, ModelResponse)]
    texts = [(r.state, [p.content for p in r.parts if isinstance(p, TextPart)]) for r in responses]
    assert texts == [("interrupted", ["a very long answer"]), ("complete", ["in short: yes"])]
    # The concluding turn still shows the model what it had said.
    assert any(isinstance(m, ModelResponse) and m.state == "interrupted" for m in fn.seen[1])
