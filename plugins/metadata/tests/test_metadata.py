"""MetadataTool: the template grammar, validation points, snapshot and degradation."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from akgentic_metadata import MetadataTool, RenderMetadata, placeholders
from pydantic import BaseModel, ValidationError, computed_field

from akgentic.core import ActorSystem, BaseConfig, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.llm.scripted_server import ScriptedLLMServer, structured
from akgentic.testing.teams import ScriptedTeam
from akgentic.testing.waiting import wait_until
from akgentic.tool import ToolFactory
from akgentic.tool.testing import RecordingObserver


class Engagement(BaseModel):
    """Business metadata of an audit team."""

    fiscal_year: int
    engagement: str

    @computed_field  # type: ignore[prop-decorator]
    @property
    def label(self) -> str:
        return f"{self.engagement}-{self.fiscal_year}"


class TeamObserver(RecordingObserver):
    """An agent stand-in that belongs to a real orchestrator (asks go to the actor)."""

    def __init__(self, system: ActorSystem, orchestrator: ActorAddress | None) -> None:
        super().__init__()
        self._system = system
        self._orchestrator = orchestrator

    @property
    def orchestrator(self) -> ActorAddress | None:
        return self._orchestrator

    def proxy_ask(self, actor: ActorAddress, actor_type: Any = None, timeout: Any = None) -> Any:
        return self._system.proxy_ask(actor, actor_type, timeout=timeout)


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    actors = ActorSystem()
    yield actors
    actors.shutdown(timeout=10)


def orchestrator(system: ActorSystem, metadata: Any = None) -> tuple[ActorAddress, Any]:
    address = system.createActor(Orchestrator, config=BaseConfig(name="@O", role="Orchestrator"))
    proxy = system.proxy_ask(address, Orchestrator)
    if metadata is not None:
        proxy.set_metadata(metadata)
    return address, proxy


def card(template: str, header: str | None = None) -> MetadataTool:
    return MetadataTool(render_metadata=RenderMetadata(template=template, header=header))


def prompt_of(tool: MetadataTool) -> str:
    (prompt,) = tool.get_system_prompts()
    return prompt()


def command_of(tool: MetadataTool, observer: Any) -> str:
    """What ``/team_metadata`` answers (the card is already wired to ``observer``)."""
    result = tool.get_commands()[RenderMetadata]()
    assert isinstance(result, str)
    return result


@pytest.mark.parametrize(
    "template",
    [
        "{__class__}",
        "{a.__class__}",
        "{a.b}",
        "{a!r}",
        "{a:>10}",
        "{0}",
        "{}",
        "{a[0]}",
        "{_x}",
        "{ a }",
        "a {b",
        "a } b",
    ],
)
def test_a_template_outside_the_bare_name_grammar_is_refused(template: str) -> None:
    with pytest.raises(ValidationError) as raised:
        RenderMetadata(template=template)
    text = str(raised.value)
    assert "placeholder" in text or "braces" in text


def test_the_refusal_names_the_placeholder() -> None:
    with pytest.raises(ValidationError, match=r"\{a\.__class__\}"):
        RenderMetadata(template="FY {fiscal_year} {a.__class__}")


def test_doubled_braces_are_literal_text() -> None:
    assert placeholders("{{lit}} {a}") == ["a"]


def test_shipped_off_serves_nothing_and_true_is_refused() -> None:
    assert MetadataTool().get_system_prompts() == []
    assert MetadataTool().get_commands() == {}
    with pytest.raises(ValidationError, match=r"RenderMetadata\(template=\.\.\.\)"):
        MetadataTool(render_metadata=True)


def test_a_multi_line_header_or_blank_template_is_refused() -> None:
    with pytest.raises(ValidationError):
        RenderMetadata(template="{a}", header="one\ntwo")
    with pytest.raises(ValidationError):
        RenderMetadata(template="   ")


def test_the_block_has_the_header_and_the_values(system: ActorSystem) -> None:
    address, _ = orchestrator(system, Engagement(fiscal_year=2025, engagement="Audit"))
    observer = TeamObserver(system, address)
    tool = card("FY {fiscal_year}, {engagement} ({label}) {{lit}}", header="Team context")
    registry = ToolFactory([tool], observer=observer).get_command_registry()
    assert prompt_of(tool) == "**Team context**\nFY 2025, Audit (Audit-2025) {lit}"
    assert registry.dispatch("/team_metadata") == prompt_of(tool)


def test_the_first_render_is_kept_after_the_metadata_changes(system: ActorSystem) -> None:
    address, proxy = orchestrator(system, Engagement(fiscal_year=2025, engagement="Audit"))
    observer = TeamObserver(system, address)
    tool = card("FY {fiscal_year}").observer(observer)
    assert prompt_of(tool) == "FY 2025"
    proxy.set_metadata(Engagement(fiscal_year=2026, engagement="Audit"))
    assert prompt_of(tool) == "FY 2025"
    assert command_of(tool, observer) == "FY 2025"


def test_a_value_holding_braces_prints_literally(system: ActorSystem) -> None:
    address, _ = orchestrator(system, Engagement(fiscal_year=1, engagement="{secret.__class__}"))
    observer = TeamObserver(system, address)
    tool = card("{engagement}").observer(observer)
    assert prompt_of(tool) == "{secret.__class__}"


def test_no_metadata_yet_gives_an_empty_prompt_then_the_block_once_it_is_set(
    system: ActorSystem, caplog: pytest.LogCaptureFixture
) -> None:
    address, proxy = orchestrator(system)
    observer = TeamObserver(system, address)
    tool = card("FY {fiscal_year}").observer(observer)
    with caplog.at_level(logging.WARNING, logger="akgentic_metadata.card"):
        assert prompt_of(tool) == ""
        assert prompt_of(tool) == ""
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    assert command_of(tool, observer) == "No team metadata block: the team has no metadata yet."
    proxy.set_metadata(Engagement(fiscal_year=2025, engagement="Audit"))
    assert prompt_of(tool) == "FY 2025"


def test_an_unknown_field_fails_at_wiring_naming_placeholder_class_and_fields(
    system: ActorSystem,
) -> None:
    address, _ = orchestrator(system, Engagement(fiscal_year=2025, engagement="Audit"))
    with pytest.raises(ValueError, match=r"\{nope\}.*Engagement.*fiscal_year, engagement, label"):
        card("{nope}").observer(TeamObserver(system, address))


def test_an_unknown_field_with_no_metadata_at_wiring_degrades_at_render(
    system: ActorSystem, caplog: pytest.LogCaptureFixture
) -> None:
    address, proxy = orchestrator(system)
    observer = TeamObserver(system, address)
    tool = card("{nope}").observer(observer)
    proxy.set_metadata(Engagement(fiscal_year=2025, engagement="Audit"))
    with caplog.at_level(logging.ERROR, logger="akgentic_metadata.card"):
        assert prompt_of(tool) == ""
    assert any(r.levelno == logging.ERROR for r in caplog.records)
    assert command_of(tool, observer) == (
        "No team metadata block: {nope} is not a field of Engagement."
    )


def test_metadata_that_is_not_a_model_degrades(system: ActorSystem) -> None:
    address, _ = orchestrator(system, {"fiscal_year": 2025})
    observer = TeamObserver(system, address)
    tool = card("{fiscal_year}").observer(observer)
    assert prompt_of(tool) == ""
    assert command_of(tool, observer) == "No team metadata block: the team metadata is not a model."


def test_outside_a_team_the_card_wires_and_explains(system: ActorSystem) -> None:
    observer = TeamObserver(system, None)
    tool = card("{fiscal_year}").observer(observer)
    assert prompt_of(tool) == ""
    assert command_of(tool, observer) == (
        "No team metadata block: this agent is not part of a team."
    )


def test_one_card_wired_to_a_second_team_renders_that_team(system: ActorSystem) -> None:
    first, _ = orchestrator(system, Engagement(fiscal_year=2025, engagement="A"))
    second, _ = orchestrator(system, Engagement(fiscal_year=2030, engagement="B"))
    tool = card("{engagement} {fiscal_year}")
    observer_a = TeamObserver(system, first)
    tool.observer(observer_a)
    assert prompt_of(tool) == "A 2025"
    observer_b = TeamObserver(system, second)
    tool.observer(observer_b)
    assert prompt_of(tool) == "B 2030"


def test_the_card_is_never_a_tool() -> None:
    assert card("{a}").get_tools() == []


def test_an_agent_sends_the_block_in_its_system_prompt(llm_server: ScriptedLLMServer) -> None:
    with ScriptedTeam(llm_server) as team:
        run_two_turns(team, llm_server)
    for index in (0, 1):
        text = team.request_text(index)
        assert "**Team context**\\nFY 2025, Audit" in text
        assert "FY 2031" not in text


def run_two_turns(team: ScriptedTeam, llm_server: ScriptedLLMServer) -> None:
    from akgentic.agent import StructuredOutput

    team.proxy.set_metadata(Engagement(fiscal_year=2025, engagement="Audit"))
    llm_server.add(structured(StructuredOutput()), structured(StructuredOutput()))
    member = team.spawn("@Auditor", [card("FY {fiscal_year}, {engagement}", "Team context")])
    team.say(member, "Start.")
    wait_until(lambda: llm_server.served == 1, timeout=30)
    team.proxy.set_metadata(Engagement(fiscal_year=2031, engagement="Audit"))
    team.say(member, "Again.")
    wait_until(lambda: llm_server.served == 2, timeout=30)
