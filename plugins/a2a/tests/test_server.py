"""The A2A server: each team of ``akgentic serve`` as an A2A agent, read with the SDK client."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types.a2a_pb2 import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskState,
)

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.testing.console import running_console

from .conftest import QUESTION, echo_card

pytestmark = pytest.mark.usefixtures("with_a2a")


@pytest.fixture
def served(tmp_path: Path, llm: ScriptedLLMServer) -> Iterator[tuple[Any, httpx.Client, str]]:
    """A console over SQLite with one running echo team: (server, client, team id)."""
    with running_console(f"sqlite:///{tmp_path / 'store.db'}") as (server, client):
        created = client.post("/api/teams", json={"card": echo_card(llm)})
        assert created.status_code == 201, created.text
        yield server, client, created.json()["team_id"]


@asynccontextmanager
async def a2a_client(server: Any, team_id: str, *, streaming: bool = False) -> AsyncIterator[Any]:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming))
        client = await factory.create_from_url(f"{server.url}a2a/{team_id}")
        try:
            yield client
        finally:
            await client.close()


def user_message(text: str, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            message_id=str(uuid.uuid4()),
            role=Role.ROLE_USER,
            parts=[Part(text=text)],
            task_id=task_id,
            context_id=context_id,
        )
    )


async def final(client: Any, request: SendMessageRequest) -> Any:
    last = None
    async for response in client.send_message(request):
        last = response
    assert last is not None
    return last


def test_the_card_names_the_team_and_its_members(served: tuple[Any, httpx.Client, str]) -> None:
    server, client, team_id = served

    async def fetch() -> Any:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with httpx.AsyncClient(headers=headers, timeout=60) as http:
            return await A2ACardResolver(http, f"{server.url}a2a/{team_id}").get_agent_card()

    card = asyncio.run(fetch())
    assert card.name == "a2a-team"
    assert [(s.id, s.name) for s in card.skills] == [("@Worker", "Echoer")]
    assert card.skills[0].description == "Echoes every request and asks when told to"
    assert card.supported_interfaces[0].url == f"{server.url}a2a/{team_id}"
    assert card.capabilities.streaming


def test_a_message_completes_a_task_with_the_echo(served: tuple[Any, httpx.Client, str]) -> None:
    server, _client, team_id = served

    async def talk() -> tuple[Any, Any]:
        async with a2a_client(server, team_id) as client:
            sent = (await final(client, user_message("hello team"))).task
            got = await client.get_task(GetTaskRequest(id=sent.id))
            return sent, got

    sent, got = asyncio.run(talk())
    assert sent.status.state == TaskState.TASK_STATE_COMPLETED
    assert [p.text for a in sent.artifacts for p in a.parts] == ["Echo: hello team"]
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    assert got.status.message.parts[0].text == "Echo: hello team"
    assert got.history[0].parts[0].text == "hello team"
