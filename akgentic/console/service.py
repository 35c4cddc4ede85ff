"""``ConsoleService``: what the API does, over a ``TeamManager`` and its store.

Every operation goes through the manager's public API (the rules and errors are
those of ``akgentic team``) or reads the store; the HTTP layer only maps the
errors raised here to status codes. Operations block (a stop waits for the team),
so the API runs them off the event loop.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from akgentic.console.hub import ConsoleHub
from akgentic.console.panes import team_panes
from akgentic.console.pictures import (
    BudgetSource,
    ChartBudget,
    PictureName,
    card_budget,
    chart_budget,
    team_pictures,
)
from akgentic.console.views import event_row, pending_questions, roster

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message
    from akgentic.team.manager import TeamManager
    from akgentic.team.models import PersistedEvent, Process
    from akgentic.team.runtime import TeamRuntime

__all__ = ["ConflictError", "ConsoleService", "InputError", "MissingError"]

logger = logging.getLogger(__name__)

_EXAMPLE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\.ya?ml$")
#: Teams whose decoded history is kept in memory (the ones being looked at).
_CACHED_TEAMS = 8
_MAX_PAGE = 1_000
#: Events read per window when paging a filtered view from the store.
_SCAN_WINDOW = 1_000


class InputError(ValueError):
    """The request is invalid (HTTP 400/422)."""


class MissingError(LookupError):
    """Something inside an existing team does not exist (HTTP 404)."""


class ConflictError(RuntimeError):
    """The request is valid but impossible in the team's state (HTTP 409)."""


class _History:
    """Decoded event logs and their rows, kept up to date by reading only what is new.

    A team's log is loaded whole the first time something needs all of it (the
    roster, the questions); afterwards only the events after the cached top are
    read, as one page. A log whose top went down (deleted and created again) is
    loaded again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._teams: OrderedDict[UUID, tuple[int, list[PersistedEvent], list[dict[str, Any]]]]
        self._teams = OrderedDict()

    def cached(self, team_id: UUID) -> bool:
        """Whether the team's log is in memory (then pages are cut from it)."""
        with self._lock:
            return team_id in self._teams

    def peek(self, team_id: UUID, top: int) -> list[PersistedEvent] | None:
        """The cached log when it holds every event up to ``top`` (no store access)."""
        with self._lock:
            cached = self._teams.get(team_id)
            if cached is not None and cached[0] >= top:
                return cached[1]
        return None

    def get(
        self, manager: TeamManager, team_id: UUID, top: int | None = None
    ) -> tuple[list[PersistedEvent], list[dict[str, Any]]]:
        """The decoded log and its rows; ``top``, when known, spares the store's count."""
        from akgentic.team.store import load_events_page

        store = manager.event_store
        # A count from the store below the cached top: deleted and created again.
        exact = top is None
        if top is None:
            top = store.get_max_sequence(team_id)
        with self._lock:
            cached = self._teams.get(team_id)
            if cached is not None and (cached[0] == top or (not exact and cached[0] > top)):
                self._teams.move_to_end(team_id)
                return cached[1], cached[2]
        if cached is not None and cached[0] < top:
            fresh = load_events_page(store, team_id, after_sequence=cached[0])
            events = [*cached[1], *fresh]
            rows = [*cached[2], *(event_row(e.event, e.sequence) for e in fresh)]
        else:
            events = store.load_events(team_id)
            rows = [event_row(e.event, e.sequence) for e in events]
        with self._lock:
            self._teams[team_id] = (events[-1].sequence if events else 0, events, rows)
            self._teams.move_to_end(team_id)
            while len(self._teams) > _CACHED_TEAMS:
                self._teams.popitem(last=False)
        return events, rows

    def forget(self, team_id: UUID) -> None:
        with self._lock:
            self._teams.pop(team_id, None)


def _matches(
    row: Mapping[str, Any], kind: str | None, type_: str | None, member: str | None
) -> bool:
    return (
        (not kind or row["kind"] == kind)
        and (not type_ or row["type"] == type_ or row["message_type"] == type_)
        and (not member or member in (row["sender"], row["recipient"]))
    )


def _page_of_rows(
    rows: list[dict[str, Any]], before: int | None, limit: int
) -> tuple[list[dict[str, Any]], bool]:
    """The last ``limit`` rows before sequence ``before`` and whether older rows remain."""
    end = len(rows)
    if before is not None:
        # Rows are in ascending sequence: find the first at or after ``before``.
        low, high = 0, len(rows)
        while low < high:
            middle = (low + high) // 2
            if rows[middle]["seq"] < before:
                low = middle + 1
            else:
                high = middle
        end = low
    start = max(0, end - limit)
    return rows[start:end], start > 0


