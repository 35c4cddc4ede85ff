"""MessageTypeContract: what every message type that can reach an event log must honour.

A message class registered through ``akgentic_message_types`` (built-in or from a
plugin) proves it persists and loads back like the kernel's own messages by
subclassing this class in its test suite::

    import pytest
    from akgentic.testing import MessageTypeContract
    from akgentic_review.messages import ReviewRequest

    class TestReviewRequestContract(MessageTypeContract):
        message_name = "ReviewRequest"          # the name the plugin registers
        plugin = "akgentic_review.plugin"       # module with the akgentic_message_types hook

        @pytest.fixture
        def message(self) -> ReviewRequest:
            return ReviewRequest(diff="+ print('hi')", urgent=True)   # every field set

What a subclass may set:

- ``message`` (fixture, required): a sample of the class with every field it adds to
  :class:`~akgentic.core.messages.Message` set explicitly (away from its default where
  that matters). Parametrize the fixture to check several shapes. The kit stamps a
  copy with a sender, a recipient, a team and a parent, as sending it would.
- ``message_name`` and ``plugin``: the registered name and the hook implementations
  (an object such as a module, or its dotted import path) that register the class.
  Every test runs in an isolated plugin host holding only ``plugin``; leave both
  ``None`` for a class no plugin registers.
- ``timeout``: seconds any single wait may take in the test that sends the message
  through a running team.

The aliases of the registered :class:`~akgentic.plugins.MessageTypeSpec` (the former
class paths) are read from the registry: each must resolve to the class, in a team
card and in a stored event log alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar
from uuid import UUID, uuid4

import pytest

from akgentic.core.actor_address import ActorAddressProxy
from akgentic.core.actor_system import ActorSystem
from akgentic.core.agent import Akgent
from akgentic.core.agent_card import AgentCard
from akgentic.core.agent_config import BaseConfig
from akgentic.core.messages.message import Message, UserMessage
from akgentic.core.messages.orchestrator import (
    ErrorMessage,
    ProcessedMessage,
    SentMessage,
    WarningMessage,
)
from akgentic.core.orchestrator import Orchestrator
from akgentic.core.proxy import ProxyWrapper
from akgentic.core.user_proxy import UserProxy
from akgentic.core.utils.serializer import (
    MODEL_KEY,
    TYPE_KEY,
    class_path,
    deserialize_object,
    import_class,
    serialize,
)
from akgentic.plugins import MessageTypeSpec, PluginInfo, get_registry
from akgentic.team.card import TeamCard, TeamCardMember
from akgentic.team.card_yaml import dump_yaml
from akgentic.team.factory import ORCHESTRATOR_NAME
from akgentic.team.models import PersistedEvent
from akgentic.team.resolve import resolve_message_type
from akgentic.team.stores.codec import decode_event, encode_event, loads
from akgentic.team.subscribers.persistence import PersistenceSubscriber
from akgentic.team.urls import open_event_store
from akgentic.testing.agent_class_contract import ContractPeer
from akgentic.testing.contract_plugin import register_contract_plugin

__all__ = ["UNKNOWN_KEY", "MessageTypeContract", "stamped"]

UNKNOWN_KEY = "not_a_field_of_this_message"
"""A key no message declares, used to check how unknown keys are treated."""


def _address(team_id: UUID, name: str, *, user_proxy: bool = False) -> ActorAddressProxy:
    """A snapshot address, as subscribers and stored events carry them."""
    actor = UserProxy if user_proxy else Akgent
    return ActorAddressProxy(
        {
            "__actor_address__": True,
            "__actor_type__": class_path(actor),
            "agent_id": str(uuid4()),
            "name": name,
            "role": name.strip("@"),
            "team_id": str(team_id),
            "squad_id": str(uuid4()),
            "is_user_proxy": user_proxy,
        }
    )


def stamped(message: Message, team_id: UUID) -> Message:
    """A copy of ``message`` stamped the way sending it would, with snapshot addresses."""
    copy = message.model_copy(deep=True)
    cause = UserMessage(content="What caused it.")
    copy.init(_address(team_id, "@ContractSender"), team_id, cause)
    copy.recipient = _address(team_id, "@ContractHuman", user_proxy=True)
    return copy


def _with_marker(data: Any, old: str, new: str) -> Any:
    """``data`` with every ``__model__`` / ``__type__`` value ``old`` replaced by ``new``."""
    if isinstance(data, dict):
        return {
            key: new
            if key in (MODEL_KEY, TYPE_KEY) and value == old
            else _with_marker(value, old, new)
            for key, value in data.items()
        }
    if isinstance(data, list):
        return [_with_marker(item, old, new) for item in data]
    return data


class MessageTypeContract:
    """The message type contract as pytest tests; subclass it (see the module docstring)."""

    #: The name the class is registered under (``message_types: [<name>]`` in team cards).
    message_name: ClassVar[str | None] = None
    #: What registers it: hook implementations (a module...) or their dotted import path.
    plugin: ClassVar[object | None] = None
    #: Seconds any single wait may take in the test that runs a team.
    timeout: ClassVar[float] = 30.0

    # -- fixtures ---------------------------------------------------------
    @pytest.fixture
    def message(self) -> Message:
        """A sample of the class under test: every subclass must override it."""
        raise NotImplementedError(
            f"{type(self).__name__} must define a `message` fixture returning a sample "
            "message with every field of its class set"
        )

    @pytest.fixture(autouse=True)
    def _message_plugin(self, register_plugin: Callable[..., PluginInfo]) -> None:
        register_contract_plugin(
            self,
            self.message_name,
            self.plugin,
            register_plugin,
            name_attribute="message_name",
            what="message type",
        )

    # -- helpers ----------------------------------------------------------
    def spec(self) -> MessageTypeSpec | None:
        """The registered record of the class (None when it is not registered)."""
        if self.message_name is None:
            return None
        return get_registry().message_types().get(self.message_name)

    def aliases(self) -> tuple[str, ...]:
        """The former class paths the registration declares."""
        spec = self.spec()
        return () if spec is None else spec.aliases

    def _check_loaded(self, loaded: object, expected: Message, how: str) -> None:
        assert type(loaded) is type(expected), (
            f"{how} gave a {type(loaded).__name__}, not a {type(expected).__name__}"
        )
        assert loaded == expected, f"the message changed through {how}:\n{loaded!r}"

    # -- the class --------------------------------------------------------
    def test_the_sample_is_a_message_with_every_field_of_its_class_set(
        self, message: Message
    ) -> None:
        assert isinstance(message, Message), f"`message` returned {message!r}, not a Message"
        own = [name for name in type(message).model_fields if name not in Message.model_fields]
        unset = [name for name in own if name not in message.model_fields_set]
        assert unset == [], (
            f"the sample leaves {unset} at their defaults: set every field "
            f"{type(message).__name__} adds, so the round trips cover it"
        )

    def test_its_class_path_imports_back_to_the_class(self, message: Message) -> None:
        path = class_path(type(message))
        try:
            found = import_class(path)
        except Exception as error:
            pytest.fail(
                f"{path!r} does not import ({error}): stored events name the class by this "
                "path, so define it at module level"
            )
        assert found is type(message), f"{path!r} imports {found!r}, not the class"

    # -- serialization ----------------------------------------------------
    def test_its_dump_names_its_class_and_loads_back_equal(self, message: Message) -> None:
        sample = stamped(message, uuid4())
        dumped = sample.model_dump()
        assert dumped.get(MODEL_KEY) == class_path(type(sample)), (
            f"the dump must carry the class path under {MODEL_KEY!r}: {dumped}"
        )
        for loader in (type(sample), Message):
            self._check_loaded(
                loader.model_validate(dumped), sample, f"{loader.__name__}.model_validate"
            )
            self._check_loaded(
                loader.model_validate_json(sample.model_dump_json()),
                sample,
                f"{loader.__name__}.model_validate_json",
            )
        assert Message.model_validate(dumped).model_dump() == dumped, (
            "once loaded, the message dumps differently"
        )

    def test_the_core_serializer_round_trips_it_alone_and_in_containers(
        self, message: Message
    ) -> None:
        sample = stamped(message, uuid4())
        self._check_loaded(deserialize_object(serialize(sample)), sample, "the core serializer")
        text = json.dumps(serialize({"batch": [sample, sample]}))
        loaded = deserialize_object(json.loads(text))
        assert isinstance(loaded, dict) and isinstance(loaded.get("batch"), list)
        assert len(loaded["batch"]) == 2, f"list elements were dropped: {loaded}"
        for item in loaded["batch"]:
            self._check_loaded(item, sample, "the core serializer, inside a list")

    def test_the_event_store_codec_round_trips_it(self, message: Message) -> None:
        team_id = uuid4()
        sample = stamped(message, team_id)
        event = PersistedEvent(team_id=team_id, sequence=7, event=sample)
        text = encode_event(event)
        for label, data in (("text", text), ("mapping", loads(text))):
            decoded = decode_event(data, team_id, 7)
            assert decoded == event, f"the stored event changed (decoded from its {label})"
            self._check_loaded(decoded.event, sample, f"decode_event of its {label}")

    def test_it_round_trips_inside_the_telemetry_that_carries_it(self, message: Message) -> None:
        team_id = uuid4()
        sample = stamped(message, team_id)
        orchestrator = _address(team_id, "@Orchestrator")
        envelopes: list[Message] = [
            SentMessage(message=sample, recipient=_address(team_id, "@ContractReceiver")),
            ErrorMessage(content="boom", traceback="Traceback ...", current_message=sample),
            WarningMessage(content="careful", current_message=sample),
        ]
        for sequence, envelope in enumerate(envelopes, start=1):
            envelope.init(orchestrator, team_id)
            stored = PersistedEvent(team_id=team_id, sequence=sequence, event=envelope)
            decoded = decode_event(encode_event(stored), team_id, sequence).event
            name = type(envelope).__name__
            assert decoded == envelope, f"the {name} carrying it changed in the store codec"
            inner = decoded.message if isinstance(decoded, SentMessage) else None
            if isinstance(decoded, ErrorMessage | WarningMessage):
                inner = decoded.current_message
            self._check_loaded(inner, sample, f"a stored {name}")

    def test_it_round_trips_through_an_sqlite_event_store(
        self, message: Message, tmp_path: Path, register_plugin: Callable[..., PluginInfo]
    ) -> None:
        from akgentic.builtin import sqlite_store

        register_plugin(sqlite_store, "contract-sqlite")
        store = open_event_store(f"sqlite:///{tmp_path}/contract.db?synchronous=normal")
        try:
            team_id = uuid4()
            sample = stamped(message, team_id)
            alone = PersistedEvent(team_id=team_id, sequence=1, event=sample)
            carried = PersistedEvent(
                team_id=team_id,
                sequence=2,
                event=SentMessage(message=sample, recipient=_address(team_id, "@Receiver")),
            )
            store.save_event(alone)
            store.save_event(carried)
            loaded = store.load_events(team_id)
            assert loaded == [alone, carried], f"the store gave back {loaded}"
            self._check_loaded(loaded[0].event, sample, "the SQLite store")
            envelope = loaded[1].event
            assert isinstance(envelope, SentMessage)
            self._check_loaded(envelope.message, sample, "a SentMessage in the SQLite store")
        finally:
            store.close()

    def test_sent_in_a_running_team_it_is_stored_and_comes_back(
        self, message: Message, tmp_path: Path, register_plugin: Callable[..., PluginInfo]
    ) -> None:
        from akgentic.builtin import sqlite_store

        register_plugin(sqlite_store, "contract-sqlite")
        store = open_event_store(f"sqlite:///{tmp_path}/team.db?synchronous=normal")
        system = ActorSystem()
        try:
            address = system.createActor(
                Orchestrator, config=BaseConfig(role="Orchestrator", name=ORCHESTRATOR_NAME)
            )
            team_id = address.team_id
            orchestrator = system.proxy_ask(address, Orchestrator, self.timeout)
            orchestrator.subscribe(PersistenceSubscriber(team_id, store))
            peers = [
                orchestrator.createActor(ContractPeer, config=BaseConfig(name=name, role="Peer"))
                for name in ("@ContractSender", "@ContractReceiver")
            ]
            sample = message.model_copy(deep=True)
            sender = ProxyWrapper(peers[0], timeout=self.timeout)
            sent: Message = sender.send(peers[1], sample)
            ProxyWrapper(peers[1], timeout=self.timeout).get_mailbox()  # its turn is over
            # What the persistence subscriber is handed: live addresses made snapshots.
            expected = Orchestrator.snapshot_for_subscribers(sent)
            done = orchestrator.stop(self.timeout)
            assert done.wait(self.timeout + 5), "the team did not stop"
            events = [stored.event for stored in store.load_events(team_id)]
        finally:
            system.shutdown(timeout=self.timeout)
            store.close()
        carried = [e for e in events if isinstance(e, SentMessage) and e.message.id == sent.id]
        assert len(carried) == 1, f"one SentMessage should carry it; the log holds {events}"
        self._check_loaded(carried[0].message, expected, "the log of a running team")
        closed = [e for e in events if isinstance(e, ProcessedMessage) and e.message_id == sent.id]
        assert len(closed) == 1, "its turn must be closed by one stored ProcessedMessage"

    # -- unknown keys -----------------------------------------------------
    def test_unknown_keys_are_ignored_like_every_message(self, message: Message) -> None:
        sample = stamped(message, uuid4())
        fields = {name: getattr(sample, name) for name in type(sample).model_fields}
        try:
            loaded = type(sample).model_validate({**fields, UNKNOWN_KEY: 1})
        except Exception as error:
            pytest.fail(
                f"{type(sample).__name__} refused the unknown key {UNKNOWN_KEY!r}: messages "
                f"ignore unknown keys so that old event logs keep loading ({error})"
            )
        assert not hasattr(loaded, UNKNOWN_KEY), "the unknown key was kept, not ignored"
        self._check_loaded(loaded, sample, "model_validate with an unknown key")

    def test_a_stored_payload_with_a_retired_field_still_loads(self, message: Message) -> None:
        team_id = uuid4()
        sample = stamped(message, team_id)
        data = loads(encode_event(PersistedEvent(team_id=team_id, sequence=1, event=sample)))
        data["event"][UNKNOWN_KEY] = "written by an older version"
        self._check_loaded(decode_event(data, team_id, 1).event, sample, "a stored payload")

    # -- registration -----------------------------------------------------
    def test_the_plugin_registers_the_class_under_its_name(self, message: Message) -> None:
        name = self.message_name
        if name is None:
            pytest.skip("the class is not registered by a plugin (message_name is None)")
        registry = get_registry()
        specs = registry.message_types()
        spec = specs.get(name)
        assert spec is not None, (
            f"plugin {self.plugin!r} registers no message type {name!r}; it registers "
            f"{sorted(specs)}"
        )
        assert isinstance(spec, MessageTypeSpec)
        assert spec.message_class is type(message), (
            f"{name!r} is registered as {spec.message_class!r}"
        )
        owner = registry.owner("message_types", name)
        assert owner is not None and owner.name == f"contract-{name}", (
            f"{name!r} is registered by {owner!r}, not by {self.plugin!r}"
        )
        path = class_path(type(message))
        for alias in spec.aliases:
            assert isinstance(alias, str) and "." in alias and alias != path, (
                f"alias {alias!r}: aliases are former dotted class paths, not the current one"
            )
            try:
                found = import_class(alias)
            except Exception:
                continue  # the usual case: nothing lives there any more
            assert found is type(message), (
                f"alias {alias!r} still imports {found!r}: an import wins over an alias, so "
                "logs written under that path would load as that class"
            )

    def test_its_name_class_path_and_aliases_resolve_to_the_class(self, message: Message) -> None:
        cls = type(message)
        path = class_path(cls)
        references: list[object] = [path, {TYPE_KEY: path}, cls, *self.aliases()]
        if self.message_name is not None:
            references.append(self.message_name)
        for reference in references:
            try:
                found = resolve_message_type(reference)
            except ValueError as error:
                pytest.fail(f"resolve_message_type({reference!r}) failed: {error}")
            assert found is cls, f"resolve_message_type({reference!r}) gave {found!r}"

    def test_a_team_card_file_names_it_and_loads_back_equal(self, message: Message) -> None:
        cls = type(message)
        card = TeamCard(
            name="message-type-contract",
            entry_point=TeamCardMember(
                card=AgentCard(
                    agent_class=UserProxy,
                    description="Entry point",
                    config=BaseConfig(name="@ContractEntry", role="ContractEntry"),
                )
            ),
            message_types=[cls],
        )
        data = card.to_data()
        # As a person writes it: the registered name when there is one.
        data["message_types"] = [self.message_name or class_path(cls)]
        text = dump_yaml(data)
        loaded = TeamCard.from_yaml(text)
        assert loaded.default_message_type is cls, (
            f"message_types: [{data['message_types'][0]}] loads {loaded.message_types}"
        )
        assert loaded == card, f"the card changed through YAML:\n{text}"
        assert TeamCard.from_yaml(loaded.to_yaml()) == card

    def test_a_log_written_under_a_former_class_path_still_loads(self, message: Message) -> None:
        aliases = self.aliases()
        if not aliases:
            pytest.skip("the registration declares no former class paths (aliases)")
        team_id = uuid4()
        sample = stamped(message, team_id)
        path = class_path(type(message))
        events = [
            PersistedEvent(team_id=team_id, sequence=1, event=sample),
            PersistedEvent(
                team_id=team_id,
                sequence=2,
                event=SentMessage(message=sample, recipient=_address(team_id, "@Receiver")),
            ),
        ]
        for alias in aliases:
            for event in events:
                old = _with_marker(loads(encode_event(event)), path, alias)
                assert alias in json.dumps(old)
                try:
                    decoded = decode_event(old, team_id, event.sequence)
                except Exception as error:
                    pytest.fail(
                        f"an event stored while the class lived at {alias!r} does not load, "
                        f"although the registration lists that path as an alias: {error}"
                    )
                assert decoded == event, f"an event stored under {alias!r} loads changed"
