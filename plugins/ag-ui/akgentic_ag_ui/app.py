"""The AG-UI routes ``akgentic serve`` mounts at ``/ag-ui``.

``POST /ag-ui/{team_id}`` takes a ``RunAgentInput`` (validated by ``ag_ui``'s own
model), hands its input to the team (the last user message, or the answers of its
``resume`` entries to the questions an earlier run ended on) and answers with the
run's AG-UI event stream, Server-Sent Events encoded by ``ag_ui``'s
``EventEncoder``. The events are read from the team's stored log
(:mod:`akgentic_ag_ui.projection`) as it grows: every event's SSE ``id`` is its
position in that log, and a request carrying ``Last-Event-ID`` gets the same run's
events after that position, without sending anything again.

``GET /ag-ui/`` describes the endpoint. Errors before the stream starts are JSON
``{"detail": ...}`` with a status (404 unknown team, 409 impossible in the team's
state, 413 too large, 422 invalid input, 400 a bad ``Last-Event-ID``); a failure
once the stream runs is a ``RUN_ERROR`` event. Each refusal logs one line.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from ag_ui.core import PROTOCOL_VERSION, BaseEvent, RunAgentInput, RunErrorEvent
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from akgentic.plugin_api import StreamClient, TeamNotFoundError
from akgentic_ag_ui.projection import (
    LogIndex,
    Position,
    RunKey,
    RunProjection,
    run_message_id,
)

if TYPE_CHECKING:
    from akgentic.plugin_api import ConsoleService, PersistedEvent

__all__ = ["MAX_BODY_BYTES", "MAX_TEXT_CHARS", "build_app"]

logger = logging.getLogger(__name__)

#: Largest request body accepted (bytes).
MAX_BODY_BYTES = 1_000_000
#: Longest message or answer sent to a team (characters), as the console's.
MAX_TEXT_CHARS = 100_000
#: Seconds a run waits for its input to reach the log before it reports an error.
START_TIMEOUT = 30.0
#: Seconds between checks of the log when nothing wakes the stream up.
RECHECK = 1.0
#: Seconds between keep-alive comments on a quiet stream.
KEEP_ALIVE = 15.0


class RefusedError(Exception):
    """A request refused before the stream starts: an HTTP status and why."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _refusal(request: Request, status: int, detail: str) -> JSONResponse:
    line = " ".join(detail.split())
    logger.warning("ag-ui %s %s refused (%d): %s", request.method, request.url.path, status, line)
    return JSONResponse({"detail": detail}, status_code=status)


