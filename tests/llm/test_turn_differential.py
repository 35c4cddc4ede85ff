"""The run loop held to pydantic-ai: one scripted conversation through both, same messages.

:mod:`akgentic.llm.turn` re-implements ``pydantic_ai.Agent``'s loop for speed. Each case
here scripts a ``FunctionModel`` and runs it once through ``pydantic_ai.Agent`` and once
through :class:`~akgentic.llm.turn.Turn`, with the same tools, output type, retry budget,
end strategy and usage limits. Three things must match: the run's outcome (its output,
or the exception class and message), the messages of the run as JSON, and the messages
the model was handed at each request.

Normalised before comparing, because they are fresh on each side: timestamps and run
ids (only whether they are set), and ``conversation_id`` (pydantic-ai stamps one per
conversation; the loop has no conversations, so it must leave it unset).

The differences the loop keeps on purpose are not normalised away: each one is asserted
as it is, in its own test or named case, so a change on either side shows up here:

- tool calls run one after another in the order the model made them (pydantic-ai runs
  them concurrently); the messages are the same;
- over an earlier history, pydantic-ai rewrites that history's system prompt in place;
  the loop keeps the history as it was and sends the model a re-rendered copy;
- a run that fails leaves no message behind for its unfinished step (pydantic-ai's
  captured messages end with an empty request marked ``interrupted``), because the
  loop's history is durable and append-only;
- the wording of two errors, and of the feedback to an empty response;
- the loop never streams (it calls ``Model.request`` only): a streamed pydantic-ai run
  is compared with the loop's plain one, once the stream's own artefacts are set aside.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, NativeOutput, RunContext, capture_run_messages
from pydantic_ai.messages import (
    AgentStreamEvent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.usage import UsageLimits

from akgentic.llm.output_spec import OutputSpec
from akgentic.llm.run_hooks import RunHook, RunView
from akgentic.llm.turn import EndStrategy, SystemPrompt, Turn

Json = Any
Reply = ModelResponse | str


class Answer(BaseModel):
    """What the model concludes."""

    text: str


# ------------------------------------------------------------------ normalising


def normalise(messages: list[ModelMessage]) -> list[Json]:
    """The messages as JSON, with the values that are fresh on each run masked."""
    return [_mask(m) for m in ModelMessagesTypeAdapter.dump_python(messages, mode="json")]


def _mask(value: Json) -> Json:
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if not isinstance(value, dict):
        return value
    masked = {}
    for key, item in value.items():
        if key == "conversation_id":
            continue  # checked apart: see unstamped_conversations
        if key in ("timestamp", "run_id"):
            masked[key] = "<set>" if item is not None else None
        else:
            masked[key] = _mask(item)
    return masked


def unstamped_conversations(messages: list[ModelMessage]) -> bool:
    """True when no message carries a conversation id (the loop has none to give)."""
    return all(m.conversation_id is None for m in messages)


# ----------------------------------------------------------------------- script


class Script:
    """A FunctionModel body replaying replies in order and keeping what it was handed."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.seen: list[list[Json]] = []

    def _next(self, messages: list[ModelMessage]) -> ModelResponse:
        self.seen.append(normalise(messages))
        if not self.replies:
            raise AssertionError("the script ran out of replies")
        reply = self.replies.pop(0)
        return ModelResponse(parts=[TextPart(reply)]) if isinstance(reply, str) else reply

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return self._next(messages)

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        """The same replies, streamed: text in two chunks, each tool call in one delta."""
        response = self._next(messages)
        for index, part in enumerate(response.parts):
            if isinstance(part, TextPart):
                half = len(part.content) // 2
                yield part.content[:half]
                yield part.content[half:]
            elif isinstance(part, ToolCallPart):
                args = json.dumps(part.args_as_dict())
                yield {
                    index: DeltaToolCall(
                        name=part.tool_name, json_args=args, tool_call_id=part.tool_call_id
                    )
                }

    def model(self) -> FunctionModel:
        return FunctionModel(self, stream_function=self.stream)


# ------------------------------------------------------------------------ cases


