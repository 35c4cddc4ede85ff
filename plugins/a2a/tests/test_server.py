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
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import UnsupportedOperationError

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.testing.console import running_console

from .conftest import QUESTION, EchoScript, echo_card

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
    server, _client, team_id = served

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


def test_tasks_get_after_a_restart_returns_the_same_task(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"

    async def first(server: Any, team_id: str) -> tuple[Any, Any]:
        async with a2a_client(server, team_id) as client:
            sent = (await final(client, user_message("remember me"))).task
            return sent, await client.get_task(GetTaskRequest(id=sent.id))

    async def again(server: Any, team_id: str, task_id: str) -> Any:
        async with a2a_client(server, team_id) as client:
            return await client.get_task(GetTaskRequest(id=task_id))

    with running_console(store) as (server, client):
        team_id = client.post("/api/teams", json={"card": echo_card(llm)}).json()["team_id"]
        sent, before = asyncio.run(first(server, team_id))
    with running_console(store) as (server, client):
        assert client.get(f"/api/teams/{team_id}").json()["status"] == "stopped"
        after = asyncio.run(again(server, team_id, sent.id))
    assert after == before
    assert after.status.state == TaskState.TASK_STATE_COMPLETED
    assert after.artifacts[0].parts[0].text == "Echo: remember me"


def test_a_question_is_input_required_and_the_next_message_answers_it(
    served: tuple[Any, httpx.Client, str],
) -> None:
    server, client, team_id = served

    async def talk() -> tuple[Any, Any, Any]:
        async with a2a_client(server, team_id) as a2a:
            asked = (await final(a2a, user_message("please ask me"))).task
            answered = (await final(a2a, user_message("blue", asked.id, asked.context_id))).task
            got = await a2a.get_task(GetTaskRequest(id=asked.id))
            return asked, answered, got

    asked, answered, got = asyncio.run(talk())
    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert asked.status.message.parts[0].text == QUESTION
    assert answered.id == asked.id
    assert answered.status.state == TaskState.TASK_STATE_COMPLETED
    assert answered.status.message.parts[0].text == "Noted: blue"
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    assert [m.parts[0].text for m in got.history] == ["please ask me", QUESTION, "blue"]
    # The console sees the same question answered.
    assert client.get(f"/api/teams/{team_id}/questions").json() == []


def test_streaming_sends_the_task_its_updates_and_the_final_status(
    served: tuple[Any, httpx.Client, str],
) -> None:
    server, _client, team_id = served

    async def talk() -> list[Any]:
        async with a2a_client(server, team_id, streaming=True) as a2a:
            return [event async for event in a2a.send_message(user_message("stream it"))]

    events = asyncio.run(talk())
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task"
    assert "artifact_update" in kinds
    last = events[-1]
    assert last.WhichOneof("payload") == "status_update"
    assert last.status_update.status.state == TaskState.TASK_STATE_COMPLETED
    artifact = next(e.artifact_update for e in events if e.HasField("artifact_update"))
    assert artifact.artifact.parts[0].text == "Echo: stream it"


def test_subscribe_follows_a_task_opened_without_streaming_and_refuses_a_finished_one(
    served: tuple[Any, httpx.Client, str], script: EchoScript
) -> None:
    server, _client, team_id = served

    async def talk() -> tuple[Any, list[Any], str]:
        async with a2a_client(server, team_id, streaming=True) as streamer:
            async with a2a_client(server, team_id) as a2a:
                request = user_message("hold this")
                request.configuration.CopyFrom(SendMessageConfiguration(return_immediately=True))
                opened = (await final(a2a, request)).task
            assert await asyncio.to_thread(script.holding.wait, 60)
            events: list[Any] = []
            async with asyncio.timeout(60):
                async for event in streamer.subscribe(SubscribeToTaskRequest(id=opened.id)):
                    events.append(event)
                    if len(events) == 1:
                        script.release.set()  # the turn ends only once the stream follows it
            with pytest.raises(UnsupportedOperationError) as refused:
                async for _event in streamer.subscribe(SubscribeToTaskRequest(id=opened.id)):
                    pass
            return opened, events, str(refused.value)

    opened, events, refusal = asyncio.run(talk())
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task" and events[0].task.id == opened.id
    assert events[0].task.status.state != TaskState.TASK_STATE_COMPLETED
    artifact = next(e.artifact_update for e in events if e.HasField("artifact_update"))
    assert artifact.artifact.parts[0].text == "Echo: hold this"
    assert kinds[-1] == "status_update"
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert "terminal state" in refusal


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "akgentic_a2a"]


async def _client_for(server: Any, url: str, http: httpx.AsyncClient) -> Any:
    from a2a.client import minimal_agent_card

    factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
    return factory.create(minimal_agent_card(url, ["JSONRPC"]))