async def _body(request: Request) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise RefusedError(413, f"the body has {declared} bytes; the limit is {MAX_BODY_BYTES}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise RefusedError(413, f"the body is over the limit of {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _checked_text(text: str, what: str) -> str:
    if not text.strip():
        raise RefusedError(422, f"{what} is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise RefusedError(413, f"{what} has {len(text)} characters; the limit is {MAX_TEXT_CHARS}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RefusedError(422, f"{what} is not valid Unicode (a lone surrogate)") from None
    return text


def _message_text(message: Any) -> str:
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if getattr(part, "type", None) != "text":
                raise RefusedError(422, "only text parts can be sent to a team")
            texts.append(str(getattr(part, "text", "")))
        return "\n".join(texts)
    raise RefusedError(422, "the last message has no text content")


def _answer_text(payload: Any, run_input: RunAgentInput) -> str:
    if isinstance(payload, str):
        return payload
    if isinstance(payload, dict) and isinstance(payload.get("text"), str):
        return str(payload["text"])
    if payload is None and run_input.messages and run_input.messages[-1].role == "user":
        return _message_text(run_input.messages[-1])
    raise RefusedError(422, "a resume entry's payload must be the answer's text (or {'text': ...})")


def _input(run_input: RunAgentInput) -> tuple[str | None, dict[str, str]]:
    """What the run hands to the team: a message to send, or answers by question id."""
    resolved = [entry for entry in run_input.resume or [] if entry.status == "resolved"]
    if resolved:
        answers = {
            entry.interrupt_id: _checked_text(_answer_text(entry.payload, run_input), "an answer")
            for entry in resolved
        }
        return None, answers
    if not run_input.messages:
        raise RefusedError(422, "the input has no message to send to the team")
    last = run_input.messages[-1]
    if last.role != "user":
        raise RefusedError(422, f"the last message must be the user's, not a {last.role!r} message")
    return _checked_text(_message_text(last), "the message"), {}


class _Sent:
    """The runs this process already handed to a team (a repeated request sends nothing)."""

    def __init__(self, size: int = 4_096) -> None:
        self._lock = threading.Lock()
        self._keys: dict[tuple[UUID, RunKey], None] = {}
        self._size = size

    def claim(self, team_id: UUID, key: RunKey) -> bool:
        with self._lock:
            if (team_id, key) in self._keys:
                return False
            self._keys[(team_id, key)] = None
            while len(self._keys) > self._size:
                del self._keys[next(iter(self._keys))]
            return True

    def release(self, team_id: UUID, key: RunKey) -> None:
        with self._lock:
            self._keys.pop((team_id, key), None)


def _send(service: ConsoleService, team_id: UUID, text: str, message_id: UUID) -> None:
    """Deliver ``text`` as the console does (``@Member``, ``/command`` or the supervisors)."""
    try:
        runtime = service.manager.live_runtime(team_id)  # a passivated team is woken
    except (ValueError, TimeoutError) as exc:  # broken, owned elsewhere, too slow
        raise RefusedError(409, str(exc)) from None
    if runtime is None:
        raise RefusedError(409, f"team {team_id} does not run in this console (resume it first)")
    message_type = runtime.team.default_message_type
    if message_type is None:
        raise RefusedError(409, f"team {team_id} declares no message type to send text as")

    def wrap(content: str) -> Any:
        return message_type(content=content, id=message_id)

    line = text.strip()
    if line.startswith("@"):
        name, _, rest = line.partition(" ")
        if not rest.strip():
            raise RefusedError(422, f"nothing to send to {name}")
        try:
            runtime.send_to(name, wrap(rest.strip()))
        except ValueError as exc:
            raise RefusedError(422, str(exc)) from None
    elif line.startswith("/"):
        lead = next(iter(runtime.supervisor_addrs), None)
        if lead is None:
            raise RefusedError(409, "this team has no member to run commands")
        runtime.send_to(lead, wrap(line))
    else:
        runtime.send(wrap(line))


def _answer(service: ConsoleService, team_id: UUID, answers: dict[str, str]) -> None:
    if service.manager.get_runtime(team_id) is None:
        raise RefusedError(409, f"team {team_id} does not run in this console (resume it first)")
    open_ids = {question["id"] for question in service.questions(team_id)}
    for question_id in answers:
        if question_id not in open_ids:
            raise RefusedError(409, f"no open question {question_id!r} in team {team_id}")
    for question_id, text in answers.items():
        try:
            service.answer(team_id, question_id, text)
        except (LookupError, ValueError, RuntimeError) as exc:
            raise RefusedError(409, str(exc)) from None


class _Logs:
    """The stored logs the streams read, with their indexes: one per team, shared.

    A read waits on the event loop, holding no thread, until what the team
    recorded so far is stored (``PersistenceSubscriber.durable``: the writer's
    wake-up after the commit that covers it, not an empty queue), then takes the
    console's decoded log as it is in memory when that is current, or reads only
    the events stored since on a thread. The index is updated on the event loop.
    """

    def __init__(self, service: ConsoleService, size: int = 64) -> None:
        self.service = service
        self._indexes: OrderedDict[UUID, LogIndex] = OrderedDict()
        self._size = size

    def index(self, team_id: UUID) -> LogIndex:
        index = self._indexes.get(team_id)
        if index is None:
            index = self._indexes[team_id] = LogIndex()
            while len(self._indexes) > self._size:
                self._indexes.popitem(last=False)
        else:
            self._indexes.move_to_end(team_id)
        return index

    async def read(
        self, team_id: UUID, *, wait: bool = True
    ) -> tuple[list[PersistedEvent], LogIndex]:
        """The team's stored log and its index: all it recorded before the call, or
        without ``wait`` what is stored already."""
        service = self.service
        persistence = service.manager.get_persistence(team_id)
        if persistence is None:  # not running here: its log does not grow
            events = await run_in_threadpool(service.stored_events, team_id)
        else:
            if wait:
                await persistence.durable()
            top = persistence.durable_sequence
            cached = service.cached_events(team_id, top)
            if cached is not None:
                events = cached
            else:
                events = await run_in_threadpool(service.stored_events_upto, team_id, top)
        index = self.index(team_id)
        return index.update(events), index


async def _prepare(
    service: ConsoleService,
    logs: _Logs,
    sent: _Sent,
    team_id: UUID,
    run_input: RunAgentInput,
    position: Position | None,
) -> RunKey:
    """The run's key, after handing its input to the team unless the log already has it."""
    text, answers = _input(run_input)
    key = RunKey(
        thread_id=run_input.thread_id,
        run_id=run_input.run_id,
        message_id=(
            str(run_message_id(team_id, run_input.thread_id, run_input.run_id))
            if text is not None
            else None
        ),
        answers=frozenset(answers),
    )
    # A new run's anchor can only be stored already (sent by an earlier process)
    # or sent by this one (``sent`` knows it): what is stored now is enough. A
    # reconnection waits for what is on its way to the store.
    try:
        _events, index = await logs.read(team_id, wait=position is not None)
    except TeamNotFoundError:
        raise RefusedError(404, f"no team {team_id}") from None
    if index.start(key) is not None:
        return key  # the run is in the log: a reconnection, nothing to send
    if position is not None:
        run = f"{run_input.run_id!r} of thread {run_input.thread_id!r}"
        raise RefusedError(409, f"no run {run} in the team's log")
    if not sent.claim(team_id, key):
        return key  # the same run, requested again before its input was stored
    try:
        if text is not None:
            # On the loop, as the A2A routes send: a tell to the team's entry point.
            _send(service, team_id, text, UUID(str(key.message_id)))
        else:
            await run_in_threadpool(_answer, service, team_id, answers)
    except BaseException:
        sent.release(team_id, key)
        raise
    return key


def _index_of(events: Sequence[PersistedEvent], sequence: int) -> int:
    low, high = 0, len(events)
    while low < high:
        middle = (low + high) // 2
        if events[middle].sequence < sequence:
            low = middle + 1
        else:
            high = middle
    return low


class _RunStream:
    """The SSE body of one run: the projection of the log, fed as the log grows."""

    def __init__(
        self,
        service: ConsoleService,
        logs: _Logs,
        team_id: UUID,
        key: RunKey,
        after: Position | None,
    ) -> None:
        self.service = service
        self.logs = logs
        self.team_id = team_id
        self.key = key
        self.after = after
        self.encoder = EventEncoder()
        self.projection: RunProjection | None = None
        self.next_index = 0

    def _encode(self, placed: Sequence[tuple[Position, BaseEvent]]) -> str:
        chunks = [
            f"id: {position}\n{self.encoder.encode(event)}"
            for position, event in placed
            if self.after is None or position > self.after
        ]
        return "".join(chunks)

    def _error(self, code: str, message: str) -> str:
        logger.warning("ag-ui team %s run %r: %s", self.team_id, self.key.run_id, message)
        return self.encoder.encode(RunErrorEvent(message=message, code=code))

    def advance(self, events: Sequence[PersistedEvent], index: LogIndex) -> str:
        """The encoded events the log now gives, from where the stream stopped."""
        out: list[tuple[Position, BaseEvent]] = []
        if self.projection is None:
            start = index.start(self.key)
            if start is None:
                return ""
            at = _index_of(events, start)
            self.projection = RunProjection(self.key, index=index)
            out += self.projection.begin(events, at)
            self.next_index = at + 1
        projection = self.projection
        while self.next_index < len(events) and not projection.finished:
            out += projection.feed(events, self.next_index)
            self.next_index += 1
        return self._encode(out)

    @property
    def finished(self) -> bool:
        return self.projection is not None and self.projection.finished

    async def body(self) -> AsyncIterator[str]:
        client = StreamClient(asyncio.get_running_loop())
        self.service.hub.connect(self.team_id, client)
        deadline = time.monotonic() + START_TIMEOUT
        quiet_since = time.monotonic()
        try:
            while True:
                try:
                    events, index = await self.logs.read(self.team_id)
                except Exception as exc:  # reported to the client as RUN_ERROR
                    yield self._error("log_unreadable", f"the team's log cannot be read: {exc}")
                    return
                chunk = self.advance(events, index)
                if chunk:
                    quiet_since = time.monotonic()
                    yield chunk
                if self.finished:
                    return
                if self.service.manager.get_runtime(self.team_id) is None:
                    # Stopped: its log is complete now; what it does not finish never will.
                    events, index = await self.logs.read(self.team_id)
                    chunk = self.advance(events, index)
                    if chunk:
                        yield chunk
                    if not self.finished:
                        yield self._error("team_stopped", "the team stopped before the run ended")
                    return
                if self.projection is None and time.monotonic() > deadline:
                    yield self._error("not_recorded", "the run's input never reached the log")
                    return
                if not await self._wait(client):
                    return  # the server is shutting down: the client reconnects later
                if time.monotonic() - quiet_since > KEEP_ALIVE:
                    quiet_since = time.monotonic()
                    yield ": keep-alive\n\n"
        finally:
            self.service.hub.disconnect(self.team_id, client)

    @staticmethod
    async def _wait(client: StreamClient) -> bool:
        """Wait until the team records something (or a recheck is due); False on shutdown."""
        try:
            row = await asyncio.wait_for(client.queue.get(), RECHECK)
        except TimeoutError:
            return True
        rows = [row]
        while not client.queue.empty():
            rows.append(client.queue.get_nowait())
        for row in rows:
            if row.get("kind") == "reset":
                client.drained()
            if row.get("kind") == "bye":
                return False
        return True


def build_app(service: ConsoleService) -> Starlette:
    """The ASGI application of the routes (``akgentic_web_routes`` calls it once)."""
    sent = _Sent()
    logs = _Logs(service)

    async def describe(request: Request) -> Response:
        return JSONResponse(
            {
                "protocol": "AG-UI",
                "version": PROTOCOL_VERSION,
                "run": "POST /ag-ui/{team_id} with a RunAgentInput; answers text/event-stream",
                "reconnect": "repeat the request with Last-Event-ID",
            }
        )

    async def run(request: Request) -> Response:
        raw_id = str(request.path_params["team_id"])
        try:
            team_id = UUID(raw_id)
        except ValueError:
            return _refusal(request, 404, f"no team {raw_id[:40]!r} (a team id is a UUID)")
        try:
            body = await _body(request)
            try:
                run_input = RunAgentInput.model_validate_json(body)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in error.get('loc', ())) or 'body'}: {error['msg']}"
                    for error in exc.errors()
                )
                raise RefusedError(422, f"not a RunAgentInput: {problems}") from None
            last_id = request.headers.get("last-event-id")
            try:
                after = Position.parse(last_id) if last_id else None
            except ValueError as exc:
                raise RefusedError(400, f"Last-Event-ID: {exc}") from None
            key = await _prepare(service, logs, sent, team_id, run_input, after)
        except RefusedError as refused:
            return _refusal(request, refused.status, refused.detail)
        except ClientDisconnect:
            return Response(status_code=499)
        stream = _RunStream(service, logs, team_id, key, after)
        return StreamingResponse(
            stream.body(),
            media_type=stream.encoder.get_content_type(),
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    return Starlette(
        routes=[
            Route("/", describe, methods=["GET"]),
            Route("/{team_id}", run, methods=["POST"]),
        ]
    )