@dataclasses.dataclass
class Case:
    """One conversation: what the model says and what the run is given."""

    replies: list[Reply]
    tools: list[Callable[..., Any]] = dataclasses.field(default_factory=list)
    output_type: Any = str
    native: bool = False
    retries: int = 1
    end_strategy: EndStrategy = "early"
    limits: UsageLimits = dataclasses.field(default_factory=UsageLimits)
    system_prompt: Callable[[], str] | None = None
    history: list[ModelMessage] = dataclasses.field(default_factory=list)
    prompt: str = "go"
    deps: Any = None
    # Checks the validated output; raises ModelRetry to send it back. pydantic-ai's
    # output validator, the loop's ``after_output`` hook.
    output_check: Callable[[Any], Any] | None = None


class OutputCheck(RunHook):
    """The loop's form of a pydantic-ai output validator."""

    def __init__(self, check: Callable[[Any], Any]) -> None:
        self.check = check

    async def after_output(self, view: RunView, output: Any) -> Any:
        return self.check(output)


@dataclasses.dataclass
class Side:
    """What one implementation did with a case."""

    outcome: tuple[str, str]
    messages: list[ModelMessage]
    seen: list[list[Json]]
    script: Script


async def _outcome(run: Callable[[], Any]) -> tuple[str, str]:
    try:
        return ("output", repr(await run()))
    except Exception as exc:  # the exception is part of what is compared
        # By its pydantic-ai (or builtin) class: the loop raises subclasses that carry
        # what akgentic.llm.failures needs (RetriesExhausted is an UnexpectedModelBehavior).
        shared = next(
            c for c in type(exc).__mro__ if c.__module__.startswith(("pydantic_ai", "builtins"))
        )
        return (shared.__name__, str(exc))


