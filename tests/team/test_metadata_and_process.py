"""TeamMetadata, index entries, and the Process record that carries them."""

from __future__ import annotations

import enum
from datetime import UTC, date, datetime
from uuid import UUID, uuid4

import pytest
from pydantic import Field, ValidationError

from akgentic.core.agent_config import BaseConfig
from akgentic.core.messages import StartMessage, UserMessage
from akgentic.team import (
    AgentStateSnapshot,
    PersistedEvent,
    Process,
    TeamMetadata,
    TeamStatus,
    WelcomeMessage,
    derive_metadata_indexes,
    make_index_entry,
)
from akgentic.testing.event_store_contract import (
    ContractMetadata,
    ContractState,
    contract_card,
    contract_process,
)


class Colour(enum.Enum):
    RED = "red"


class Typed(TeamMetadata):
    flag: bool = Field(json_schema_extra={"indexed": True})
    count: int = Field(json_schema_extra={"indexed": True})
    day: date = Field(json_schema_extra={"indexed": True})
    at: datetime = Field(json_schema_extra={"indexed": True})
    ident: UUID = Field(json_schema_extra={"indexed": True})
    colour: Colour | None = Field(default=None, json_schema_extra={"indexed": True})
    free: dict[str, list[int]] = Field(default_factory=dict)


class Colourful(TeamMetadata):
    colour: Colour | None = Field(default=None, json_schema_extra={"indexed": True})


def test_index_entries_render_each_scalar_type() -> None:
    ident = UUID("12345678-1234-5678-1234-567812345678")
    value = Typed(
        flag=True,
        count=3,
        day=date(2024, 5, 1),
        at=datetime(2024, 5, 1, 12, 0, tzinfo=UTC),
        ident=ident,
        colour=Colour.RED,
        free={"a": [1]},
    )
    assert derive_metadata_indexes(value) == [
        "flag|true",
        "count|3",
        "day|2024-05-01",
        "at|2024-05-01T12:00:00+00:00",
        f"ident|{ident}",
        "colour|red",
    ]
    assert Typed.indexed == ("flag", "count", "day", "at", "ident", "colour")


def test_a_pipe_in_a_value_is_escaped_into_a_single_entry() -> None:
    value = ContractMetadata(tenant="acme|contoso")
    assert derive_metadata_indexes(value) == ["tenant|acme\\|contoso"]
    assert make_index_entry("tenant", "acme|contoso") == "tenant|acme\\|contoso"


def test_backslashes_are_escaped_so_the_encoding_stays_unambiguous() -> None:
    assert make_index_entry("k", "a\\|b") != make_index_entry("k", "a|b")
    assert make_index_entry("k", "a\\") == "k|a\\\\"


def test_an_unset_optional_field_emits_nothing_but_an_empty_string_does() -> None:
    assert derive_metadata_indexes(ContractMetadata(tenant="acme")) == ["tenant|acme"]
    assert derive_metadata_indexes(ContractMetadata(tenant="acme", channel="")) == [
        "tenant|acme",
        "channel|",
    ]
    assert derive_metadata_indexes(None) == []


@pytest.mark.parametrize("annotation", [list[str], float, dict[str, str], str | int])
def test_marking_a_non_scalar_field_indexed_fails_when_the_class_is_defined(
    annotation: object,
) -> None:
    with pytest.raises(TypeError, match=r"Broken\.bad is marked indexed"):
        type(
            "Broken",
            (TeamMetadata,),
            {
                "__annotations__": {"bad": annotation},
                "bad": Field(json_schema_extra={"indexed": True}),
                "__module__": __name__,
            },
        )


def test_metadata_rejects_unknown_keys() -> None:
    with pytest.raises(ValidationError, match=r"extra_forbidden|Extra inputs"):
        ContractMetadata.model_validate({"tenant": "acme", "tenat": "typo"})


def test_process_validates_a_mapping_against_the_card_metadata_type() -> None:
    process = Process(team_id=uuid4(), team_card=contract_card(), metadata={"tenant": "acme"})
    assert process.metadata == ContractMetadata(tenant="acme")
    assert process.metadata_indexes == ["tenant|acme"]


