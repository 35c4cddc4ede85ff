"""ReactAgent: one LLM agent over pydantic-ai models, its durable history and its budgets.

A ReactAgent owns an asyncio event loop created with it, and every synchronous
entry point runs on that loop, so the provider's HTTP connection pool always
belongs to one loop. Build it on the thread that will use it (an actor builds
it in ``on_start``).

Each run:

1. folds user notes held since before the first run into the prompt;
2. asks the lifetime budget for permission (:class:`AgentUsageLimitError` if refused);
3. compacts the history first when the last request, or the estimate of the history
   plus the new prompt, came close to the model's context (the card's
   ``context_length``, else the size the server reports: :mod:`akgentic.llm.context_size`);
   a prompt that alone is larger than the context is not sent: a short note takes its
   place in the history and the run fails with :class:`ContextOverflowError`;
4. closes any tool call a previous failed run left unanswered;
5. runs the ReAct loop of :mod:`akgentic.llm.turn` with the durable history and
   the run-tier limits, adding every new message to the :class:`ContextManager`
   as soon as it exists (that is what reports the LLM events);
6. on a run-tier breach, runs one tool-free concluding turn (see
   :class:`~akgentic.llm.budget.LimitRecovery`) or raises
   :class:`RunUsageLimitError`.

A run the server refuses because the prompt exceeds its context leaves its last
request in the history with its contents replaced by a note
(:class:`LlmMessageWithheldEvent`), so the oversized message is never sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import inspect
import logging
import threading
import traceback
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeAlias, TypeVar

from pydantic_ai import NativeOutput, Tool
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, FunctionToolset

from akgentic.llm.budget import LifetimeBudget, LimitRecovery, to_pydantic_limits
from akgentic.llm.compaction import CompactionStrategy, create_compaction, estimate_tokens
from akgentic.llm.config import (
    ModelConfig,
    ReactAgentConfig,
    RunUsageLimits,
    check_compaction_bounds,
    model_roster_key,
)
from akgentic.llm.context import ContextManager, ContextObserver, replay_history
from akgentic.llm.context_size import context_length_of
from akgentic.llm.errors import (
    ContextOverflowError,
    ModelSwitchError,
    RunCancelledError,
    RunStoppedError,
    RunUsageLimitError,
)
from akgentic.llm.events import (
    LlmContextClearedEvent,
    LlmContextCompactedEvent,
    LlmMessageWithheldEvent,
    LlmSystemPromptEvent,
    LlmUsageEvent,
)
from akgentic.llm.output_spec import OutputSpec
from akgentic.llm.pricing import estimate_cost
from akgentic.llm.providers import create_model
from akgentic.llm.run_hooks import RunHook
from akgentic.llm.turn import SystemPrompt, Turn

__all__ = ["ReactAgent", "UserPrompt"]

logger = logging.getLogger(__name__)

UserPrompt: TypeAlias = str | list[str | BinaryContent]
DepsT = TypeVar("DepsT")
F = TypeVar("F", bound=Callable[..., Any])

_ABORTED = "Error: tool call aborted due to failure: {reason}"
_WITHHELD = (
    "[Message withheld: it was too large for the model's context "
    "({chars:,} characters, about {tokens:,} tokens; context {context} tokens).]"
)


def _prompt_chars(prompt: UserPrompt) -> int:
    """Characters of the text of ``prompt`` (binary content is not counted)."""
    if isinstance(prompt, str):
        return len(prompt)
    return sum(len(p) for p in prompt if isinstance(p, str))


def _request_chars(message: ModelMessage) -> int:
    """Characters of a request's user-prompt and tool-return contents."""
    chars = 0
    for part in message.parts:
        if part.part_kind == "user-prompt":
            content = getattr(part, "content", "")
            chars += len(content) if isinstance(content, str) else len(str(content))
        elif isinstance(part, ToolReturnPart):
            chars += len(part.model_response_str())
    return chars


