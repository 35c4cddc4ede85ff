"""``RemoteAgent``: a remote A2A agent as a member of a team.

A team card hires it like any member::

    - card:
        agent_class: akgentic_a2a.RemoteAgent
        description: Reviews contracts (another team, served elsewhere)
        config:
          name: "@Reviewer"
          role: Reviewer
          url: https://agents.example.com/a2a/5b0e...
          headers_env: {Authorization: REVIEWER_AUTH}   # header -> environment variable

Each message it receives becomes one task of the remote agent, sent with the
``a2a-sdk`` client; the remote's answer goes back to the sender as an
:class:`~akgentic.plugin_api.AgentMessage` (``response``). Nothing blocks the actor: the
call runs on a worker thread, which hands its outcome back to the actor.

Exactly once: before a message is sent, the call (with the context id chosen for it)
is written to the agent's state, and the remote task id as soon as the remote answers
the send; both reach the event log. A resumed team polls a task it knows by its id,
finds one it does not know yet by its context id (``ListTasks``), and only sends when
the remote has no such task: a remote side effect happens once.

Secrets: ``headers_env`` names environment variables; their values are read when a
call starts and exist only in that call's HTTP client, never in the config, the
state or the log. The client talks only to the configured URL: a card naming another
endpoint is refused, so credentials never leave for a host the operator did not name.

Questions: a remote task that ends ``input-required`` reaches the sender as a
request (a question the console lists); the sender's answer (a reply to that
question, or its next ``response``) continues the same remote task, in its context,
instead of opening a new one. A resume finds whether the answer was taken by the
remote task's status: still on the same question means it was not, and it is sent.

Budget: when the team card has a ``budget:`` block, each call is charged to the team
budget (one request and its wall time, from send to answer; A2A tasks report no token
usage) and recorded in the log, and no new call starts once the budget ran out: the
sender is answered with an ``error:`` line saying so.

Every fault (unreachable, timed out, not an A2A agent, a card that lies, a failed
task) is answered to the sender in one line starting with ``error:``; the team goes
on. The remote's text is data: it is sent by this member, which is not a human, so no
member runs it as a slash command.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from akgentic.plugin_api import (
    ActorAddress,
    AgentMessage,
    Akgent,
    BaseConfig,
    BaseState,
    BudgetCharged,
    record_charge,
    team_budget_of,
)

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import Task

__all__ = ["OpenQuestion", "PendingCall", "RemoteAgent", "RemoteConfig", "RemoteState"]

logger = logging.getLogger("akgentic_a2a")

#: Characters of a remote answer kept in the reply (longer answers are cut).
MAX_ANSWER_CHARS = 100_000


class RemoteConfig(BaseConfig):
    """Where the remote agent is and how to reach it (no secret values: see ``headers_env``)."""

    url: str = ""
    #: HTTP header -> name of the environment variable holding its value.
    headers_env: dict[str, str] = Field(default_factory=dict)
    #: Seconds one HTTP request may take.
    request_timeout: float = 30.0
    #: Seconds a remote task may take, from send to answer.
    timeout: float = 600.0
    #: Longest pause between two polls of a remote task (seconds).
    poll_interval: float = 1.0


class PendingCall(BaseModel):
    """A message being answered by the remote agent."""

    request_id: str
    sender: str
    content: str
    context_id: str
    message_id: str
    task_id: str | None = None
    started: float = 0.0
    #: The remote status message (a question) this call answers; None for a new task.
    answers: str | None = None
    #: The remote accepted the message (set in the log once the send returned).
    sent: bool = False


class OpenQuestion(BaseModel):
    """A remote task waiting for an answer from the member that sent it (input-required)."""

    #: The id of the request this member sent to ``sender`` with the question.
    question_id: str
    sender: str
    task_id: str
    context_id: str
    #: The remote status message holding the question.
    remote_message_id: str


class RemoteState(BaseState):
    """The calls in flight, kept in the log so that a resume polls them instead of resending."""

    pending: list[PendingCall] = Field(default_factory=list)
    questions: list[OpenQuestion] = Field(default_factory=list)


@dataclass(frozen=True)
class RemoteTaskStarted:
    """The remote accepted a call's message as task ``task_id`` (to the actor, not logged)."""

    request_id: str
    task_id: str


