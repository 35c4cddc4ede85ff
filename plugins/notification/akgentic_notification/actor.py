"""``NotificationActor``: the team's single keeper and deliverer of reminders.

Ask-reachable methods do dictionary work only. A daemon thread asks the actor to
scan at least once per :data:`~akgentic_notification.models.TICK_INTERVAL_S` (sooner
when the next entry falls due sooner); the scan asks the orchestrator whether the
team is still restoring and who is on the roster, and sends each due entry to its
owner's live address as a tell. The state is published once per scan that changed
it (and on stop), not once per call: a crash loses at most the last tick's changes.
The class path of :class:`NotificationActor` is stored in event logs: never move or
rename it.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any

from akgentic.plugin_api import ActorAddress, Akgent, Message, ProxyWrapper, RetriableError
from akgentic_notification import models
from akgentic_notification.models import (
    MAX_PENDING_PER_OWNER,
    NotificationConfig,
    NotificationState,
    PendingNotification,
    resolve_message_class,
)

__all__ = ["NotificationActor", "NotificationTick", "tick_loop"]

logger = logging.getLogger(__name__)

_JOIN_TIMEOUT_S = 2.0
_MIN_WAIT_S = 0.005


class NotificationTick:
    """Asks the actor to scan for due entries (a plain object: no telemetry, no checkpoint)."""

    __slots__ = ()


def tick_loop(stop: threading.Event, address: ActorAddress) -> None:
    """Ask ``address`` to scan every tick until ``stop`` is set or the actor is gone.

    Holds only the event and the address: a proxy or a bound method would keep the
    actor alive. Each scan is an ask with a bounded wait, so ticks never pile up
    behind a slow actor.
    """
    wait = models.TICK_INTERVAL_S
    while not stop.wait(wait):
        if not address.is_alive():
            return
        wait = models.TICK_INTERVAL_S
        try:
            next_due = address.ask(NotificationTick(), timeout=models.TICK_ASK_TIMEOUT_S)
        except Exception as error:  # a slow or stopping actor: try again next tick
            if stop.is_set() or not address.is_alive():
                return
            logger.warning("%s: a scan did not complete (%s)", address.name, error)
            continue
        if isinstance(next_due, float | int):
            # Wake for the next entry rather than up to a whole tick after it.
            wait = min(wait, max(_MIN_WAIT_S, float(next_due)))


def _same_owner(a: ActorAddress, b: ActorAddress) -> bool:
    return bool(a.agent_id == b.agent_id)


class NotificationActor(Akgent[NotificationConfig, NotificationState]):
    """Holds every pending reminder of a team and delivers each when it falls due."""

    def on_start(self) -> None:
        """Fresh state, then the tick thread."""
        self.state = NotificationState().observer(self)
        self._dirty = False
        self._classes: dict[str, type[Message]] = {}
        self._stop_ticks = threading.Event()
        self._ticker = threading.Thread(
            target=tick_loop,
            args=(self._stop_ticks, self.myAddress),
            name=f"{self.config.name or models.NOTIFICATION_ACTOR_NAME}-tick",
            daemon=True,
        )
        self._ticker.start()

    def on_stop(self) -> None:
        """Stop the tick thread, then checkpoint and report the stop."""
        self._stop_ticks.set()
        if self._ticker is not threading.current_thread():
            self._ticker.join(_JOIN_TIMEOUT_S)
        self._publish_if_dirty()
        super().on_stop()

    # ------------------------------------------------------------ ask API

    def schedule(
        self, owner: ActorAddress, content: str, delay_seconds: int, message_class: str
    ) -> int:
        """Store a reminder for ``owner`` due in ``delay_seconds``; returns its id.

        Raises:
            RetriableError: ``owner`` already has the maximum of pending entries.
        """
        mine = sum(1 for p in self.state.pending.values() if _same_owner(p.owner, owner))
        if mine >= MAX_PENDING_PER_OWNER:
            raise RetriableError(
                f"You already have {MAX_PENDING_PER_OWNER} pending notifications; cancel one first."
            )
        created = models.now()
        notification_id = self.state.next_id
        self.state.pending[notification_id] = PendingNotification(
            notification_id=notification_id,
            owner=owner,
            content=content,
            created_at=created,
            fire_at=created + timedelta(seconds=delay_seconds),
            message_class=message_class,
        )
        self.state.next_id = notification_id + 1
        self._changed()
        return notification_id

    def list_for(self, owner: ActorAddress | None) -> list[PendingNotification]:
        """Pending entries of ``owner`` (everyone's with None), by id."""
        return [
            entry
            for _id, entry in sorted(self.state.pending.items())
            if owner is None or _same_owner(entry.owner, owner)
        ]

    def cancel(self, notification_id: int, owner: ActorAddress) -> bool:
        """Remove ``owner``'s entry ``notification_id``; False if unknown or someone else's."""
        entry = self.state.pending.get(notification_id)
        if entry is None or not _same_owner(entry.owner, owner):
            return False
        del self.state.pending[notification_id]
        self._changed()
        return True

    # --------------------------------------------------------------- scan

    def receiveMsg_NotificationTick(self, message: NotificationTick) -> float | None:
        """One tick of the tick thread: scan, publish, and say when the next entry is due.

        Returns the seconds until the earliest entry not yet due (None when there is
        none), so the tick thread can wake for it instead of up to a tick late.
        """
        started = models.now()
        self.deliver_due()
        self._publish_if_dirty()
        # Entries not yet due when the scan began (one may fall due during the scan:
        # it is then due now, not a tick from now).
        upcoming = [e.fire_at for e in self.state.pending.values() if e.fire_at > started]
        if not upcoming:
            return None
        return (min(upcoming) - models.now()).total_seconds()

    def _changed(self) -> None:
        # Publishing serializes every pending entry: once per tick at most, not once
        # per call, so scheduling stays cheap with many entries. A clean stop
        # checkpoints whatever is left (on_stop).
        self._dirty = True

    def _publish_if_dirty(self) -> None:
        if self._dirty:
            self._dirty = False
            self.state.notify_state_change()

    def deliver_due(self) -> None:
        """Send every due entry whose owner is on the roster; drop stale ones."""
        current = models.now()
        due = [entry for entry in self.state.pending.values() if entry.fire_at <= current]
        if not due:
            return
        roster = self._live_roster()
        if roster is None:
            return
        removed = False
        for entry in sorted(due, key=lambda e: e.notification_id):
            live = roster.get(entry.owner.agent_id)
            if live is None:
                overdue = (current - entry.fire_at).total_seconds()
                if overdue >= models.DELIVERY_GRACE_S:
                    logger.warning(
                        "notification %s for %s dropped: its owner left the team",
                        entry.notification_id,
                        entry.owner.name,
                    )
                    del self.state.pending[entry.notification_id]
                    removed = True
                continue
            del self.state.pending[entry.notification_id]
            removed = True
            self._send(live, entry)
        if removed:
            self._changed()

    def _live_roster(self) -> dict[Any, ActorAddress] | None:
        """agent_id -> live address, or None while restoring or without an answer."""
        orchestrator = self._orchestrator
        if orchestrator is None:
            return None
        proxy: Any = ProxyWrapper(orchestrator, timeout=models.ROSTER_ASK_TIMEOUT_S)
        try:
            if proxy.is_restoring():
                return None
            members: list[ActorAddress] = proxy.get_team()
        except Exception as error:
            logger.warning("notification scan: no roster from the orchestrator (%s)", error)
            return None
        return {member.agent_id: member for member in members}

    def _send(self, recipient: ActorAddress, entry: PendingNotification) -> None:
        try:
            message = self._message_class(entry.message_class).model_validate(
                {"content": entry.content, "type": "notification"}
            )
            self.send(recipient, message)
        except Exception as error:
            logger.warning(
                "notification %s for %s dropped: delivery failed (%s)",
                entry.notification_id,
                recipient.name,
                error,
            )

    def _message_class(self, path: str) -> type[Message]:
        cls = self._classes.get(path)
        if cls is None:
            try:
                cls = resolve_message_class(path)
            except ValueError as error:
                logger.error("%s; delivering as %s instead", error, models.DEFAULT_MESSAGE_CLASS)
                cls = resolve_message_class(models.DEFAULT_MESSAGE_CLASS)
            self._classes[path] = cls
        return cls
