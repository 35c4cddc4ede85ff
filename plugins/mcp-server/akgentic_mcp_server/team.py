"""The team an MCP server serves: opened once, driven as its human, read from its log.

:class:`ServedTeam` knows nothing of MCP. It creates the team from a card file or
resumes a stored one (never a second team for the same id), sends the human's text to
the supervisors, follows the turn that text starts (:class:`Turn`), answers questions
agents asked the human, and reads the conversation, the members and the open
questions from the team's event log, so what it shows survives a restart.

Every method is blocking and thread-safe; the MCP layer calls them from worker threads.
A failure a client can fix (an unknown question, a message too large) raises
:class:`RequestError` with one line that says what to do.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

from akgentic.plugin_api import (
    ActorSystem,
    Message,
    SentMessage,
    TeamCard,
    TeamManager,
    TeamRuntime,
    missing_store,
    open_event_store,
    pending_questions,
    roster,
)

__all__ = ["MAX_MESSAGE_BYTES", "RequestError", "ServedTeam", "Turn", "conversation_row"]

logger = logging.getLogger("akgentic_mcp_server")

#: The largest text (UTF-8 bytes) ``ask``, ``send`` and ``answer`` take.
MAX_MESSAGE_BYTES = 64 * 1024
#: Environment variable naming extra directories agent classes are imported from.
PATH_ENV_VAR = "AKGENTIC_PATH"


class RequestError(ValueError):
    """A request the team cannot take as it is (one line, said back to the client)."""


def check_text(text: str, what: str = "message") -> None:
    """Refuse an empty ``text`` or one above :data:`MAX_MESSAGE_BYTES`."""
    if not text.strip():
        raise RequestError(f"the {what} is empty; write some text")
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_MESSAGE_BYTES:
        raise RequestError(
            f"the {what} is {size} bytes; the limit is {MAX_MESSAGE_BYTES} bytes (64 KiB)"
        )


def conversation_row(sent: SentMessage, sequence: int | None = None) -> dict[str, Any]:
    """One message to or from a human as plain data (what the resource and ``ask`` show)."""
    inner = sent.message
    content = getattr(inner, "content", None)
    intent = getattr(inner, "type", None)
    return {
        "seq": sequence,
        "id": str(inner.id),
        "parent_id": str(inner.parent_id) if inner.parent_id is not None else None,
        "time": inner.timestamp.isoformat() if inner.timestamp is not None else None,
        "from": sent.sender.name if sent.sender is not None else None,
        "to": sent.recipient.name,
        "intent": intent if isinstance(intent, str) else None,
        "content": content if isinstance(content, str) else None,
    }


def _to_human(sent: SentMessage) -> bool:
    from_human = sent.sender is not None and sent.sender.is_user_proxy
    return bool(sent.recipient.is_user_proxy) and not from_human


class Turn:
    """The messages caused by one input of the human, followed through ``parent_id``.

    The root is the id of the message the human sent (``ask``) or of the question it
    answers (``answer``); a recorded message belongs to the turn when its parent does.
    ``rows`` are all its messages and ``replies`` those addressed to a human.
    ``on_message`` is called on the orchestrator's thread with each row of the turn
    (keep it short).
    """

    def __init__(self, root: UUID, on_message: Callable[[dict[str, Any]], None] | None) -> None:
        self.root = root
        self._ids = {root}
        self._on_message = on_message
        self.replies: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []
        self.seen = 0

    def offer(self, sent: SentMessage) -> None:
        inner = sent.message
        if inner.parent_id not in self._ids:
            return
        self._ids.add(inner.id)
        row = conversation_row(sent)
        row["to_human"] = _to_human(sent)
        self.seen += 1
        self.rows.append(row)
        if row["to_human"]:
            self.replies.append(row)
        if self._on_message is not None:
            self._on_message(row)


class _TurnFollower:
    """Event subscriber handing each live ``SentMessage`` to the open turns."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns: list[Turn] = []
        self._restoring = False

    def open(self, turn: Turn) -> None:
        with self._lock:
            self._turns.append(turn)

    def close(self, turn: Turn) -> None:
        with self._lock:
            if turn in self._turns:
                self._turns.remove(turn)

    # -- subscriber protocol ------------------------------------------------
    def on_message(self, msg: Message) -> None:
        if self._restoring or not isinstance(msg, SentMessage):
            return
        with self._lock:
            for turn in self._turns:
                turn.offer(msg)

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        self._restoring = restoring

    def on_stop_request(self, team_id: UUID) -> None:
        return None

    def on_stop(self, team_id: UUID) -> None:
        return None


def _import_roots(card: Path | None, extra: list[Path]) -> None:
    """Agent classes import from the card's directory, ``extra``, ``$AKGENTIC_PATH``, the cwd."""
    env = [Path(p) for p in os.environ.get(PATH_ENV_VAR, "").split(os.pathsep) if p.strip()]
    roots = [*extra, *env, Path.cwd()]
    if card is not None:
        roots.insert(0, card.resolve().parent)
    for root in reversed(roots):
        text = str(root.resolve())
        if text not in sys.path:
            sys.path.insert(0, text)


