"""From a team's stored events to OpenTelemetry GenAI spans: a pure function of the log.

One **trace per team turn**: a message that enters the team with no known cause
(a human's message, or one sent by plain code) roots a trace, and every message
whose ``parent_id`` is a message of that trace joins it, however many hops and
however much later. A human's answer to a question names the question as its
parent, so a turn that waited for the human, across a crash and a resume if need
be, stays one trace.

Spans (names and attributes after the OpenTelemetry GenAI semantic conventions):

- ``invoke_workflow {team}``: the root of a turn, from the message that started it
  to the last span of the trace;
- ``invoke_agent {member}``: a member handling one message (``ReceivedMessage`` to
  ``ProcessedMessage``), a child of the span of the turn that sent the message, so
  the hops between members are the tree's edges;
- ``chat {model}``: one model request (``LlmMessageEvent`` request to response),
  with ``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` / ``output_tokens``
  and the estimated cost from the price table that ``LlmUsageEvent`` carries;
- ``execute_tool {tool}``: one tool call (``ToolCallEvent`` to ``ToolReturnEvent``).

Every id is derived from the team id and the stored message ids (see :func:`span_id`),
so exporting the same log twice, or a log that grew after a resume, gives the same
ids to the same spans. Timestamps are the stored messages' own. Prompt and
completion content is recorded only with ``capture_content=True``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from akgentic_otel.records import (
    AttributeValue,
    SpanEventRecord,
    SpanRecord,
    parts,
    role,
    span_id,
    text,
    trace_id,
)

__all__ = [
    "AttributeValue",
    "SpanEventRecord",
    "SpanRecord",
    "TraceBuilder",
    "span_id",
    "trace_id",
    "trace_log",
]

#: Senders outside the team (plain code): what they send roots a trace.
_OUTSIDE_ROLE = "ActorSystem"

#: The message classes the mapping reads, by name, in the order they are told apart.
_KINDS = (
    "PersistedEvent",
    "EventMessage",
    "SentMessage",
    "ReceivedMessage",
    "ProcessedMessage",
    "HandledMessage",
    "StartMessage",
)
_kind_of: dict[type, str] = {}


def _kind(value: object) -> str:
    """Which of :data:`_KINDS` ``value``'s class is, or derives from ("" for none).

    By name, as the AG-UI projection does: the log's message classes stay the
    kernel's business, and a plugin reads them through their stored shape. Looked up
    once per class: the mapping asks for every message of a log.
    """
    cls = type(value)
    kind = _kind_of.get(cls)
    if kind is None:
        names = {c.__name__ for c in cls.__mro__}
        kind = _kind_of[cls] = next((k for k in _KINDS if k in names), "")
    return kind


@dataclass
class _Chat:
    span: SpanRecord
    responded: bool = False
    has_usage: bool = False
    inputs: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Turn:
    span: SpanRecord
    key: str
    agent_id: UUID
    chats: int = 0
    chat: _Chat | None = None
    tools: dict[tuple[str, str], SpanRecord] = field(default_factory=dict)
    returns: dict[str, str] = field(default_factory=dict)


def _ns(message: Any, fallback: int) -> int:
    stamp = getattr(message, "timestamp", None)
    if isinstance(stamp, datetime):
        return int(stamp.timestamp() * 1_000_000) * 1000
    return fallback


class TraceBuilder:
    """Turns one team's stored messages, fed in log order, into :class:`SpanRecord` s.

    Feed every stored message with :meth:`feed`; :meth:`spans` returns every span
    made so far, those still open ending at the last event seen for them.
    :meth:`take_finished` hands out each span once, as it closes, for a live
    exporter. The builder keeps one small record per message id, so a log of
    ``n`` events costs ``O(n)`` time and memory.
    """

    def __init__(self, team_id: UUID, *, team_name: str = "", capture_content: bool = False):
        self.team_id = team_id
        self.team_name = team_name or "team"
        self.capture_content = capture_content
        self._trace_of: dict[UUID, int] = {}  # message id -> trace id
        self._origin_of: dict[UUID, int] = {}  # message id -> the span its hop hangs from
        self._sender_of: dict[UUID, tuple[str, str]] = {}  # message id -> (sender, intent)
        self._turn_ids: dict[tuple[UUID, UUID], int] = {}  # (agent, message) -> span id
        self._handled: dict[tuple[UUID, UUID], int] = {}  # (agent, message) -> turns so far
        self._open: dict[tuple[UUID, UUID], _Turn] = {}
        # Deliveries sent but not yet taken up, (recipient, message) -> trace: a turn
        # is quiet only when none is left and no member is working on it.
        self._pending: dict[tuple[UUID, UUID], int] = {}
        self._busy: dict[int, int] = {}  # trace -> open turns + pending deliveries
        self._roots: dict[int, SpanRecord] = {}  # trace id -> root span
        self._spans: list[SpanRecord] = []
        self._finished: list[SpanRecord] = []
        self._models: dict[UUID, str] = {}  # agent id -> configured model
        self._now = 0

    # -- feeding ---------------------------------------------------------------
    def feed_all(self, messages: Iterable[Any]) -> TraceBuilder:
        """Feed each message (a stored ``PersistedEvent`` or its ``event``) in order."""
        for message in messages:
            self.feed(message)
        return self

    def feed(self, message: Any) -> None:
        """Take the next stored message of the log (or the ``PersistedEvent`` holding it)."""
        fallback = self._now
        kind = _kind(message)
        if kind == "PersistedEvent":
            fallback = _ns(message, fallback)  # when the store recorded it
            message = message.event
            kind = _kind(message)
        # Actors stamp their messages on their own threads, so the log's order and its
        # timestamps can disagree by a little: time never goes back here, which keeps
        # every span's end after its start and every child after its parent's start.
        now = self._now = max(self._now, _ns(message, fallback))
        if kind == "EventMessage":
            self._event(message, now)
        elif kind == "SentMessage":
            self._sent(message, now)
        elif kind == "ReceivedMessage":
            self._received(message, now)
        elif kind == "ProcessedMessage" or kind == "HandledMessage":
            self._processed(message, now)
        elif kind == "StartMessage":
            self._started(message)

    # -- results ---------------------------------------------------------------
    def spans(self) -> list[SpanRecord]:
        """Every span so far, roots first by trace; open ones end at their last event."""
        self._close_roots()
        roots = sorted(self._roots.values(), key=lambda span: span.start_ns)
        return roots + list(self._spans)

    def take_finished(self) -> list[SpanRecord]:
        """The spans that closed since the last call (a root once its turn is quiet)."""
        out, self._finished = self._finished, []
        return out

    # -- messages ----------------------------------------------------------------
    def _started(self, message: Any) -> None:
        sender = message.sender
        model_cfg = getattr(message.config, "model_cfg", None)
        model = getattr(model_cfg, "model", None)
        if sender is not None and isinstance(model, str):
            self._models[sender.agent_id] = model

    def _sent(self, message: Any, now: int) -> None:
        sender, inner = message.sender, message.message
        intent = getattr(inner, "type", None)
        if inner.id in self._trace_of:  # the same message to one more recipient
            self._expect(message, inner)
            self._event_on_sender(message, inner, now)
            return
        parent = inner.parent_id
        outside = sender is None or sender.role == _OUTSIDE_ROLE
        if parent is not None and parent in self._trace_of and not outside:
            self._trace_of[inner.id] = self._trace_of[parent]
            turn = self._turn_ids.get((sender.agent_id, parent))
            self._origin_of[inner.id] = turn if turn is not None else self._origin_of[parent]
        else:
            root = self._root(inner, sender, now)
            self._trace_of[inner.id] = root.trace_id
            self._origin_of[inner.id] = root.span_id
        self._expect(message, inner)
        name = text(getattr(sender, "name", "")) or _OUTSIDE_ROLE
        self._sender_of[inner.id] = (name, intent if isinstance(intent, str) else "")
        self._event_on_sender(message, inner, now)

    def _expect(self, message: Any, inner: Any) -> None:
        """Note a delivery that a member will take up (humans and outsiders never do)."""
        recipient = message.recipient
        if recipient is None or recipient.is_user_proxy or recipient.role == _OUTSIDE_ROLE:
            return
        key = (recipient.agent_id, inner.id)
        if key not in self._pending:
            trace = self._pending[key] = self._trace_of[inner.id]
            self._busy[trace] = self._busy.get(trace, 0) + 1

    def _taken_up(self, key: tuple[UUID, UUID]) -> int | None:
        """Forget a pending delivery; the trace it belonged to, if it was pending."""
        trace = self._pending.pop(key, None)
        if trace is not None:
            self._busy[trace] -= 1
        return trace

    def _root(self, inner: Any, sender: Any, now: int) -> SpanRecord:
        trace = trace_id(self.team_id, inner.id)
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.conversation.id": str(self.team_id),
            "akgentic.team.id": str(self.team_id),
            "akgentic.team.name": self.team_name,
            "akgentic.message.id": str(inner.id),
            "akgentic.message.from": text(getattr(sender, "name", "")) or _OUTSIDE_ROLE,
        }
        if self.capture_content:
            content = text(getattr(inner, "content", ""))
            attributes["gen_ai.input.messages"] = json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": content}]}]
            )
        root = SpanRecord(
            name=f"invoke_workflow {self.team_name}",
            trace_id=trace,
            span_id=span_id(self.team_id, f"root/{inner.id}"),
            parent_id=None,
            start_ns=now,
            end_ns=now,
            attributes=attributes,
        )
        self._roots[trace] = root
        return root

    def _event_on_sender(self, message: Any, inner: Any, now: int) -> None:
        """Record the hop on the sending turn's span, as a span event."""
        sender = message.sender
        if sender is None or inner.parent_id is None:
            return
        turn = self._open.get((sender.agent_id, inner.parent_id))
        if turn is None:
            return
        attributes: dict[str, AttributeValue] = {
            "akgentic.message.id": str(inner.id),
            "akgentic.message.to": text(getattr(message.recipient, "name", "")),
        }
        intent = getattr(inner, "type", None)
        if isinstance(intent, str):
            attributes["akgentic.message.type"] = intent
        turn.span.events.append(SpanEventRecord("akgentic.message.sent", now, attributes))
        turn.span.end_ns = max(turn.span.end_ns, now)

    def _received(self, message: Any, now: int) -> None:
        agent, handled = message.sender, message.message_id
        if agent is not None:
            self._taken_up((agent.agent_id, handled))
        if agent is None or agent.is_user_proxy or handled not in self._trace_of:
            return  # a human's "turn" is waiting, not work: the answer links back instead
        key = (agent.agent_id, handled)
        # A member handling the same message again (rare) gets a span of its own.
        ordinal = self._handled.get(key, 0)
        self._handled[key] = ordinal + 1
        turn_key = f"turn/{agent.agent_id}/{handled}/{ordinal}"
        sender, intent = self._sender_of.get(handled, ("", ""))
        name = text(agent.name)
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "gen_ai.agent.id": str(agent.agent_id),
            "gen_ai.conversation.id": str(self.team_id),
            "akgentic.agent.role": text(agent.role),
            "akgentic.message.id": str(handled),
            "akgentic.message.from": sender,
        }
        if intent:
            attributes["akgentic.message.type"] = intent
        model = self._models.get(agent.agent_id)
        if model:
            attributes["gen_ai.request.model"] = model
        span = SpanRecord(
            name=f"invoke_agent {name}",
            trace_id=self._trace_of[handled],
            span_id=span_id(self.team_id, turn_key),
            parent_id=self._origin_of[handled],
            start_ns=now,
            end_ns=now,
            attributes=attributes,
        )
        self._turn_ids[key] = span.span_id
        self._open[key] = _Turn(span, turn_key, agent.agent_id)
        self._busy[span.trace_id] = self._busy.get(span.trace_id, 0) + 1
        self._spans.append(span)

    def _processed(self, message: Any, now: int) -> None:
        agent = message.sender
        if agent is None:
            return
        absorbed = self._taken_up((agent.agent_id, message.message_id))
        turn = self._open.pop((agent.agent_id, message.message_id), None)
        if turn is None:
            if absorbed is not None:
                self._maybe_quiet(absorbed)
            return
        if turn.chat is not None:
            self._close_chat(turn, now)
        for tool in list(turn.tools.values()):
            tool.end_ns = max(tool.start_ns, now)
            self._finish(tool, complete=False)
        turn.tools.clear()
        turn.span.end_ns = max(turn.span.end_ns, now)
        self._finish(turn.span)
        self._busy[turn.span.trace_id] -= 1
        self._maybe_quiet(turn.span.trace_id)

    # -- events of a turn ------------------------------------------------------------
    def _event(self, message: Any, now: int) -> None:
        agent, current = message.sender, message.parent_id
        if agent is None or current is None:
            return
        turn = self._open.get((agent.agent_id, current))
        if turn is None:
            return
        turn.span.end_ns = max(turn.span.end_ns, now)
        event = message.event
        kind = type(event).__name__
        if kind == "LlmMessageEvent":
            self._llm_message(turn, event.message, now)
        elif kind == "LlmUsageEvent":
            self._usage(turn, event, now)
        elif kind == "ToolCallEvent":
            self._tool_call(turn, event, now)
        elif kind == "ToolReturnEvent":
            self._tool_return(turn, event, now)
        elif kind == "TurnFailed":
            turn.span.error = text(event.kind) or "error"
            turn.span.error_message = text(event.cause)
            if turn.chat is not None and not turn.chat.responded:
                turn.chat.span.error = turn.span.error
                turn.chat.span.error_message = turn.span.error_message
                self._close_chat(turn, now)

    def _llm_message(self, turn: _Turn, model_message: Any, now: int) -> None:
        if getattr(model_message, "kind", "") == "request":
            if self.capture_content:
                for part in getattr(model_message, "parts", ()):
                    if getattr(part, "part_kind", "") == "tool-return":
                        turn.returns[text(part.tool_call_id)] = text(part.content)
            if turn.chat is not None and turn.chat.responded:
                self._close_chat(turn, now)
            chat = turn.chat or self._open_chat(turn, now)
            if self.capture_content:
                chat.inputs.extend(
                    {"role": role(getattr(part, "part_kind", "")), "parts": parts((part,))}
                    for part in getattr(model_message, "parts", ())
                )
            return
        chat = turn.chat or self._open_chat(turn, now)
        chat.responded = True
        span = chat.span
        span.end_ns = max(span.start_ns, now)
        model = getattr(model_message, "model_name", None)
        if model:
            span.attributes["gen_ai.response.model"] = text(model)
        response_id = getattr(model_message, "provider_response_id", None)
        if response_id:
            span.attributes["gen_ai.response.id"] = text(response_id)
        finish = getattr(model_message, "finish_reason", None)
        if finish:
            span.attributes["gen_ai.response.finish_reasons"] = text(finish)
        if self.capture_content:
            span.attributes["gen_ai.input.messages"] = json.dumps(chat.inputs)
            output = {"role": "assistant", "parts": parts(getattr(model_message, "parts", ()))}
            if finish:
                output["finish_reason"] = text(finish)
            span.attributes["gen_ai.output.messages"] = json.dumps([output])
        if chat.has_usage:
            self._close_chat(turn, now)

    def _open_chat(self, turn: _Turn, now: int) -> _Chat:
        model = self._models.get(turn.agent_id, "")
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": str(self.team_id),
            "gen_ai.agent.name": turn.span.attributes.get("gen_ai.agent.name", ""),
        }
        if model:
            attributes["gen_ai.request.model"] = model
        span = SpanRecord(
            name=f"chat {model}".rstrip(),
            trace_id=turn.span.trace_id,
            span_id=span_id(self.team_id, f"{turn.key}/chat/{turn.chats}"),
            parent_id=turn.span.span_id,
            start_ns=now,
            end_ns=now,
            kind="client",
            attributes=attributes,
        )
        turn.chats += 1
        turn.chat = _Chat(span)
        self._spans.append(span)
        return turn.chat

    def _usage(self, turn: _Turn, usage: Any, now: int) -> None:
        chat = turn.chat
        if chat is None or chat.has_usage:
            return
        chat.has_usage = True
        span = chat.span
        model = text(usage.model_name)
        span.name = f"chat {model}"
        span.attributes["gen_ai.request.model"] = model
        span.attributes["gen_ai.provider.name"] = text(usage.provider_name)
        span.attributes["gen_ai.usage.input_tokens"] = int(usage.input_tokens)
        span.attributes["gen_ai.usage.output_tokens"] = int(usage.output_tokens)
        if usage.cache_read_tokens:
            span.attributes["gen_ai.usage.cache_read.input_tokens"] = int(usage.cache_read_tokens)
        if usage.cache_write_tokens:
            span.attributes["gen_ai.usage.cache_creation.input_tokens"] = int(
                usage.cache_write_tokens
            )
        span.attributes["akgentic.usage.cost_usd"] = float(usage.estimated_cost_usd)
        span.attributes["akgentic.run.id"] = text(usage.run_id)
        if chat.responded:
            self._close_chat(turn, now)

    def _close_chat(self, turn: _Turn, now: int) -> None:
        chat = turn.chat
        if chat is None:
            return
        turn.chat = None
        if not chat.responded:
            chat.span.end_ns = max(chat.span.start_ns, now)
        self._finish(chat.span, complete=chat.responded or chat.span.error is not None)

    def _tool_call(self, turn: _Turn, call: Any, now: int) -> None:
        name = text(call.tool_name)
        call_id = text(call.tool_call_id)
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
            "gen_ai.conversation.id": str(self.team_id),
            "akgentic.run.id": text(call.run_id),
        }
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = text(call.arguments)
        span = SpanRecord(
            name=f"execute_tool {name}",
            trace_id=turn.span.trace_id,
            span_id=span_id(self.team_id, f"{turn.key}/tool/{call.run_id}/{call_id}"),
            parent_id=turn.span.span_id,
            start_ns=now,
            end_ns=now,
            attributes=attributes,
        )
        turn.tools[(text(call.run_id), call_id)] = span
        self._spans.append(span)

    def _tool_return(self, turn: _Turn, result: Any, now: int) -> None:
        call_id = text(result.tool_call_id)
        span = turn.tools.pop((text(result.run_id), call_id), None)
        if span is None:
            return
        span.end_ns = max(span.start_ns, now)
        if not result.success:
            span.error = "tool_error"
            span.error_message = f"the tool {span.attributes['gen_ai.tool.name']} failed"
        returned = turn.returns.pop(call_id, None)
        if self.capture_content and returned is not None:
            span.attributes["gen_ai.tool.call.result"] = returned
        self._finish(span)

    # -- closing -----------------------------------------------------------------------
    def _finish(self, span: SpanRecord, *, complete: bool = True) -> None:
        span.complete = complete
        root = self._roots.get(span.trace_id)
        if root is not None and span.end_ns > root.end_ns:
            root.end_ns = span.end_ns
        self._finished.append(span)

    def _maybe_quiet(self, trace: int) -> None:
        """Hand out the root once no member is working on its turn any more."""
        if self._busy.get(trace, 0) > 0:
            return
        root = self._roots.get(trace)
        if root is not None:
            root.complete = True
            self._finished.append(root)

    def _close_roots(self) -> None:
        for turn in self._open.values():
            root = self._roots.get(turn.span.trace_id)
            if root is not None:
                root.end_ns = max(root.end_ns, turn.span.end_ns)


def trace_log(
    team_id: UUID,
    events: Iterable[Any],
    *,
    team_name: str = "",
    capture_content: bool = False,
) -> list[SpanRecord]:
    """Every span of a team's stored log (``PersistedEvent`` s or messages, in order)."""
    builder = TraceBuilder(team_id, team_name=team_name, capture_content=capture_content)
    return builder.feed_all(events).spans()
