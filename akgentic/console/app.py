"""The console's ASGI application: REST API under ``/api/``, the event stream, the page.

:func:`create_app` wires a :class:`~akgentic.console.service.ConsoleService` into
FastAPI. Reads are ``GET``; everything that changes a team is ``POST`` or
``DELETE``. The OpenAPI document is at ``/api/openapi.json``. The stream
(``GET /api/teams/{id}/stream``) is Server-Sent Events: one ``data:`` line of
JSON per row (see :func:`akgentic.console.views.event_row`), ``{"kind":
"status"}`` when the team stops or resumes and ``{"kind": "reset"}`` when the
client fell behind and must reload its history.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path as FilePath
from typing import Annotated, Any
from uuid import UUID

from fastapi import FastAPI, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from akgentic.console.hub import StreamClient
from akgentic.console.pictures import PictureName
from akgentic.console.security import AccessGuard
from akgentic.console.service import ConflictError, ConsoleService, InputError, MissingError
from akgentic.console.web_routes import mount_web_routes

__all__ = ["STATIC_DIR", "create_app"]

STATIC_DIR = FilePath(__file__).resolve().parent / "static"
#: Seconds between keep-alive comments on an idle stream.
KEEP_ALIVE = 15.0


def _encodable(text: str) -> str:
    """Refuse text that is not valid Unicode (a JSON ``\\ud800`` escape decodes to a lone
    surrogate, which no store, file or response can encode)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text must be valid Unicode (no lone surrogate)") from None
    return text


Encodable = AfterValidator(_encodable)
Text = Annotated[str, Field(max_length=100_000), Encodable]
Name = Annotated[str, Field(max_length=200), Encodable]


class CreateTeam(BaseModel):
    """Create a team from one of the examples (by file name) or from a card's YAML text."""

    model_config = ConfigDict(extra="forbid")
    example: Name | None = None
    card: Annotated[str, Field(max_length=1_000_000), Encodable] | None = None
    source: Name = "uploaded card"
    metadata: dict[Name, Text] | None = None


class ForkTeam(BaseModel):
    """Fork a team at event ``at`` (its last event in the fork), optionally named."""

    model_config = ConfigDict(extra="forbid")
    at: int = Field(ge=1, le=2**62)
    name: Name | None = None


class SendText(BaseModel):
    """A line typed by the human: ``text``, ``@Member text`` or ``/command args``."""

    model_config = ConfigDict(extra="forbid")
    text: Text


def _error(status: int, detail: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"detail": detail, **extra}, status_code=status)


