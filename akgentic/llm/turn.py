"""One ReactAgent run: the ReAct loop over pydantic-ai's model and toolset interfaces.

A run sends the history plus the new prompt to the model, executes the tool calls
the model makes, returns their results, and repeats until the model gives its final
output. The loop talks to pydantic-ai through its public building blocks — a
``Model``'s ``request``, toolsets' ``get_tools``/``call_tool``, the message classes,
``RunContext`` and ``UsageLimits`` — rather than through ``pydantic_ai.Agent``. The
agent graph costs several milliseconds per run even when the model answers
instantly, and a team's turn is a chain of runs; this loop costs a small fraction
of that (see ``bench/agent_turn.py``).

What a run does, in order:

1. the first request carries the system prompts when the history is empty; on a
   later run the system prompts are rendered again into a copy of the first
   request (the stored history keeps what was sent first);
2. before each model request the hooks run (they may add notes to the request, or
   raise to end the run), then the run-tier request limit is checked;
3. the request, then the response, is handed to ``record`` as soon as it exists, so
   the durable history grows message by message (a response that crosses a token
   limit is recorded marked ``interrupted``, as pydantic-ai marks it, and the run ends);
   a reply cut off at the output cap (``finish_reason="length"``) is not kept: it is asked
   again once with ``max_tokens_retry`` when that is set, otherwise the run fails with
   :class:`~akgentic.llm.errors.ReplyTruncatedError` (never resent as it was);
4. tool calls run one at a time, in the order the model made them; invalid
   arguments, unknown tools and ``ModelRetry`` go back to the model as retry
   prompts, up to each tool's retry budget; the answers go back in call order
   (under ``"early"``: the output calls' answers first);
5. the final output is an output-tool call (``final_result``) or, for a structured
   output type, text that validates against it (native structured output); the
   ``after_output`` hooks may still send it back with ``ModelRetry``.

``end_strategy`` decides what happens to function tool calls next to a final
output: ``"early"`` skips them and ends the run; ``"graceful"`` and
``"exhaustive"`` run them first, and a tool that asks for a retry suppresses the
output, so the model answers again with the tool's feedback. Structured text next
to function tool calls only ends the run under ``"early"``.

``tests/llm/test_turn_differential.py`` runs scripted conversations through this loop
and through ``pydantic_ai.Agent`` and compares the messages; the differences kept on
purpose (sequential tool calls, no streaming, no trailing ``interrupted`` request after
a failure, the wording of two errors and of the empty-response feedback) are listed and
asserted there.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import ValidationError
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelRetry, UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    repair_messages,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import RunUsage, UsageLimits

from akgentic.llm.errors import ReplyTruncatedError
from akgentic.llm.output_spec import OutputSpec
from akgentic.llm.run_hooks import RunHook, RunView

__all__ = ["EndStrategy", "RetriesExhausted", "SystemPrompt", "Turn"]

EndStrategy = Literal["early", "graceful", "exhaustive"]

_FINAL_PROCESSED = "Final result processed."
_OUTPUT_SKIPPED = "Output tool not used - a final result was already processed."
_TOOL_SKIPPED = "Tool not executed - a final result was already processed."
_RETRY_WINS = "Output not used as the final result - addressing tool retries from this round first."
_EMPTY_RESPONSE = "Your reply had neither text nor a tool call. Answer, or call a tool."


_NOTHING: Any = object()


def _now() -> datetime:
    return datetime.now(UTC)


# -------------------------------------------------------------- system prompts


@dataclasses.dataclass(frozen=True)
class SystemPrompt:
    """A registered system-prompt function: ``func()`` or ``func(ctx)``, sync or async."""

    func: Callable[..., Any]
    takes_ctx: bool
    ref: str

    @classmethod
    def of(cls, func: Callable[..., Any]) -> SystemPrompt:
        try:
            params = [
                p
                for p in inspect.signature(func).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
        except (TypeError, ValueError):
            params = []
        return cls(func, bool(params), getattr(func, "__qualname__", repr(func)))

    async def render(self, ctx: RunContext[Any]) -> str:
        result = self.func(ctx) if self.takes_ctx else self.func()
        if inspect.isawaitable(result):
            result = await result
        return str(result)


# ------------------------------------------------------------------------ turn


_Cause = Literal["validation_error", "model_retry", "no_output"]
_ToolCause = Literal["validation_error", "model_retry", "unknown_tool"]


class RetriesExhausted(UnexpectedModelBehavior):
    """The model kept getting a tool call or its output wrong until the retries ran out.

    The message is pydantic-ai's; ``cause`` (``unknown_tool``, ``validation_error``,
    ``model_retry``, ``no_output``), ``tool_name`` (None for the output), ``tries`` (how
    many times the model got it wrong) and ``detail`` (the last feedback it was sent)
    let :func:`akgentic.llm.failures.describe_failure` say it in plain words.
    """

    def __init__(
        self, message: str, *, cause: str, tool_name: str | None, tries: int, detail: Any
    ) -> None:
        super().__init__(message)
        self.cause = cause
        self.tool_name = tool_name
        self.tries = tries
        self.detail = detail


@dataclasses.dataclass(frozen=True)
class _Refused:
    """An output sent back to the model, with the part that says why."""

    part: ModelRequestPart


class Turn:
    """One run. Build it, ``await turn.run()``; read ``usage``/``run_id``/``sent`` after.

    Args:
        model: The pydantic-ai model to ask.
        history: The durable history before this run (not modified).
        prompt: The user prompt of the run.
        deps: Handed to tools, system prompts and hooks as ``ctx.deps``.
        output: How the final output is asked for and read.
        toolset: Every tool of the run, or None for a tool-free run.
        system_prompts: Rendered into the first request.
        hooks: Called at the points :class:`RunHook` names.
        limits: The run-tier limits (pydantic-ai ``UsageLimits``).
        max_retries: Output retries, and the default retry budget of each tool.
        end_strategy: See the module docstring.
        record: Receives every new message, in order, as soon as it exists.
        max_tokens: The output-token cap the model is configured with (None: the server's).
        max_tokens_retry: The larger cap a reply cut off at ``max_tokens`` is asked again
            with, once; None (or not larger): a cut-off reply fails the run at once
            (:class:`~akgentic.llm.errors.ReplyTruncatedError`), never resent as it was.
    """

    def __init__(
        self,
        *,
        model: Model,
        history: Sequence[ModelMessage],
        prompt: str | Sequence[Any],
        deps: Any,
        output: OutputSpec,
        toolset: AbstractToolset[Any] | None,
        system_prompts: Sequence[SystemPrompt],
        hooks: Sequence[RunHook],
        limits: UsageLimits,
        max_retries: int,
        end_strategy: EndStrategy,
        record: Callable[[ModelMessage], None],
        max_tokens: int | None = None,
        max_tokens_retry: int | None = None,
    ) -> None:
        self.model = model
        self.history = list(history)
        self.prompt = prompt
        self.output = output
        self.toolset = toolset
        self.system_prompts = system_prompts
        self.hooks = hooks
        self.limits = limits
        self.max_retries = max_retries
        self.end_strategy = end_strategy
        self.record = record
        self.max_tokens = max_tokens
        self.max_tokens_retry = max_tokens_retry
        self.run_id = str(uuid.uuid4())
        self.usage = RunUsage()
        self.output_retries = 0
        self.tool_retries: dict[str, int] = {}
        self.queued: list[str] = []
        self.sent: list[ModelMessage] = []
        self.ctx: RunContext[Any] = RunContext(
            deps=deps,
            model=model,
            usage=self.usage,
            usage_limits=limits,
            prompt=prompt if isinstance(prompt, str) else None,
            messages=self.sent,
            retries=self.tool_retries,
            max_retries=max_retries,
            run_id=self.run_id,
        )
        self.view = RunView(self)

    # ------------------------------------------------------------------ run

    async def run(self) -> Any:
        """Run to the final output and return it.

        The toolset is entered for the whole run, so a toolset with a connection (an
        MCP server's) opens it once per run rather than once per call.
        """
        if self.toolset is None:
            return await self._run()
        async with self.toolset:
            return await self._run()

    async def _run(self) -> Any:
        self.sent.extend(await self._history_to_send())
        request_parts: list[ModelRequestPart] = []
        if not self.history:
            request_parts.extend(await self._system_parts())
        request_parts.append(UserPromptPart(self.prompt))
        while True:
            self.ctx.run_step += 1
            tools = await self.toolset.get_tools(self.ctx) if self.toolset is not None else {}
            try:
                for hook in self.hooks:
                    await hook.before_model_request(self.view)
            finally:
                # Kept even when a hook stops the run (``/stop``): the prompt is not lost,
                # and the next run's request joins it.
                request_parts.extend(self._drain_queue())
                self._keep(ModelRequest(parts=request_parts, timestamp=_now(), run_id=self.run_id))
            self.limits.check_before_request(self.usage)
            params = self.output.parameters([t.tool_def for t in tools.values()])
            # The provider-valid shape pydantic-ai sends: adjacent requests (a summary or
            # closed tool calls followed by the new prompt) merged, orphans dropped, retry
            # feedback rendered the way this model takes it.
            to_send = self.model.prepare_messages(
                repair_messages(self.sent, repair_last_response=False), params
            )
            response = self._count(await self.model.request(to_send, None, params))
            if response.finish_reason == "length":
                response = await self._after_truncation(to_send, params)
            try:
                self.limits.check_tokens(self.usage)
            except UsageLimitExceeded:
                # Kept, and marked as pydantic-ai marks it: the run stops before acting on it.
                response.state = "interrupted"
                self._keep(response)
                raise
            self._keep(response)
            final, request_parts = await self._answer(response, tools)
            request_parts.extend(self._drain_queue())
            if final is not _NOTHING:
                if request_parts:
                    self._keep(
                        ModelRequest(parts=request_parts, timestamp=_now(), run_id=self.run_id)
                    )
                return final

    def _count(self, response: ModelResponse) -> ModelResponse:
        if response.run_id is None:
            response.run_id = self.run_id
        if response.model_id is None:  # pydantic-ai routes later requests by it
            response.model_id = self.model.model_id
        self.usage.requests += 1
        self.usage.incr(response.usage)
        return response

    async def _after_truncation(self, to_send: list[ModelMessage], params: Any) -> ModelResponse:
        """The reply asked again under ``max_tokens_retry``; raises when that is not possible.

        The cut-off reply is not kept: its half tool call or half answer would only send
        the model the same request again, which is what a blind retry does.
        """
        larger = self.max_tokens_retry
        if larger is None or (self.max_tokens is not None and larger <= self.max_tokens):
            raise ReplyTruncatedError(self.max_tokens, tries=1)
        self.limits.check_before_request(self.usage)
        settings: ModelSettings = {"max_tokens": larger}
        response = self._count(await self.model.request(to_send, settings, params))
        if response.finish_reason == "length":
            raise ReplyTruncatedError(larger, tries=2)
        return response

    def _keep(self, message: ModelMessage) -> None:
        self.sent.append(message)
        self.record(message)

    def _drain_queue(self) -> list[ModelRequestPart]:
        queued, self.queued = self.queued, []
        return [UserPromptPart(text) for text in queued]

    async def _system_parts(self) -> list[SystemPromptPart]:
        parts = []
        for prompt in self.system_prompts:
            content = await prompt.render(self.ctx)
            if content:
                parts.append(SystemPromptPart(content, dynamic_ref=prompt.ref))
        return parts

    async def _history_to_send(self) -> list[ModelMessage]:
        """The history, with the system prompts of its first request rendered anew."""
        history = self.history
        if not history or not self.system_prompts:
            return history
        first = history[0]
        if not isinstance(first, ModelRequest):
            return history
        by_ref = {p.ref: p for p in self.system_prompts}
        parts: list[ModelRequestPart] = []
        changed = False
        for part in first.parts:
            prompt = (
                by_ref.get(part.dynamic_ref or "") if isinstance(part, SystemPromptPart) else None
            )
            if prompt is not None and isinstance(part, SystemPromptPart):
                content = await prompt.render(self.ctx)
                if content != part.content:
                    part = dataclasses.replace(part, content=content)
                    changed = True
            parts.append(part)
        if not changed:
            return history
        return [dataclasses.replace(first, parts=parts), *history[1:]]

    # ------------------------------------------------------------- response

    async def _answer(
        self, response: ModelResponse, tools: dict[str, Any]
    ) -> tuple[Any, list[ModelRequestPart]]:
        """The final output (or ``_NOTHING``) and the parts of the next request."""
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        output_tool = self.output.tool_def.name if self.output.tool_def is not None else None
        output_calls = [c for c in calls if c.tool_name == output_tool]
        function_calls = [c for c in calls if c.tool_name != output_tool]
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        parts: list[ModelRequestPart] = []
        final: Any = _NOTHING
        final_call: ToolCallPart | None = None
        final_index = -1

        if output_calls:
            for call in output_calls:
                if final is not _NOTHING:
                    parts.append(self._tool_return(call, _OUTPUT_SKIPPED))
                    continue
                value = await self._read_output(
                    functools.partial(self.output.parse_call, call), call
                )
                if isinstance(value, _Refused):
                    parts.append(value.part)
                else:
                    final, final_call, final_index = value, call, len(parts)
                    parts.append(self._tool_return(call, _FINAL_PROCESSED))
        elif self.output.structured and text.strip():
            if not function_calls or self.end_strategy == "early":
                value = await self._read_output(lambda: self.output.parse_text(text), None)
                if isinstance(value, _Refused):
                    if not function_calls:  # with tool calls, running the tools is the correction
                        parts.append(value.part)
                else:
                    final = value
        elif not self.output.structured and not calls and text:
            value = await self._read_output(lambda: text, None)
            if isinstance(value, _Refused):
                parts.append(value.part)
            else:
                final = value

        if function_calls:
            if final is not _NOTHING and self.end_strategy == "early":
                parts.extend(self._tool_return(c, _TOOL_SKIPPED) for c in function_calls)
            else:
                projected = dataclasses.replace(
                    self.usage, tool_calls=self.usage.tool_calls + len(function_calls)
                )
                self.limits.check_before_tool_call(projected)
                results = [await self._call_tool(call, tools) for call in function_calls]
                parts.extend(results)
                retried = self._settle_retries(function_calls, results)
                if retried and final is not _NOTHING:
                    final = _NOTHING  # the tool's feedback comes first; the model answers again
                    if final_call is not None:
                        parts[final_index] = self._tool_return(final_call, _RETRY_WINS)
                if self.end_strategy != "early":
                    # As pydantic-ai assembles them: "early" answers the output calls first,
                    # the other strategies answer every call in the order the model made it.
                    position = {c.tool_call_id: i for i, c in enumerate(calls)}
                    parts.sort(key=lambda p: position.get(getattr(p, "tool_call_id", ""), 0))
        elif final is _NOTHING and not parts:
            parts.append(self._output_retry(_EMPTY_RESPONSE, None, "no_output"))
        return final, parts

    async def _read_output(self, parse: Callable[[], Any], call: ToolCallPart | None) -> Any:
        """The validated output, or the retry prompt sending it back."""
        try:
            value = parse()
            for hook in self.hooks:
                value = await hook.after_output(self.view, value)
            return value
        except ValidationError as exc:
            return _Refused(self._output_retry(_errors(exc), call, "validation_error"))
        except ModelRetry as exc:
            return _Refused(self._output_retry(exc.message, call, "model_retry"))

    def _output_retry(
        self, content: Any, call: ToolCallPart | None, cause: _Cause
    ) -> ModelRequestPart:
        if self.output_retries >= self.max_retries:
            raise RetriesExhausted(
                f"Exceeded maximum retries ({self.max_retries}) for output validation",
                cause=cause,
                tool_name=None,
                tries=self.max_retries + 1,
                detail=content,
            )
        self.output_retries += 1
        info = RetryInfo(cause, attempt=self.output_retries, max_retries=self.max_retries)
        if call is None:
            return RetryFeedbackPart(content=content, retry=info)
        return _retried(call, content, info)

    @staticmethod
    def _tool_return(call: ToolCallPart, content: Any) -> ToolReturnPart:
        return ToolReturnPart(
            tool_name=call.tool_name, content=content, tool_call_id=call.tool_call_id
        )

    # ---------------------------------------------------------------- tools

    async def _call_tool(self, call: ToolCallPart, tools: dict[str, Any]) -> ToolReturnPart:
        tool = tools.get(call.tool_name)
        if tool is None:
            names = ", ".join(repr(n) for n in sorted(tools)) or "none"
            return self._tool_retry(
                call,
                f"Unknown tool name: {call.tool_name!r}. Available tools: {names}",
                self.max_retries,
                "unknown_tool",
            )
        self.usage.tool_calls += 1
        try:
            args = _validate_args(tool.args_validator, call)
            ctx = dataclasses.replace(
                self.ctx,
                tool_name=call.tool_name,
                tool_call_id=call.tool_call_id,
                retry=self.tool_retries.get(call.tool_name, 0),
                max_retries=tool.max_retries,
            )
            assert self.toolset is not None
            result = await self.toolset.call_tool(call.tool_name, args, ctx, tool)
            for hook in self.hooks:
                result = await hook.after_tool_call(self.view, call, args, result)
        except ValidationError as exc:
            return self._tool_retry(call, _errors(exc), tool.max_retries, "validation_error")
        except ModelRetry as exc:
            return self._tool_retry(call, exc.message, tool.max_retries, "model_retry")
        return self._tool_return(call, result)

    def _tool_retry(
        self, call: ToolCallPart, content: Any, max_retries: int, cause: _ToolCause
    ) -> ToolReturnPart:
        used = self.tool_retries.get(call.tool_name, 0)
        if used >= max_retries:
            raise RetriesExhausted(
                f"Tool {call.tool_name!r} exceeded max retries count of {max_retries}",
                cause=cause,
                tool_name=call.tool_name,
                tries=max_retries + 1,
                detail=content,
            )
        return _retried(call, content, RetryInfo(cause, attempt=used + 1, max_retries=max_retries))

    def _settle_retries(
        self, calls: Sequence[ToolCallPart], results: Sequence[ToolReturnPart]
    ) -> bool:
        """Charge this step's failures to the tools' budgets; True if any tool failed.

        As in pydantic-ai: a tool that failed in the step uses one unit of its budget,
        however many of its calls failed, and a tool that only succeeded starts afresh.
        """
        failed = {
            c.tool_name for c, r in zip(calls, results, strict=True) if r.outcome == "retried"
        }
        for name in {c.tool_name for c in calls} - failed:
            self.tool_retries.pop(name, None)
        for name in failed:
            self.tool_retries[name] = self.tool_retries.get(name, 0) + 1
        return bool(failed)


def _retried(call: ToolCallPart, content: Any, info: RetryInfo[Any]) -> ToolReturnPart:
    """The answer to ``call`` that sends it back to the model with ``content``."""
    return ToolReturnPart(
        tool_name=call.tool_name,
        content=content,
        tool_call_id=call.tool_call_id,
        outcome="retried",
        retry=info,
    )


def _validate_args(validator: Any, call: ToolCallPart) -> dict[str, Any]:
    if isinstance(call.args, str | None):
        result = validator.validate_json(call.args or "{}")
    else:
        result = validator.validate_python(call.args_as_dict())
    return result  # type: ignore[no-any-return]


def _errors(exc: ValidationError) -> Any:
    return exc.errors(include_url=False, include_context=False)
