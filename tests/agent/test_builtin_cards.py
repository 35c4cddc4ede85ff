"""TeamTool and MailboxTool as built-in plugins, their YAML form and their renderings."""

from __future__ import annotations

from typing import Any

import yaml

from akgentic.plugins import get_registry
from akgentic.tool import ToolCard
from akgentic.tool.mailbox import MailboxTool
from akgentic.tool.team import (
    MemberEntry,
    RoleCatalogState,
    RoleEntry,
    TeamRosterState,
    TeamTool,
    generated_member_name,
)


def test_the_two_builtin_plugins_register_the_team_and_mailbox_cards(builtin_cards: Any) -> None:
    cards = get_registry().tool_cards()
    assert cards["team"].card is TeamTool
    assert cards["mailbox"].card is MailboxTool
    assert get_registry().owner("tool_cards", "team").name == "team-tool"  # type: ignore[union-attr]
    assert get_registry().owner("tool_cards", "mailbox").name == "mailbox"  # type: ignore[union-attr]


def test_the_cards_are_importable_lazily_from_the_tool_root(builtin_cards: Any) -> None:
    from akgentic.tool import MailboxTool as Lazy

    assert Lazy is MailboxTool


def test_cards_named_in_yaml_load_with_their_settings(builtin_cards: Any) -> None:
    listed = yaml.safe_load(
        """
        - card: team
          get_team_activity: false
        - card: mailbox
          read_mailbox: false
        """
    )
    team, mailbox = (ToolCard.model_validate(item) for item in listed)
    assert isinstance(team, TeamTool) and team.get_team_activity is False
    assert isinstance(mailbox, MailboxTool) and not mailbox.signals_enabled
    assert team.model_dump()["card"] == "team"


def test_switched_off_capabilities_are_not_served() -> None:
    card = TeamTool(hire_team_members=False, get_team_activity=False)
    assert [t.__name__ for t in card.get_tools()] == ["fire_members"]
    assert "hire_member" not in {c.__name__ for c in card.get_commands().values()}
    mailbox = MailboxTool(stop=False)
    assert mailbox.get_commands() == {}
    assert [t.__name__ for t in mailbox.get_tools()] == ["read_mailbox"]


def test_the_roster_delta_names_who_joined_and_who_left() -> None:
    ada, bob = MemberEntry(name="@Ada", role="Dev"), MemberEntry(name="@Bob", role="QA")
    before = TeamRosterState(you="@Lead", members=[ada])
    after = TeamRosterState(you="@Lead", members=[bob])
    assert before.render_delta(before) is None
    delta = after.render_delta(before)
    assert delta is not None
    assert "+ @Bob (QA) joined" in delta and "- @Ada (Dev) left" in delta


def test_the_catalog_lists_every_role_as_hireable_with_its_description() -> None:
    state = RoleCatalogState(
        roles=[RoleEntry(role="Dev", description="codes"), RoleEntry(role="Lead")]
    )
    text = state.render_full()
    assert text.startswith("Roles you can hire")
    assert "- Dev: codes" in text and "- Lead" in text
    assert state.render_delta(state) is None


def test_generated_names_skip_taken_ones() -> None:
    taken: set[str] = set()
    first = generated_member_name("Data Analyst", taken.__contains__)
    assert first.startswith("@DataAnalyst")
    taken.add(first)
    number = int(first.removeprefix("@DataAnalyst"))
    taken.update(f"@DataAnalyst{n}" for n in range(number, number + 5))
    second = generated_member_name("Data Analyst", taken.__contains__)
    assert second not in taken


def test_the_yaml_configuration_in_the_agent_guide_loads(builtin_cards: Any) -> None:
    from pathlib import Path

    from akgentic.agent import AgentConfig

    guide = Path(__file__).parents[2] / "docs" / "agents.md"
    block = guide.read_text(encoding="utf-8").split("```yaml\n", 1)[1].split("```", 1)[0]
    config = AgentConfig.model_validate(yaml.safe_load(block))
    assert config.prompt.render() == "You manage the billing team."
    assert config.model_cfg.base_url == "http://localhost:11434/v1"
    assert [type(c) for c in config.tools] == [TeamTool, MailboxTool]
