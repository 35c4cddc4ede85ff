"""The ``nats://`` runtime client: the cluster API over NATS, no store needed.

Requests go to the team's subject and are answered by the worker holding its
lease (a queue group, so one worker answers even while two hold it). When no
worker answers (the team is not placed), the client places it: it publishes
the team's placement message (refused by the stream when one exists already,
which is fine) and asks again, with the same idempotency key, until its
timeout. A worker confirms each request before working on it: a try with no
confirmation within ``RECEIPT_TRY`` (the worker died or froze with it) is
asked again at once; an answer ``moving`` (the worker is handing the team
over) too. Reads of the store (``list_teams``, the record of a team nobody
holds) go to the fleet subject, answered by any worker. See ``docs/cluster.md``.

A passivated team holds no worker: a request to it finds no responder and
places it, which activates it on the worker that fetches the placement
(docs/virtual-teams.md). A broken team (its activation failed) raises
:class:`~akgentic.team.errors.TeamActivationError` with the reason; only
:meth:`NatsRuntime.resume` tries it again.
"""

from __future__ import annotations

import asyncio
import queue
import time
from collections.abc import Generator, Mapping
from typing import Any
from uuid import UUID, uuid4

from akgentic.plugin_api import (
    Ack,
    ClusterError,
    PersistedEvent,
    Placement,
    SerializableBaseModel,
    TeamActivationError,
    TeamCard,
    TeamId,
    TeamNotFoundError,
    TeamStatus,
    TeamSummary,
    TeamUnavailableError,
    as_team_id,
    serialize_base_model,
)
from akgentic_nats.loop import LoopThread
from akgentic_nats.target import NatsTarget, parse_nats_url
from akgentic_nats.wire import decode, encode, encode_card, event_from_wire

__all__ = ["NatsRuntime", "connect_nats"]

#: Seconds one request waits for its worker's answer (after the receipt) before it is asked again.
REQUEST_TRY = 5.0
#: Seconds one request waits for its worker to say it received it: a request that reached
#: a worker as it died (or froze) is asked again after this, not after ``REQUEST_TRY``.
RECEIPT_TRY = 1.0
#: The same once a try went unanswered: a frozen worker still in the team's queue group
#: takes its share of the retries, and a live one confirms within milliseconds.
RECEIPT_RETRY = 0.25
#: Seconds a store read on the fleet subject waits for a worker's answer.
FLEET_TIMEOUT = 30.0
#: Seconds between two placements of a team nobody answers for (one is enough while it lands).
PLACE_AGAIN = 1.0


