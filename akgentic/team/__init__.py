"""akgentic.team: team definitions, event-sourced persistence and team lifecycle.

Public names are exported lazily (``from akgentic.team import TeamCard`` imports
only the module that defines it), so importing the package is cheap and never
pulls in an LLM library or a store plugin.

Persistence in one paragraph: a :class:`TeamCard` defines a team; each running
team has a :class:`Process` record and an append-only log of
:class:`PersistedEvent` in an :class:`EventStore`, written by a
:class:`PersistenceSubscriber`, plus the latest :class:`AgentStateSnapshot` of
each agent. Stores are plugins chosen by URL: :func:`open_event_store` opens
``sqlite:///...`` (the default), ``yaml:///...`` or any installed scheme.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from akgentic.team.card import TeamCard, TeamCardMember
    from akgentic.team.card_yaml import CardProblem, TeamCardValidationError, load_team_card
    from akgentic.team.errors import (
        DuplicateEventError,
        EventLogUnreadableError,
        EventStoreError,
        ForkPointError,
        ForkRefusedError,
        InvalidStoreURLError,
        StoreUnreadableError,
        TeamCardError,
        TeamClaimLostError,
        TeamError,
        TeamNotFoundError,
        TeamOwnedError,
        TeamRecordUnreadableError,
        TeamStateError,
        UnknownStoreSchemeError,
    )
    from akgentic.team.factory import TeamFactory
    from akgentic.team.fork import ForkRequest, ForkResult, ForkStep
    from akgentic.team.manager import TeamManager
    from akgentic.team.messages import EventQuarantined, WelcomeMessage
    from akgentic.team.metadata import (
        Lineage,
        TeamMetadata,
        derive_metadata_indexes,
        make_index_entry,
    )
    from akgentic.team.models import (
        AgentStateSnapshot,
        PersistedEvent,
        Process,
        TeamOwner,
        TeamStatus,
        validate_metadata,
    )
    from akgentic.team.restorer import TeamRestorer
    from akgentic.team.runtime import TeamRuntime
    from akgentic.team.services import NullServiceRegistry, ServiceRegistry
    from akgentic.team.store import BatchEventStore, EventStore, PagedEventStore, load_events_page
    from akgentic.team.stores.sqlite import SqliteEventStore
    from akgentic.team.stores.yaml import YamlEventStore
    from akgentic.team.subscribers.activity import ActivityMonitor
    from akgentic.team.subscribers.idle import IdleStopSubscriber
    from akgentic.team.subscribers.persistence import (
        PersistenceStoppedError,
        PersistenceSubscriber,
    )
    from akgentic.team.urls import DEFAULT_STORE_URL, default_store_url, open_event_store

_LAZY: dict[str, str] = {
    "TeamCard": "akgentic.team.card",
    "TeamCardMember": "akgentic.team.card",
    "CardProblem": "akgentic.team.card_yaml",
    "TeamCardValidationError": "akgentic.team.card_yaml",
    "load_team_card": "akgentic.team.card_yaml",
    "DuplicateEventError": "akgentic.team.errors",
    "EventLogUnreadableError": "akgentic.team.errors",
    "EventStoreError": "akgentic.team.errors",
    "InvalidStoreURLError": "akgentic.team.errors",
    "TeamCardError": "akgentic.team.errors",
    "TeamError": "akgentic.team.errors",
    "TeamRecordUnreadableError": "akgentic.team.errors",
    "TeamNotFoundError": "akgentic.team.errors",
    "TeamStateError": "akgentic.team.errors",
    "StoreUnreadableError": "akgentic.team.errors",
    "TeamClaimLostError": "akgentic.team.errors",
    "TeamOwnedError": "akgentic.team.errors",
    "TeamActivationError": "akgentic.team.errors",
    "ActivationTimeoutError": "akgentic.team.errors",
    "TeamOwner": "akgentic.team.models",
    "TeamFactory": "akgentic.team.factory",
    "ForkPointError": "akgentic.team.errors",
    "ForkRefusedError": "akgentic.team.errors",
    "ForkRequest": "akgentic.team.fork",
    "ForkResult": "akgentic.team.fork",
    "ForkStep": "akgentic.team.fork",
    "Lineage": "akgentic.team.metadata",
    "TeamManager": "akgentic.team.manager",
    "TeamRestorer": "akgentic.team.restorer",
    "TeamRuntime": "akgentic.team.runtime",
    "NullServiceRegistry": "akgentic.team.services",
    "ServiceRegistry": "akgentic.team.services",
    "ActivityMonitor": "akgentic.team.subscribers.activity",
    "IdleStopSubscriber": "akgentic.team.subscribers.idle",
    "UnknownStoreSchemeError": "akgentic.team.errors",
    "EventQuarantined": "akgentic.team.messages",
    "WelcomeMessage": "akgentic.team.messages",
    "TeamMetadata": "akgentic.team.metadata",
    "derive_metadata_indexes": "akgentic.team.metadata",
    "make_index_entry": "akgentic.team.metadata",
    "AgentStateSnapshot": "akgentic.team.models",
    "PersistedEvent": "akgentic.team.models",
    "Process": "akgentic.team.models",
    "TeamStatus": "akgentic.team.models",
    "validate_metadata": "akgentic.team.models",
    "BatchEventStore": "akgentic.team.store",
    "EventStore": "akgentic.team.store",
    "PagedEventStore": "akgentic.team.store",
    "load_events_page": "akgentic.team.store",
    "SqliteEventStore": "akgentic.team.stores.sqlite",
    "YamlEventStore": "akgentic.team.stores.yaml",
    "PersistenceStoppedError": "akgentic.team.subscribers.persistence",
    "PersistenceSubscriber": "akgentic.team.subscribers.persistence",
    "DEFAULT_STORE_URL": "akgentic.team.urls",
    "default_store_url": "akgentic.team.urls",
    "open_event_store": "akgentic.team.urls",
}

__all__ = [
    "DEFAULT_STORE_URL",
    "ActivityMonitor",
    "AgentStateSnapshot",
    "BatchEventStore",
    "CardProblem",
    "DuplicateEventError",
    "EventLogUnreadableError",
    "EventQuarantined",
    "EventStore",
    "EventStoreError",
    "ForkPointError",
    "ForkRefusedError",
    "ForkRequest",
    "ForkResult",
    "ForkStep",
    "IdleStopSubscriber",
    "InvalidStoreURLError",
    "Lineage",
    "NullServiceRegistry",
    "PagedEventStore",
    "PersistedEvent",
    "PersistenceStoppedError",
    "PersistenceSubscriber",
    "Process",
    "ServiceRegistry",
    "SqliteEventStore",
    "StoreUnreadableError",
    "TeamCard",
    "TeamCardError",
    "TeamCardMember",
    "TeamCardValidationError",
    "TeamClaimLostError",
    "TeamError",
    "TeamFactory",
    "TeamManager",
    "TeamMetadata",
    "TeamNotFoundError",
    "TeamOwnedError",
    "TeamOwner",
    "TeamRecordUnreadableError",
    "TeamRestorer",
    "TeamRuntime",
    "TeamStateError",
    "TeamStatus",
    "UnknownStoreSchemeError",
    "WelcomeMessage",
    "YamlEventStore",
    "default_store_url",
    "derive_metadata_indexes",
    "load_events_page",
    "load_team_card",
    "make_index_entry",
    "open_event_store",
    "validate_metadata",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
