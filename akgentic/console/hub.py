"""``ConsoleHub``: the event subscriber between running teams and connected browsers.

The team manager gives every team it runs the hub as a shared subscriber. On the
orchestrator threads the hub keeps what the store does not (who is handling a
message right now, the slash commands announced) and, only for a team that has
clients, turns each message into a row and hands it to each client's asyncio
queue through its event loop. A client that falls behind by more than its queue
is sent a ``reset`` (the page reloads its history) instead of slowing the team.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TYPE_CHECKING, Any
from uuid import UUID

from akgentic.console.views import event_row

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message

__all__ = ["ConsoleHub", "StreamClient"]

#: Rows a client may have waiting before it is reset.
QUEUE_SIZE = 2_000


class StreamClient:
    """One connected stream: an asyncio queue fed from other threads."""

    def __init__(self, loop: asyncio.AbstractEventLoop, size: int = QUEUE_SIZE) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=size)
        self._overflowed = False

    def push(self, row: dict[str, Any]) -> None:
        """Queue ``row`` from any thread (never blocks the caller)."""
        # A closed loop means the client is going away: nothing to deliver to.
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self._put, row)

    def _put(self, row: dict[str, Any]) -> None:
        if self._overflowed:
            return
        try:
            self.queue.put_nowait(row)
        except asyncio.QueueFull:
            self._overflowed = True
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait({"kind": "reset"})

    def drained(self) -> None:
        """The reset was delivered: accept rows again."""
        self._overflowed = False


class ConsoleHub:
    """Event subscriber shared by every team of the console (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[UUID, set[StreamClient]] = {}
        #: The clients of ``_clients`` that take no event rows (status and shutdown only).
        self._quiet: set[StreamClient] = set()
        #: Team id -> the clients that take its event rows (the others' rows are not made).
        self._row_clients: dict[UUID, tuple[StreamClient, ...]] = {}
        self._in_flight: dict[UUID, dict[str, set[UUID]]] = {}
        self._commands: dict[UUID, dict[str, list[str]]] = {}
        self._restoring: set[UUID] = set()

    # -- clients ------------------------------------------------------------
    def connect(self, team_id: UUID, client: StreamClient, *, rows: bool = True) -> None:
        """Start sending ``team_id``'s rows to ``client``.

        With ``rows=False`` the client gets only what the console publishes itself
        (the team's status changes) and the shutdown's ``bye``: a stream that reads
        the team's events elsewhere (from its stored log) costs the team nothing
        per event.
        """
        with self._lock:
            self._clients.setdefault(team_id, set()).add(client)
            if not rows:
                self._quiet.add(client)
            self._refresh(team_id)

    def disconnect(self, team_id: UUID, client: StreamClient) -> None:
        """Stop sending to ``client``."""
        with self._lock:
            clients = self._clients.get(team_id)
            if clients is not None:
                clients.discard(client)
                if not clients:
                    del self._clients[team_id]
            self._quiet.discard(client)
            self._refresh(team_id)

    def _refresh(self, team_id: UUID) -> None:
        """Recompute the team's row clients (lock held)."""
        takers = tuple(c for c in self._clients.get(team_id, ()) if c not in self._quiet)
        if takers:
            self._row_clients[team_id] = takers
        else:
            self._row_clients.pop(team_id, None)

    def client_count(self, team_id: UUID | None = None) -> int:
        """Connected clients of one team, or of all teams."""
        with self._lock:
            if team_id is not None:
                return len(self._clients.get(team_id, ()))
            return sum(len(c) for c in self._clients.values())

    def close_streams(self) -> None:
        """End every connected stream (the server is shutting down)."""
        with self._lock:
            clients = [c for group in self._clients.values() for c in group]
        for client in clients:
            client.push({"kind": "bye"})

    def publish(self, team_id: UUID, row: dict[str, Any]) -> None:
        """Send a row the console made itself (a status change) to the team's clients."""
        with self._lock:
            clients = list(self._clients.get(team_id, ()))
        for client in clients:
            client.push(row)

    # -- views ----------------------------------------------------------------
    def busy(self, team_id: UUID) -> dict[str, bool]:
        """Agent id -> whether it is handling a message now."""
        with self._lock:
            flights = self._in_flight.get(team_id, {})
            return {agent: bool(ids) for agent, ids in flights.items()}

    def commands(self, team_id: UUID) -> dict[str, list[str]]:
        """Member name -> the slash commands it announced (since this console started it)."""
        with self._lock:
            return {k: list(v) for k, v in self._commands.get(team_id, {}).items()}

    # -- subscriber protocol --------------------------------------------------
    def on_message(self, msg: Message) -> None:
        """Track activity and commands; forward the row to the team's clients."""
        from akgentic.core.messages.orchestrator import (
            EventMessage,
            ProcessedMessage,
            ReceivedMessage,
            StopMessage,
        )
        from akgentic.tool.core.event import CommandsAnnouncedEvent

        team_id = msg.team_id
        if team_id is None:
            return
        sender = str(msg.sender.agent_id) if msg.sender is not None else None
        with self._lock:
            flights = self._in_flight.setdefault(team_id, {})
            if sender is not None:
                if isinstance(msg, ReceivedMessage):
                    flights.setdefault(sender, set()).add(msg.message_id)
                elif isinstance(msg, ProcessedMessage):
                    flights.setdefault(sender, set()).discard(msg.message_id)
                elif isinstance(msg, StopMessage):
                    flights.pop(sender, None)
            if isinstance(msg, EventMessage) and isinstance(msg.event, CommandsAnnouncedEvent):
                announced = self._commands.setdefault(team_id, {})
                announced[msg.event.agent.name] = [d.name for d in msg.event.commands]
            if team_id in self._restoring:
                return
            clients = self._row_clients.get(team_id, ())
        if not clients:
            return
        row = event_row(msg)
        for client in clients:
            client.push(row)

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        """While a team replays its history nothing is streamed (the page has it)."""
        with self._lock:
            if restoring:
                self._restoring.add(team_id)
            else:
                self._restoring.discard(team_id)

    def on_stop_request(self, team_id: UUID) -> None:
        """Nothing to do before the team tears down."""
        return None

    def on_stop(self, team_id: UUID) -> None:
        """The team stopped: forget its activity and tell its clients."""
        with self._lock:
            self._in_flight.pop(team_id, None)
        self.publish(team_id, {"kind": "status", "status": "stopped"})