class NatsRuntime:
    """A :class:`~akgentic.cluster.client.RuntimeClient` for teams placed on NATS workers."""

    def __init__(self, target: NatsTarget) -> None:
        import nats

        self.url = target.url
        self.target = target
        self._loop = LoopThread("akgentic-nats-client")
        self._nc: Any = None
        try:
            self._nc = self._loop.run(
                nats.connect(
                    list(target.servers), name="akgentic-client", max_reconnect_attempts=-1
                ),
                30.0,
            )
            self._js: Any = self._nc.jetstream()
            # One subscription for every reply (like nats-py's own request multiplexer),
            # but each request may get a receipt before its answer, so a queue per request.
            self._replies: dict[str, asyncio.Queue[Any]] = {}
            self._reply_prefix = self._nc.new_inbox()
            self._loop.run(self._nc.subscribe(f"{self._reply_prefix}.*", cb=self._on_reply), 30.0)
        except BaseException:
            self.close()  # no caller gets this object to close: release the loop here
            raise

    async def _on_reply(self, msg: Any) -> None:
        waiting = self._replies.get(msg.subject.rsplit(".", 1)[-1])
        if waiting is not None:
            waiting.put_nowait(msg)

    async def _request(
        self, subject: str, body: dict[str, Any], timeout: float, receipt: float = RECEIPT_TRY
    ) -> dict[str, Any]:
        """One try of a request: the worker's answer (``NoRespondersError``/``TimeoutError``)."""
        from nats.errors import NoRespondersError
        from nats.errors import TimeoutError as NatsTimeout

        token = uuid4().hex
        replies: asyncio.Queue[Any] = asyncio.Queue()
        self._replies[token] = replies
        deadline = time.monotonic() + timeout
        try:
            await self._nc.publish(
                subject, encode({**body, "receipt": True}), reply=f"{self._reply_prefix}.{token}"
            )
            wait = min(timeout, receipt)
            while True:
                try:
                    msg = await asyncio.wait_for(replies.get(), wait)
                except TimeoutError:
                    raise NatsTimeout from None
                if msg.headers and msg.headers.get("Status") == "503":
                    raise NoRespondersError
                answer = decode(msg.data)
                if not answer.get("received"):
                    return answer
                wait = max(deadline - time.monotonic(), 0.01)
        finally:
            self._replies.pop(token, None)

    # -- placement ---------------------------------------------------------
    async def _place(
        self, team_id: UUID, body: dict[str, Any], wait: float | None
    ) -> dict[str, Any]:
        """Publish the placement message; with ``wait``, wait for the worker's answer."""
        from nats.js.errors import APIError

        inbox = self._nc.new_inbox()
        sub = await self._nc.subscribe(inbox, max_msgs=1) if wait else None
        payload = {"team_id": str(team_id), "reply": inbox if wait else None, **body}
        try:
            await self._js.publish(self.target.place_subject(team_id), encode(payload))
        except APIError as exc:
            if getattr(exc, "err_code", None) != 10077:  # placed already: fine
                raise
            if sub is not None:
                await sub.unsubscribe()
            return {"ok": True, "placed_already": True}
        if sub is None:
            return {"ok": True}
        try:
            msg = await sub.next_msg(timeout=wait)
        except Exception:
            raise TeamUnavailableError(
                f"no worker placed team {team_id} within {wait:g} s"
            ) from None
        return decode(msg.data)

    def create(
        self,
        card: TeamCard,
        *,
        team_id: TeamId | None = None,
        user_id: str = "cli",
        metadata: SerializableBaseModel | None = None,
    ) -> UUID:
        """Place a new team; returns once a worker runs it."""
        uid = uuid4() if team_id is None else as_team_id(team_id)
        body: dict[str, Any] = {"create": encode_card(card), "user_id": user_id}
        if metadata is not None:
            # With its class marker: the worker validates it against the card again.
            body["metadata"] = serialize_base_model(metadata)
        answer = self._loop.run(self._place(uid, body, 60.0))
        if not answer.get("ok"):
            raise ClusterError(f"creating team {uid} failed: {answer.get('error')}")
        return uid

    # -- store reads -------------------------------------------------------
    async def _fleet(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """One store read answered by any worker (``TeamUnavailableError`` when none does)."""
        from nats.errors import NoRespondersError
        from nats.errors import TimeoutError as NatsTimeout

        try:
            msg = await self._nc.request(self.target.fleet_subject, encode(body), timeout=timeout)
        except (NoRespondersError, NatsTimeout, TimeoutError):
            raise TeamUnavailableError(
                f"no worker of {self.url} answered within {timeout:g} s"
            ) from None
        answer = decode(msg.data)
        if not answer.get("ok"):
            raise ClusterError(f"the fleet could not read the store: {answer.get('detail')}")
        return answer

    def list_teams(
        self,
        *,
        status: TeamStatus | None = None,
        user_id: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[TeamSummary]:
        """The store's teams matching every filter, read by a worker."""
        body = {
            "op": "list",
            "status": None if status is None else str(status),
            "user_id": user_id,
            "metadata": dict(metadata or {}),
        }
        answer = self._loop.run(self._fleet(body, FLEET_TIMEOUT))
        return [TeamSummary.model_validate(team) for team in answer.get("teams", [])]

    def _record(self, team_id: UUID) -> TeamSummary:
        """The stored record of a team nobody holds (``TeamNotFoundError`` when unknown)."""
        answer = self._loop.run(
            self._fleet({"op": "record", "team_id": str(team_id)}, FLEET_TIMEOUT)
        )
        team = answer.get("team")
        if team is None:
            raise TeamNotFoundError(team_id)
        return TeamSummary.model_validate(team)

    # -- requests ----------------------------------------------------------
    async def _ask(
        self, team_id: UUID, body: dict[str, Any], timeout: float, place: bool
    ) -> dict[str, Any]:
        from nats.errors import NoRespondersError
        from nats.errors import TimeoutError as NatsTimeout

        deadline = time.monotonic() + timeout
        pause = 0.02
        receipt = RECEIPT_TRY
        placed = 0.0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TeamUnavailableError(
                    f"no worker answered for team {team_id} in {timeout:g} s"
                )
            try:
                answer = await self._request(
                    self.target.team_subject(team_id), body, min(left, REQUEST_TRY), receipt
                )
            except NoRespondersError:
                if not place:
                    return {"ok": False, "error": "not_placed"}
                # Nobody subscribes: the team is not placed, or its placement is being
                # taken (a failover, a drain). Place it, then only ask while it lands.
                if time.monotonic() - placed > PLACE_AGAIN:
                    placed = time.monotonic()
                    answer = await self._place(team_id, {}, min(max(left, 0.1), 2.0))
                    _raise_final(team_id, answer)
            except (TimeoutError, NatsTimeout):
                receipt = RECEIPT_RETRY
                continue  # waited already
            else:
                if answer.get("ok") or answer.get("error") == "not_found":
                    return answer
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.1)

    def send(
        self, team_id: TeamId, content: str, *, key: str | None = None, timeout: float = 60.0
    ) -> Ack:
        """Deliver once per key (retried with the same key until acknowledged)."""
        uid = as_team_id(team_id)
        key = key or uuid4().hex
        body = {"op": "send", "content": content, "key": key, "timeout": min(timeout, 30.0)}
        answer = self._loop.run(self._ask(uid, body, timeout, True))
        if not answer.get("ok"):
            raise TeamNotFoundError(uid)
        return Ack(
            team_id=uid,
            sequence=int(answer["sequence"]),
            worker=str(answer["worker"]),
            epoch=answer.get("epoch"),
            key=str(answer["key"]),
            duplicate=bool(answer.get("duplicate")),
        )

    def events(
        self,
        team_id: TeamId,
        *,
        from_sequence: int = 1,
        follow: bool = False,
        idle_timeout: float | None = None,
    ) -> Generator[PersistedEvent, None, None]:
        """Replay through the owning worker, then follow the team's live subject."""
        uid = as_team_id(team_id)
        live: queue.SimpleQueue[PersistedEvent] = queue.SimpleQueue()

        async def on_live(msg: Any) -> None:
            live.put(event_from_wire(uid, decode(msg.data)))

        sub = (
            self._loop.run(self._nc.subscribe(self.target.events_subject(uid), cb=on_live))
            if follow
            else None
        )
        try:
            last = from_sequence - 1
            while True:
                body = {"op": "replay", "from": last + 1}
                answer = self._loop.run(self._ask(uid, body, 60.0, True))
                for wire in answer.get("events", []):
                    event = event_from_wire(uid, wire)
                    last = event.sequence
                    yield event
                if not answer.get("more"):
                    break
            if sub is None:
                return
            while True:
                try:
                    event = live.get(timeout=idle_timeout)
                except queue.Empty:
                    return
                if event.sequence > last:
                    last = event.sequence
                    yield event
        finally:
            if sub is not None:
                self._loop.run(sub.unsubscribe(), 10.0)

    def where(self, team_id: TeamId) -> Placement:
        """The worker answering for the team now, or not placed."""
        uid = as_team_id(team_id)
        answer = self._loop.run(self._ask(uid, {"op": "where"}, 10.0, False))
        if not answer.get("ok"):
            record = self._record(uid)
            return Placement(team_id=uid, status=str(record.status))
        return Placement(
            team_id=uid, status="running", worker=answer.get("worker"), epoch=answer.get("epoch")
        )

    def stop(self, team_id: TeamId) -> None:
        """Ask the owning worker to stop the team and drop its placement."""
        uid = as_team_id(team_id)
        answer = self._loop.run(self._ask(uid, {"op": "stop"}, 60.0, False))
        if not answer.get("ok"):
            # Not placed: a passivated or broken team is recorded stopped by any worker;
            # a stopped one stays; an unknown one raises.
            done = self._loop.run(self._fleet({"op": "stop", "team_id": str(uid)}, FLEET_TIMEOUT))
            if done.get("team") is None:
                raise TeamNotFoundError(uid)

    def resume(self, team_id: TeamId) -> Placement:
        """Place the team again (a no-op when placed) and say where it runs.

        A broken team is tried again (and raises ``TeamActivationError`` when it
        still cannot come back).
        """
        uid = as_team_id(team_id)
        answer = self._loop.run(self._place(uid, {"resume": True}, 60.0))
        _raise_final(uid, answer)
        return self.where(uid)

    def delete(self, team_id: TeamId) -> None:
        """Stop the team, then have a worker delete it from the store."""
        uid = as_team_id(team_id)
        self.stop(uid)
        deadline = time.monotonic() + 30.0
        while True:
            answer = self._loop.run(self._place(uid, {"op": "delete"}, 60.0))
            if not answer.get("placed_already") or time.monotonic() > deadline:
                break
            time.sleep(0.1)  # the stopped placement is being removed
        if answer.get("error") == "not_found":
            raise TeamNotFoundError(uid)

    def close(self) -> None:
        """Close the connection."""
        try:
            if self._nc is not None:
                self._loop.run(self._nc.close(), 10.0)
        finally:
            self._loop.stop()


def _raise_final(team_id: UUID, answer: dict[str, Any]) -> None:
    """Raise for a placement answer no retry can change: unknown or broken."""
    error = answer.get("error")
    if error == "not_found":
        raise TeamNotFoundError(team_id) from None
    if error == "broken":
        raise TeamActivationError(team_id, str(answer.get("detail") or "its activation failed"))


def connect_nats(url: str, store: str | None = None) -> NatsRuntime:
    """A client of the NATS cluster ``url`` names (``store`` is the workers' business)."""
    return NatsRuntime(parse_nats_url(url))
