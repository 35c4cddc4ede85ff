"""``akgentic worker``: a process that holds teams placed on it through NATS JetStream.

Placement: every placed team has one message in the work-queue stream; the
worker that fetched it and has not acknowledged it holds the team's *lease*,
renewed by ``in_progress()`` every quarter lease. A worker fetches while it
holds fewer teams than its fair share (all placed teams over the live workers,
at most ``capacity``). A lease not renewed in time (the worker died or froze)
is redelivered to another worker, which *adopts* the team: a compare-and-set
on the team's epoch in the event store (``TeamManager.adopt``), then a resume
from the log. From then on the store refuses every write of the old owner.

Fencing on this side: before touching a team (a request, a reply, a renewal)
the worker checks that its own lease deadline has not passed; once it has
(the process was paused), it abandons every team without writing and holds
nothing until it fetches leases again. A team whose claim another worker took
(:class:`~akgentic.team.errors.TeamClaimLostError`) is abandoned likewise.

SIGTERM drains: the worker leaves the registry, unsubscribes and answers
"moving" to every request it still holds (in flight ones included), naks its
leases and says so on the wake subject, so the others take the teams at once
(their claims fence anything this process still writes), then stops its teams
without recording anything, and exits.

Each request asking for it gets a receipt before the work starts, so a client
can tell a request lost with its worker from one that takes long.

Virtual teams: a team idle for ``passivate_after`` (its card's, else the
worker's) is passivated here and its placement acknowledged, so it leaves the
work queue and holds no worker. The worker first stops routing to it
(unsubscribes; requests already received are answered "moving") and waits
for the requests in flight. The next request finds no responder, places the
team again, and whichever worker fetches the placement *activates* it from its
log (``TeamManager.adopt``: a passivated team that cannot come back is
recorded ``broken`` and its placement dropped; a message never retries a
broken team, an explicit ``resume`` does).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from akgentic.plugin_api import (
    ActorSystem,
    TeamActivationError,
    TeamCardError,
    TeamClaimLostError,
    TeamError,
    TeamHost,
    TeamManager,
    TeamNotFoundError,
    TeamStateError,
    TeamStatus,
    TeamSummary,
    TeamUnavailableError,
)
from akgentic_nats.target import NatsTarget
from akgentic_nats.wire import decode, decode_card, encode, event_to_wire

__all__ = ["Worker"]

logger = logging.getLogger(__name__)

#: Events per reply page of a replay.
REPLAY_PAGE = 200
#: Placements asked for at once (as many as the adopting threads).
FETCH_BATCH = 32
#: Seconds one fetch of placements waits; the server keeps the pull request that long.
FETCH_WAIT = 0.5
#: Idle seconds after which a worker passivates a team whose card does not say.
DEFAULT_PASSIVATE_AFTER = 300.0
#: Longest a passivation waits for the requests in flight to a team before giving up.
SETTLE_WAIT = 40.0


@dataclass
class _Lease:
    """One team held here: its placement message and its request subscription."""

    team_id: UUID
    msg: Any
    subscription: Any = None
    ready: bool = False
    since: float = field(default_factory=time.monotonic)
    #: Requests to the team being handled now (a passivation waits for none).
    inflight: int = 0
    settled: asyncio.Event = field(default_factory=asyncio.Event)


class Worker:
    """Holds teams for a NATS cluster (see the module docstring)."""

    def __init__(
        self,
        target: NatsTarget,
        store_url: str | None,
        *,
        capacity: int = 100,
        name: str | None = None,
        threads: int = 32,
        passivate_after: float | None = DEFAULT_PASSIVATE_AFTER,
    ) -> None:
        from akgentic.plugin_api import open_event_store

        self.target = target
        self.capacity = capacity
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.store = open_event_store(store_url)
        self.system = ActorSystem()
        self.manager = TeamManager(
            self.system,
            self.store,
            stop_signal=None,
            on_claim_lost=self._claim_lost,
            instance_id=None,
            passivate_after=passivate_after,
            # An idle team is let go by placement first (see _passivate), never by the
            # manager alone: a request to it would wake it here without a lease.
            on_idle=self._on_idle,
        )
        self.host = TeamHost(self.manager)
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="akgentic-worker")
        # Requests wait on their team (a send waits until durable): on a pool of their own,
        # a burst of them cannot hold up placements, which bring teams back.
        self.serving = ThreadPoolExecutor(threads, thread_name_prefix="akgentic-serve")
        self.leases: dict[UUID, _Lease] = {}
        self._unlisten: dict[UUID, Any] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.deadline = 0.0
        self.draining = False
        self.stopped = threading.Event()
        self.acks = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._nc: Any = None
        self._js: Any = None
        self._kv: Any = None
        self._sub: Any = None
        self._wake: asyncio.Event | None = None
        # Each worker's last heartbeat (wall clock), kept current by a watch on the bucket.
        self._registry: dict[str, float] = {}
        self._registry_watch: asyncio.Task[None] | None = None
        self._leaving = asyncio.Event()
        self._fleet_sub: Any = None

    # -- entry point -------------------------------------------------------
    def run(self) -> None:
        """Serve until SIGTERM/SIGINT (drain) and return."""
        asyncio.run(self._main())

    async def _main(self) -> None:
        import nats

        loop = asyncio.get_running_loop()
        self._loop = loop
        drain = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, drain.set)
        self._nc = await nats.connect(
            list(self.target.servers),
            name=f"akgentic-worker-{self.name}",
            max_reconnect_attempts=-1,
        )
        self._js = self._nc.jetstream()
        self._kv = await self._js.key_value(self.target.bucket)
        self._sub = await self._js.pull_subscribe_bind(self.target.consumer, self.target.stream)
        wake = self._wake = asyncio.Event()

        async def woken(msg: Any) -> None:
            wake.set()

        # A draining worker says when it handed its leases back, so the others look
        # for work at once instead of on their next idle tick.
        await self._nc.subscribe(self.target.wake_subject, cb=woken)
        self._fleet_sub = await self._nc.subscribe(
            self.target.fleet_subject, queue="fleet", cb=self._on_fleet
        )
        self.deadline = time.monotonic() + self.target.lease
        self._registry_watch = asyncio.create_task(self._watch_registry())
        await self._publish_status()
        tasks = [
            asyncio.create_task(self._placement_loop()),
            asyncio.create_task(self._heartbeat_loop()),
        ]
        logger.info("worker %s serving %s", self.name, self.target.url)
        print(f"worker {self.name} ready", flush=True)
        await drain.wait()
        self.draining = True
        self._leaving.set()
        await self._drain()
        for task in [*tasks, self._registry_watch]:
            task.cancel()
        with contextlib.suppress(Exception):
            await self._nc.close()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.serving.shutdown(wait=False, cancel_futures=True)
        self.host.close()
        self.system.shutdown()
        self.store.close()
        self.stopped.set()

    # -- the lease ---------------------------------------------------------
    def lease_valid(self) -> bool:
        """Whether this worker's leases are still its own (deadline not passed)."""
        return time.monotonic() < self.deadline

    async def _heartbeat_loop(self) -> None:
        period = self.target.lease / 4
        while not self.draining:
            await asyncio.sleep(period)
            if not self.lease_valid():
                await self._lapse()
            started = time.monotonic()
            for lease in list(self.leases.values()):
                try:
                    await lease.msg.in_progress()
                except Exception as exc:
                    logger.warning("renewing the lease of %s failed: %s", lease.team_id, exc)
            # The server renews from when it receives the renewal, which is after ``started``.
            self.deadline = started + self.target.lease * 0.9
            with contextlib.suppress(Exception):
                await self._publish_status()

    async def _lapse(self) -> None:
        """The deadline passed (this process was frozen): let go of everything, writing nothing."""
        held = list(self.leases.values())
        self.leases.clear()
        logger.error("worker %s: lease deadline passed; abandoning %d teams", self.name, len(held))
        for lease in held:
            if lease.subscription is not None:
                with contextlib.suppress(Exception):
                    await lease.subscription.unsubscribe()
        loop = asyncio.get_running_loop()
        await asyncio.gather(
            *(loop.run_in_executor(self.pool, self._abandon, lease.team_id) for lease in held)
        )

    def _listen(self, team_id: UUID) -> None:
        """Publish the team's durable events on its live subject."""
        subject = self.target.events_subject(team_id)
        loop = self._loop

        def publish(event: Any) -> None:
            if loop is not None and self.lease_valid():
                data = encode(event_to_wire(event))
                asyncio.run_coroutine_threadsafe(self._nc.publish(subject, data), loop)

        old = self._unlisten.pop(team_id, None)
        if old is not None:
            old()
        self._unlisten[team_id] = self.host.listen(team_id, publish)

    def _unlisten_team(self, team_id: UUID) -> None:
        stop = self._unlisten.pop(team_id, None)
        if stop is not None:
            stop()

    def _abandon(self, team_id: UUID) -> None:
        self._unlisten_team(team_id)
        try:
            self.manager.abandon(team_id)
        except Exception:
            logger.exception("abandoning team %s failed", team_id)
        self.host.forget(team_id)

    def _claim_lost(self, team_id: UUID, error: TeamClaimLostError) -> None:
        """Another owner took the team: drop it here (its lease is that owner's now)."""
        loop = self._loop
        if loop is None:
            return
        asyncio.run_coroutine_threadsafe(self._drop(team_id), loop)

    async def _drop(self, team_id: UUID) -> None:
        lease = self.leases.pop(team_id, None)
        if lease is not None and lease.subscription is not None:
            with contextlib.suppress(Exception):
                await lease.subscription.unsubscribe()
        await asyncio.get_running_loop().run_in_executor(self.pool, self._abandon, team_id)

    # -- registry ----------------------------------------------------------
    async def _publish_status(self) -> None:
        if self.draining:
            # Gone from the registry for good: a heartbeat after the drain's delete
            # would count this worker live for a lease more, and the others would
            # hold back from taking its teams (their fair share counted it).
            return
        record = {
            "name": self.name,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "teams": len(self.leases),
            "capacity": self.capacity,
            "acks": self.acks,
            "at": time.time(),
        }
        await self._kv.put(self.name, encode(record))

    async def _watch_registry(self) -> None:
        """Keep ``_registry`` current from the bucket's updates (runs until cancelled).

        Listing the bucket for every fair-share check meant a new consumer and
        several round trips on each turn of the placement loop.
        """
        watcher = await self._kv.watchall()
        try:
            async for entry in watcher:
                if entry is None:
                    continue  # the marker after the values the bucket held already
                if entry.operation in ("DEL", "PURGE"):
                    self._registry.pop(entry.key, None)
                    continue
                try:
                    self._registry[entry.key] = float(decode(entry.value or b"").get("at", 0))
                except (ValueError, TypeError, AttributeError):
                    self._registry.pop(entry.key, None)
        finally:
            with contextlib.suppress(Exception):
                await watcher.stop()

    async def _live_workers(self) -> int:
        watch = self._registry_watch
        if watch is not None and watch.done():
            # The watch ended (an error): start it again; list the bucket meanwhile.
            self._registry_watch = asyncio.create_task(self._watch_registry())
            return await self._list_live_workers()
        now = time.time()
        live = sum(1 for at in self._registry.values() if now - at <= self.target.lease)
        return max(live, 1)

    async def _list_live_workers(self) -> int:
        try:
            keys = await self._kv.keys()
        except Exception:
            return 1
        now, live = time.time(), 0
        for key in keys:
            try:
                entry = await self._kv.get(key)
            except Exception:
                continue
            record = decode(entry.value or b"")
            if now - float(record.get("at", 0)) <= self.target.lease:
                live += 1
        return max(live, 1)

    async def _fair_share(self) -> int:
        info = await self._js.consumer_info(self.target.stream, self.target.consumer)
        total = int(info.num_pending or 0) + int(info.num_ack_pending or 0)
        workers = await self._live_workers()
        return min(self.capacity, math.ceil(total / workers))

    # -- placement ---------------------------------------------------------
    async def _placement_loop(self) -> None:
        from nats.errors import TimeoutError as NatsTimeout

        while not self.draining:
            try:
                want = await self._fair_share() - len(self.leases)
            except Exception as exc:
                logger.debug("fair share: %s", exc)
                await asyncio.sleep(0.5)
                continue
            if self._leaving.is_set():
                break  # a pull asked now would take leases this worker hands back
            if want <= 0 or not self.lease_valid():
                await self._idle(0.25)
                continue
            asked = time.monotonic()
            try:
                msgs = await self._sub.fetch(min(want, FETCH_BATCH), timeout=FETCH_WAIT)
            except (TimeoutError, NatsTimeout):
                continue
            except Exception as exc:
                logger.debug("fetch: %s", exc)
                await asyncio.sleep(0.5)
                continue
            if time.monotonic() - asked > self.target.lease / 2 or not self.lease_valid():
                # Delivered while this process was frozen: those deliveries may have
                # lapsed and gone elsewhere already. Leave them; they come back.
                continue
            for msg in msgs:
                task = asyncio.create_task(self._place(msg))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _idle(self, seconds: float) -> None:
        """Wait ``seconds``, or less when another worker hands leases back."""
        wake = self._wake
        if wake is None:
            await asyncio.sleep(seconds)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), seconds)
        wake.clear()

    async def _place(self, msg: Any) -> None:
        body = decode(msg.data)
        try:
            team_id = UUID(str(body["team_id"]))
        except (KeyError, ValueError):
            await msg.term()
            return
        if self.draining or team_id in self.leases:
            await msg.nak()
            return
        lease = _Lease(team_id, msg)
        self.leases[team_id] = lease
        loop = asyncio.get_running_loop()
        try:
            outcome = await loop.run_in_executor(self.pool, self._take, team_id, body)
        except TeamActivationError as exc:
            # Recorded broken (now, or by an earlier activation): final until a resume.
            self.leases.pop(team_id, None)
            logger.warning("team %s is broken: %s", team_id, exc.reason)
            await self._reply(body, {"ok": False, "error": "broken", "detail": exc.reason})
            await msg.term()
            return
        except Exception as exc:
            self.leases.pop(team_id, None)
            logger.warning("placing team %s failed: %s", team_id, exc)
            await self._reply(body, {"ok": False, "error": str(exc)})
            if isinstance(exc, TeamCardError):
                # The card itself is refused (invalid, or host processes not allowed):
                # every worker would refuse it again, so it is not redelivered.
                await msg.term()
            else:
                await msg.nak(delay=1.0)
            return
        if outcome != "running":
            self.leases.pop(team_id, None)
            await msg.term()
            await self._reply(body, {"ok": outcome == "deleted", "error": outcome})
            return
        if not self.lease_valid() or self.leases.get(team_id) is not lease:
            return
        lease.subscription = await self._nc.subscribe(
            self.target.team_subject(team_id), queue="owner", cb=self._on_request
        )
        lease.ready = True
        await self._reply(
            body,
            {
                "ok": True,
                "worker": self.name,
                "epoch": self.host.epoch(team_id),
                "status": "running",
            },
        )

    def _take(self, team_id: UUID, body: dict[str, Any]) -> str:
        """Create, adopt or delete the team a placement names (worker thread)."""
        # A placement by a message wakes a passivated team but never retries a broken
        # one; an explicit resume does (docs/virtual-teams.md).
        activation = not body.get("resume")
        if body.get("op") != "delete" and not body.get("create"):
            return self._take_over(team_id, activation)
        record = self.store.load_team(team_id)
        if body.get("op") == "delete":
            if record is None:
                return "not_found"
            if record.status != TeamStatus.RUNNING:
                self.manager.delete_team(team_id)
            else:
                self.host.adopt(team_id)
                self.manager.stop_team(team_id)
                self.manager.delete_team(team_id)
            return "deleted"
        if record is None:
            card = body.get("create")
            if not card:
                return "not_found"
            self._listen(team_id)
            try:
                self.host.create(
                    decode_card(card),
                    team_id,
                    str(body.get("user_id") or "cli"),
                    body.get("metadata"),
                )
            except BaseException:
                self._unlisten_team(team_id)  # no team: nothing to publish for
                raise
            # The lease stands for liveness here; the epoch keeps fencing. Dropping the
            # store's own hold frees its session (one per team in PostgreSQL).
            self.store.release_team(team_id)
            return "running"
        if record.status == TeamStatus.DELETED:
            return "not_found"
        return self._take_over(team_id, activation)

    def _take_over(self, team_id: UUID, activation: bool = True) -> str:
        """Adopt a stored team (the manager reads its record: not read here first)."""
        if self.manager.get_runtime(team_id) is not None:
            return "running"  # its lease came back here (a nak raced a fetch)
        self._listen(team_id)
        try:
            try:
                self.host.adopt(team_id, activation=activation)
            except TeamClaimLostError:
                # A claim raced ours: read the epoch again, once.
                self.host.adopt(team_id, activation=activation)
        except TeamNotFoundError:
            self._unlisten_team(team_id)
            return "not_found"
        except TeamStateError as exc:
            self._unlisten_team(team_id)
            if exc.status == TeamStatus.DELETED:
                return "not_found"
            raise  # a broken team (TeamActivationError) included: _place answers it
        except BaseException:
            self._unlisten_team(team_id)
            raise
        return "running"

    async def _reply(self, body: dict[str, Any], answer: dict[str, Any]) -> None:
        inbox = body.get("reply")
        if inbox and self.lease_valid():
            with contextlib.suppress(Exception):
                await self._nc.publish(str(inbox), encode(answer))

    # -- requests ----------------------------------------------------------
    async def _on_request(self, msg: Any) -> None:
        # Each request in a task of its own: requests to one team run concurrently, and a
        # stop may unsubscribe the subscription whose callback this is.
        lease = self.leases.get(_team_of(msg))
        if lease is not None:
            lease.inflight += 1  # counted now, before the task runs: see _passivate
        task = asyncio.create_task(self._handle_counted(msg, lease))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle_counted(self, msg: Any, lease: _Lease | None) -> None:
        try:
            await self._handle(msg)
        finally:
            if lease is not None:
                lease.inflight -= 1
                if lease.inflight == 0:
                    lease.settled.set()

    async def _handle(self, msg: Any) -> None:
        if self.draining:
            # Leaving: nothing here is acted on any more; the client asks again now.
            await self._moving(msg)
            return
        if not self.lease_valid():
            return  # frozen past the deadline: say nothing, act on nothing
        body = decode(msg.data)
        team_id = _team_of(msg)
        lease = self.leases.get(team_id)
        if lease is None or not lease.ready:
            # Said at once so the client asks again now instead of after its timeout.
            await self._moving(msg)
            return
        op = body.get("op")
        if body.get("receipt") and msg.reply:
            # Before the work: a client that hears nothing soon knows the request was lost.
            with contextlib.suppress(Exception):
                await msg.respond(encode({"received": True}))
        loop = asyncio.get_running_loop()
        try:
            if op == "stop":
                await self._stop(lease)
                answer: dict[str, Any] = {"ok": True}
            else:
                work = loop.run_in_executor(self.serving, self._serve, team_id, op, body)
                if not await self._unless_leaving(work):
                    # A drain started: the work may still finish, under the epoch it
                    # holds, but the next owner answers the client (same key).
                    await self._moving(msg)
                    return
                answer = work.result()
        except TeamNotFoundError as exc:
            answer = {"ok": False, "error": "not_found", "detail": str(exc)}
        except (TeamError, TimeoutError) as exc:
            answer = {"ok": False, "error": "unavailable", "detail": str(exc)}
        except Exception as exc:
            logger.exception("request %s to team %s failed", op, team_id)
            answer = {"ok": False, "error": "unavailable", "detail": str(exc)}
        # Checked again: the worker may have been frozen while the request ran.
        if not self.lease_valid() and not self.draining:
            return
        if self.draining or (self.leases.get(team_id) is not lease and op != "stop"):
            # The team left (drain or lost claim) while the request ran: whatever it
            # wrote is answered by the next owner from the log, under the same key.
            await self._moving(msg)
            return
        if op == "send" and answer.get("ok"):
            self.acks += 1
        with contextlib.suppress(Exception):
            await msg.respond(encode(answer))

    async def _unless_leaving(self, work: asyncio.Future[Any]) -> bool:
        """Wait for ``work``; ``False`` as soon as a drain starts while it runs."""
        leaving = asyncio.ensure_future(self._leaving.wait())
        try:
            await asyncio.wait({work, leaving}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            leaving.cancel()
        if work.done():
            return True
        # Nobody waits for it any more: retrieve its outcome so an error is not reported.
        work.add_done_callback(lambda done: done.cancelled() or done.exception())
        return False

    async def _moving(self, msg: Any) -> None:
        """Tell the client this worker does not hold the team (not an acknowledgement)."""
        if msg.reply:
            with contextlib.suppress(Exception):
                await msg.respond(encode({"ok": False, "error": "moving", "worker": self.name}))

    def _serve(self, team_id: UUID, op: str | None, body: dict[str, Any]) -> dict[str, Any]:
        if op == "send":
            done = self.host.deliver(
                team_id,
                str(body.get("content", "")),
                body.get("key"),
                float(body.get("timeout", 30)),
            )
            return {
                "ok": True,
                "sequence": done.sequence,
                "key": done.key,
                "duplicate": done.duplicate,
                "worker": self.name,
                "epoch": done.epoch,
            }
        if op == "replay":
            start = int(body.get("from", 1))
            events = self.host.replay(team_id, start)[:REPLAY_PAGE]
            return {
                "ok": True,
                "events": [event_to_wire(e) for e in events],
                "more": len(events) == REPLAY_PAGE,
            }
        if op == "where":
            return {
                "ok": True,
                "worker": self.name,
                "epoch": self.host.epoch(team_id),
                "status": "running",
            }
        raise TeamUnavailableError(f"unknown request {op!r}")

    async def _stop(self, lease: _Lease) -> None:
        self.leases.pop(lease.team_id, None)
        if lease.subscription is not None:
            await lease.subscription.unsubscribe()
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        await loop.run_in_executor(self.pool, self._stop_team, lease.team_id)
        logger.info("team %s stopped in %.2f s", lease.team_id, time.monotonic() - started)
        await lease.msg.ack_sync()

    def _stop_team(self, team_id: UUID) -> None:
        self._unlisten_team(team_id)
        try:
            self.manager.stop_team(team_id)
        finally:
            self.host.forget(team_id)

    # -- passivation --------------------------------------------------------
    def _on_idle(self, team_id: UUID) -> None:
        """A team's passivation countdown ran out (its countdown thread): let it go."""
        loop = self._loop
        if loop is None or loop.is_closed():
            self.manager.rearm_idle(team_id)
            return
        asyncio.run_coroutine_threadsafe(self._passivate(team_id), loop)

    async def _passivate(self, team_id: UUID) -> None:
        """Stop routing to an idle team, passivate it, then drop its placement.

        Routing stops first (no new request can reach the team here, and those
        already received are answered "moving"), then the passivation waits for
        the requests in flight: a request racing it can only place the team
        again, never wake it here without a lease. The placement is
        acknowledged after the record says ``passivated``, so the worker that
        fetches the next placement finds it passivated.
        """
        lease = self.leases.get(team_id)
        if self.draining:
            return  # the drain lets every team go
        if lease is None or not lease.ready or not self.lease_valid():
            # Still being placed, or this worker is past its deadline: not now.
            self.manager.rearm_idle(team_id)
            return
        lease.ready = False
        subscription, lease.subscription = lease.subscription, None
        if subscription is not None:
            await self._let_go(subscription)
        settle_by = time.monotonic() + SETTLE_WAIT
        while lease.inflight and time.monotonic() < settle_by:
            lease.settled.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(lease.settled.wait(), 1.0)
        if self.draining or self.leases.get(team_id) is not lease or not self.lease_valid():
            return  # it left meanwhile (drain, lost claim, lapse): that path owns it
        loop = asyncio.get_running_loop()
        passivated: bool | None = False
        if not lease.inflight:
            passivated = await loop.run_in_executor(self.pool, self._passivate_team, team_id)
        if passivated is False:
            # Work came in (or a request would not end): keep the team and route again.
            lease.subscription = await self._nc.subscribe(
                self.target.team_subject(team_id), queue="owner", cb=self._on_request
            )
            lease.ready = True
            self.manager.rearm_idle(team_id)
            return
        self.leases.pop(team_id, None)
        if passivated:
            with contextlib.suppress(Exception):
                await lease.msg.ack_sync()
            logger.info("worker %s: team %s passivated", self.name, team_id)
        with contextlib.suppress(Exception):
            await self._publish_status()

    def _passivate_team(self, team_id: UUID) -> bool | None:
        """Passivate here (worker thread): True, False when it got work, None when it failed."""
        try:
            done = self.manager.passivate_team(team_id, when_idle=True)
        except Exception as exc:
            # The claim was lost (another worker holds the team now) or the store failed:
            # let the team go without a record; its placement is redelivered or held elsewhere.
            logger.warning("passivating team %s failed: %s", team_id, exc)
            self._abandon(team_id)
            return None
        if done:
            self._unlisten_team(team_id)
            self.host.forget(team_id)
        return done

    # -- store reads for any client ------------------------------------------
    async def _on_fleet(self, msg: Any) -> None:
        task = asyncio.create_task(self._read_store(msg))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read_store(self, msg: Any) -> None:
        """Answer a list or record request from the store (no team is touched)."""
        if self.draining or not msg.reply:
            return
        loop = asyncio.get_running_loop()
        try:
            answer = await loop.run_in_executor(self.serving, self._read, decode(msg.data))
        except (TeamError, ValueError) as exc:
            answer = {"ok": False, "detail": str(exc)}
        with contextlib.suppress(Exception):
            await msg.respond(encode(answer))

    def _read(self, body: dict[str, Any]) -> dict[str, Any]:
        op = body.get("op")
        if op == "stop":
            # A team no worker holds: a passivated or broken one is recorded stopped
            # (under a claim, so an activation racing this is fenced); others stay.
            team_id = UUID(str(body.get("team_id")))
            record = self.store.load_team(team_id)
            if record is None or record.status == TeamStatus.DELETED:
                return {"ok": True, "team": None}
            if record.status in (TeamStatus.PASSIVATED, TeamStatus.BROKEN):
                self.manager.stop_team(team_id)
                record = self.store.load_team(team_id) or record
            return {"ok": True, "team": TeamSummary.of(record).model_dump(mode="json")}
        if op == "record":
            record = self.store.load_team(UUID(str(body.get("team_id"))))
            if record is None or record.status == TeamStatus.DELETED:
                return {"ok": True, "team": None}
            return {"ok": True, "team": TeamSummary.of(record).model_dump(mode="json")}
        if op == "list":
            status = body.get("status")
            found = self.store.list_teams(
                user_id=body.get("user_id"),
                status=None if status is None else TeamStatus(status),
                metadata=body.get("metadata") or None,
            )
            return {"ok": True, "teams": [TeamSummary.of(p).model_dump(mode="json") for p in found]}
        raise ValueError(f"unknown store read {op!r}")

    # -- drain -------------------------------------------------------------
    async def _drain(self) -> None:
        """Leave the registry, hand every lease back at once, then let go of the teams."""
        started = time.monotonic()
        if self._fleet_sub is not None:
            with contextlib.suppress(Exception):
                await self._fleet_sub.unsubscribe()  # the other workers answer store reads
        with contextlib.suppress(Exception):
            await self._kv.delete(self.name)
        held = list(self.leases.values())
        self.leases.clear()
        # No new request reaches this process; those already here are answered "moving"
        # (``draining`` is set), so their clients ask again at once.
        await asyncio.gather(
            *(self._let_go(lease.subscription) for lease in held if lease.subscription)
        )
        # The leases go back before the teams are stopped here: the next owner's claim
        # fences whatever this process still writes.
        for lease in held:
            with contextlib.suppress(Exception):
                await lease.msg.nak()
        with contextlib.suppress(Exception):
            await self._nc.publish(self.target.wake_subject, encode({"from": self.name}))
            await self._nc.flush(5)
        handed = time.monotonic()
        # Nothing here is urgent any more: on a shared host the CPU is better spent by
        # the workers adopting these teams than by stopping them here.
        with contextlib.suppress(OSError):
            os.nice(10)
        loop = asyncio.get_running_loop()
        await asyncio.gather(
            self._hand_back_strays(handed + FETCH_WAIT + 0.2),
            *(loop.run_in_executor(self.pool, self._abandon, lease.team_id) for lease in held),
        )
        logger.info(
            "worker %s: %d leases handed back in %.3f s, teams stopped in %.3f s",
            self.name,
            len(held),
            handed - started,
            time.monotonic() - handed,
        )
        print(f"worker {self.name} drained {len(held)} teams", flush=True)

    async def _hand_back_strays(self, until: float) -> None:
        """Nak placements delivered here after the drain began, until ``until``.

        A pull request sent before the drain stays open on the server for up to
        ``FETCH_WAIT``; the leases just handed back may be delivered to it. Left
        in this process's queue they would come back only after a whole lease.
        """
        # nats-py offers no public way to read a pull subscription's queue
        # without asking the server for more, which is what must not happen here.
        inner = getattr(self._sub, "_sub", None)
        if inner is None:
            return
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            try:
                msg = await inner.next_msg(timeout=left)
            except Exception:
                return  # timed out (nothing more came) or the subscription is gone
            if msg.headers and msg.headers.get("Status"):
                continue  # the server's "no messages"/"request expired" notes
            with contextlib.suppress(Exception):
                await msg.nak()
            logger.info("worker %s: handed back a placement delivered while draining", self.name)

    @staticmethod
    async def _let_go(subscription: Any) -> None:
        """Unsubscribe, answering the requests already received (never raises)."""
        try:
            await subscription.drain()
        except Exception:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()


def _team_of(msg: Any) -> UUID:
    """The team a request on ``<prefix>.team.<id>`` is for."""
    return UUID(msg.subject.rsplit(".", 1)[-1])
