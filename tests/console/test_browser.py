"""The console in a real browser: Debian's Chromium driven by Playwright.

``akgentic serve`` runs as a child process over a SQLite store; the team runs on
the scripted model. The walk-through: the list, creating a team from a card
file, a message answered live, a question for the human answered, an HTML and
script message shown as text (no script runs), the planning pane showing the tasks
the scripted manager created, stop and resume with the history, the tool panes,
a restart of the console with the question still pending.

Set ``AKGENTIC_CONSOLE_SCREENSHOTS=1`` to save the screenshots under ``docs/``
(``docs/console.md`` shows them). Skipped when Chromium is absent, except under
``CI=true``, where its absence fails.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from akgentic.testing.console import ServeProcess

DOCS = Path(__file__).resolve().parents[2] / "docs"
HOSTILE = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'
WAIT_MS = 60_000


def _shot(page: Any, name: str) -> None:
    if os.environ.get("AKGENTIC_CONSOLE_SCREENSHOTS"):
        page.screenshot(path=str(DOCS / f"console-{name}.png"), full_page=True)


def _message(page: Any, text: str) -> Any:
    return page.get_by_test_id("message-content").filter(has_text=text).first


def _answer(question: Any, text: str) -> None:
    """Type an answer and send it once the box holds it (the page may redraw meanwhile)."""
    from playwright.sync_api import expect

    box = question.get_by_test_id("answer-text")
    expect(box).to_be_editable()
    box.fill(text)
    expect(box).to_have_value(text)
    question.get_by_test_id("answer").click()


def test_the_walk_through_in_a_real_browser(
    browser: Any, store_url: str, card_file: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    errors: list[str] = []
    with ServeProcess(store_url, str(tmp_path)) as serve:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(serve.page_url)
        expect(page.get_by_test_id("teams")).to_contain_text("no team")
        _shot(page, "list")

        page.get_by_test_id("card-file").set_input_files(str(card_file))
        page.get_by_test_id("create-file").click()
        expect(page.get_by_test_id("team-status")).to_contain_text("running")
        expect(page.get_by_test_id("roster")).to_contain_text("@Manager")
        team_id = page.url.rsplit("/", 1)[1]

        page.get_by_test_id("message").fill("hello team")
        page.get_by_test_id("send").click()
        expect(_message(page, "Echo: hello team")).to_be_visible()

        page.get_by_test_id("message").fill(HOSTILE)
        page.get_by_test_id("send").click()
        expect(_message(page, "Echo: <script>")).to_be_visible()
        assert _message(page, "Echo: <script>").text_content() == f"Echo: {HOSTILE}"
        assert page.evaluate("window.__pwned") is None
        assert page.locator('[data-testid="conversation"] img').count() == 0
        assert page.locator('[data-testid="conversation"] script').count() == 0

        page.get_by_test_id("message").fill("please ask me")
        page.get_by_test_id("send").click()
        question = page.get_by_test_id("question")
        expect(question).to_contain_text("Which colour")
        expect(page.get_by_test_id("panes")).to_contain_text("reporting")
        _shot(page, "team")
        _answer(question, "blue")
        expect(_message(page, "Noted: blue")).to_be_visible()
        expect(page.get_by_test_id("questions")).to_contain_text("none")

        # The planning card: the scripted manager puts two tasks on the board.
        page.get_by_test_id("message").fill("please plan the report")
        page.get_by_test_id("send").click()
        expect(_message(page, "Planned 2 tasks")).to_be_visible()
        planning = page.locator('[data-pane="planning"]')
        expect(planning).to_contain_text("draft the report")
        planning.locator("summary").click()
        expect(planning.get_by_text("review the report")).to_be_visible()
        expect(planning).to_contain_text("pending · 2")
        expect(planning).to_contain_text("#1")  # review depends on the draft
        planning.scroll_into_view_if_needed()
        _shot(page, "planning")

        page.get_by_test_id("inspect").click()
        page.get_by_test_id("inspected").first.click()
        expect(page.get_by_test_id("event-json")).to_contain_text('"sequence": 1')

        page.get_by_test_id("team-stop").click()
        expect(page.get_by_test_id("team-status")).to_contain_text("stopped")
        page.get_by_test_id("team-resume").click()
        expect(page.get_by_test_id("team-status")).to_contain_text("running")
        page.reload()
        expect(_message(page, "Echo: hello team")).to_be_visible()
        expect(_message(page, "Noted: blue")).to_be_visible()

        # A question left open while the console restarts.
        page.get_by_test_id("message").fill("please ask me again")
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("question")).to_contain_text("Which colour")
        page.close()

    with ServeProcess(store_url, str(tmp_path)) as serve:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(serve.page_url + f"#/team/{team_id}")
        expect(page.get_by_test_id("team-status")).to_contain_text("stopped")
        expect(page.get_by_test_id("question")).to_contain_text("Which colour")
        page.get_by_test_id("team-resume").click()
        expect(page.get_by_test_id("team-status")).to_contain_text("running")
        _answer(page.get_by_test_id("question"), "green")
        expect(_message(page, "Noted: green")).to_be_visible()

        page.get_by_test_id("team-stop").click()
        expect(page.get_by_test_id("team-delete")).to_be_visible()
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_test_id("team-delete").click()
        expect(page.get_by_test_id("teams")).to_contain_text("no team")
        page.close()
    assert errors == []


TOOLS_CARD = """\
name: tools-team
entry_point:
  card:
    agent_class: akgentic.agent.HumanProxy
    description: The human
    config: {name: "@Human", role: Human}