def summary(process: Process, running: bool) -> dict[str, Any]:
    """A team record as the list and the team page show it."""
    from akgentic.agent.session import team_metadata

    metadata = team_metadata(process)
    lineage = process.lineage
    return {
        "team_id": str(process.team_id),
        "name": process.name,
        "description": process.team_card.description,
        "status": str(process.status),
        "reason": process.reason,
        "running_here": running,
        "user_id": process.user_id,
        "created_at": process.created_at.isoformat(),
        "updated_at": process.updated_at.isoformat(),
        "metadata": metadata,
        "metadata_indexes": list(process.metadata_indexes),
        "parent_id": None if lineage.parent_id is None else str(lineage.parent_id),
        "parent_sequence": lineage.parent_sequence,
        "abandoned_for": None if lineage.abandoned_for is None else str(lineage.abandoned_for),
        "lineage": lineage.describe(),
    }


class ConsoleService:
    """The console's operations (see the module docstring)."""

    def __init__(
        self,
        manager: TeamManager,
        hub: ConsoleHub,
        examples_dir: Path | None = None,
        *,
        allow_host_processes: bool = False,
    ) -> None:
        self.manager = manager
        #: Whether cards created here may start host processes (see akgentic.cluster.admission).
        self.allow_host_processes = allow_host_processes
        self.hub = hub
        self.examples_dir = examples_dir.resolve() if examples_dir is not None else None
        #: The budget seam of the usage chart: the team's record and log -> its limits
        #: (``{"usd": ..., "total_tokens": ...}``) or None. The team-wide budget sets its own.
        self.budget_of: BudgetSource = card_budget
        self._history = _History()
        self._pictures_lock = threading.Lock()
        #: team id -> ((top sequence, budget), the pictures drawn for it)
        self._pictures: OrderedDict[UUID, tuple[tuple[int, str], dict[str, Any]]] = OrderedDict()

    # -- helpers ----------------------------------------------------------------
    def _process(self, team_id: UUID) -> Process:
        from akgentic.team.errors import TeamNotFoundError

        process = self.manager.get_team(team_id)
        if process is None:
            raise TeamNotFoundError(team_id)
        return process

    def _summary(self, process: Process) -> dict[str, Any]:
        return summary(process, self.manager.get_runtime(process.team_id) is not None)

    def _runtime(self, team_id: UUID) -> TeamRuntime:
        runtime = self.manager.get_runtime(team_id)
        if runtime is None:
            process = self._process(team_id)
            if str(process.status) in ("passivated", "broken"):
                return self._activate(team_id)
            raise ConflictError(
                f"team {team_id} is {process.status} and does not run in this console"
                + (" (resume it first)" if str(process.status) == "stopped" else "")
            )
        return runtime

    def _activate(self, team_id: UUID) -> TeamRuntime:
        """A passivated team, woken by what the console sends it (docs/virtual-teams.md)."""
        from akgentic.team.errors import TeamStateError

        try:
            runtime = self.manager.live_runtime(team_id)
        except (TeamStateError, TimeoutError) as exc:  # broken, owned elsewhere, too slow
            raise ConflictError(str(exc)) from exc
        if runtime is None:  # stopped meanwhile
            raise ConflictError(f"team {team_id} does not run in this console (resume it first)")
        return runtime

    def _flush(self, team_id: UUID) -> None:
        persistence = self.manager.get_persistence(team_id)
        if persistence is not None:
            persistence.flush(5.0)

    # -- teams ------------------------------------------------------------------
    def list_teams(
        self, status: str | None, query: str | None, metadata: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        """Teams matching the status and metadata filters and containing ``query``."""
        from akgentic.team.models import TeamStatus

        wanted: TeamStatus | None = None
        if status:
            try:
                wanted = TeamStatus(status.lower())
            except ValueError:
                raise InputError(f"unknown status {status!r} (running, stopped, deleted)") from None
        teams = self.manager.list_teams(status=wanted, metadata=dict(metadata) or None)
        rows = [self._summary(p) for p in teams]
        if query:
            needle = query.lower()
            keys = ("team_id", "name", "description", "user_id")
            rows = [
                r
                for r in rows
                if any(needle in str(r[k] or "").lower() for k in keys)
                or any(needle in entry.lower() for entry in r["metadata_indexes"])
            ]
        return rows

    def examples(self) -> list[dict[str, str]]:
        """The team cards of the examples directory (name and first comment line)."""
        if self.examples_dir is None or not self.examples_dir.is_dir():
            return []
        found = []
        for path in sorted(self.examples_dir.iterdir()):
            if path.is_file() and _EXAMPLE_NAME.match(path.name):
                first = next(iter(path.read_text(errors="replace").splitlines()), "")
                found.append({"name": path.name, "description": first.lstrip("# ").strip()})
        return found

    def _example_text(self, name: str) -> tuple[str, str]:
        if self.examples_dir is None or not _EXAMPLE_NAME.match(name):
            raise InputError(f"no example named {name!r}")
        path = (self.examples_dir / name).resolve()
        if path.parent != self.examples_dir or not path.is_file():
            raise InputError(f"no example named {name!r}")
        return path.read_text(), str(path)

    def create_team(
        self,
        *,
        example: str | None,
        card: str | None,
        source: str,
        metadata: Mapping[str, str] | None,
    ) -> dict[str, Any]:
        """Create a team from an example's name or a card's YAML text, as ``team create``."""
        from akgentic.agent.session import model_problem
        from akgentic.cluster.admission import check_host_processes

        if (example is None) == (card is None):
            raise InputError("give exactly one of 'example' (a name) and 'card' (YAML text)")
        if example is not None:
            text, origin = self._example_text(example)
        else:
            text, origin = str(card), source
        team_card = self.manager.parse_card(text, origin)
        check_host_processes(
            team_card, allowed=self.allow_host_processes, source="a team created in the console"
        )
        problem = model_problem(team_card)
        if problem is not None:
            raise InputError(problem)
        runtime = self.manager.create_team(team_card, metadata=dict(metadata) if metadata else None)
        return self._summary(self._process(runtime.id))

    def team(self, team_id: UUID) -> dict[str, Any]:
        """The team's record, whether it runs here, its commands and its event count."""
        process = self._process(team_id)
        info = self._summary(process)
        info["event_count"] = self.manager.event_store.get_max_sequence(team_id)
        info["commands"] = self.hub.commands(team_id)
        return info

    def stop(self, team_id: UUID) -> dict[str, Any]:
        """Stop the team (or mark a team whose process is gone as stopped)."""
        self.manager.stop_team(team_id)
        self.hub.publish(team_id, {"kind": "status", "status": "stopped"})
        return self._summary(self._process(team_id))

    def resume(self, team_id: UUID) -> dict[str, Any]:
        """Resume a stopped team in this console."""
        self.manager.resume_team(team_id)
        self.hub.publish(team_id, {"kind": "status", "status": "running"})
        return self._summary(self._process(team_id))

    def delete(self, team_id: UUID, confirm: str | None) -> dict[str, Any]:
        """Delete a stopped team; ``confirm`` must repeat its id."""
        if confirm != str(team_id):
            raise InputError("deleting a team needs confirm=<the team's id>")
        self.manager.delete_team(team_id)
        self._history.forget(team_id)
        with self._pictures_lock:
            self._pictures.pop(team_id, None)
        return {"team_id": str(team_id), "deleted": True}

    def fork(self, team_id: UUID, at: int, name: str | None) -> dict[str, Any]:
        """Fork a team at event ``at`` (running or not; see ``TeamManager.fork_team``)."""
        self._process(team_id)
        self._flush(team_id)  # what the page showed is acknowledged before it is read
        result = self.manager.fork_team(team_id, at, name)
        info = self._summary(self._process(result.team_id))
        info["interrupted"] = list(result.interrupted)
        info["notes"] = list(result.notes)
        return info

    def lineage(self, team_id: UUID) -> dict[str, Any]:
        """Where a team comes from and every fork of it (see ``akgentic team lineage``)."""
        from akgentic.team.fork import lineage_of

        process = self._process(team_id)
        family = lineage_of(self.manager.list_teams(), team_id)
        family["team"] = self._summary(process)
        return family

    # -- the team page ------------------------------------------------------------
    def events(
        self,
        team_id: UUID,
        *,
        before: int | None,
        limit: int,
        kind: str | None,
        type_: str | None,
        member: str | None,
    ) -> dict[str, Any]:
        """A page of rows, newest last, ending before sequence ``before`` (the end: None).

        ``total`` is the number of matching rows when it is known without reading
        the whole log, else ``None``; ``next_before`` is where the next (older)
        page ends, ``None`` at the start of the log.
        """
        self._process(team_id)
        self._flush(team_id)
        limit = max(1, min(limit, _MAX_PAGE))
        filtered = bool(kind or type_ or member)
        total: int | None
        # The newest page is cut from the store, so a long log opens at once; paging
        # back loads the log into memory once (the roster and questions need it too).
        if before is not None or self._history.cached(team_id):
            _events, rows = self._history.get(self.manager, team_id)
            if filtered:
                rows = [r for r in rows if _matches(r, kind, type_, member)]
            page, more = _page_of_rows(rows, before, limit)
            total = len(rows)
        else:
            page, more = self._page_from_store(team_id, before, limit, kind, type_, member)
            total = None if filtered else self.manager.event_store.get_max_sequence(team_id)
        return {
            "events": page,
            "total": total,
            "next_before": page[0]["seq"] if more and page else None,
        }

    def _page_from_store(
        self,
        team_id: UUID,
        before: int | None,
        limit: int,
        kind: str | None,
        type_: str | None,
        member: str | None,
    ) -> tuple[list[dict[str, Any]], bool]:
        """Read the log backward in windows until ``limit`` rows match (a team not in memory)."""
        from akgentic.team.store import load_events_page

        store = self.manager.event_store
        window = limit if not (kind or type_ or member) else max(2 * limit, _SCAN_WINDOW)
        found: list[dict[str, Any]] = []
        end = before
        while True:
            chunk = load_events_page(store, team_id, before_sequence=end, limit=window, newest=True)
            rows = [event_row(e.event, e.sequence) for e in chunk]
            matching = [r for r in rows if _matches(r, kind, type_, member)]
            found = matching + found
            at_start = len(chunk) < window or chunk[0].sequence <= 1
            if len(found) >= limit or at_start or not chunk:
                break
            end = chunk[0].sequence
        more = len(found) > limit or (not at_start and bool(found))
        return found[-limit:], more

    def event_json(self, team_id: UUID, sequence: int) -> dict[str, Any]:
        """One stored event as the store holds it (for the inspector)."""
        from akgentic.team.store import load_events_page

        self._process(team_id)
        found = load_events_page(
            self.manager.event_store,
            team_id,
            after_sequence=sequence - 1,
            before_sequence=sequence + 1,
        )
        for stored in found:
            if stored.sequence == sequence:
                return {"seq": sequence, "event": stored.model_dump(mode="json")}
        raise MissingError(f"team {team_id} has no event {sequence}")

    def stored_events(self, team_id: UUID) -> list[PersistedEvent]:
        """The team's stored log, decoded, oldest first, once what is queued is written.

        For views computed from the log (a protocol stream, say). The decoded log
        is the one the console's own history, roster and questions read, cached
        per team: a call reads only the events stored since the last one. The list
        is shared; read it, never change it.
        """
        if self.manager.get_runtime(team_id) is None:
            self._process(team_id)  # a team that runs here exists; else 404 when unknown
        self._flush(team_id)
        events, _rows = self._history.get(self.manager, team_id)
        return events

    def stored_events_upto(self, team_id: UUID, top: int) -> list[PersistedEvent]:
        """:meth:`stored_events` holding at least up to ``top``, without waiting for the store.

        ``top`` is a sequence the caller knows is stored (a running team's
        ``PersistenceSubscriber.durable_sequence`` after ``await durable()``): only
        the events after the cached ones are read, and nothing queued is waited for.
        """
        cached = self._history.peek(team_id, top)
        if cached is not None:
            return cached
        if self.manager.get_runtime(team_id) is None:
            self._process(team_id)
        events, _rows = self._history.get(self.manager, team_id, top)
        return events

    def cached_events(self, team_id: UUID, top: int) -> list[PersistedEvent] | None:
        """The decoded log when it is in memory up to ``top`` already, else None.

        No store access and no lock held for long: callable on an event loop, to
        spare a thread hop when the log is current.
        """
        return self._history.peek(team_id, top)

    def roster(self, team_id: UUID) -> list[dict[str, Any]]:
        """The team's members with role, model, busy/idle and token usage."""
        self._process(team_id)
        self._flush(team_id)
        events, _rows = self._history.get(self.manager, team_id)
        states = self.manager.event_store.load_agent_states(team_id)
        runtime = self.manager.get_runtime(team_id)
        live = None
        if runtime is not None:
            try:
                live = [m.name for m in runtime.members]
            except Exception:  # stopping right now: show the stored roster
                live = None
        return roster([e.event for e in events], states, self.hub.busy(team_id), live)

    def questions(self, team_id: UUID) -> list[dict[str, Any]]:
        """Requests sent to the team's human that are not answered yet."""
        self._process(team_id)
        self._flush(team_id)
        events, _rows = self._history.get(self.manager, team_id)
        return pending_questions([(e.sequence, e.event) for e in events])

    def answer(self, team_id: UUID, question_id: str, text: str) -> dict[str, Any]:
        """Answer a pending question as the human it was sent to."""
        from akgentic.core.messages.orchestrator import SentMessage

        if not text.strip():
            raise InputError("an answer must not be empty")
        runtime = self._runtime(team_id)
        open_ids = {q["id"] for q in self.questions(team_id)}
        if question_id not in open_ids:
            raise ConflictError(f"no open question {question_id!r} in team {team_id}")
        events, _rows = self._history.get(self.manager, team_id)
        for stored in events:
            sent = stored.event
            if isinstance(sent, SentMessage) and str(sent.message.id) == question_id:
                question = sent.message.model_copy(update={"recipient": sent.recipient})
                try:
                    runtime.process_human_input(text, question)
                except ValueError as exc:
                    raise ConflictError(str(exc)) from None
                return {"answered": question_id}
        raise ConflictError(f"no open question {question_id!r} in team {team_id}")

    def send(self, team_id: UUID, text: str) -> dict[str, Any]:
        """Deliver a line as the human: ``@Member text``, ``/command`` or to the supervisors."""
        from akgentic.agent.session import route_line

        if not text.strip():
            raise InputError("a message must not be empty")
        runtime = self._runtime(team_id)
        problem = route_line(runtime, text)
        if problem is not None:
            raise InputError(problem)
        return {"sent": True}

    def panes(self, team_id: UUID) -> list[dict[str, Any]]:
        """The tool panes of the team (plugins' panes, else the latest context states)."""
        process = self._process(team_id)
        self._flush(team_id)
        states = self.manager.event_store.load_agent_states(team_id)
        events, _rows = self._history.get(self.manager, team_id)
        return team_panes(
            team_id, process.team_card, states, self.manager.registry, [e.event for e in events]
        )

    def pane_item(self, team_id: UUID, name: str, key: str) -> dict[str, Any]:
        """One item of an openable pane (a file of the workspace tree, say) as blocks."""
        from akgentic.console.panes import open_pane_item

        process = self._process(team_id)
        states = self.manager.event_store.load_agent_states(team_id)
        events, _rows = self._history.get(self.manager, team_id)
        try:
            blocks = open_pane_item(
                team_id,
                process.team_card,
                states,
                self.manager.registry,
                name,
                key,
                [e.event for e in events],
            )
        except LookupError as exc:
            raise MissingError(str(exc) or f"no item {key!r} in pane {name!r}") from None
        except ValueError as exc:
            raise InputError(str(exc)) from None
        if blocks is None:
            raise MissingError(f"team {team_id} has no pane {name!r} that opens items")
        return {"pane": name, "key": key, "blocks": blocks}

    # -- pictures ---------------------------------------------------------------------
    def _budget(self, process: Process, messages: list[Message]) -> ChartBudget | None:
        try:
            return chart_budget(self.budget_of(process, messages))
        except Exception as exc:  # a broken budget source costs the line, never the chart
            logger.warning("budget of team %s unavailable: %s", process.team_id, exc)
            return None

    def pictures(self, team_id: UUID) -> dict[str, Any]:
        """The team's graph, usage chart and timeline, as SVG documents computed from its log.

        Drawn again only when the log grew or the budget changed: every page open on
        a team asks after each burst of its stream, and they share one drawing.
        """
        process = self._process(team_id)
        self._flush(team_id)
        events, _rows = self._history.get(self.manager, team_id)
        messages = [e.event for e in events]
        budget = self._budget(process, messages)
        key = (events[-1].sequence if events else 0, repr(budget))
        with self._pictures_lock:
            cached = self._pictures.get(team_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        drawn = team_pictures(messages, budget)
        with self._pictures_lock:
            self._pictures[team_id] = (key, drawn)
            self._pictures.move_to_end(team_id)
            while len(self._pictures) > _CACHED_TEAMS:
                self._pictures.popitem(last=False)
        return drawn

    def picture(self, team_id: UUID, name: PictureName) -> str:
        """One of the team's pictures (``graph``, ``usage``, ``timeline``) as an SVG document."""
        svg: str = self.pictures(team_id)[name]["svg"]
        return svg