def _install_errors(app: FastAPI) -> None:
    """The CLI's errors, as HTTP statuses: invalid input 4xx, impossible in the state 409."""
    from fastapi.exceptions import RequestValidationError
    from pydantic import ValidationError

    from akgentic.plugins import PluginError, UnknownPluginNameError
    from akgentic.team.card_yaml import TeamCardValidationError
    from akgentic.team.errors import (
        EventStoreError,
        ForkPointError,
        ForkRefusedError,
        TeamCardError,
        TeamNotFoundError,
        TeamStateError,
    )

    @app.exception_handler(RequestValidationError)
    async def _request(request: Request, exc: RequestValidationError) -> Response:
        # The input is not echoed: it may be huge (a card) or not encodable (a lone
        # surrogate), and the client has it anyway.
        problems = [
            {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": e.get("type")}
            for e in exc.errors()
        ]
        body = json.dumps({"detail": problems}, ensure_ascii=True, default=str)
        return Response(body, status_code=422, media_type="application/json")

    @app.exception_handler(TeamCardValidationError)
    async def _card(request: Request, exc: TeamCardValidationError) -> JSONResponse:
        return _error(
            422, f"{exc.source}: invalid team card", problems=[str(p) for p in exc.problems]
        )

    async def _status(status: int, exc: Exception) -> JSONResponse:
        return _error(status, str(exc))

    table: list[tuple[type[Exception], int]] = [
        (TeamNotFoundError, 404),
        (MissingError, 404),
        (TeamStateError, 409),
        (ConflictError, 409),
        (InputError, 400),
        (ForkPointError, 400),
        (ForkRefusedError, 409),
        (TeamCardError, 422),
        (ValidationError, 422),
        (UnknownPluginNameError, 422),
        (PluginError, 409),
        (EventStoreError, 503),
    ]
    for error_type, status in table:

        async def handler(request: Request, exc: Exception, status: int = status) -> JSONResponse:
            if isinstance(exc, EventStoreError) and isinstance(exc, ValueError):
                return await _status(422, exc)
            return await _status(status, exc)

        app.add_exception_handler(error_type, handler)


def create_app(
    service: ConsoleService, *, token: str, loopback: bool, origin: str | None = None
) -> AccessGuard:
    """The whole console as one ASGI application, behind the :class:`AccessGuard`.

    ``origin`` is the public origin (``https://console.example.com``) when a reverse
    proxy serves the console under another name: writes from it are accepted.
    """
    app = FastAPI(
        title="akgentic console",
        version="1",
        openapi_url="/api/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    _install_errors(app)

    async def run(function: Any, *args: Any, **kwargs: Any) -> Any:
        return await run_in_threadpool(function, *args, **kwargs)

    # -- teams --------------------------------------------------------------------
    @app.get("/api/teams", tags=["teams"])
    async def list_teams(
        status: Annotated[str | None, Query(max_length=20)] = None,
        q: Annotated[str | None, Query(max_length=200)] = None,
        metadata: Annotated[list[str] | None, Query(max_length=50)] = None,
    ) -> list[dict[str, Any]]:
        """Teams, filtered by status, metadata (``KEY=VALUE``, all must match) and a search."""
        filters: dict[str, str] = {}
        for item in metadata or []:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise InputError(f"metadata must be KEY=VALUE, got {item!r}")
            filters[key.strip()] = value
        rows: list[dict[str, Any]] = await run(service.list_teams, status, q, filters)
        return rows

    @app.post("/api/teams", status_code=201, tags=["teams"])
    async def create_team(body: CreateTeam) -> dict[str, Any]:
        """Create and start a team (the same checks as ``akgentic team create``)."""
        created: dict[str, Any] = await run(
            lambda: service.create_team(
                example=body.example, card=body.card, source=body.source, metadata=body.metadata
            )
        )
        return created

    @app.get("/api/examples", tags=["teams"])
    async def examples() -> list[dict[str, str]]:
        """The example team cards a team can be created from."""
        found: list[dict[str, str]] = await run(service.examples)
        return found

    @app.get("/api/teams/{team_id}", tags=["teams"])
    async def team(team_id: UUID) -> dict[str, Any]:
        """One team: its record, whether it runs in this console, its slash commands."""
        info: dict[str, Any] = await run(service.team, team_id)
        return info

    @app.post("/api/teams/{team_id}/stop", tags=["teams"])
    async def stop(team_id: UUID) -> dict[str, Any]:
        """Stop a running team (a team whose process is gone is marked stopped)."""
        info: dict[str, Any] = await run(service.stop, team_id)
        return info

    @app.post("/api/teams/{team_id}/resume", tags=["teams"])
    async def resume(team_id: UUID) -> dict[str, Any]:
        """Resume a stopped team from its log, in this console."""
        info: dict[str, Any] = await run(service.resume, team_id)
        return info

    @app.delete("/api/teams/{team_id}", tags=["teams"])
    async def delete(
        team_id: UUID, confirm: Annotated[str | None, Query(max_length=64)] = None
    ) -> dict[str, Any]:
        """Delete a stopped team; ``confirm`` must repeat the team's id."""
        info: dict[str, Any] = await run(service.delete, team_id, confirm)
        return info

    @app.post("/api/teams/{team_id}/fork", status_code=201, tags=["teams"])
    async def fork(team_id: UUID, body: ForkTeam) -> dict[str, Any]:
        """A new team of this team's events up to ``at``, workspace included; stopped."""
        made: dict[str, Any] = await run(service.fork, team_id, body.at, body.name)
        return made

    @app.get("/api/teams/{team_id}/lineage", tags=["teams"])
    async def lineage(team_id: UUID) -> dict[str, Any]:
        """The team's ancestors (root first, with fork points) and its forks, as a tree."""
        family: dict[str, Any] = await run(service.lineage, team_id)
        return family

    # -- a team's page --------------------------------------------------------------
    @app.get("/api/teams/{team_id}/events", tags=["team page"])
    async def events(
        team_id: UUID,
        before: Annotated[int | None, Query(ge=1, le=2**62)] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 200,
        kind: Annotated[str | None, Query(max_length=20)] = None,
        type: Annotated[str | None, Query(max_length=200)] = None,
        member: Annotated[str | None, Query(max_length=200)] = None,
    ) -> dict[str, Any]:
        """A page of the history (oldest first) ending before sequence ``before``."""
        page: dict[str, Any] = await run(
            lambda: service.events(
                team_id, before=before, limit=limit, kind=kind, type_=type, member=member
            )
        )
        return page

    @app.get("/api/teams/{team_id}/events/{seq}", tags=["team page"])
    async def event(team_id: UUID, seq: Annotated[int, Path(ge=1, le=2**62)]) -> dict[str, Any]:
        """One stored event, as the store holds it."""
        found: dict[str, Any] = await run(service.event_json, team_id, seq)
        return found

    @app.get("/api/teams/{team_id}/roster", tags=["team page"])
    async def members(team_id: UUID) -> list[dict[str, Any]]:
        """Members: role, model, busy or idle, token usage."""
        rows: list[dict[str, Any]] = await run(service.roster, team_id)
        return rows

    @app.get("/api/teams/{team_id}/questions", tags=["team page"])
    async def questions(team_id: UUID) -> list[dict[str, Any]]:
        """Requests sent to the human that are still unanswered."""
        rows: list[dict[str, Any]] = await run(service.questions, team_id)
        return rows

    @app.post("/api/teams/{team_id}/questions/{question_id}/answer", tags=["team page"])
    async def answer(
        team_id: UUID, question_id: Annotated[str, Path(max_length=64)], body: SendText
    ) -> dict[str, Any]:
        """Answer a pending question as the human it was asked."""
        done: dict[str, Any] = await run(service.answer, team_id, question_id, body.text)
        return done

    @app.post("/api/teams/{team_id}/messages", status_code=202, tags=["team page"])
    async def send(team_id: UUID, body: SendText) -> dict[str, Any]:
        """Send as the human: to the supervisors, to ``@Member``, or a ``/command``."""
        done: dict[str, Any] = await run(service.send, team_id, body.text)
        return done

    @app.get("/api/teams/{team_id}/panes", tags=["team page"])
    async def panes(team_id: UUID) -> list[dict[str, Any]]:
        """The tool panes of the team."""
        rows: list[dict[str, Any]] = await run(service.panes, team_id)
        return rows

    @app.get("/api/teams/{team_id}/panes/{name}/item", tags=["team page"])
    async def pane_item(
        team_id: UUID,
        name: Annotated[str, Path(max_length=200)],
        key: Annotated[str, Query(max_length=4_000)],
    ) -> dict[str, Any]:
        """One item of an openable pane (e.g. a workspace file), as blocks."""
        found: dict[str, Any] = await run(service.pane_item, team_id, name, key)
        return found

    @app.get("/api/teams/{team_id}/pictures", tags=["team page"])
    async def pictures(team_id: UUID) -> dict[str, Any]:
        """The team's graph, usage chart and timeline, each an SVG document from its log."""
        found: dict[str, Any] = await run(service.pictures, team_id)
        return found

    @app.get(
        "/api/teams/{team_id}/pictures/{name}.svg",
        tags=["team page"],
        response_class=Response,
        responses={200: {"content": {"image/svg+xml": {}}}},
    )
    async def picture(team_id: UUID, name: PictureName) -> Response:
        """One picture of the team (``graph``, ``usage`` or ``timeline``) as SVG."""
        svg: str = await run(service.picture, team_id, name)
        return Response(svg, media_type="image/svg+xml")

    @app.get(
        "/api/teams/{team_id}/stream",
        tags=["team page"],
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def stream(team_id: UUID) -> StreamingResponse:
        """Server-Sent Events: every message of the team from now on, as rows."""
        await run(service.team, team_id)  # 404 for an unknown team
        client = StreamClient(asyncio.get_running_loop())
        service.hub.connect(team_id, client)

        async def rows() -> AsyncIterator[str]:
            try:
                yield "retry: 2000\n: connected\n\n"
                while True:
                    try:
                        row = await asyncio.wait_for(client.queue.get(), KEEP_ALIVE)
                    except TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    if row.get("kind") == "bye":
                        return
                    if row.get("kind") == "reset":
                        client.drained()
                    yield f"data: {json.dumps(row, ensure_ascii=False)}\n\n"
            finally:
                service.hub.disconnect(team_id, client)

        return StreamingResponse(
            rows(), media_type="text/event-stream", headers={"X-Accel-Buffering": "no"}
        )

    # -- the page -------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    # Plugins' routes (A2A, AG-UI...) sit inside the app, so the guard below covers them.
    mount_web_routes(app, service)
    return AccessGuard(app, token, loopback=loopback, origin=origin)
