"""The console's REST API and stream, against a real SQLite store and a scripted model."""

from __future__ import annotations

from typing import Any

import httpx

from akgentic.testing.console import StreamReader, running_console


def _create(client: httpx.Client, card_text: str) -> str:
    response = client.post("/api/teams", json={"card": card_text, "source": "team.yaml"})
    assert response.status_code == 201, response.text
    team_id: str = response.json()["team_id"]
    return team_id


def _said(text: str) -> Any:
    return lambda row: row["kind"] == "message" and (row["content"] or "").startswith(text)


def test_a_message_sent_as_the_human_is_answered_live_and_kept_in_the_history(
    store_url: str, card_text: str
) -> None:
    with running_console(store_url) as (_server, client):
        team_id = _create(client, card_text)
        reader = StreamReader(client, team_id)
        try:
            sent = client.post(f"/api/teams/{team_id}/messages", json={"text": "hello"})
            assert sent.status_code == 202
            row = reader.wait_for(_said("Echo: hello"))
            assert (row["sender"], row["recipient"], row["intent"]) == (
                "@Manager",
                "@Human",
                "response",
            )
            page = client.get(f"/api/teams/{team_id}/events", params={"kind": "message"}).json()
            contents = [r["content"] for r in page["events"]]
            assert "hello" in contents and "Echo: hello" in contents
            roster = {m["name"]: m for m in client.get(f"/api/teams/{team_id}/roster").json()}
            assert roster["@Manager"]["role"] == "Manager"
            assert roster["@Manager"]["model"].startswith("openai-chat:")
            assert roster["@Manager"]["input_tokens"] > 0
            assert roster["@Human"]["human"] is True
        finally:
            reader.close()


def test_a_question_for_the_human_is_pending_until_answered_and_survives_a_restart(
    store_url: str, card_text: str, question: str
) -> None:
    with running_console(store_url) as (_server, client):
        team_id = _create(client, card_text)
        client.post(f"/api/teams/{team_id}/messages", json={"text": "please ask me"})
        reader = StreamReader(client, team_id)
        try:
            questions: list[dict[str, Any]] = []
            for _ in range(100):
                questions = client.get(f"/api/teams/{team_id}/questions").json()
                if questions:
                    break
                reader.wait_for(lambda row: row["kind"] == "message", timeout=5)
        finally:
            reader.close()
        assert [q["content"] for q in questions] == [question]
    # A new console (the old one stopped the team on exit) still sees the question.
    with running_console(store_url) as (_server, client):
        assert client.get(f"/api/teams/{team_id}/questions").json() == questions
        refused = client.post(
            f"/api/teams/{team_id}/questions/{questions[0]['id']}/answer", json={"text": "blue"}
        )
        assert refused.status_code == 409 and "resume" in refused.json()["detail"]
        assert client.post(f"/api/teams/{team_id}/resume").json()["status"] == "running"
        reader = StreamReader(client, team_id)
        try:
            answered = client.post(
                f"/api/teams/{team_id}/questions/{questions[0]['id']}/answer", json={"text": "blue"}
            )
            assert answered.status_code == 200, answered.text
            reader.wait_for(_said("Noted: blue"))
        finally:
            reader.close()
        assert client.get(f"/api/teams/{team_id}/questions").json() == []
        again = client.post(
            f"/api/teams/{team_id}/questions/{questions[0]['id']}/answer", json={"text": "red"}
        )
        assert again.status_code == 409


def test_lifecycle_follows_the_cli_rules_with_http_statuses(store_url: str, card_text: str) -> None:
    with running_console(store_url) as (_server, client):
        team_id = _create(client, card_text)
        assert (
            client.delete(f"/api/teams/{team_id}", params={"confirm": team_id}).status_code == 409
        )
        assert client.post(f"/api/teams/{team_id}/resume").status_code == 409
        assert client.post(f"/api/teams/{team_id}/stop").json()["status"] == "stopped"
        sent = client.post(f"/api/teams/{team_id}/messages", json={"text": "hi"})
        assert sent.status_code == 409
        assert client.delete(f"/api/teams/{team_id}").status_code == 400  # no confirmation
        assert (
            client.delete(f"/api/teams/{team_id}", params={"confirm": team_id}).status_code == 200
        )
        assert client.get(f"/api/teams/{team_id}").status_code == 404
        unknown = "00000000-0000-4000-8000-000000000000"
        assert client.post(f"/api/teams/{unknown}/stop").status_code == 404
        assert client.get("/api/teams/not-a-uuid").status_code == 422