_SCHEMAS_LIMIT = 4096
_TOOLSET_RELEASE_TIMEOUT = 10.0  # seconds a held toolset (an MCP child) gets to close
_schema_lock = threading.Lock()
_schemas: dict[Hashable, Any] = {}


def _schema_key(func: Callable[..., Any]) -> Hashable | None:
    """What pydantic-ai's tool schema of ``func`` depends on, or None when it cannot be told.

    Agents of one class build their tools from the same code (closures over different
    cards), so the schema — signature, type hints, docstring, name — repeats across them.
    """
    inner = inspect.unwrap(func)
    code = getattr(inner, "__code__", None)
    if code is None:
        return None
    raw = getattr(inner, "__func__", inner)
    key = (
        code,
        type(func),
        inspect.ismethod(inner),
        inspect.iscoroutinefunction(func),
        getattr(func, "__name__", None),
        getattr(func, "__qualname__", None),
        getattr(func, "__module__", None),
        func.__doc__,
        inner.__doc__,
        getattr(raw, "__defaults__", None),
        tuple(sorted((getattr(raw, "__kwdefaults__", None) or {}).items())),
        tuple((getattr(func, "__annotations__", None) or {}).items()),
        tuple((getattr(raw, "__annotations__", None) or {}).items()),
    )
    try:
        hash(key)
    except TypeError:  # an unhashable default or annotation: build the schema every time
        return None
    return key


def _as_tool(func: Any) -> Any:
    """``func`` as a pydantic-ai ``Tool`` whose schema is built once per distinct function.

    Equivalent to what ``Agent(tools=[func])`` builds (same defaults); only the
    function-schema work (signature, type hints, docstring parsing, validator and JSON
    schema generation) is shared between agents. ``Tool`` objects and other callables
    pass through unchanged.
    """
    if isinstance(func, Tool) or not (inspect.isfunction(func) or inspect.ismethod(func)):
        return func
    key = _schema_key(func)
    if key is None:
        return func
    with _schema_lock:
        cached = _schemas.get(key)
    if cached is None:
        cached = Tool(func).function_schema
        with _schema_lock:
            if len(_schemas) >= _SCHEMAS_LIMIT:  # e.g. defaults that differ per agent
                _schemas.clear()
            _schemas[key] = cached
    schema = dataclasses.replace(
        cached,
        function=func,
        json_schema=copy.deepcopy(cached.json_schema),
        return_schema=copy.deepcopy(cached.return_schema),
    )
    return Tool(func, function_schema=schema)


