"""ModelTool: the listing grammar, switching and its refusals, the active-model state."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from akgentic_model import (
    NO_ROSTER,
    ActiveModelState,
    ModelRow,
    ModelTool,
    SwitchModel,
    render_rows,
    render_tokens,
)

from akgentic.tool import COMMAND, RetriableError, ToolFactory, ToolObserverGone
from akgentic.tool.testing import RecordingObserver, ToolStateHolder


def row(key: str, context: int | None, active: bool = False) -> ModelRow:
    provider, _, model = key.partition(":")
    return ModelRow(key=key, provider=provider, model=model, context_length=context, active=active)


class RosterObserver(RecordingObserver):
    """An agent stand-in with a roster: switching marks another row active."""

    def __init__(self, rows: list[ModelRow], *, refuse: Exception | None = None) -> None:
        super().__init__()
        self.rows = rows
        self.refuse = refuse
        self.calls: list[str] = []
        self.replace_state = False
        self.fail_reading = False

    def list_model_rows(self) -> list[ModelRow]:
        if self.fail_reading:
            raise RuntimeError("roster unreadable")
        return list(self.rows)

    def switch_model(self, key: str) -> str:
        self.calls.append(key)
        if self.refuse is not None:
            raise self.refuse
        if key not in {r.key for r in self.rows}:
            raise RetriableError(f"unknown model {key!r}")
        self.rows = [r.model_copy(update={"active": r.key == key}) for r in self.rows]
        if self.replace_state:
            self.state = ToolStateHolder()
        return f"Switched to {key} from the next turn."


ROWS = [row("openai:gpt-5.2", 262144, active=True), row("openai:gpt-5-mini", None)]


def wired(observer: RosterObserver, **fields: Any) -> dict[str, Any]:
    card = ModelTool(**fields)
    ToolFactory([card], observer=observer)
    return {tool.__name__: tool for tool in card.get_tools()}


def test_the_listing_marks_the_active_model_and_renders_context_sizes() -> None:
    observer = RosterObserver(ROWS)
    tools = wired(observer)
    assert tools["list_models"]() == (
        "openai:gpt-5.2 (context: 262k) [ACTIVE]\nopenai:gpt-5-mini (no compaction activated)"
    )


@pytest.mark.parametrize(
    ("tokens", "shown"), [(512, "512"), (999, "999"), (1500, "2k"), (2500, "2k"), (262144, "262k")]
)
def test_token_counts_render_in_thousands_from_one_thousand(tokens: int, shown: str) -> None:
    assert render_tokens(tokens) == shown


def test_no_rows_gives_the_fixed_sentence() -> None:
    assert render_rows([]) == NO_ROSTER
    observer = RosterObserver([])
    assert wired(observer)["list_models"]() == NO_ROSTER


def test_a_switch_calls_the_observer_then_records_the_selection() -> None:
    observer = RosterObserver(ROWS)
    tools = wired(observer)
    assert tools["switch_model"]("openai:gpt-5-mini") == (
        "Switched to openai:gpt-5-mini from the next turn."
    )
    assert observer.calls == ["openai:gpt-5-mini"]
    assert observer.state.tool_state.active_model == "openai:gpt-5-mini"


@pytest.mark.parametrize("refusal", [RetriableError("no such model"), ValueError("bad bounds")])
def test_a_refused_switch_is_retriable_and_leaves_the_slot_alone(refusal: Exception) -> None:
    observer = RosterObserver(ROWS, refuse=refusal)
    tools = wired(observer)
    with pytest.raises(RetriableError) as raised:
        tools["switch_model"]("openai:gpt-5-mini")
    assert str(refusal) in str(raised.value)
    assert observer.state.tool_state.active_model is None


def test_the_selection_lands_in_a_state_replaced_during_the_switch() -> None:
    observer = RosterObserver(ROWS)
    observer.replace_state = True
    before = observer.state
    wired(observer)["switch_model"]("openai:gpt-5-mini")
    assert observer.state is not before
    assert observer.state.tool_state.active_model == "openai:gpt-5-mini"
    assert before.tool_state.active_model is None


def test_the_command_offers_the_roster_keys_as_choices() -> None:
    observer = RosterObserver(ROWS)
    registry = ToolFactory([ModelTool()], observer=observer).get_command_registry()
    descriptor = next(d for d in registry.descriptors() if d.name == "switch_model")
    assert descriptor.args[0].choices == ["openai:gpt-5.2", "openai:gpt-5-mini"]
    assert registry.dispatch("/switch_model openai:gpt-5-mini") == (
        "Switched to openai:gpt-5-mini from the next turn."
    )
    assert registry.dispatch("/switch_model model=openai:gpt-5.2") == (
        "Switched to openai:gpt-5.2 from the next turn."
    )
    refused = registry.dispatch("/switch_model key=openai:gpt-5.2")
    assert isinstance(refused, str) and refused.startswith("Command 'switch_model' failed: ")
    assert "openai:gpt-5.2" in refused and "openai:gpt-5-mini" in refused
    assert observer.calls == ["openai:gpt-5-mini", "openai:gpt-5.2"]
    listing = registry.dispatch("/list_models")
    assert listing is not None and listing.startswith("openai:gpt-5.2 (context: 262k)")


def test_an_unreadable_roster_makes_the_command_take_any_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    observer = RosterObserver(ROWS)
    observer.fail_reading = True
    with caplog.at_level(logging.WARNING, logger="akgentic_model.card"):
        registry = ToolFactory([ModelTool()], observer=observer).get_command_registry()
    descriptor = next(d for d in registry.descriptors() if d.name == "switch_model")
    assert descriptor.args[0].choices is None
    assert len(caplog.records) == 1


def test_the_provider_reports_the_active_row_and_its_changes() -> None:
    observer = RosterObserver(ROWS)
    card = ModelTool()
    ToolFactory([card], observer=observer)
    (provider,) = card.get_context_states()
    first = provider()
    assert isinstance(first, ActiveModelState)
    assert first.render_full() == "**Active model:** openai:gpt-5.2"
    observer.switch_model("openai:gpt-5-mini")
    second = provider()
    assert isinstance(second, ActiveModelState)
    assert second.render_delta(first) == (
        "**Active model changed:** openai:gpt-5.2 → openai:gpt-5-mini"
    )
    assert second.render_delta(second) is None
    observer.rows = [r.model_copy(update={"active": False}) for r in ROWS]
    assert provider() is None
    observer.fail_reading = True
    assert provider() is None


def test_once_the_agent_is_gone_tools_raise_observer_gone_and_the_provider_is_none() -> None:
    card = ModelTool()
    observer: RosterObserver | None = RosterObserver(ROWS)
    ToolFactory([card], observer=observer)
    tools = {tool.__name__: tool for tool in card.get_tools()}
    (provider,) = card.get_context_states()
    observer = None
    with pytest.raises(ToolObserverGone):
        tools["list_models"]()
    with pytest.raises(ToolObserverGone):
        tools["switch_model"]("openai:gpt-5-mini")
    assert provider() is None


def test_a_command_only_switch_is_no_tool() -> None:
    observer = RosterObserver(ROWS)
    card = ModelTool(switch_model=SwitchModel(expose={COMMAND}))
    registry = ToolFactory([card], observer=observer).get_command_registry()
    assert [tool.__name__ for tool in card.get_tools()] == ["list_models"]
    assert "switch_model" in {d.name for d in registry.descriptors()}


def test_the_seed_path_forwards_to_this_package() -> None:
    import akgentic_model

    from akgentic.tool.model import SwitchModel as Forwarded

    assert Forwarded is akgentic_model.SwitchModel
