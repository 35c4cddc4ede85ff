"""``NotificationTool``: an agent schedules a message to itself after a delay.

The card checks everything it can before asking the team's
:class:`~akgentic_notification.actor.NotificationActor` (``#NotificationTool``),
which stores the entry and delivers it when due, after a resume too. Tools and
commands share one callable per capability and raise only ``RetriableError`` (or
``ToolObserverGone``), so the model always gets a sentence it can act on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import Field, PrivateAttr, field_validator

from akgentic.plugin_api import (
    COMMAND,
    TOOL_CALL,
    ActorAddress,
    BaseToolParam,
    Channels,
    RetriableError,
    ToolCard,
    ToolObserver,
)
from akgentic_notification import models
from akgentic_notification.models import (
    DEFAULT_MESSAGE_CLASS,
    MAX_CONTENT_CHARS,
    MAX_DELAY_CAP_S,
    NOTIFICATION_ACTOR_NAME,
    NotificationConfig,
    PendingNotification,
    check_message_class_path,
    resolve_message_class,
)

__all__ = [
    "CancelNotification",
    "NotificationTool",
    "PendingNotifications",
    "RegisterNotification",
]

logger = logging.getLogger(__name__)

TOOL_ACTOR_ROLE = "ToolActor"
ASK_TIMEOUT_S = 10.0
UNAVAILABLE = "Notifications are unavailable: this agent is not part of a running team."


def _both() -> set[Channels]:
    return {TOOL_CALL, COMMAND}


class RegisterNotification(BaseToolParam):
    """``register_notification(content, delay_seconds)``: schedule a reminder."""

    expose: set[Channels] = Field(default_factory=_both)


class PendingNotifications(BaseToolParam):
    """``pending_notification(all=False)``: list pending reminders."""

    expose: set[Channels] = Field(default_factory=_both)


class CancelNotification(BaseToolParam):
    """``cancel_notification(notification_id)``: cancel one of your reminders."""

    expose: set[Channels] = Field(default_factory=_both)


def _time_left(entry: PendingNotification) -> str:
    seconds = (entry.fire_at - models.now()).total_seconds()
    return f"(in {round(seconds)} seconds)" if seconds > 0 else "(due now)"


def render_listing(entries: list[PendingNotification], *, with_owner: bool) -> str:
    """The listing the model reads: one line per entry, ids ascending."""
    if not entries:
        return "No pending notifications."
    lines = ["Pending notifications:"]
    for entry in sorted(entries, key=lambda e: e.notification_id):
        owner = f"{entry.owner.name} " if with_owner else ""
        content = " ".join(entry.content.splitlines())
        lines.append(f"- {owner}id {entry.notification_id}: {content} {_time_left(entry)}")
    return "\n".join(lines)


class NotificationTool(ToolCard):
    """Reminders an agent sends itself: schedule, list and cancel.

    Example YAML in a team file::

        tools:
          - card: notification
            max_delay_seconds: 3600
    """

    message_class: str = DEFAULT_MESSAGE_CLASS
    max_delay_seconds: int = Field(default=300, ge=1, le=MAX_DELAY_CAP_S)
    register_notification: RegisterNotification | bool = True
    pending_notification: PendingNotifications | bool = True
    cancel_notification: CancelNotification | bool = True

    _actor: ActorAddress | None = PrivateAttr(default=None)

    @field_validator("message_class")
    @classmethod
    def _dotted(cls, path: str) -> str:
        return check_message_class_path(path)

    # ------------------------------------------------------------ wiring

    def observer(self, observer: ToolObserver) -> NotificationTool:
        """Attach the agent; check the delivery class, then bind the team's actor.

        Raises:
            ValueError: ``message_class`` cannot carry a notification (checked before
                the actor is created, so a bad card leaves no singleton behind).
        """
        super().observer(observer)
        resolve_message_class(self.message_class)
        self._actor = None
        self._bind()
        return self

    def _bind(self) -> ActorAddress | None:
        """The notification actor's address, created under the orchestrator if needed."""
        if self._actor is not None and self._actor.is_alive():
            return self._actor
        observer = self._observer_or_none()
        orchestrator = getattr(observer, "orchestrator", None) if observer is not None else None
        if observer is None or orchestrator is None:
            return None
        from akgentic_notification.actor import NotificationActor

        config = NotificationConfig(
            name=NOTIFICATION_ACTOR_NAME, role=TOOL_ACTOR_ROLE, message_class=self.message_class
        )
        proxy = observer.proxy_ask(orchestrator, timeout=ASK_TIMEOUT_S)  # type: ignore[attr-defined]
        self._actor = proxy.getChildrenOrCreate(NotificationActor, config=config)
        return self._actor

    def _session(self) -> tuple[Any, ActorAddress]:
        """(actor proxy, the caller's address), or RetriableError when not in a team."""
        observer = self._observer_or_none()
        try:
            actor = self._bind()
        except Exception as error:
            logger.warning("NotificationTool: the notification actor is unreachable (%s)", error)
            actor = None
        if observer is None or actor is None or not actor.is_alive():
            raise RetriableError(UNAVAILABLE)
        proxy = observer.proxy_ask(actor, timeout=ASK_TIMEOUT_S)  # type: ignore[attr-defined]
        return proxy, observer.myAddress  # type: ignore[attr-defined]

    def _ask(self, call: Callable[[Any, ActorAddress], Any]) -> Any:
        proxy, me = self._session()
        try:
            return call(proxy, me)
        except RetriableError:
            raise
        except Exception as error:  # the actor stopped or timed out mid-call
            logger.warning("NotificationTool: the notification actor failed (%s)", error)
            raise RetriableError(UNAVAILABLE) from error

    # ---------------------------------------------------------- builders

    def _build_register(self, param: RegisterNotification) -> Callable[..., str]:
        cap = self.max_delay_seconds
        message_class = self.message_class

        def register_notification(content: str, delay_seconds: int) -> str:
            """Schedule a message to yourself, delivered after a delay.

            Use it to come back to something later (check a build, follow up on a
            request). The message arrives as a notification with the given content.

            Args:
                content: What the notification will say (not starting with '/').
                delay_seconds: Whole seconds from now, from 1 to {cap}.
            """
            if isinstance(delay_seconds, bool) or not 1 <= delay_seconds <= cap:
                raise RetriableError(
                    f"delay_seconds must be a whole number from 1 to {cap}; got {delay_seconds}."
                )
            if not content.strip():
                raise RetriableError("content must not be empty.")
            if len(content) > MAX_CONTENT_CHARS:
                raise RetriableError(
                    f"content is {len(content)} characters long; the limit is {MAX_CONTENT_CHARS}."
                )
            if content.lstrip().startswith("/"):
                raise RetriableError(
                    "content must not start with '/': a delivered line starting with '/' "
                    "would run as a command."
                )
            notification_id = self._ask(
                lambda actor, me: actor.schedule(me, content, delay_seconds, message_class)
            )
            return (
                f"Notification {notification_id} scheduled; it will arrive in "
                f"{delay_seconds} seconds."
            )

        # The cap goes in before the instructions, so braces in them are never formatted.
        register_notification.__doc__ = (register_notification.__doc__ or "").replace(
            "{cap}", str(cap)
        )
        return param.apply_instructions(register_notification)

    def _build_pending(self, param: PendingNotifications) -> Callable[..., str]:
        def pending_notification(all: bool = False) -> str:
            """List your pending notifications, with the time left for each.

            Args:
                all: Also list the other agents' notifications (you can cancel only yours).
            """
            entries = self._ask(lambda actor, me: actor.list_for(None if all else me))
            return render_listing(entries, with_owner=all)

        return param.apply_instructions(pending_notification)

    def _build_cancel(self, param: CancelNotification) -> Callable[..., str]:
        def cancel_notification(notification_id: int) -> str:
            """Cancel one of your pending notifications.

            Args:
                notification_id: The id given when it was scheduled.
            """
            cancelled = self._ask(lambda actor, me: actor.cancel(notification_id, me))
            if not cancelled:
                raise RetriableError(
                    f"You have no pending notification {notification_id}; call "
                    "pending_notification to list yours."
                )
            return f"Notification {notification_id} cancelled."

        return param.apply_instructions(cancel_notification)

    def _built(self, channel: Channels) -> list[tuple[type[BaseToolParam], Callable[..., Any]]]:
        built: list[tuple[type[BaseToolParam], Callable[..., Any]]] = []
        register = self._param(self.register_notification, RegisterNotification, channel)
        if register is not None:
            built.append((RegisterNotification, self._build_register(register)))
        pending = self._param(self.pending_notification, PendingNotifications, channel)
        if pending is not None:
            built.append((PendingNotifications, self._build_pending(pending)))
        cancel = self._param(self.cancel_notification, CancelNotification, channel)
        if cancel is not None:
            built.append((CancelNotification, self._build_cancel(cancel)))
        return built

    # ------------------------------------------------------------ hooks

    def get_tools(self) -> list[Callable[..., Any]]:
        return [func for _key, func in self._built(TOOL_CALL)]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        return dict(self._built(COMMAND))