def test_process_refuses_metadata_that_fails_validation() -> None:
    with pytest.raises(ValidationError, match="tenant"):
        Process(team_id=uuid4(), team_card=contract_card(), metadata={"channel": "email"})


def test_process_refuses_metadata_of_another_type() -> None:
    with pytest.raises(ValidationError, match=r"must be a .*ContractMetadata"):
        Process(team_id=uuid4(), team_card=contract_card(), metadata=Colourful(colour=Colour.RED))


def test_a_card_without_metadata_type_refuses_any_metadata() -> None:
    card = contract_card().model_copy(update={"metadata_type": None})
    with pytest.raises(ValidationError, match=r"declares no metadata_type"):
        Process(team_id=uuid4(), team_card=card, metadata={"tenant": "acme"})
    assert Process(team_id=uuid4(), team_card=card).metadata is None


def test_caller_supplied_index_entries_are_ignored() -> None:
    process = Process.model_validate(
        {
            "team_id": str(uuid4()),
            "team_card": contract_card(),
            "metadata": {"tenant": "acme"},
            "metadata_indexes": ["tenant|someone-else"],
        }
    )
    assert process.metadata_indexes == ["tenant|acme"]


def test_with_metadata_replaces_the_value_instead_of_merging() -> None:
    process = contract_process(metadata=ContractMetadata(tenant="acme", channel="email"))
    replaced = process.with_metadata({"tenant": "globex"})
    assert replaced.metadata == ContractMetadata(tenant="globex")
    assert replaced.metadata_indexes == ["tenant|globex"]
    assert replaced.updated_at >= process.updated_at
    assert process.metadata_indexes == ["tenant|acme", "channel|email"]
    cleared = replaced.with_metadata(None)
    assert cleared.metadata is None
    assert cleared.metadata_indexes == []


def test_with_metadata_validates_before_anything_changes() -> None:
    process = contract_process(metadata=ContractMetadata(tenant="acme"))
    with pytest.raises(ValidationError):
        process.with_metadata({"priority": "not a number", "tenant": "x"})


def test_with_status_changes_status_and_refreshes_updated_at() -> None:
    process = contract_process(created_at=datetime(2024, 1, 1, tzinfo=UTC))
    stopped = process.with_status(TeamStatus.STOPPED)
    assert stopped.status is TeamStatus.STOPPED
    assert stopped.updated_at > process.updated_at
    assert stopped.created_at == process.created_at


def test_process_round_trips_through_its_tagged_dump() -> None:
    process = contract_process(metadata=ContractMetadata(tenant="acme", urgent=False))
    loaded = Process.model_validate(process.model_dump())
    assert loaded == process
    assert type(loaded.metadata) is ContractMetadata
    assert loaded.id == process.team_id


def test_team_status_values_are_the_stored_strings() -> None:
    assert [s.value for s in TeamStatus] == [
        "running",
        "stopped",
        "passivated",
        "broken",
        "deleted",
    ]
    assert TeamStatus("stopped") is TeamStatus.STOPPED


def test_persisted_event_keeps_the_message_subclass_through_a_dump() -> None:
    team_id = uuid4()
    start = StartMessage(config=BaseConfig(name="@A", role="A"))
    event = PersistedEvent(team_id=team_id, sequence=1, event=start)
    loaded = PersistedEvent.model_validate(event.model_dump())
    assert type(loaded.event) is StartMessage
    assert loaded == event


def test_persisted_event_sequences_start_at_one() -> None:
    with pytest.raises(ValidationError):
        PersistedEvent(team_id=uuid4(), sequence=0, event=UserMessage(content="x"))


def test_agent_state_snapshot_keeps_the_state_subclass_through_a_dump() -> None:
    snapshot = AgentStateSnapshot(
        team_id=uuid4(), agent_id=str(uuid4()), name="@A", state=ContractState(counter=2)
    )
    loaded = AgentStateSnapshot.model_validate(snapshot.model_dump())
    assert type(loaded.state) is ContractState
    assert loaded == snapshot


def test_welcome_message_is_a_message_with_content_and_display_type_other() -> None:
    message = WelcomeMessage(content="Team ready.")
    assert message.display_type == "other"
    assert WelcomeMessage.model_validate(message.model_dump()) == message