members:
  - card:
      agent_class: akgentic.agent.BaseAgent
      description: Keeps notes
      config:
        name: "@Worker"
        role: Worker
        model_cfg: {provider: openai, model: gpt-4.1-mini}
        tools:
          - card: knowledge_graph
            vector_store: false
          - card: workspace
message_types:
  - akgentic.agent.AgentMessage
"""


def _stored_tools_team(store_url: str, root: Path) -> str:
    """A stopped team with a knowledge graph snapshot and a workspace tree, as stored."""
    import importlib
    from datetime import UTC, datetime
    from uuid import uuid4

    from akgentic.core.messages.orchestrator import EventMessage
    from akgentic.team.card_yaml import parse_team_card
    from akgentic.team.models import AgentStateSnapshot, PersistedEvent, Process, TeamStatus
    from akgentic.team.urls import open_event_store

    graph: Any = importlib.import_module("akgentic_knowledge_graph.models")
    params: Any = importlib.import_module("akgentic_workspace.params")
    team_id = uuid4()
    tree = root / "anonymous" / "_team" / str(team_id)
    (tree / "docs").mkdir(parents=True)
    (tree / "docs" / "page.html").write_text(HOSTILE)
    (tree / "leak.txt").symlink_to(root.parent / "secret.txt")
    (root.parent / "secret.txt").write_text("do not show")
    now = datetime.now(UTC)
    entities = [
        graph.Entity(name="Alice", entity_type="person", observations=["writes the report"]),
        graph.Entity(name="Acme", entity_type="company"),
        graph.Entity(name=HOSTILE[:40], entity_type="thing"),
    ]
    relations = [graph.Relation(from_entity="Alice", to_entity="Acme", relation_type="works_at")]
    state = graph.KnowledgeGraphState(
        knowledge_graph=graph.KnowledgeGraph(entities=entities, relations=relations)
    )
    attached = EventMessage(
        event=params.WorkspaceAttached(
            agent_id=uuid4(), workspace_path=f"anonymous/_team/{team_id}"
        )
    )
    store = open_event_store(store_url)
    try:
        store.save_team(
            Process(
                team_id=team_id,
                team_card=parse_team_card(TOOLS_CARD, "tools-team.yaml"),
                status=TeamStatus.STOPPED,
                user_id="anonymous",
                user_email="",
                created_at=now,
                updated_at=now,
            )
        )
        store.save_event(PersistedEvent(team_id=team_id, sequence=1, event=attached))
        store.save_agent_state(
            AgentStateSnapshot(
                team_id=team_id, agent_id="kg", name="#KnowledgeGraphTool", state=state
            )
        )
    finally:
        store.close()
    return str(team_id)


def test_the_graph_and_workspace_panes_in_a_real_browser(
    browser: Any, store_url: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    root = tmp_path / "workspaces"
    team_id = _stored_tools_team(store_url, root)
    errors: list[str] = []
    env = {"AKGENTIC_WORKSPACES_ROOT": str(root)}
    with ServeProcess(store_url, str(tmp_path), env=env) as serve:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(serve.page_url + f"#/team/{team_id}")
        graph = page.locator('[data-pane="knowledge_graph"]')
        expect(graph).to_contain_text("3 entities · 1 relations")
        graph.locator("summary").click()
        expect(graph.get_by_test_id("pane-graph")).to_be_visible()
        assert graph.locator("svg g.node").count() == 3
        graph.get_by_test_id("graph-search").fill("report")
        expect(graph.get_by_test_id("graph-matches")).to_have_text("1 match")
        expect(graph.locator('g.node.hit[data-node="Alice"]')).to_have_count(1)

        files = page.locator('[data-pane="workspace"]')
        files.locator("summary").click()
        expect(files.get_by_test_id("pane-tree")).to_contain_text("page.html")
        expect(files.locator('li[data-key="0:leak.txt"]')).not_to_have_class("openable")
        files.locator('li[data-key="0:docs/page.html"]').click()
        viewer = files.get_by_test_id("pane-viewer")
        expect(viewer).to_contain_text("window.__pwned")
        graph.scroll_into_view_if_needed()
        _shot(page, "tools")
        assert page.evaluate("window.__pwned") is None
        assert page.locator('[data-testid="panes"] script').count() == 0
        assert page.locator('[data-testid="panes"] img').count() == 0
        assert "do not show" not in (page.locator("body").text_content() or "")
        page.close()
    assert errors == []