def test_an_unknown_team_is_a_json_rpc_error_naming_it(
    served: tuple[Any, httpx.Client, str], caplog: pytest.LogCaptureFixture
) -> None:
    from a2a.utils.errors import InvalidParamsError

    server, client, _team_id = served
    missing = str(uuid.uuid4())

    async def talk() -> None:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with httpx.AsyncClient(headers=headers, timeout=60) as http:
            a2a = await _client_for(server, f"{server.url}a2a/{missing}", http)
            with pytest.raises(InvalidParamsError, match=f"unknown team {missing}"):
                await final(a2a, user_message("anyone?"))
            with pytest.raises(InvalidParamsError, match="unknown team"):
                await a2a.get_task(GetTaskRequest(id="x"))

    asyncio.run(talk())
    assert client.get(f"/a2a/{missing}/.well-known/agent-card.json").status_code == 404
    lines = [line for line in _errors(caplog) if missing in line]
    assert len(lines) == 3 and all("\n" not in line for line in lines)


def test_an_unknown_task_is_task_not_found(
    served: tuple[Any, httpx.Client, str], caplog: pytest.LogCaptureFixture
) -> None:
    from a2a.utils.errors import TaskNotFoundError

    server, _client, team_id = served

    async def talk() -> None:
        async with a2a_client(server, team_id) as a2a:
            with pytest.raises(TaskNotFoundError):
                await a2a.get_task(GetTaskRequest(id="no-such-task"))
            with pytest.raises(TaskNotFoundError):
                await final(a2a, user_message("continue", "no-such-task"))

    asyncio.run(talk())
    assert len([line for line in _errors(caplog) if "TaskNotFoundError" in line]) == 2


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod", "params": {}}', -32601),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": 5}}', -32602),
    ],
)
def test_malformed_json_rpc_gets_an_error_object(
    served: tuple[Any, httpx.Client, str], body: bytes, code: int
) -> None:
    _server, client, team_id = served
    response = client.post(
        f"/a2a/{team_id}",
        content=body,
        headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
    )
    assert response.status_code == 200
    assert response.json()["error"]["code"] == code


def test_oversized_messages_are_refused(
    served: tuple[Any, httpx.Client, str], caplog: pytest.LogCaptureFixture
) -> None:
    from a2a.utils.errors import InvalidParamsError
    from akgentic_a2a.server import MAX_BODY_BYTES, MAX_TEXT_BYTES

    server, client, team_id = served
    huge = client.post(
        f"/a2a/{team_id}",
        content=b"x" * (MAX_BODY_BYTES + 1),
        headers={"Content-Type": "application/json"},
    )
    assert huge.json()["error"]["code"] == -32600
    assert "too large" in huge.json()["error"]["message"]

    async def talk() -> None:
        async with a2a_client(server, team_id) as a2a:
            with pytest.raises(InvalidParamsError, match="over the limit"):
                await final(a2a, user_message("y" * (MAX_TEXT_BYTES + 1)))

    asyncio.run(talk())
    assert any("over the limit" in line for line in _errors(caplog))
    assert any("too large" in line for line in _errors(caplog))


def test_a2a_text_never_runs_as_a_slash_command(served: tuple[Any, httpx.Client, str]) -> None:
    from a2a.utils.errors import InvalidParamsError

    server, client, team_id = served

    async def talk() -> None:
        async with a2a_client(server, team_id) as a2a:
            with pytest.raises(InvalidParamsError, match="never run as a command"):
                await final(a2a, user_message("  /stop"))

    asyncio.run(talk())
    rows = client.get(f"/api/teams/{team_id}/events", params={"kind": "message"}).json()
    assert not any("/stop" in (row["content"] or "") for row in rows["events"])


def test_a_message_to_a_passivated_team_wakes_it_and_completes_its_task(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    from akgentic.testing import wait_until

    with running_console(f"sqlite:///{tmp_path / 'store.db'}") as (server, client):
        card = echo_card(llm) + "passivate_after: 0.5\n"
        created = client.post("/api/teams", json={"card": card})
        assert created.status_code == 201, created.text
        team_id = created.json()["team_id"]

        def status() -> str:
            found: str = client.get(f"/api/teams/{team_id}").json()["status"]
            return found

        wait_until(lambda: status() == "passivated", timeout=60, interval=0.1)

        async def talk() -> Any:
            async with a2a_client(server, team_id) as a2a:
                return (await final(a2a, user_message("wake up"))).task

        sent = asyncio.run(talk())
        assert sent.status.state == TaskState.TASK_STATE_COMPLETED
        assert [p.text for a in sent.artifacts for p in a.parts] == ["Echo: wake up"]
        assert status() == "running"
