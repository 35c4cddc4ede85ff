"""'fork from here' and the lineage view, in a real browser (Debian's Chromium, Playwright).

A team talks twice; the reader forks it at the first answer: the fork's page opens,
stopped, holding the first exchange only, and names its parent; the parent's page and
the team list show the fork. A team with a card that cannot be forked (notification)
says so in one line and nothing is made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.testing.cards import human_worker_team_yaml
from akgentic.testing.console import ServeProcess

WAIT_MS = 60_000


def _card(server: ScriptedLLMServer, tools: list[dict[str, object]]) -> str:
    return human_worker_team_yaml(
        "fork-team",
        worker="@Manager",
        role="Manager",
        model_cfg={
            "provider": "openai-chat",
            "model": server.model,
            "base_url": server.base_url,
            "api_key": "scripted",
        },
        tools=tools,
    )


def _message(page: Any, text: str) -> Any:
    return page.get_by_test_id("message-content").filter(has_text=text).first


def _create(page: Any, path: Path) -> str:
    from playwright.sync_api import expect

    page.get_by_test_id("card-file").set_input_files(str(path))
    page.get_by_test_id("create-file").click()
    expect(page.get_by_test_id("team-status")).to_contain_text("running")
    return str(page.url.rsplit("/", 1)[1])


def _say(page: Any, text: str) -> None:
    from playwright.sync_api import expect

    page.get_by_test_id("message").fill(text)
    page.get_by_test_id("send").click()
    expect(_message(page, f"Echo: {text}")).to_be_visible()


def test_fork_from_here_opens_the_fork_and_both_pages_show_the_lineage(
    browser: Any, store_url: str, script_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    forkable = tmp_path / "forkable.yaml"
    forkable.write_text(_card(script_server, [{"card": "planning", "vector_store": False}]))
    refusing = tmp_path / "refusing.yaml"
    refusing.write_text(_card(script_server, [{"card": "notification"}]))
    errors: list[str] = []
    with ServeProcess(store_url, str(tmp_path)) as serve:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(serve.page_url)
        parent = _create(page, forkable)
        _say(page, "first question")
        _say(page, "second question")
        page.reload()  # rows read back from the log carry their sequence
        row = page.get_by_test_id("message-row").filter(has_text="Echo: first question").first
        row.get_by_test_id("fork-here").click()

        expect(page).not_to_have_url(f"{serve.page_url}#/team/{parent}")
        expect(page.get_by_test_id("team-status")).to_contain_text("stopped")
        child = page.url.rsplit("/", 1)[1]
        assert child != parent
        expect(page.get_by_test_id("lineage-parents")).to_contain_text(parent[:8])
        expect(_message(page, "Echo: first question")).to_be_visible()
        expect(page.get_by_test_id("conversation")).not_to_contain_text("second question")

        page.get_by_test_id("team-resume").click()
        expect(page.get_by_test_id("team-status")).to_contain_text("running")
        _say(page, "another path")
        expect(page.get_by_test_id("conversation")).not_to_contain_text("second question")

        page.locator(f'[data-testid="lineage-parents"] [data-team-link="{parent}"]').click()
        expect(page.get_by_test_id("lineage-forks")).to_contain_text(child[:8])
        expect(_message(page, "Echo: second question")).to_be_visible()
        expect(page.get_by_test_id("conversation")).not_to_contain_text("another path")

        page.goto(serve.page_url + "#/")
        lineage = page.locator(f'[data-team="{child}"] [data-testid="team-lineage"]')
        expect(lineage).to_contain_text(f"fork of {parent[:8]}")

        refused = _create(page, refusing)
        _say(page, "hello")
        page.reload()
        page.get_by_test_id("fork-here").first.click()
        expect(page.locator("#flash")).to_contain_text("cannot fork: card 'notification'")
        assert page.url.endswith(refused)
        teams = page.evaluate("fetch('/api/teams').then((r) => r.json())")
        assert len(teams) == 3  # parent, fork, the refusing team: nothing else was made
        page.close()
    assert errors == []
