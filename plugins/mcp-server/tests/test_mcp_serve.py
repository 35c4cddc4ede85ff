"""``akgentic mcp serve``: a team served over stdio and streamable HTTP to the real SDK client.

The team is ``examples/replier-team.yaml``: ``@Replier`` answers ``Echo: <text>``, asks
the human a question back for ``ask me ...`` and says ``Noted: <answer>`` to an answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from akgentic_mcp_server.testing import SyncClient, child_env

from akgentic.testing.waiting import wait_until

Serve = Callable[..., AbstractContextManager[SyncClient]]
QUESTION = "Which colour should the report be?"


def _texts(rows: list[dict[str, Any]]) -> list[str]:
    return [row["content"] for row in rows]


def test_ask_over_stdio_returns_the_reply_and_reports_progress(serve_stdio: Serve) -> None:
    progress: list[str | None] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    with serve_stdio() as client:
        assert client.tools() == ["answer", "ask", "send", "status"]
        result = client.call("ask", {"text": "hello"}, progress_callback=on_progress)
        assert not result.is_error, client.text(result)
        assert client.text(result) == "Echo: hello"
        assert result.structured_content is not None
        assert result.structured_content["finished"] is True
        assert [r["from"] for r in result.structured_content["replies"]] == ["@Replier"]
        assert progress == ["@Replier → @Human: Echo: hello"]


def test_send_returns_at_once_and_the_reply_reaches_the_conversation(serve_stdio: Serve) -> None:
    with serve_stdio() as client:
        sent = client.call("send", {"text": "fire and forget"})
        assert not sent.is_error and sent.structured_content is not None
        assert sent.structured_content["sent"] is True
        wait_until(
            lambda: "Echo: fire and forget" in _texts(client.read("akgentic://team/conversation"))
        )
        status = client.call("status").structured_content
        assert status is not None
        assert status["running"] is True and status["name"] == "replier-team"
        assert [m["name"] for m in status["members"]] == ["@Human", "@Replier"]
        assert status["pending_questions"] == []


def test_a_question_to_the_human_is_answered_through_the_answer_tool(serve_stdio: Serve) -> None:
    with serve_stdio() as client:
        asked = client.call("ask", {"text": "ask me about the report"})
        assert client.text(asked).startswith(QUESTION)
        open_questions = client.call("status").structured_content
        assert open_questions is not None
        [question] = open_questions["pending_questions"]
        assert question["content"] == QUESTION and question["from"] == "@Replier"

        answered = client.call("answer", {"question_id": question["id"], "text": "blue"})
        assert not answered.is_error, client.text(answered)
        assert client.text(answered) == "Noted: blue"
        after = client.call("status").structured_content
        assert after is not None and after["pending_questions"] == []

        again = client.call("answer", {"question_id": question["id"], "text": "red"})
        assert again.is_error
        assert f"no open question '{question['id']}'" in client.text(again)
        unknown = client.call("answer", {"question_id": "not-an-id", "text": "red"})
        assert unknown.is_error and "no open question 'not-an-id'" in client.text(unknown)


def test_the_resources_list_the_members_and_the_conversation(serve_stdio: Serve) -> None:
    with serve_stdio() as client:
        client.call("ask", {"text": "one"})
        assert client.resources() == ["akgentic://team/conversation", "akgentic://team/members"]
        members = client.read("akgentic://team/members")
        assert [(m["name"], m["role"], m["human"]) for m in members] == [
            ("@Human", "Human", True),
            ("@Replier", "Replier", False),
        ]
        conversation = client.read("akgentic://team/conversation")
        assert [(r["from"], r["to"], r["content"]) for r in conversation] == [
            ("@Human", "@Replier", "one"),
            ("@Replier", "@Human", "Echo: one"),
        ]
        assert conversation[1]["parent_id"] == conversation[0]["id"]


def test_a_restarted_server_resumes_the_stored_team_with_its_conversation(
    serve_stdio: Serve,
) -> None:
    with serve_stdio() as client:
        client.call("ask", {"text": "before the restart"})
        first = client.call("status").structured_content
        assert first is not None
    team_id = first["team_id"]

    with serve_stdio(team_id) as client:
        status = client.call("status").structured_content
        assert status is not None
        assert status["team_id"] == team_id and status["running"] is True
        assert "Echo: before the restart" in _texts(client.read("akgentic://team/conversation"))
        assert client.text(client.call("ask", {"text": "after"})) == "Echo: after"
        texts = _texts(client.read("akgentic://team/conversation"))
        assert texts == ["before the restart", "Echo: before the restart", "after", "Echo: after"]


def test_an_oversized_message_is_a_tool_error_and_the_team_keeps_working(
    serve_stdio: Serve, errlog: Path
) -> None:
    with serve_stdio() as client:
        refused = client.call("ask", {"text": "x" * (64 * 1024 + 1)})
        assert refused.is_error
        assert "the message is 65537 bytes; the limit is 65536 bytes" in client.text(refused)
        empty = client.call("send", {"text": "  "})
        assert empty.is_error and "the message is empty" in client.text(empty)
        assert client.text(client.call("ask", {"text": "still here"})) == "Echo: still here"
    refusals = [line for line in errlog.read_text().splitlines() if "refused" in line]
    assert len(refusals) == 2 and "mcp tool ask refused: the message is 65537 bytes" in refusals[0]


def test_an_unknown_team_id_is_an_error_on_every_tool(
    serve_stdio: Serve, errlog: Path, store: str
) -> None:
    from akgentic.plugin_api import open_event_store

    open_event_store(store).close()  # the store exists; the team does not
    missing = str(uuid.uuid4())
    with serve_stdio(missing) as client:
        for tool, args in [("status", {}), ("ask", {"text": "hi"}), ("send", {"text": "hi"})]:
            result = client.call(tool, args)
            assert result.is_error
            assert f"cannot serve {missing}: no team {missing}" in client.text(result)
    lines = errlog.read_text().splitlines()
    [opening] = [line for line in lines if line.startswith("ERROR")]
    assert opening == f"ERROR akgentic_mcp_server: cannot serve {missing}: no team {missing} " + (
        "in the store " + f"sqlite:///{errlog.parent}/mcp.db"
    )
    assert len([line for line in lines if "refused: cannot serve" in line]) == 3


def test_a_team_id_in_a_store_that_is_not_there_is_an_error_and_creates_nothing(
    serve_stdio: Serve, tmp_path: Path
) -> None:
    missing = str(uuid.uuid4())
    with serve_stdio(missing) as client:
        result = client.call("status")
        assert result.is_error
        assert f"cannot serve {missing}: no store at {tmp_path / 'mcp.db'}" in client.text(result)
    assert not (tmp_path / "mcp.db").exists()


def test_a_bad_card_file_is_an_error_that_names_the_problem(
    serve_stdio: Serve, tmp_path: Path, card: Path
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(card.read_text().replace("replier_team.Replier", "replier_team.Nobody"))
    with serve_stdio(str(broken)) as client:
        result = client.call("status")
        assert result.is_error
        assert "invalid team card" in client.text(result) and "Nobody" in client.text(result)
        assert "\n" not in client.text(result)


def test_streamable_http_serves_ask_send_and_resumes_after_sigterm(serve_http: Serve) -> None:
    with serve_http() as client:
        assert client.text(client.call("ask", {"text": "over http"})) == "Echo: over http"
        client.call("send", {"text": "and again"})
        wait_until(lambda: "Echo: and again" in _texts(client.read("akgentic://team/conversation")))
        status = client.call("status").structured_content
        assert status is not None
    team_id = status["team_id"]

    with serve_http(team_id) as client:
        resumed = client.call("status").structured_content
        assert resumed is not None and resumed["team_id"] == team_id
        assert "Echo: and again" in _texts(client.read("akgentic://team/conversation"))


def test_the_example_client_prints_the_teams_answer(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[3] / "examples" / "mcp_client.py"
    result = subprocess.run(
        [sys.executable, str(script), f"sqlite:///{tmp_path}/example.db"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, **child_env()},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Echo: Hello from MCP!\n"


def test_the_latency_bench_prints_one_json_object_with_its_keys(tmp_path: Path) -> None:
    bench = Path(__file__).resolve().parents[3] / "bench" / "protocols" / "mcp_latency.py"
    result = subprocess.run(
        [sys.executable, str(bench), "--samples", "5"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, **child_env()},
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["samples"] == 5
    for key in ("direct_ms_p50", "mcp_stdio_ms_p50", "mcp_http_ms_p50"):
        assert isinstance(report[key], float)