def test_invalid_cards_and_examples_outside_the_directory_are_refused(store_url: str) -> None:
    with running_console(store_url) as (_server, client):
        bad = client.post("/api/teams", json={"card": "name: x\nmembers: 3\n"})
        assert bad.status_code == 422 and bad.json()["problems"]
        for name in ("../pyproject.toml", "/etc/passwd", "..%2Fpyproject.toml", "nope.yaml"):
            refused = client.post("/api/teams", json={"example": name})
            assert refused.status_code == 400, name
        names = [e["name"] for e in client.get("/api/examples").json()]
        assert "demo-team.yaml" in names
        # The example names a real model; without a key it is refused like `team create`.
        demo = client.post("/api/teams", json={"example": "demo-team.yaml"})
        assert demo.status_code in (201, 400)
        assert client.get("/api/teams").json() == ([] if demo.status_code == 400 else [demo.json()])


def test_teams_are_listed_by_status_and_search(store_url: str, card_text: str) -> None:
    with running_console(store_url) as (_server, client):
        first = _create(client, card_text)
        second = _create(client, card_text)
        client.post(f"/api/teams/{first}/stop")
        stopped = client.get("/api/teams", params={"status": "stopped"}).json()
        assert [t["team_id"] for t in stopped] == [first]
        found = client.get("/api/teams", params={"q": second[:8]}).json()
        assert [t["team_id"] for t in found] == [second]
        assert client.get("/api/teams", params={"status": "sleeping"}).status_code == 400
        assert client.get("/api/teams", params={"metadata": "novalue"}).status_code == 400


def test_panes_show_the_skill_menu_and_pending_notifications(
    store_url: str, card_text: str
) -> None:
    with running_console(store_url) as (_server, client):
        team_id = _create(client, card_text)
        panes = {p["card"]: p for p in client.get(f"/api/teams/{team_id}/panes").json()}
        assert panes["skill"]["source"] == "plugin"
        assert panes["skill"]["blocks"][0]["rows"] == [
            ["@Manager", "reporting", "How reports are written."]
        ]
        assert panes["notification"]["blocks"] == [
            {"kind": "text", "text": "No pending notification."}
        ]


def test_a_lone_surrogate_in_a_json_body_is_refused_with_a_4xx(
    store_url: str, card_text: str
) -> None:
    with running_console(store_url) as (_server, client):
        team_id = _create(client, card_text)
        bodies = [
            ("/api/teams", '{"card": "name: x\\ud800"}'),
            ("/api/teams", '{"example": "demo\\udfff.yaml"}'),
            ("/api/teams", '{"card": "name: x", "source": "\\ud800"}'),
            ("/api/teams", '{"card": "name: x", "metadata": {"\\ud800": "v"}}'),
            ("/api/teams", '{"card": "name: x", "metadata": {"k": "\\udbff"}}'),
            (f"/api/teams/{team_id}/messages", '{"text": "hello \\ud800"}'),
            (f"/api/teams/{team_id}/questions/q1/answer", '{"text": "\\ud800"}'),
        ]
        for path, body in bodies:
            answer = client.post(path, content=body, headers={"Content-Type": "application/json"})
            assert 400 <= answer.status_code < 500, (path, body, answer.status_code, answer.text)
        assert client.get(f"/api/teams/{team_id}").status_code == 200


def test_a_passivated_team_is_listed_so_and_a_message_posted_to_it_wakes_it(
    store_url: str, card_text: str
) -> None:
    from akgentic.testing import wait_until

    with running_console(store_url) as (_server, client):
        team_id = _create(client, card_text + "passivate_after: 0.5\n")

        def status() -> str:
            found: str = client.get(f"/api/teams/{team_id}").json()["status"]
            return found

        wait_until(lambda: status() == "passivated", timeout=60, interval=0.1)
        listed = client.get("/api/teams", params={"status": "passivated"}).json()
        assert [t["team_id"] for t in listed] == [team_id]
        reader = StreamReader(client, team_id)
        try:
            sent = client.post(f"/api/teams/{team_id}/messages", json={"text": "wake up"})
            assert sent.status_code == 202, sent.text
            reader.wait_for(_said("Echo: wake up"))
            assert status() == "running"
        finally:
            reader.close()