def _one_line(exc: BaseException) -> str:
    """An error as one line: its first problem (a card error lists many), never a traceback."""
    problems = getattr(exc, "problems", None)
    if isinstance(problems, list) and problems:
        source = getattr(exc, "source", "the card")
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        return f"{source}: invalid team card: {problems[0]}{more}"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text


class ServedTeam:
    """One team, created from a card file or resumed from a store, served as its human.

    Build it with :meth:`open`, which never raises for bad input: a card that does not
    load, an unknown team id or a store that does not open leaves :attr:`error` set
    (one line) and every operation raises :class:`RequestError` with it. :meth:`close`
    stops the team (recorded as stopped, resumable) and shuts everything down.
    """

    def __init__(self) -> None:
        self.error: str | None = None
        self.team_id: UUID | None = None
        self._system: ActorSystem | None = None
        self._manager: TeamManager | None = None
        self._follower = _TurnFollower()
        self._lock = threading.Lock()

    # -- opening and closing ---------------------------------------------------
    @classmethod
    def open(
        cls, target: str, store: str | None = None, paths: list[Path] | None = None
    ) -> ServedTeam:
        """Create the team ``target`` (a card file) or resume it (a stored team id)."""
        served = cls()
        try:
            served._open(target, store, list(paths or []))
        except Exception as exc:
            served.error = f"cannot serve {target}: {_one_line(exc)}"
            logger.error("%s", served.error)
            logger.debug("opening %s failed", target, exc_info=True)
            served.close()
        return served

    def _open(self, target: str, store: str | None, paths: list[Path]) -> None:
        card_path = Path(target)
        team_id: UUID | None = None
        if not card_path.is_file():
            try:
                team_id = UUID(target)
            except ValueError:
                raise RequestError(
                    "not a team card file nor a team id (a UUID); give a YAML card "
                    "to start a team or the id of a stored one to resume it"
                ) from None
        _import_roots(card_path if team_id is None else None, paths)
        if team_id is not None:  # resuming reads a store: never create an empty one
            missing = missing_store(store)
            if missing is not None:
                raise RequestError(missing)
        event_store = open_event_store(store)
        self._system = ActorSystem()
        self._manager = TeamManager(
            self._system,
            event_store,
            subscribers=[self._follower],
            stop_signal=int(signal.SIGTERM),
        )
        if team_id is None:
            card = self._manager.load_card(card_path)
            self.team_id = self._manager.create_team(card).id
            logger.info("created team %s from %s", self.team_id, card_path)
            return
        process = self._manager.get_team(team_id)
        if process is None:
            raise RequestError(f"no team {team_id} in the store {store or '(default)'}")
        self.team_id = team_id
        self._manager.resume_team(team_id)  # a team whose owner died resumes as well
        logger.info("resumed team %s", team_id)

    def close(self) -> None:
        """Stop the team (it stays resumable), the actor system, and close the store."""
        manager, system = self._manager, self._system
        self._manager = self._system = None
        if manager is None:
            return
        try:
            manager.stop_all()
        finally:
            if system is not None:
                system.shutdown(timeout=30)
            manager.event_store.close()

    # -- the team --------------------------------------------------------------
    def _parts(self) -> tuple[TeamManager, UUID]:
        if self.error is not None:
            raise RequestError(self.error)
        if self._manager is None or self.team_id is None:
            raise RequestError("the server is shutting down")
        return self._manager, self.team_id

    def runtime(self) -> TeamRuntime:
        """The running team; a team stopped by its idle countdown is resumed first."""
        manager, team_id = self._parts()
        with self._lock:
            lost = manager.claim_lost(team_id)
            if lost is not None:
                raise RequestError(_one_line(lost))
            runtime = manager.live_runtime(team_id)  # a passivated team is woken
            if runtime is None or not runtime.orchestrator_addr.is_alive():
                runtime = manager.resume_team(team_id)
                logger.info("resumed team %s (it had stopped)", team_id)
            return runtime

    def card(self) -> TeamCard:
        manager, team_id = self._parts()
        process = manager.get_team(team_id)
        if process is None:
            raise RequestError(f"team {team_id} is no longer in the store")
        return process.team_card

    def message(self, text: str) -> Message:
        """``text`` as the team's first declared message type (what ``TeamRuntime.send`` does)."""
        check_text(text)
        message_type = self.runtime().team.default_message_type
        if message_type is None:
            raise RequestError("the team's card declares no message_types; add one to talk to it")
        return message_type.model_validate({"content": text})

    def send(self, message: Message) -> None:
        """Send ``message`` to every supervisor, as the team's entry point."""
        self.runtime().send(message)

    def send_text(self, text: str) -> Message:
        """Send ``text`` to every supervisor, as the human; returns the message sent."""
        message = self.message(text)
        self.send(message)
        return message

    def ask(self, text: str, on_message: Callable[[dict[str, Any]], None] | None = None) -> Turn:
        """Send ``text`` as the human and follow the turn it starts (unfollow it when done)."""
        message = self.message(text)
        turn = self.follow(message.id, on_message)
        try:
            self.send(message)
        except BaseException:
            self.unfollow(turn)
            raise
        return turn

    def answer_turn(
        self,
        question_id: str,
        text: str,
        on_message: Callable[[dict[str, Any]], None] | None = None,
    ) -> Turn:
        """Answer an open question and follow the turn the answer starts (unfollow when done)."""
        try:
            root = UUID(question_id)
        except ValueError:
            raise RequestError(
                f"no open question {question_id!r}; the status tool lists the open ones"
            ) from None
        turn = self.follow(root, on_message)
        try:
            self.answer(question_id, text)
        except BaseException:
            self.unfollow(turn)
            raise
        return turn

    def follow(
        self, root: UUID, on_message: Callable[[dict[str, Any]], None] | None = None
    ) -> Turn:
        """Start following the turn rooted at ``root`` (before sending, so nothing is missed)."""
        turn = Turn(root, on_message)
        self._follower.open(turn)
        return turn

    def unfollow(self, turn: Turn) -> None:
        self._follower.close(turn)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is in flight in the team; ``False`` when ``timeout`` passed."""
        return self.runtime().wait_idle(timeout)

    def stop_turn(self) -> Message:
        """Send ``/stop`` to the supervisors as the human: what typing it in the chat does.

        The human's proxy offers the cancel at once (an agent waiting on a model request
        ends it), so the turn ends without waiting behind the work it cancels.
        """
        return self.send_text("/stop")

    def replay_turn(self, root: UUID) -> Turn | None:
        """The turn rooted at ``root`` rebuilt from the log; ``None`` when no turn has that root.

        A root is a message the human sent (``ask``) or a question to the human that was
        answered (``answer``): what a task id names, so a task outlives the server.
        """
        events = self._events()
        rooted = False
        for _sequence, event in events:
            if isinstance(event, SentMessage) and event.message.id == root:
                rooted = event.sender is not None and bool(event.sender.is_user_proxy)
                break
        turn = Turn(root, None)
        for _sequence, event in events:
            if isinstance(event, SentMessage):
                if event.message.parent_id == root and event.sender is not None:
                    rooted = rooted or bool(event.sender.is_user_proxy)
                turn.offer(event)
        return turn if rooted else None

    # -- questions ---------------------------------------------------------------
    def _events(self) -> list[tuple[int, Message]]:
        manager, team_id = self._parts()
        persistence = manager.get_persistence(team_id)
        if persistence is not None:
            persistence.flush(5.0)
        return [(e.sequence, e.event) for e in manager.event_store.load_events(team_id)]

    def questions(self) -> list[dict[str, Any]]:
        """Questions agents asked a human that no human answered yet, oldest first."""
        return pending_questions(self._events())

    def answer(self, question_id: str, text: str) -> UUID:
        """Answer an open question as the human it was asked; returns the question's id."""
        check_text(text, "answer")
        _manager, team_id = self._parts()
        events = self._events()
        if question_id not in {q["id"] for q in pending_questions(events)}:
            raise RequestError(
                f"no open question {question_id!r} in team {team_id}; "
                "the status tool lists the open ones"
            )
        for _sequence, event in events:
            if isinstance(event, SentMessage) and str(event.message.id) == question_id:
                question = event.message.model_copy(update={"recipient": event.recipient})
                try:
                    self.runtime().process_human_input(text, question)
                except ValueError as exc:
                    raise RequestError(_one_line(exc)) from None
                return event.message.id
        raise RequestError(f"no open question {question_id!r} in team {team_id}")

    # -- what the resources show ---------------------------------------------------
    def conversation(self) -> list[dict[str, Any]]:
        """Every message a human sent or received in the team, oldest first, from the log."""
        rows = []
        for sequence, event in self._events():
            if not isinstance(event, SentMessage):
                continue
            from_human = event.sender is not None and event.sender.is_user_proxy
            if from_human or event.recipient.is_user_proxy:
                rows.append(conversation_row(event, sequence))
        return rows

    def members(self) -> list[dict[str, Any]]:
        """The members who started and did not stop: name, role, model, human, token usage."""
        manager, team_id = self._parts()
        events = self._events()
        states = manager.event_store.load_agent_states(team_id)
        runtime = manager.get_runtime(team_id)
        live = None
        if runtime is not None:
            try:
                live = [member.name for member in runtime.members]
            except Exception:  # stopping right now: the stored roster says it
                live = None
        return roster([event for _sequence, event in events], states, {}, live)

    def status(self) -> dict[str, Any]:
        """Id, name, whether it runs here, its members and the open questions."""
        manager, team_id = self._parts()
        process = manager.get_team(team_id)
        if process is None:
            raise RequestError(f"team {team_id} is no longer in the store")
        runtime = manager.get_runtime(team_id)
        running = runtime is not None and runtime.orchestrator_addr.is_alive()
        return {
            "team_id": str(team_id),
            "name": process.team_card.name,
            "description": process.team_card.description,
            "status": str(process.status),
            "running": running,
            "members": [
                {"name": m["name"], "role": m["role"], "human": m["human"]} for m in self.members()
            ],
            "pending_questions": self.questions(),
        }