async def via_pydantic_ai(case: Case, *, stream: bool = False) -> Side:
    script = Script(case.replies)
    agent: Agent[Any, Any] = Agent(
        script.model(),
        deps_type=object,
        output_type=NativeOutput(case.output_type) if case.native else case.output_type,
        tools=case.tools,
        retries=case.retries,
        end_strategy=case.end_strategy,
    )
    if case.system_prompt is not None:
        # The loop renders every system prompt again on each run: pydantic-ai's dynamic ones.
        agent.system_prompt(dynamic=True)(case.system_prompt)
    if case.output_check is not None:
        agent.output_validator(case.output_check)

    async def drain(ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
        async for _ in events:
            pass

    async def run() -> Any:
        result = await agent.run(
            case.prompt,
            message_history=list(case.history) or None,
            usage_limits=case.limits,
            deps=case.deps,
            event_stream_handler=drain if stream else None,
        )
        return result.output

    with capture_run_messages() as messages:
        outcome = await _outcome(run)
    return Side(outcome, list(messages), script.seen, script)


async def via_loop(case: Case) -> Side:
    script = Script(case.replies)
    recorded: list[ModelMessage] = []
    turn = Turn(
        model=script.model(),
        history=case.history,
        prompt=case.prompt,
        deps=case.deps,
        output=OutputSpec.for_type(case.output_type, native=case.native),
        toolset=FunctionToolset(case.tools, max_retries=case.retries) if case.tools else None,
        system_prompts=[SystemPrompt.of(case.system_prompt)] if case.system_prompt else [],
        hooks=[OutputCheck(case.output_check)] if case.output_check else [],
        limits=case.limits,
        max_retries=case.retries,
        end_strategy=case.end_strategy,
        record=recorded.append,
    )
    outcome = await _outcome(turn.run)
    return Side(outcome, [*case.history, *recorded], script.seen, script)


def both(make: Callable[[], Case]) -> tuple[Side, Side]:
    """The case run through pydantic-ai and through the loop, each on fresh state."""
    theirs = asyncio.run(via_pydantic_ai(make()))
    ours = asyncio.run(via_loop(make()))
    assert unstamped_conversations(ours.messages)
    return theirs, ours


def assert_same(theirs: Side, ours: Side) -> None:
    assert ours.outcome == theirs.outcome
    assert normalise(ours.messages) == normalise(theirs.messages)
    assert ours.seen == theirs.seen


def drop_interrupted_step(theirs: Side) -> None:
    """Assert, then remove, the empty request pydantic-ai leaves at the end of a failed run."""
    last = theirs.messages[-1]
    assert isinstance(last, ModelRequest)
    assert (last.parts, last.state) == ([], "interrupted")
    theirs.messages.pop()


# ------------------------------------------------------------- tools and helpers


def double(n: int) -> int:
    """Double n."""
    return n * 2


def refuse() -> str:
    """Always asks the model to try again."""
    raise ModelRetry("try again")


def call(tool: str, call_id: str, /, **args: Any) -> ToolCallPart:
    return ToolCallPart(tool, args, tool_call_id=call_id)


def reply(*parts: ToolCallPart | TextPart) -> ModelResponse:
    return ModelResponse(parts=list(parts))


def final(call_id: str, /, **args: Any) -> ToolCallPart:
    return call("final_result", call_id, **args)


def moody_tool() -> Callable[..., str]:
    """A tool failing on its first and third calls, telling the retry count it is shown.

    With a budget of one retry, the third call only gets its retry because the
    success before it refilled the budget.
    """
    seen: list[tuple[int, str | None]] = []

    def moody(ctx: RunContext[None], n: int) -> str:
        """Works every other time."""
        seen.append((ctx.retry, ctx.tool_name))
        if len(seen) % 2:
            raise ModelRetry(f"not yet ({seen})")
        return f"fine after {seen}"

    return moody


def context_probe(ctx: RunContext[Any], note: str) -> str:
    """Tells what the tool's RunContext holds."""
    return (
        f"deps={ctx.deps} retry={ctx.retry} max_retries={ctx.max_retries} "
        f"tool={ctx.tool_name} call={ctx.tool_call_id} step={ctx.run_step} "
        f"requests={ctx.usage.requests} prompt={ctx.prompt}"
    )


async def fetch(city: str) -> str:
    """An async tool."""
    await asyncio.sleep(0)
    return f"sunny in {city}"


def shorter(output: Any) -> Any:
    """Refuses an answer longer than two words."""
    if len(str(output).split()) > 2:
        raise ModelRetry("two words at most")
    return output


def lead_prompt() -> str:
    return "You are the lead now."


# An earlier run's history: its system prompt was rendered from ``lead_prompt`` back then.
EARLIER: list[ModelMessage] = [
    ModelRequest(
        parts=[
            SystemPromptPart("You are new.", dynamic_ref=lead_prompt.__qualname__),
            UserPromptPart("hi"),
        ]
    ),
    ModelResponse(parts=[TextPart("hello")]),
]

CASES: dict[str, Callable[[], Case]] = {
    "a plain answer after the system prompt": lambda: Case(
        ["hi"], system_prompt=lambda: "be brief"
    ),
    "tool calls, bad arguments sent back, two calls in one step": lambda: Case(
        [
            reply(call("double", "a", n="many")),
            reply(call("double", "b", n=2), call("double", "c", n=3)),
            "4 and 6",
        ],
        tools=[double],
    ),
    "an unknown tool answered with the tools that exist": lambda: Case(
        [reply(call("nope", "a")), "fine"], tools=[double]
    ),
    "a tool's retry budget refilled by a success": lambda: Case(
        [reply(call("moody", str(i), n=i)) for i in range(4)] + ["done"],
        tools=[moody_tool()],
    ),
    "an output tool call that fails validation, then passes": lambda: Case(
        [reply(final("a", txt="oops")), reply(final("b", text="ok"))], output_type=Answer
    ),
    "a tool sees the same RunContext": lambda: Case(
        [
            reply(call("context_probe", "a", note="x")),
            reply(call("context_probe", "b", note="y")),
            "ok",
        ],
        tools=[context_probe],
        deps="the deps",
    ),
    "an async tool and a sync tool in one step": lambda: Case(
        [reply(call("fetch", "a", city="Oslo"), call("double", "b", n=21)), "done"],
        tools=[fetch, double],
    ),
    "a text output sent back by the output check, then accepted": lambda: Case(
        ["far too many words here", "two words"], output_check=shorter, retries=2
    ),
    "an output-tool output sent back by the output check": lambda: Case(
        [reply(final("a", text="far too many words")), reply(final("b", text="short"))],
        output_type=Answer,
        output_check=lambda answer: shorter(answer.text) and answer,
    ),
    "a non-object output type travels wrapped": lambda: Case(
        [reply(final("a", response=[1, 2, 3]))], output_type=list[int]
    ),
    "native output next to a tool call runs the tool first (graceful)": lambda: Case(
        [reply(call("double", "a", n=2), TextPart('{"text": "guess"}')), '{"text": "4"}'],
        tools=[double],
        output_type=Answer,
        native=True,
        end_strategy="graceful",
    ),
    "two output calls: the second is skipped": lambda: Case(
        [reply(final("a", text="first"), final("b", text="second"))], output_type=Answer
    ),
    "text that fails validation as structured output, then passes": lambda: Case(
        ["not json", '{"text": "ok"}'], output_type=Answer
    ),
    "native output that fails validation, then passes": lambda: Case(
        ['{"txt": 1}', 'Here:\n```json\n{"text": "fenced"}\n```'], output_type=Answer, native=True
    ),
    "early end: a tool next to the output is not run": lambda: Case(
        [reply(call("double", "a", n=1), final("b", text="ok"))],
        tools=[double],
        output_type=Answer,
    ),
    "early end: tools run when every output call failed": lambda: Case(
        [reply(call("double", "a", n=1), final("b", txt="x")), reply(final("c", text="ok"))],
        tools=[double],
        output_type=Answer,
    ),
    "graceful end: a tool before the output runs, answers in call order": lambda: Case(
        [reply(call("double", "a", n=1), final("b", text="ok"))],
        tools=[double],
        output_type=Answer,
        end_strategy="graceful",
    ),
    "exhaustive end: the tool after the output runs too": lambda: Case(
        [reply(final("a", text="ok"), call("double", "b", n=1))],
        tools=[double],
        output_type=Answer,
        end_strategy="exhaustive",
    ),
    "exhaustive end: a tool's retry sets the output aside": lambda: Case(
        [
            reply(call("refuse", "a"), final("b", text="premature")),
            reply(final("c", text="settled")),
        ],
        tools=[refuse],
        output_type=Answer,
        end_strategy="exhaustive",
        retries=2,
    ),
    "exhaustive end: the second output call wins, then a tool's retry sets it aside": lambda: Case(
        [
            reply(final("a", txt="bad"), final("b", text="premature"), call("refuse", "c")),
            reply(final("d", text="settled")),
        ],
        tools=[refuse],
        output_type=Answer,
        end_strategy="exhaustive",
        retries=2,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_loop_produces_the_messages_pydantic_ai_produces(name: str) -> None:
    theirs, ours = both(CASES[name])
    assert theirs.outcome[0] == "output", theirs.outcome
    assert_same(theirs, ours)


def test_over_a_history_the_model_sees_the_new_system_prompt_but_the_loop_keeps_the_old() -> None:
    theirs, ours = both(lambda: Case(["again"], system_prompt=lead_prompt, history=list(EARLIER)))
    assert ours.outcome == theirs.outcome == ("output", "'again'")
    assert ours.seen == theirs.seen
    assert ours.seen[0][0]["parts"][0]["content"] == "You are the lead now."
    assert normalise(ours.messages)[1:] == normalise(theirs.messages)[1:]
    # pydantic-ai rewrites the history it was given; the loop's history is durable, so
    # it keeps what was sent back then (the model is sent a re-rendered copy).
    first = [m.parts[0] for m in (theirs.messages[0], ours.messages[0])]
    assert [p.content for p in first if isinstance(p, SystemPromptPart)] == [
        "You are the lead now.",
        "You are new.",
    ]


FAILING: dict[str, Callable[[], Case]] = {
    "the request limit": lambda: Case(
        [reply(call("double", "a", n=1))] * 3,
        tools=[double],
        limits=UsageLimits(request_limit=2),
    ),
    "the tool-call limit": lambda: Case(
        [reply(call("double", "a", n=1), call("double", "b", n=2))],
        tools=[double],
        limits=UsageLimits(tool_calls_limit=1),
    ),
    "the total-token limit": lambda: Case(
        [reply(call("double", "a", n=1)), "fine"],
        tools=[double],
        limits=UsageLimits(total_tokens_limit=60),
    ),
    "the output-token limit": lambda: Case(
        [reply(call("double", "a", n=1)), "a long enough answer to break the limit"],
        tools=[double],
        limits=UsageLimits(output_tokens_limit=5),
    ),
}


@pytest.mark.parametrize("name", list(FAILING))
def test_a_usage_limit_ends_both_runs_at_the_same_step_with_the_same_error(name: str) -> None:
    theirs, ours = both(FAILING[name])
    assert theirs.outcome[0] == "UsageLimitExceeded", theirs.outcome
    if isinstance(theirs.messages[-1], ModelRequest) and theirs.messages[-1].state == "interrupted":
        drop_interrupted_step(theirs)
    assert_same(theirs, ours)


def test_a_tool_out_of_retries_fails_both_runs_with_the_loops_shorter_message() -> None:
    theirs, ours = both(lambda: Case([reply(call("refuse", "a"))] * 3, tools=[refuse]))
    drop_interrupted_step(theirs)
    assert normalise(ours.messages) == normalise(theirs.messages)
    assert ours.seen == theirs.seen
    # Same class; pydantic-ai appends advice and a link to its docs.
    assert ours.outcome == (
        "UnexpectedModelBehavior",
        "Tool 'refuse' exceeded max retries count of 1",
    )
    assert theirs.outcome[0] == ours.outcome[0]
    assert theirs.outcome[1].startswith(ours.outcome[1] + ". Consider raising the retry limit")


def test_output_out_of_retries_fails_both_runs_with_differently_worded_messages() -> None:
    theirs, ours = both(lambda: Case(["not json"] * 3, output_type=Answer, retries=2))
    assert normalise(ours.messages) == normalise(theirs.messages)
    assert ours.seen == theirs.seen
    assert theirs.outcome == ("UnexpectedModelBehavior", "Exceeded maximum output retries (2)")
    assert ours.outcome == (
        "UnexpectedModelBehavior",
        "Exceeded maximum retries (2) for output validation",
    )


def test_an_empty_response_gets_the_loops_own_feedback_where_pydantic_ai_asks_for_text() -> None:
    theirs, ours = both(lambda: Case([reply(), "here"]))
    assert ours.outcome == theirs.outcome == ("output", "'here'")
    their_feedback, our_feedback = (normalise(side.messages)[2]["parts"] for side in (theirs, ours))
    assert [p["retry"] for p in their_feedback] == [p["retry"] for p in our_feedback]
    assert [p["retry"]["cause"] for p in our_feedback] == ["no_output"]
    assert [p["content"] for p in their_feedback] == ["Please return text."]
    assert [p["content"] for p in our_feedback] == [
        "Your reply had neither text nor a tool call. Answer, or call a tool."
    ]
    # Everything before the feedback is the same; after it only the token estimate moves.
    assert normalise(ours.messages)[:2] == normalise(theirs.messages)[:2]


def test_tools_of_one_step_run_one_after_another_where_pydantic_ai_runs_them_together() -> None:
    def make() -> tuple[Case, list[str]]:
        trace: list[str] = []

        async def slow(ctx: RunContext[None], name: str) -> str:
            """Takes a moment."""
            trace.append(f"start {name}")
            await asyncio.sleep(0)  # a chance for the other call to start
            trace.append(f"end {name}")
            return name

        script: list[Reply] = [
            reply(call("slow", "a", name="a"), call("slow", "b", name="b")),
            "ok",
        ]
        return Case(script, tools=[slow]), trace

    (their_case, their_trace), (our_case, our_trace) = make(), make()
    theirs = asyncio.run(via_pydantic_ai(their_case))
    ours = asyncio.run(via_loop(our_case))
    assert_same(theirs, ours)
    assert our_trace == ["start a", "end a", "start b", "end b"]
    assert their_trace == ["start a", "start b", "end a", "end b"]


def _without_stream_artefacts(messages: list[Json]) -> list[Json]:
    """Set aside what only a stream changes: string-encoded arguments, estimated usage."""
    out = []
    for message in messages:
        message = dict(message)
        message.pop("usage", None)
        parts = []
        for part in message["parts"]:
            if part.get("part_kind") == "tool-call" and isinstance(part["args"], str):
                part = {**part, "args": json.loads(part["args"])}
            parts.append(part)
        message["parts"] = parts
        out.append(message)
    return out


@pytest.mark.parametrize(
    "name",
    [
        "tool calls, bad arguments sent back, two calls in one step",
        "an output tool call that fails validation, then passes",
    ],
)
def test_a_streamed_pydantic_ai_run_ends_with_the_messages_of_the_loops_plain_run(
    name: str,
) -> None:
    theirs = asyncio.run(via_pydantic_ai(CASES[name](), stream=True))
    ours = asyncio.run(via_loop(CASES[name]()))
    assert ours.outcome == theirs.outcome
    assert _without_stream_artefacts(normalise(ours.messages)) == _without_stream_artefacts(
        normalise(theirs.messages)
    )
    assert [_without_stream_artefacts(s) for s in ours.seen] == [
        _without_stream_artefacts(s) for s in theirs.seen
    ]