@dataclass(frozen=True)
class RemoteAsks:
    """The remote task waits for input: where it is and which status message asks."""

    task_id: str
    context_id: str
    message_id: str


@dataclass(frozen=True)
class RemoteAnswered:
    """A call ended: the text to send back, and the question when it asks one (not logged)."""

    request_id: str
    text: str
    asks: RemoteAsks | None = None


class RemoteError(Exception):
    """A call failed; the message is the one line the sender gets."""


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _task_text(task: Task) -> str:
    texts = [p.text for a in task.artifacts for p in a.parts if p.text]
    if not texts and task.status.HasField("message"):
        texts = [p.text for p in task.status.message.parts if p.text]
    return "\n".join(texts)


def _same_endpoint(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


class RemoteAgent(Akgent[RemoteConfig, RemoteState]):
    """A remote A2A agent as a team member (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stopping = threading.Event()
        self._workers: list[threading.Thread] = []

    # -- lifecycle ----------------------------------------------------------------
    def on_start(self) -> None:
        """Start with no call in flight (a resume restores them through ``init_state``)."""
        self.state = RemoteState().observer(self)

    def init_state(self, state: RemoteState) -> None:
        """Restore the calls in flight and go on with each: poll, never resend."""
        super().init_state(state)
        for call in self.state.pending:
            if not any(t.name == f"a2a-{call.request_id}" and t.is_alive() for t in self._workers):
                self._start(call, resumed=True)

    def interrupt(self) -> None:
        """The agent is being stopped: end the polls (their calls stay in the state)."""
        self._stopping.set()

    def on_stop(self) -> None:
        """Stop the workers, then report the stop."""
        self._stopping.set()
        for worker in self._workers:
            worker.join(timeout=5)
        super().on_stop()

    # -- handlers -------------------------------------------------------------------
    def receiveMsg_AgentMessage(self, message: AgentMessage, sender: ActorAddress | None) -> None:
        """Send the message to the remote agent: an answer to its open question, or a new task."""
        if sender is None or sender.name == self.config.name:
            return
        budget = team_budget_of(self)
        if budget is not None and budget.blocked is not None:
            # Like a model request, a remote call does not start once the budget ran out.
            self._reply(
                sender,
                message,
                f"error: the team budget is used up ({budget.blocked}); {self.config.name} "
                "did not call the remote agent. Ask the human to raise the budget.",
            )
            return
        call = PendingCall(
            request_id=str(message.id),
            sender=sender.name,
            content=message.content,
            context_id=str(uuid.uuid4()),
            message_id=str(uuid.uuid4()),
            started=time.time(),
        )
        question = self._question_answered_by(message, sender.name)
        if question is not None:
            self.state.questions.remove(question)
            call.context_id = question.context_id
            call.task_id = question.task_id
            call.answers = question.remote_message_id
        self.state.pending.append(call)
        self.state.notify_state_change()  # in the log before anything is sent
        self._start(call, resumed=False)

    def _question_answered_by(self, message: AgentMessage, sender: str) -> OpenQuestion | None:
        """The open question ``message`` answers: the one it replies to, else the sender's
        latest when the message is a response (an agent may not name what it answers)."""
        parent = str(message.parent_id) if message.parent_id is not None else None
        for question in self.state.questions:
            if question.question_id == parent:
                return question
        if message.type == "response":
            mine = [q for q in self.state.questions if q.sender == sender]
            return mine[-1] if mine else None
        return None

    def receiveMsg_RemoteTaskStarted(self, started: RemoteTaskStarted) -> None:
        """Keep the remote task id of a call (in the log, for a resume to poll)."""
        for call in self.state.pending:
            if call.request_id == started.request_id:
                call.task_id = started.task_id
                call.sent = True
        self.state.notify_state_change()

    def receiveMsg_RemoteAnswered(self, answered: RemoteAnswered) -> None:
        """Send the answer (or the one-line error) to who asked."""
        call = next((c for c in self.state.pending if c.request_id == answered.request_id), None)
        if call is None:
            return
        self.state.pending.remove(call)
        self._charge(call)
        recipient = self.get_team_member(call.sender)
        if recipient is None:
            logger.warning("%s: %s left the team; answer dropped", self.config.name, call.sender)
        else:
            request = AgentMessage(content=call.content)
            request.id = uuid.UUID(call.request_id)
            previous = self._current_message
            self._current_message = request  # the answer's parent is the question
            kind = "response" if answered.asks is None else "request"
            reply = AgentMessage(content=answered.text, type=kind)
            try:
                self.send(recipient, reply)
            finally:
                self._current_message = previous
            if answered.asks is not None:
                self.state.questions.append(
                    OpenQuestion(
                        question_id=str(reply.id),
                        sender=call.sender,
                        task_id=answered.asks.task_id,
                        context_id=answered.asks.context_id,
                        remote_message_id=answered.asks.message_id,
                    )
                )
        self.state.notify_state_change()

    def _reply(self, recipient: ActorAddress, message: AgentMessage, text: str) -> None:
        previous = self._current_message
        self._current_message = message  # the reply's parent is the message it answers
        try:
            self.send(recipient, AgentMessage(content=text, type="response"))
        finally:
            self._current_message = previous

    def _charge(self, call: PendingCall) -> None:
        """Charge the team budget one request and the call's wall time (when it has one)."""
        budget = team_budget_of(self)
        if budget is None:
            return
        seconds = max(time.time() - call.started, 0.0) if call.started else 0.0
        charge = BudgetCharged(
            member=self.config.name, run_id=call.request_id, requests=1, seconds=seconds
        )
        record_charge(self, budget, charge)

    # -- the call ---------------------------------------------------------------------
    def _start(self, call: PendingCall, *, resumed: bool) -> None:
        me = self.myAddress
        config = self.config.model_copy()
        stopping = self._stopping

        def run() -> None:
            asks: RemoteAsks | None = None
            try:
                text, asks = asyncio.run(_call(config, call, resumed, me, stopping))
            except RemoteError as exc:
                text = f"error: {exc}"
            except Exception as exc:  # anything a remote can make the client raise
                text = f"error: remote agent {config.url} failed: {type(exc).__name__}: {exc}"
            if stopping.is_set():
                return  # stopping: the call stays in the state, a resume goes on with it
            if text.startswith("error:"):
                text = _one_line(text)
                logger.warning("%s: %s", config.name, text)
            me.tell(
                RemoteAnswered(request_id=call.request_id, text=text[:MAX_ANSWER_CHARS], asks=asks)
            )

        worker = threading.Thread(target=run, name=f"a2a-{call.request_id}", daemon=True)
        self._workers = [w for w in self._workers if w.is_alive()]
        self._workers.append(worker)
        worker.start()


def _headers(config: RemoteConfig) -> dict[str, str]:
    headers: dict[str, str] = {}
    for header, variable in config.headers_env.items():
        value = os.environ.get(variable)
        if value is None:
            raise RemoteError(
                f"remote agent {config.url}: environment variable {variable} (header {header}) "
                "is not set"
            )
        headers[header] = value
    return headers


async def _call(
    config: RemoteConfig,
    call: PendingCall,
    resumed: bool,
    me: ActorAddress,
    stopping: threading.Event,
) -> tuple[str, RemoteAsks | None]:
    """Run one call to its end: the answer's text, and the question when the task asks one."""
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.client.errors import A2AClientTimeoutError, AgentCardResolutionError
    from a2a.types.a2a_pb2 import (
        GetTaskRequest,
        ListTasksRequest,
        Message,
        Part,
        Role,
        SendMessageRequest,
        TaskState,
    )

    settled = {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
    }
    if not config.url:
        raise RemoteError("no url configured for the remote agent")
    headers = _headers(config)
    deadline = (call.started or time.time()) + config.timeout
    timeout = httpx.Timeout(config.request_timeout)
    try:
        async with httpx.AsyncClient(headers=headers, timeout=timeout) as http:
            card = await A2ACardResolver(http, config.url).get_agent_card()
            interfaces = card.supported_interfaces
            endpoints = [i.url for i in interfaces if i.protocol_binding == "JSONRPC"]
            if not endpoints:
                raise RemoteError(f"the card of {config.url} offers no JSON-RPC endpoint")
            if not any(_same_endpoint(e, config.url) for e in endpoints):
                raise RemoteError(
                    f"the card of {config.url} names another endpoint ({endpoints[0]}); "
                    "refusing to send credentials there"
                )
            factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False, polling=True))
            client = factory.create(card)
            try:
                task_id = call.task_id
                must_send = task_id is None
                if call.answers is not None and not call.sent:
                    # An answer: sent unless a resume finds the task past the question.
                    must_send = True
                    if resumed and task_id is not None:
                        now = await client.get_task(GetTaskRequest(id=task_id))
                        must_send = _still_asks(now, call.answers)
                if task_id is None and resumed:
                    found = await client.list_tasks(ListTasksRequest(context_id=call.context_id))
                    if found.tasks:
                        task_id = found.tasks[0].id
                        must_send = False
                if must_send:
                    message = Message(
                        message_id=call.message_id,
                        context_id=call.context_id,
                        role=Role.ROLE_USER,
                        parts=[Part(text=call.content)],
                    )
                    if task_id is not None:
                        message.task_id = task_id
                    async for response in client.send_message(SendMessageRequest(message=message)):
                        if response.HasField("message"):
                            return _one_reply(response.message), None
                        if response.HasField("task"):
                            task_id = response.task.id
                            break
                    if not task_id:
                        raise RemoteError(f"remote agent {config.url} answered no task")
                    me.tell(RemoteTaskStarted(request_id=call.request_id, task_id=task_id))
                if task_id is None:
                    raise RemoteError(f"remote agent {config.url}: no task to follow")
                pause = 0.05
                while True:
                    task = await client.get_task(GetTaskRequest(id=task_id))
                    stale = call.answers is not None and _still_asks(task, call.answers)
                    if task.status.state in settled and not stale:
                        return _settled_text(config, task)
                    if time.time() > deadline:
                        raise RemoteError(
                            f"remote agent {config.url} timed out: task {task_id} still "
                            f"{TaskState.Name(task.status.state)} after {config.timeout:g} s"
                        )
                    if await asyncio.to_thread(stopping.wait, pause):
                        return "", None
                    pause = min(pause * 2, config.poll_interval)
            finally:
                await client.close()
    except AgentCardResolutionError as exc:
        raise RemoteError(
            f"remote agent {config.url} unreachable or not an A2A agent (no readable card): {exc}"
        ) from None
    except (httpx.TimeoutException, A2AClientTimeoutError) as exc:
        raise RemoteError(f"remote agent {config.url} timed out: {exc}") from None
    except httpx.HTTPError as exc:
        raise RemoteError(f"remote agent {config.url} unreachable: {exc}") from None


def _one_reply(message: Any) -> str:
    return "\n".join(p.text for p in message.parts if p.text)


def _still_asks(task: Task, question: str) -> bool:
    """Whether ``task`` still waits on the question in status message ``question``."""
    from a2a.types.a2a_pb2 import TaskState

    return (
        task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        and task.status.message.message_id == question
    )


def _settled_text(config: RemoteConfig, task: Task) -> tuple[str, RemoteAsks | None]:
    from a2a.types.a2a_pb2 import TaskState

    state = task.status.state
    if state == TaskState.TASK_STATE_COMPLETED:
        return _task_text(task), None
    if state == TaskState.TASK_STATE_INPUT_REQUIRED:
        question = "\n".join(p.text for p in task.status.message.parts if p.text)
        asks = RemoteAsks(
            task_id=task.id,
            context_id=task.context_id,
            message_id=task.status.message.message_id,
        )
        return question or _task_text(task), asks
    text = _task_text(task)
    return f"error: remote task {task.id} ended {TaskState.Name(state)}: {_one_line(text)}", None