class ReactAgent(Generic[DepsT]):
    """A tool-using LLM agent with event-sourced history and two usage-limit tiers.

    ``tools`` are plain functions (or pydantic-ai ``Tool`` objects), ``toolsets``
    pydantic-ai toolsets (an MCP server's, for instance). ``model`` replaces the
    model built from ``config.model_cfg`` (tests pass a pydantic-ai
    ``FunctionModel``). ``observer`` receives every LLM event; ``hooks``
    (:class:`~akgentic.llm.run_hooks.RunHook`) are called inside every run.
    """

    def __init__(
        self,
        config: ReactAgentConfig | None = None,
        *,
        deps_type: type[DepsT] | None = None,
        tools: Sequence[Any] = (),
        toolsets: Sequence[Any] | None = None,
        result_type: Any = str,
        observer: ContextObserver | None = None,
        model: Model | None = None,
        hooks: Sequence[RunHook] = (),
        limit_recovery: LimitRecovery | None = None,
    ) -> None:
        self._config = config or ReactAgentConfig()
        self._closed = False
        # Guards _closed against _driving: a close while a run drives the loop (from
        # another thread, or from inside the run) leaves the closing to that run's end.
        self._drive_lock = threading.Lock()
        self._driving = False
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._context = ContextManager(max_messages=self._config.max_messages, pricer=estimate_cost)
        if observer is not None:
            self._context.subscribe(observer)
        self._active_cfg = self._config.model_cfg
        self._roster = list(self._config.model_roster)
        self._model_override = model
        self._model: Model = model or create_model(
            self._active_cfg, self._config.runtime_cfg.http_client_config
        )
        self._owned_models: list[Model] = [] if model is not None else [self._model]
        self._budget = LifetimeBudget(self._config.agent_usage_limits)
        self._recovery = limit_recovery or LimitRecovery()
        self._result_type = result_type
        self._last_failure = "the run ended before the tool returned"
        self._summary_follows_active = self._config.compaction_cfg.summary_model_cfg is None
        self._compaction = self._build_compaction(self._model)
        self._deps_type = deps_type
        self._function_tools: FunctionToolset[Any] = FunctionToolset([_as_tool(t) for t in tools])
        self._toolset: AbstractToolset[Any] = (
            CombinedToolset([self._function_tools, *toolsets]) if toolsets else self._function_tools
        )
        self._held_toolsets: list[AbstractToolset[Any]] = list(toolsets or ())
        self._system_prompts: list[SystemPrompt] = []
        self._hooks: list[RunHook] = list(hooks)
        self._toolset_holder: asyncio.Task[None] | None = None
        self._toolset_release = asyncio.Event()
        self._run_task: asyncio.Task[Any] | None = None
        self._cancelled_run: asyncio.Task[Any] | None = None
        self._interrupted = False

    # ---------------------------------------------------------------- wiring

    def _build_compaction(self, active_model: Model) -> CompactionStrategy:
        cfg = self._config.compaction_cfg
        if cfg.summary_model_cfg is None:
            summary_model = active_model
        elif self._model_override is not None:
            summary_model = self._model_override
        else:
            summary_model = create_model(
                cfg.summary_model_cfg, self._config.runtime_cfg.http_client_config
            )
            self._owned_models.append(summary_model)
        return create_compaction(cfg, cfg.summary_model_cfg or self._active_cfg, summary_model)

    @property
    def context(self) -> ContextManager:
        """The durable history and its observers."""
        return self._context

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop this agent runs on."""
        return self._loop

    @property
    def config(self) -> ReactAgentConfig:
        """The configuration the agent was built from."""
        return self._config

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    def subscribe_context(self, observer: ContextObserver) -> None:
        """Add an observer of the LLM events."""
        self._context.subscribe(observer)

    def system_prompt(self, func: F) -> F:
        """Register a system-prompt function: ``func()`` or ``func(ctx: RunContext)``.

        System prompts open a conversation: they go into the first request of an
        empty history (at the start, and after a clear). On later runs they are
        rendered again into a copy of that first request, so a changed backstory
        reaches the model while the stored history keeps what was sent.
        """
        self._system_prompts.append(SystemPrompt.of(func))
        return func

    def tool(self, func: F) -> F:
        """Register a tool whose first parameter is pydantic-ai's ``RunContext``."""
        self._function_tools.add_function(func, takes_ctx=True)
        return func

    def add_hook(self, hook: RunHook) -> None:
        """Call ``hook`` in every later run (after the hooks given at construction)."""
        self._hooks.append(hook)

    def active_model(self) -> ModelConfig:
        """The configuration of the model the next run uses."""
        return self._active_cfg

    def model_roster(self) -> list[ModelConfig]:
        """The models this agent may switch between (a fresh list)."""
        return list(self._roster)

    def usage_totals(self) -> tuple[int, int, int]:
        """Lifetime ``(runs, input_tokens, output_tokens)`` as the budget counts them."""
        b = self._budget
        return b.run_count, b.input_tokens, b.output_tokens

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("ReactAgent is closed")

    # ------------------------------------------------------------------ runs

    def run_sync(
        self, user_prompt: UserPrompt, deps: DepsT | None = None, output_type: Any = None
    ) -> Any:
        """Run one turn to completion on the agent's own loop and return its output."""
        self._check_open()
        return self._run_to_end(self.run(user_prompt, deps, output_type))

    def interrupt(self) -> None:
        """Cancel the run in flight and refuse every later one. Safe from any thread.

        What stopping the owning actor calls, from the thread that stops it: the
        actor's own thread may be waiting on a model request that never ends, so
        the cancellation is handed to the agent's loop, where it ends the request
        (the HTTP call is cancelled, not left to time out) and the run with it.
        """
        self._interrupted = True
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            self._loop.call_soon_threadsafe(self._cancel_run)

    def cancel_run(self) -> None:
        """Cancel the run in flight, if any; later runs go on. Safe from any thread.

        What a human's ``/stop`` calls as it is queued: the run ends with
        :class:`RunCancelledError` now, even while its model request hangs. Only the
        run in flight when this is called is cancelled, never a later one.
        """
        task = self._run_task
        if task is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            self._loop.call_soon_threadsafe(self._cancel_task, task)

    def _cancel_task(self, task: asyncio.Task[Any]) -> None:
        if not task.done():
            self._cancelled_run = task
            task.cancel()

    @property
    def interrupted(self) -> bool:
        """True once :meth:`interrupt` was called."""
        return self._interrupted

    def _cancel_run(self) -> None:
        task = self._run_task
        if task is not None and not task.done():
            task.cancel()

    def _run_to_end(self, coro: Any) -> Any:
        """Run ``coro`` as the cancellable run task; RunStoppedError once interrupted."""
        if self._interrupted:
            coro.close()
            raise RunStoppedError("the agent is stopping: no new run")
        with self._drive_lock:
            if self._closed:
                coro.close()
                raise RuntimeError("ReactAgent is closed")
            self._driving = True
        try:
            task = self._loop.create_task(coro, name="akgentic-run")
            self._run_task = task
            return self._loop.run_until_complete(task)
        except asyncio.CancelledError:
            if self._interrupted:
                raise RunStoppedError("the agent is stopping: its run was cancelled") from None
            if self._cancelled_run is task:
                raise RunCancelledError("the run was cancelled as asked") from None
            raise
        finally:
            self._run_task = None
            self._cancelled_run = None
            with self._drive_lock:
                self._driving = False
                # Through the property: another thread may have closed the agent since the
                # check above, which mypy would take _closed to be still False after.
                closed_meanwhile = self.closed
            if closed_meanwhile:
                self._release_loop()

    async def run(
        self, user_prompt: UserPrompt, deps: DepsT | None = None, output_type: Any = None
    ) -> Any:
        """Run one turn (see the module docstring for the steps) and return its output."""
        self._check_open()
        prompt = self._with_pending(user_prompt)
        self._budget.preflight()
        await self._fit_context(prompt)
        try:
            return await self._run_once(prompt, deps, output_type, self._config.run_usage_limits)
        except UsageLimitExceeded as exc:
            breach = RunUsageLimitError(str(exc))
            reason = self._recovery.decide(exc)
            if reason is None:
                raise breach from exc
            try:
                output = await self.conclude_without_tools(
                    reason, deps=deps, output_type=output_type
                )
            except Exception as conclusion_error:
                logger.warning("The concluding turn failed: %s", conclusion_error)
                raise breach from exc
            if output is None or (isinstance(output, str) and not output.strip()):
                raise breach from exc
            return output

    def conclude_without_tools_sync(
        self, reason: str, *, deps: DepsT | None = None, output_type: Any = None
    ) -> Any:
        """Synchronous :meth:`conclude_without_tools`."""
        self._check_open()
        return self._run_to_end(
            self.conclude_without_tools(reason, deps=deps, output_type=output_type)
        )

    async def conclude_without_tools(
        self, reason: str, *, deps: DepsT | None = None, output_type: Any = None
    ) -> Any:
        """One model turn with no tools available and a single request allowed.

        Counts as a run for the lifetime budget; its own breach is never recovered.
        """
        self._check_open()
        self._budget.preflight()
        return await self._run_once(
            reason, deps, output_type, RunUsageLimits(run_request_limit=1), with_tools=False
        )

    def _with_pending(self, user_prompt: UserPrompt) -> UserPrompt:
        pending = self._context.drain_pending_user_prompts()
        if not pending:
            return user_prompt
        if isinstance(user_prompt, str):
            return "\n\n".join([*pending, user_prompt])
        return [*pending, *user_prompt]

    async def _run_once(
        self,
        prompt: UserPrompt,
        deps: DepsT | None,
        output_type: Any,
        limits: RunUsageLimits,
        *,
        with_tools: bool = True,
    ) -> Any:
        self._close_dangling_tool_calls(self._last_failure)
        if with_tools:
            await self._hold_toolsets()
        runtime = self._config.runtime_cfg
        turn = Turn(
            model=self._model,
            history=self._context.messages,
            prompt=prompt,
            deps=deps,
            output=self._output_spec(output_type),
            toolset=self._toolset if with_tools else None,
            system_prompts=self._system_prompts,
            hooks=self._hooks,
            limits=to_pydantic_limits(limits),
            max_retries=runtime.retries,
            end_strategy=runtime.end_strategy,
            record=self._context.add_message,
            max_tokens=self._active_cfg.max_tokens,
            max_tokens_retry=self._active_cfg.max_tokens_retry,
        )
        try:
            return await turn.run()
        except Exception as exc:
            self._last_failure = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            if not self._interrupted:
                await self._withhold_if_overflow(exc, turn.run_id)
            raise
        except asyncio.CancelledError:
            self._last_failure = "the run was cancelled"  # tool calls it left open say so
            raise
        finally:
            usage = turn.usage
            self._budget.add(usage.input_tokens or 0, usage.output_tokens or 0)
            if not self._interrupted:  # a stopped agent's history ends with its stop
                self._context.record_system_prompt(turn.run_id, turn.sent)

    async def _hold_toolsets(self) -> None:
        """Enter the toolsets once for the agent's life, not once per run.

        Safe because the event loop is the agent's own and outlives its runs: a task
        on it enters the toolsets and stays parked until :meth:`close`, so a
        connection (an MCP server's, a spawned stdio child) opens once, and is
        entered and left by the same task as the anyio task groups inside require.
        Each run still enters the toolsets itself, which is then only a count (toolsets
        holding a connection, like ``MCPToolset``, are re-entrant). When entering fails,
        nothing is held and the run enters (and reports) as before.
        """
        if not self._held_toolsets or self._toolset_holder is not None:
            return
        ready = asyncio.Event()
        release = self._toolset_release
        held = self._held_toolsets

        async def hold() -> None:
            # Each toolset is entered on its own: pydantic-ai's CombinedToolset keeps one
            # exit stack, so entering the combination twice would lose the first one.
            try:
                async with contextlib.AsyncExitStack() as stack:
                    for toolset in held:
                        await stack.enter_async_context(toolset)
                    ready.set()
                    await release.wait()
            finally:
                ready.set()

        task = self._loop.create_task(hold(), name="akgentic-toolsets")
        await ready.wait()
        if task.done():
            error = None if task.cancelled() else task.exception()
            logger.warning("Toolsets could not be held open; entering them per run (%s)", error)
            return
        self._toolset_holder = task

    async def _release_toolsets(self) -> None:
        holder, self._toolset_holder = self._toolset_holder, None
        if holder is None:
            return
        self._toolset_release.set()
        try:
            await asyncio.wait_for(holder, timeout=_TOOLSET_RELEASE_TIMEOUT)
        except Exception:
            logger.warning("Releasing the toolsets of a ReactAgent failed", exc_info=True)

    def _output_spec(self, output_type: Any) -> OutputSpec:
        """How the run asks for ``output_type`` (the agent's own when None)."""
        wanted = output_type or self._result_type
        native = self._active_cfg.supports_native_output
        if isinstance(wanted, NativeOutput):
            wanted, native = wanted.outputs, True
        return OutputSpec.for_type(wanted, native=native)

    def _close_dangling_tool_calls(self, reason: str) -> None:
        """Answer tool calls a failed run left open, so the next prompt is accepted.

        A run that dies while its tools execute leaves the model's tool calls
        without returns (pydantic-ai may also have stored an empty, interrupted
        request). The history is append-only, so the answers are added as a new
        request; the model then sees each call closed with an error text.
        """
        messages = self._context.messages
        index = len(messages) - 1
        while index >= 0 and isinstance(messages[index], ModelRequest):
            index -= 1
        if index < 0:
            return
        response = messages[index]
        assert isinstance(response, ModelResponse)
        answered = {
            getattr(p, "tool_call_id", None)
            for m in messages[index + 1 :]
            for p in m.parts
            if p.part_kind in ("tool-return", "retry-prompt")
        }
        open_calls = [
            p
            for p in response.parts
            if isinstance(p, ToolCallPart) and p.tool_call_id not in answered
        ]
        if not open_calls:
            return
        content = _ABORTED.format(reason=reason)
        self._context.add_message(
            ModelRequest(
                parts=[
                    ToolReturnPart(
                        tool_name=c.tool_name,
                        content=content,
                        tool_call_id=c.tool_call_id,
                        outcome="failed",
                    )
                    for c in open_calls
                ],
                run_id=response.run_id,
            )
        )

    # ------------------------------------------------------------ compaction

    async def _fit_context(self, prompt: UserPrompt) -> None:
        """Compact when the next request would come close to the context; refuse a prompt
        that alone exceeds it (a note takes its place in the history)."""
        context = await context_length_of(self._active_cfg)
        if context is None:
            return
        chars = _prompt_chars(prompt)
        tokens = chars // 4
        if tokens > context:
            self._context.append_user_prompt(
                _WITHHELD.format(chars=chars, tokens=tokens, context=f"{context:,}")
            )
            raise ContextOverflowError(tokens, context)
        cfg = self._config.compaction_cfg
        if not cfg.auto_trigger:
            return
        threshold = int(context * cfg.trigger_ratio)
        if self._context.last_input_tokens > threshold or (
            estimate_tokens(self._context.messages) + tokens > threshold
        ):
            await self._compact_now()

    async def _withhold_if_overflow(self, exc: Exception, run_id: str) -> None:
        """After the server refused the prompt as too long, keep the run's last request out."""
        from akgentic.llm.failures import describe_failure

        if describe_failure(exc)[0] != "context_length":
            return
        requests = [
            m for m in self._context.messages if isinstance(m, ModelRequest) and m.run_id == run_id
        ]
        if not requests:
            return
        chars = _request_chars(requests[-1])
        context = await context_length_of(self._active_cfg)
        note = _WITHHELD.format(
            chars=chars, tokens=chars // 4, context=f"{context:,}" if context else "unknown"
        )
        event = LlmMessageWithheldEvent(run_id=run_id, note=note, tokens=chars // 4)
        self._context.withhold_last_request(event)

    async def _compact_now(self) -> int:
        messages = self._context.messages
        result = await self._compaction.compact(messages)
        if result.replaced_message_count <= 0:
            return 0
        event = LlmContextCompactedEvent(
            run_id="",
            strategy_id=getattr(self._compaction, "id", type(self._compaction).__name__),
            summary=result.summary,
            replaced_message_count=result.replaced_message_count,
            summarizer_prompt_version=self._config.compaction_cfg.summarizer_prompt_version,
            tokens_before=self._context.last_input_tokens or estimate_tokens(messages),
            tokens_after=result.tokens_after,
        )
        self._context.compact(event)
        return result.replaced_message_count

    def compact(self) -> str:
        """Fold older history now with the configured strategy; returns a one-line report."""
        self._check_open()
        count = self._run_to_end(self._compact_now())
        if count == 0:
            return "Nothing to compact."
        return f"Compacted: replaced {count} earlier message(s) with a summary."

    def clear_context(self) -> str:
        """Forget the whole history; returns a one-line report."""
        self._check_open()
        count = self._context.clear_context()
        return f"Cleared {count} message(s); the system prompt comes back on the next run."

    # ---------------------------------------------------------------- restore

    def restore_context(self, events: Sequence[Any]) -> None:
        """Rebuild history and lifetime counters from persisted events, in order.

        Accepts LLM events or wrappers exposing them as ``.event`` (the core's
        EventMessage); anything else is ignored. Emits nothing.
        """
        messages: list[ModelMessage] = []
        system_hash: str | None = None
        runs: set[str] = set()
        tokens_in = tokens_out = 0
        for item in events:
            event = getattr(item, "event", item)
            messages = replay_history(messages, event)
            if isinstance(event, LlmContextClearedEvent):
                system_hash = None
            elif isinstance(event, LlmSystemPromptEvent):
                system_hash = event.content_hash
            elif isinstance(event, LlmUsageEvent):
                runs.add(event.run_id)
                tokens_in += event.input_tokens
                tokens_out += event.output_tokens
        self._context.restore(messages)
        self._context.seed_system_prompt_hash(system_hash)
        self._budget.seed(len(runs), tokens_in, tokens_out)

    # ---------------------------------------------------------- model switch

    def switch_model(self, key: str) -> ModelConfig:
        """Make the roster entry ``provider:model`` active from the next run on."""
        self._check_open()
        by_key = {model_roster_key(m): m for m in self._roster}
        cfg = by_key.get(key)
        if cfg is None:
            raise ModelSwitchError(
                f"unknown model {key!r}; available: {', '.join(by_key) or '(empty roster)'}"
            )
        try:
            check_compaction_bounds(cfg, self._config.compaction_cfg, self._config.run_usage_limits)
        except ValueError as exc:
            raise ModelSwitchError(str(exc)) from exc
        if self._model_override is not None:
            model = self._model_override
        else:
            try:
                model = create_model(cfg, self._config.runtime_cfg.http_client_config)
            except (ValueError, ImportError) as exc:
                raise ModelSwitchError(f"cannot build {key!r}: {exc}") from exc
            self._owned_models.append(model)
        self._active_cfg = cfg
        self._model = model
        if self._summary_follows_active:
            self._compaction = self._build_compaction(model)
        return cfg

    # ---------------------------------------------------------------- closing

    def close(self) -> None:
        """Release the HTTP clients and the event loop. Idempotent; never raises.

        Safe from any thread. While a run drives the loop (on another thread, or this
        close is called from inside it) the loop cannot be closed from here: the run
        is interrupted (it raises :class:`RunStoppedError`) and the thread that drives
        it closes the loop as the run ends. Left open, the loop and its self-pipe
        socket would be freed by the collector with a ``ResourceWarning``.
        """
        with self._drive_lock:
            if self._closed:
                return
            self._closed = True
            driving = self._driving
        if driving:
            self.interrupt()
            return
        self._release_loop()

    def _release_loop(self) -> None:
        """Release the toolsets, the HTTP clients and the loop (not running: no run drives it)."""
        loop = self._loop
        if loop.is_running():
            # Driven by someone else than this agent's runs: nothing here can stop it.
            logger.warning("ReactAgent closed while its loop runs outside a run: it stays open")
            return
        try:
            loop.run_until_complete(self._release_toolsets())
            loop.run_until_complete(self._close_clients())
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        except Exception:
            logger.warning("Error while closing a ReactAgent", exc_info=True)
        finally:
            with contextlib.suppress(Exception):
                loop.close()

    async def aclose(self) -> None:
        """Close the HTTP clients from inside a running loop (the loop itself stays)."""
        if self._closed:
            return
        self._closed = True
        await self._release_toolsets()
        await self._close_clients()

    async def _close_clients(self) -> None:
        for model in self._owned_models:
            for client in _clients_of(model):
                try:
                    await client.close()
                except Exception:
                    logger.debug("Closing a model client failed", exc_info=True)

    def __enter__(self) -> ReactAgent[DepsT]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _clients_of(model: Model) -> list[Any]:
    inner = getattr(model, "models", None)
    if isinstance(inner, list | tuple):
        return [c for m in inner for c in _clients_of(m)]
    client = getattr(model, "client", None)
    return [client] if client is not None and hasattr(client, "close") else []
