"""Routes a plugin serves from ``akgentic serve`` (hook ``akgentic_web_routes``).

An inline plugin mounts a small Starlette app; the console's access rules must cover
its HTTP routes and its websocket, a failing ``build`` costs only its own prefix, and
two plugins cannot claim one prefix.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from akgentic.plugins import (
    DuplicatePluginNameError,
    PluginInfo,
    WebRoutesSpec,
    current_registry,
    hookimpl,
)
from akgentic.testing import WebRoutesContract
from akgentic.testing.console import running_console


def build_echo(service: Any) -> Starlette:
    """Echo routes that also show they were given the console's service."""

    async def hello(request: Request) -> JSONResponse:
        teams = service.list_teams(None, None, {})
        return JSONResponse({"path": request.url.path, "teams": len(teams)})

    async def echo(request: Request) -> JSONResponse:
        return JSONResponse({"echo": (await request.body()).decode()})

    async def socket(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text("hello " + (await websocket.receive_text()))
        await websocket.close()

    return Starlette(
        routes=[
            Route("/", hello, methods=["GET"]),
            Route("/", echo, methods=["POST"]),
            WebSocketRoute("/ws", socket),
        ]
    )


class EchoRoutes:
    """A plugin serving :func:`build_echo` at ``/echo``."""

    @hookimpl
    def akgentic_web_routes(self) -> list[WebRoutesSpec]:
        return [WebRoutesSpec(name="echo", prefix="/echo", build=build_echo)]


class BrokenRoutes:
    """A plugin whose ``build`` fails."""

    @staticmethod
    def build(service: Any) -> Any:
        raise RuntimeError("the protocol library is missing")

    @hookimpl
    def akgentic_web_routes(self) -> list[WebRoutesSpec]:
        return [WebRoutesSpec(name="broken", prefix="/broken", build=self.build)]


class SquatterRoutes:
    """A plugin claiming the prefix :class:`EchoRoutes` serves."""

    @hookimpl
    def akgentic_web_routes(self) -> list[WebRoutesSpec]:
        return [WebRoutesSpec(name="squatter", prefix="/echo", build=build_echo)]


class TestEchoRoutesContract(WebRoutesContract):
    """The kit, on the inline plugin: it must pass, or the kit is wrong."""

    routes_name = "echo"
    plugin = EchoRoutes()
    probe_path = "/"

    def test_the_plugin_sees_the_console_service(self, served: tuple[Any, httpx.Client]) -> None:
        _server, client = served
        body = client.get("/echo/").json()
        assert body == {"path": "/echo/", "teams": 0}


@pytest.fixture
def with_store(register_plugin: Callable[..., PluginInfo]) -> Callable[..., PluginInfo]:
    from akgentic.builtin import sqlite_store

    register_plugin(sqlite_store, "test-sqlite")
    return register_plugin


def test_a_failing_build_answers_503_and_the_rest_works(
    tmp_path: Path, with_store: Callable[..., PluginInfo], caplog: pytest.LogCaptureFixture
) -> None:
    with_store(BrokenRoutes(), "broken")
    with_store(EchoRoutes(), "echo")
    with running_console(f"sqlite:///{tmp_path / 's.db'}") as (_server, client):
        broken = client.get("/broken/anything")
        assert broken.status_code == 503
        assert "the protocol library is missing" in broken.json()["detail"]
        assert client.get("/echo/").status_code == 200
        assert client.get("/api/teams").status_code == 200
    lines = [r.getMessage() for r in caplog.records if "broken" in r.getMessage()]
    assert len(lines) == 1 and "\n" not in lines[0]


def test_two_plugins_cannot_claim_one_prefix(with_store: Callable[..., PluginInfo]) -> None:
    with_store(EchoRoutes(), "echo")
    with_store(SquatterRoutes(), "squatter")
    with pytest.raises(DuplicatePluginNameError, match="/echo"):
        current_registry().web_routes()


@pytest.mark.parametrize(
    ("prefix", "why"),
    [
        ("/api", "belongs to the console"),
        ("/static", "belongs to the console"),
        ("/", "one lowercase path segment"),
        ("/a2a/x", "one lowercase path segment"),
        ("/A2A", "one lowercase path segment"),
        ("a2a", "one lowercase path segment"),
        ("/../api", "one lowercase path segment"),
    ],
)
def test_a_prefix_outside_the_rules_fails_the_check(prefix: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        WebRoutesSpec(name="x", prefix=prefix, build=build_echo).check()


def test_a_build_that_is_not_callable_fails_the_check() -> None:
    with pytest.raises(TypeError, match="build"):
        WebRoutesSpec(name="x", prefix="/x", build="not callable").check()  # type: ignore[arg-type]


def test_the_websocket_of_a_plugin_needs_the_token_and_the_own_origin(
    tmp_path: Path, with_store: Callable[..., PluginInfo]
) -> None:
    with_store(EchoRoutes(), "echo")
    with running_console(f"sqlite:///{tmp_path / 's.db'}") as (server, _client):
        url = f"ws://{server.host}:{server.port}/echo/ws"
        auth = {"Authorization": f"Bearer {server.token}"}
        with connect(url, additional_headers=auth, open_timeout=10) as socket:
            socket.send("you")
            assert socket.recv(timeout=10) == "hello you"
        with pytest.raises(InvalidStatus), connect(url, open_timeout=10):
            pass
        foreign = {**auth, "Origin": "https://elsewhere.example"}
        with (
            pytest.raises(InvalidStatus),
            connect(url, additional_headers=foreign, open_timeout=10),
        ):
            pass
