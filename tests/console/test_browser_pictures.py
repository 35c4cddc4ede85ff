"""The console's pictures in a real browser (Debian's Chromium driven by Playwright).

A team runs in ``akgentic serve`` on the scripted model: the manager calls a tool,
hires a researcher by naming its role, and answers the human with what it found.
The page, opened before any of that, draws the hire in the graph as it happens
(the stream, not a reload), the usage chart per member and the timeline's turns
and tool calls. A stored team whose members have hostile names shows them as text.

``AKGENTIC_CONSOLE_SCREENSHOTS=1`` saves the pictures as ``docs/console-pictures.png``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from akgentic.llm.scripted_server import ScriptedLLMServer, ScriptStep
from akgentic.team.card_yaml import dump_yaml
from akgentic.testing.console import ServeProcess
from akgentic.testing.scripted import last_received

DOCS = Path(__file__).resolve().parents[2] / "docs"
WAIT_MS = 60_000
GRAPH = '[data-testid="picture-graph"]'
USAGE = '[data-testid="picture-usage"]'
TIMELINE = '[data-testid="picture-timeline"]'
PLAN = {"update": {"create_tasks": [{"id": 1, "description": "find facts", "owner": "@Manager"}]}}


class HiringScript:
    """The model of every member of :func:`_hiring_card`'s team.

    - the human's request: first a planning tool call, then a request to the role
      ``Researcher`` (which hires one);
    - a request from the manager (the researcher's turn): three facts, as a response;
    - a response from a researcher (the manager's turn): passed on to the human.
    """

    def __call__(self, body: dict[str, Any]) -> ScriptStep:
        from akgentic.agent.output_models import Request, StructuredOutput
        from akgentic.llm.scripted_server import structured, tool_call

        latest = last_received(body)
        after_tool = (body.get("messages") or [{}])[-1].get("role") == "tool"
        requests: list[Request] = []
        if latest is not None:
            intent, sender, content = latest
            if intent == "request" and sender == "@Human":
                if not after_tool:
                    return tool_call("update_planning", PLAN)
                requests.append(
                    Request(recipient="Researcher", message_type="request", message=content)
                )
            elif intent == "request":
                requests.append(
                    Request(recipient=sender, message_type="response", message="Three facts.")
                )
            elif intent == "response":
                requests.append(
                    Request(
                        recipient="@Human", message_type="response", message=f"Found: {content}"
                    )
                )
        return structured(StructuredOutput(messages=requests))


def _hiring_card(server: ScriptedLLMServer) -> str:
    model = {
        "provider": "openai-chat",
        "model": server.model,
        "base_url": server.base_url,
        "api_key": "scripted",
    }

    def agent(name: str, role: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
        config = {"name": name, "role": role, "model_cfg": model, "tools": tools}
        return {"agent_class": "akgentic.agent.BaseAgent", "description": role, "config": config}

    return dump_yaml(
        {
            "name": "hiring-team",
            "entry_point": {
                "card": {
                    "agent_class": "akgentic.agent.HumanProxy",
                    "description": "The person at the console",
                    "config": {"name": "@Human", "role": "Human"},
                }
            },
            "members": [
                {
                    "card": agent(
                        "@Manager", "Manager", [{"card": "planning", "vector_store": False}]
                    )
                }
            ],
            "message_types": ["akgentic.agent.AgentMessage"],
            "agent_profiles": [agent("@Researcher", "Researcher", [])],
        }
    )


def _count(page: Any, selector: str) -> Any:
    from playwright.sync_api import expect

    return expect(page.locator(selector))


def test_the_pictures_draw_a_team_live_and_a_hire_as_it_happens(
    browser: Any, store_url: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    errors: list[str] = []
    with (
        ScriptedLLMServer(fallback=HiringScript()) as llm,
        ServeProcess(store_url, str(tmp_path)) as serve,
        serve.client() as client,
    ):
        created = client.post("/api/teams", json={"card": _hiring_card(llm)})
        assert created.status_code == 201, created.text
        team_id = created.json()["team_id"]
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(serve.page_url + f"#/team/{team_id}")
        _count(page, f"{GRAPH} g.node").to_have_count(2)
        _count(page, f'{GRAPH} g.node[data-member="@Manager"]').to_have_count(1)
        _count(page, f"{USAGE} text.empty").to_have_text("no model usage yet")
        _count(page, f"{TIMELINE} g.row").to_have_count(2)
        page.evaluate("window.__samePage = true")  # gone if anything reloaded the page

        page.get_by_test_id("message").fill("please look into octopuses")
        page.get_by_test_id("send").click()
        hired = page.locator(f'{GRAPH} g.node.hired[data-member^="@Researcher"]')
        expect(hired).to_have_count(1)
        researcher = hired.get_attribute("data-member")
        assert researcher is not None
        expect(
            page.get_by_test_id("message-content").filter(has_text="Found: Three facts.")
        ).to_be_visible()
        _count(
            page, f'{GRAPH} g.edge[data-source="@Manager"][data-target="{researcher}"]'
        ).to_have_count(1)
        _count(
            page, f'{GRAPH} g.edge[data-source="@Human"][data-target="@Manager"]'
        ).to_have_attribute("data-count", "2")
        _count(page, f'{USAGE} g.series[data-member="{researcher}"]').to_have_count(1)
        _count(page, f'{USAGE} g.series[data-member="@Manager"]').to_have_count(1)
        _count(page, f'{TIMELINE} g.row[data-member="{researcher}"] rect.turn').to_have_count(1)
        _count(page, f'{TIMELINE} rect.tool[data-tool="update_planning"]').to_have_count(1)
        assert page.evaluate("window.__samePage") is True
        if os.environ.get("AKGENTIC_CONSOLE_SCREENSHOTS"):
            pictures = page.get_by_test_id("pictures")
            pictures.scroll_into_view_if_needed()
            pictures.screenshot(path=str(DOCS / "console-pictures.png"))
        page.close()
    assert errors == []


HOSTILE_NAMES = ["<script>window.__pwned = 1</script>", '"><svg onload="window.__pwned = 2">']

STORED_CARD = """\
name: hostile-team
entry_point:
  card:
    agent_class: akgentic.agent.HumanProxy
    description: The human
    config: {name: "@Human", role: Human}
members: []
message_types:
  - akgentic.agent.AgentMessage
"""


def _stored_hostile_team(store_url: str) -> str:
    """A stopped team whose log has members named like markup, who talked and used tools."""
    from akgentic.team.card_yaml import parse_team_card
    from akgentic.team.models import Process, TeamStatus
    from akgentic.team.urls import open_event_store
    from akgentic.testing.team_log import TeamLog

    log = TeamLog()
    human = log.member("@Human", human=True)
    first, second = (log.member(name, "Hostile") for name in HOSTILE_NAMES)
    asked = log.send(human, first, "hi")
    log.received(first, asked)
    log.tool_call(first, HOSTILE_NAMES[1], "c1")
    log.tool_return(first, HOSTILE_NAMES[1], "c1")
    log.usage(first, 100, 20)
    log.send(first, second, "<img src=x onerror=alert(1)>")
    log.processed(first, asked)
    store = open_event_store(store_url)
    try:
        card = parse_team_card(STORED_CARD, "hostile-team.yaml")
        store.save_team(Process(team_id=log.team_id, team_card=card, status=TeamStatus.STOPPED))
        for event in log.stored():
            store.save_event(event)
    finally:
        store.close()
    return str(log.team_id)


def test_members_named_like_markup_are_drawn_as_text(
    browser: Any, store_url: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    team_id = _stored_hostile_team(store_url)
    errors: list[str] = []
    with ServeProcess(store_url, str(tmp_path)) as serve:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(serve.page_url + f"#/team/{team_id}")
        nodes = page.locator(f"{GRAPH} g.node")
        expect(nodes).to_have_count(3)
        names = nodes.evaluate_all("nodes => nodes.map((n) => n.getAttribute('data-member'))")
        assert names == ["@Human", *HOSTILE_NAMES]
        titles = nodes.evaluate_all(
            "nodes => nodes.map((n) => n.querySelector('title').textContent)"
        )
        assert all(any(t.startswith(name) for t in titles) for name in HOSTILE_NAMES)
        tool = page.locator(f"{TIMELINE} rect.tool")
        expect(tool).to_have_count(1)
        assert tool.get_attribute("data-tool") == HOSTILE_NAMES[1]
        pictures = page.get_by_test_id("pictures")
        assert pictures.locator("script").count() == 0
        assert pictures.locator("svg svg").count() == 0  # no element made from a name
        assert pictures.locator("[onload], [onerror], [onmouseover]").count() == 0
        assert page.evaluate("window.__pwned") is None
        page.close()
    assert errors == []
