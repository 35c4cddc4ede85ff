"""The public surface of the kernel for plugin authors.

A plugin registers what it provides through hook implementations (:data:`hookimpl`)
that return the typed records exported here (``ToolCardSpec``, ``EventStoreSpec``,
``WebRoutesSpec``...), and imports every other kernel name it needs from this module
too: the tool-card base classes, the actor runtime, team cards and records, the event
store base and codec, vector backends and embedders, sandbox backends, runtimes, and
the console's panes and service. ``docs/writing-plugins.md`` lists them by kind.

Stability: a name exported here keeps its meaning and signature across minor
releases; a change that breaks one comes with a deprecation period of one minor
release, during which the old spelling still works and warns. Names reached any
other way (a kernel module path, a ``_private`` name) carry no promise, and
``tests/test_layering.py`` fails when a plugin in this repository uses one. The
list, with what each part is for, is in ``docs/writing-plugins.md``.

Names are imported on first use (a module ``__getattr__``), so a plugin pays only for
the kernel parts it uses, and importing this module is as cheap as :mod:`akgentic.plugins`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from akgentic.agent.messages import (
        AgentMessage,
    )
    from akgentic.agent.team_budget import (
        record_charge,
        team_budget_of,
    )
    from akgentic.cluster.client import (
        Ack,
        ClusterError,
        Placement,
        TeamSummary,
        TeamUnavailableError,
    )
    from akgentic.cluster.host import (
        TeamHost,
    )
    from akgentic.console.hub import (
        StreamClient,
    )
    from akgentic.console.panes import (
        PaneSource,
        replay_tool_state,
    )
    from akgentic.console.service import (
        ConsoleService,
    )
    from akgentic.console.views import (
        pending_questions,
        roster,
    )
    from akgentic.core.actor_address import (
        ActorAddress,
    )
    from akgentic.core.actor_address_impl import (
        address_of,
    )
    from akgentic.core.actor_system import (
        ActorSystem,
    )
    from akgentic.core.agent import (
        Akgent,
    )
    from akgentic.core.agent_config import (
        BaseConfig,
    )
    from akgentic.core.agent_state import (
        BaseState,
    )
    from akgentic.core.errors import (
        RetriableError,
    )
    from akgentic.core.event_subscriber import (
        EventSubscriber,
    )
    from akgentic.core.messages.message import (
        Message,
    )
    from akgentic.core.messages.orchestrator import (
        EventMessage,
        SentMessage,
    )
    from akgentic.core.proxy import (
        ProxyWrapper,
    )
    from akgentic.core.utils.serializer import (
        SerializableBaseModel,
        serialize_base_model,
    )
    from akgentic.llm.budget_events import (
        BudgetCharged,
    )
    from akgentic.llm.team_budget import (
        BudgetLimits,
        TeamBudget,
    )
    from akgentic.plugins import (
        hookimpl,
    )
    from akgentic.plugins.registry import (
        current_registry,
    )
    from akgentic.plugins.specs import (
        AgentClassSpec,
        ConsolePaneSpec,
        EmbedderSpec,
        EventStoreSpec,
        MessageTypeSpec,
        RuntimeSpec,
        SandboxBackendSpec,
        ToolCardSpec,
        VectorBackendSpec,
        WebRoutesSpec,
    )
    from akgentic.sandbox.backend import (
        MOUNT_POINT,
        SANDBOX_HOME,
        SANDBOX_TMP,
        base_environment,
        sandbox_cwd,
    )
    from akgentic.sandbox.capture import (
        StreamCapture,
        pump_pipes,
    )
    from akgentic.sandbox.commands import (
        validate_command,
    )
    from akgentic.sandbox.errors import (
        CommandNotAllowedError,
        CommandParseError,
        SandboxError,
        SandboxNotReady,
    )
    from akgentic.sandbox.models import (
        TIMEOUT_EXIT_CODE,
        ExecResult,
        ResourceLimits,
    )
    from akgentic.sandbox.scrub import (
        scrub_tree,
    )
    from akgentic.sandbox.selection import (
        resolve_sandbox_backend,
    )
    from akgentic.team.card import (
        TeamCard,
    )
    from akgentic.team.errors import (
        DuplicateEventError,
        EventStoreError,
        ForkRefusedError,
        InvalidStoreURLError,
        TeamActivationError,
        TeamCardError,
        TeamClaimLostError,
        TeamError,
        TeamNotFoundError,
        TeamOwnedError,
        TeamStateError,
    )
    from akgentic.team.fork import (
        ForkRequest,
        ForkStep,
    )
    from akgentic.team.manager import (
        TeamManager,
    )
    from akgentic.team.models import (
        AgentStateSnapshot,
        PersistedEvent,
        Process,
        TeamOwner,
        TeamStatus,
    )
    from akgentic.team.ownership import (
        TeamId,
        as_team_id,
    )
    from akgentic.team.runtime import (
        TeamRuntime,
    )
    from akgentic.team.store import (
        load_events_page,
    )
    from akgentic.team.stores.base import (
        Decide,
        Payload,
        StoreBase,
        repeated_event,
    )
    from akgentic.team.stores.claims import (
        LockFileClaims,
        LockFileHolds,
        claim_error,
    )
    from akgentic.team.stores.codec import (
        compact_dumps,
        decode_event,
        decode_process,
        encode_event,
        encode_process,
        encode_state,
        loads,
    )
    from akgentic.team.stores.kit import (
        DriverModule,
        run_initialiser,
    )
    from akgentic.team.urls import (
        missing_store,
        open_event_store,
    )
    from akgentic.tool.commands.rest_of_line import (
        RestOfLine,
    )
    from akgentic.tool.core.capability import (
        SAME_AS_TOOL,
        Builder,
        Capability,
        CapabilityCard,
        SameAsTool,
    )
    from akgentic.tool.core.card import (
        ToolCard,
    )
    from akgentic.tool.core.channels import (
        COMMAND,
        LLM_CONTEXT,
        SYSTEM_PROMPT,
        TOOL_CALL,
        Channels,
        normalize_system_prompt_to_llm_context,
    )
    from akgentic.tool.core.context_state import (
        ContextState,
    )
    from akgentic.tool.core.event import (
        ToolStateSequence,
    )
    from akgentic.tool.core.factory import (
        ToolFactory,
    )
    from akgentic.tool.core.observer import (
        ToolObserver,
    )
    from akgentic.tool.core.params import (
        BaseToolParam,
        resolve_param,
    )
    from akgentic.tool.errors import (
        ToolObserverGone,
    )
    from akgentic.tool.keyword_index import (
        KeywordIndex,
    )
    from akgentic.tool.model.observer import (
        ModelRow,
        ModelSwitchToolObserver,
    )
    from akgentic.tool.singleton import (
        SEMANTIC_DISABLED,
        Row,
        SearchActorConfig,
        VectorRows,
        ask_tool_actor,
        create_tool_actor,
        model_input,
        search_actor_config,
        semantic_switch,
        state_events_after,
        unavailable_sentence,
    )
    from akgentic.tool.testing import (
        RecordingObserver,
    )
    from akgentic.tool.user_regex import (
        UserRegex,
        compile_user_regex,
    )
    from akgentic.vector.actor import (
        ensure_store_actor,
    )
    from akgentic.vector.backend_support import (
        IMPOSSIBLE,
        check_entries,
        check_remove,
        check_search,
        check_team_delete,
        latest_rows,
        ranked_hits,
        row_fields,
        typed_values,
        writer_team,
    )
    from akgentic.vector.clients import (
        ClusterKey,
        get_client,
    )
    from akgentic.vector.embedder import (
        EmbeddingError,
        clean_text,
    )
    from akgentic.vector.engine import (
        Collection,
        InMemoryBackend,
        InMemoryStorage,
        as_matrix,
    )
    from akgentic.vector.hybrid import (
        fold,
        fuse,
        hybrid_search,
        keyword_match,
        semantic_scores,
    )
    from akgentic.vector.param import (
        VectorStoreParam,
        bind_store,
        resolve_store_param,
    )
    from akgentic.vector.protocol import (
        Scalar,
        SearchResult,
        VectorEntry,
        VectorQuery,
        check_vector,
        is_shared,
        row_object_id,
        stable_object_id,
    )
    from akgentic.vector.registry import (
        BackendContext,
        build_backend,
        build_embedder,
        env_value,
        get_embedder_spec,
        needs_store_actor,
    )

# The module each public name is imported from, on first use.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "akgentic.cluster.client": (
        "Ack",
        "ClusterError",
        "Placement",
        "TeamSummary",
        "TeamUnavailableError",
    ),
    "akgentic.cluster.host": ("TeamHost",),
    "akgentic.agent.messages": ("AgentMessage",),
    "akgentic.agent.team_budget": (
        "record_charge",
        "team_budget_of",
    ),
    "akgentic.llm.budget_events": ("BudgetCharged",),
    "akgentic.llm.team_budget": (
        "BudgetLimits",
        "TeamBudget",
    ),
    "akgentic.console.panes": (
        "PaneSource",
        "replay_tool_state",
    ),
    "akgentic.console.hub": ("StreamClient",),
    "akgentic.console.service": ("ConsoleService",),
    "akgentic.console.views": (
        "pending_questions",
        "roster",
    ),
    "akgentic.core.actor_address": ("ActorAddress",),
    "akgentic.core.actor_address_impl": ("address_of",),
    "akgentic.core.actor_system": ("ActorSystem",),
    "akgentic.core.agent": ("Akgent",),
    "akgentic.core.agent_config": ("BaseConfig",),
    "akgentic.core.agent_state": ("BaseState",),
    "akgentic.core.errors": ("RetriableError",),
    "akgentic.core.event_subscriber": ("EventSubscriber",),
    "akgentic.core.messages.message": ("Message",),
    "akgentic.core.messages.orchestrator": (
        "EventMessage",
        "SentMessage",
    ),
    "akgentic.core.proxy": ("ProxyWrapper",),
    "akgentic.core.utils.serializer": (
        "SerializableBaseModel",
        "serialize_base_model",
    ),
    "akgentic.plugins": ("hookimpl",),
    "akgentic.plugins.registry": ("current_registry",),
    "akgentic.plugins.specs": (
        "AgentClassSpec",
        "ConsolePaneSpec",
        "EmbedderSpec",
        "EventStoreSpec",
        "MessageTypeSpec",
        "RuntimeSpec",
        "SandboxBackendSpec",
        "ToolCardSpec",
        "VectorBackendSpec",
        "WebRoutesSpec",
    ),
    "akgentic.sandbox.backend": (
        "MOUNT_POINT",
        "SANDBOX_HOME",
        "SANDBOX_TMP",
        "base_environment",
        "sandbox_cwd",
    ),
    "akgentic.sandbox.capture": (
        "StreamCapture",
        "pump_pipes",
    ),
    "akgentic.sandbox.commands": ("validate_command",),
    "akgentic.sandbox.errors": (
        "CommandNotAllowedError",
        "CommandParseError",
        "SandboxError",
        "SandboxNotReady",
    ),
    "akgentic.sandbox.models": (
        "ExecResult",
        "ResourceLimits",
        "TIMEOUT_EXIT_CODE",
    ),
    "akgentic.sandbox.scrub": ("scrub_tree",),
    "akgentic.sandbox.selection": ("resolve_sandbox_backend",),
    "akgentic.team.card": ("TeamCard",),
    "akgentic.team.errors": (
        "TeamOwnedError",
        "DuplicateEventError",
        "EventStoreError",
        "ForkRefusedError",
        "InvalidStoreURLError",
        "TeamActivationError",
        "TeamCardError",
        "TeamClaimLostError",
        "TeamError",
        "TeamNotFoundError",
        "TeamStateError",
    ),
    "akgentic.team.fork": (
        "ForkRequest",
        "ForkStep",
    ),
    "akgentic.team.manager": ("TeamManager",),
    "akgentic.team.models": (
        "AgentStateSnapshot",
        "PersistedEvent",
        "Process",
        "TeamOwner",
        "TeamStatus",
    ),
    "akgentic.team.ownership": (
        "TeamId",
        "as_team_id",
    ),
    "akgentic.team.runtime": ("TeamRuntime",),
    "akgentic.team.store": ("load_events_page",),
    "akgentic.team.stores.base": (
        "Decide",
        "Payload",
        "StoreBase",
        "repeated_event",
    ),
    "akgentic.team.stores.claims": (
        "LockFileClaims",
        "LockFileHolds",
        "claim_error",
    ),
    "akgentic.team.stores.codec": (
        "compact_dumps",
        "decode_event",
        "decode_process",
        "encode_event",
        "encode_process",
        "encode_state",
        "loads",
    ),
    "akgentic.team.stores.kit": (
        "DriverModule",
        "run_initialiser",
    ),
    "akgentic.team.urls": ("missing_store", "open_event_store"),
    "akgentic.tool.commands.rest_of_line": ("RestOfLine",),
    "akgentic.tool.core.capability": (
        "Builder",
        "Capability",
        "CapabilityCard",
        "SAME_AS_TOOL",
        "SameAsTool",
    ),
    "akgentic.tool.core.card": ("ToolCard",),
    "akgentic.tool.core.channels": (
        "COMMAND",
        "Channels",
        "LLM_CONTEXT",
        "SYSTEM_PROMPT",
        "TOOL_CALL",
        "normalize_system_prompt_to_llm_context",
    ),
    "akgentic.tool.core.context_state": ("ContextState",),
    "akgentic.tool.core.event": ("ToolStateSequence",),
    "akgentic.tool.core.factory": ("ToolFactory",),
    "akgentic.tool.core.observer": ("ToolObserver",),
    "akgentic.tool.core.params": (
        "BaseToolParam",
        "resolve_param",
    ),
    "akgentic.tool.errors": ("ToolObserverGone",),
    "akgentic.tool.keyword_index": ("KeywordIndex",),
    "akgentic.tool.model.observer": (
        "ModelRow",
        "ModelSwitchToolObserver",
    ),
    "akgentic.tool.singleton": (
        "Row",
        "SEMANTIC_DISABLED",
        "SearchActorConfig",
        "VectorRows",
        "ask_tool_actor",
        "create_tool_actor",
        "model_input",
        "search_actor_config",
        "semantic_switch",
        "state_events_after",
        "unavailable_sentence",
    ),
    "akgentic.tool.testing": ("RecordingObserver",),
    "akgentic.tool.user_regex": (
        "UserRegex",
        "compile_user_regex",
    ),
    "akgentic.vector.actor": ("ensure_store_actor",),
    "akgentic.vector.backend_support": (
        "IMPOSSIBLE",
        "check_entries",
        "check_remove",
        "check_search",
        "check_team_delete",
        "latest_rows",
        "ranked_hits",
        "row_fields",
        "typed_values",
        "writer_team",
    ),
    "akgentic.vector.clients": (
        "ClusterKey",
        "get_client",
    ),
    "akgentic.vector.embedder": (
        "EmbeddingError",
        "clean_text",
    ),
    "akgentic.vector.engine": (
        "Collection",
        "InMemoryBackend",
        "InMemoryStorage",
        "as_matrix",
    ),
    "akgentic.vector.hybrid": (
        "fold",
        "fuse",
        "hybrid_search",
        "keyword_match",
        "semantic_scores",
    ),
    "akgentic.vector.param": (
        "VectorStoreParam",
        "bind_store",
        "resolve_store_param",
    ),
    "akgentic.vector.protocol": (
        "Scalar",
        "SearchResult",
        "VectorEntry",
        "VectorQuery",
        "check_vector",
        "is_shared",
        "row_object_id",
        "stable_object_id",
    ),
    "akgentic.vector.registry": (
        "BackendContext",
        "build_backend",
        "build_embedder",
        "env_value",
        "get_embedder_spec",
        "needs_store_actor",
    ),
}

__all__ = [
    "COMMAND",
    "IMPOSSIBLE",
    "LLM_CONTEXT",
    "MOUNT_POINT",
    "SAME_AS_TOOL",
    "SANDBOX_HOME",
    "SANDBOX_TMP",
    "SEMANTIC_DISABLED",
    "SYSTEM_PROMPT",
    "TIMEOUT_EXIT_CODE",
    "TOOL_CALL",
    "Ack",
    "ActorAddress",
    "ActorSystem",
    "AgentClassSpec",
    "AgentMessage",
    "AgentStateSnapshot",
    "Akgent",
    "BackendContext",
    "BaseConfig",
    "BaseState",
    "BaseToolParam",
    "BudgetCharged",
    "BudgetLimits",
    "Builder",
    "Capability",
    "CapabilityCard",
    "Channels",
    "ClusterError",
    "ClusterKey",
    "Collection",
    "CommandNotAllowedError",
    "CommandParseError",
    "ConsolePaneSpec",
    "ConsoleService",
    "ContextState",
    "Decide",
    "DriverModule",
    "DuplicateEventError",
    "EmbedderSpec",
    "EmbeddingError",
    "EventMessage",
    "EventStoreError",
    "EventStoreSpec",
    "EventSubscriber",
    "ExecResult",
    "ForkRefusedError",
    "ForkRequest",
    "ForkStep",
    "InMemoryBackend",
    "InMemoryStorage",
    "InvalidStoreURLError",
    "KeywordIndex",
    "LockFileClaims",
    "LockFileHolds",
    "Message",
    "MessageTypeSpec",
    "ModelRow",
    "ModelSwitchToolObserver",
    "PaneSource",
    "Payload",
    "PersistedEvent",
    "Placement",
    "Process",
    "ProxyWrapper",
    "RecordingObserver",
    "ResourceLimits",
    "RestOfLine",
    "RetriableError",
    "Row",
    "RuntimeSpec",
    "SameAsTool",
    "SandboxBackendSpec",
    "SandboxError",
    "SandboxNotReady",
    "Scalar",
    "SearchActorConfig",
    "SearchResult",
    "SentMessage",
    "SerializableBaseModel",
    "StoreBase",
    "StreamCapture",
    "StreamClient",
    "TeamActivationError",
    "TeamBudget",
    "TeamCard",
    "TeamCardError",
    "TeamClaimLostError",
    "TeamError",
    "TeamHost",
    "TeamId",
    "TeamManager",
    "TeamNotFoundError",
    "TeamOwnedError",
    "TeamOwner",
    "TeamRuntime",
    "TeamStateError",
    "TeamStatus",
    "TeamSummary",
    "TeamUnavailableError",
    "ToolCard",
    "ToolCardSpec",
    "ToolFactory",
    "ToolObserver",
    "ToolObserverGone",
    "ToolStateSequence",
    "UserRegex",
    "VectorBackendSpec",
    "VectorEntry",
    "VectorQuery",
    "VectorRows",
    "VectorStoreParam",
    "WebRoutesSpec",
    "address_of",
    "as_matrix",
    "as_team_id",
    "ask_tool_actor",
    "base_environment",
    "bind_store",
    "build_backend",
    "build_embedder",
    "check_entries",
    "check_remove",
    "check_search",
    "check_team_delete",
    "check_vector",
    "claim_error",
    "clean_text",
    "compact_dumps",
    "compile_user_regex",
    "create_tool_actor",
    "current_registry",
    "decode_event",
    "decode_process",
    "encode_event",
    "encode_process",
    "encode_state",
    "ensure_store_actor",
    "env_value",
    "fold",
    "fuse",
    "get_client",
    "get_embedder_spec",
    "hookimpl",
    "hybrid_search",
    "is_shared",
    "keyword_match",
    "latest_rows",
    "load_events_page",
    "loads",
    "missing_store",
    "model_input",
    "needs_store_actor",
    "normalize_system_prompt_to_llm_context",
    "open_event_store",
    "pending_questions",
    "pump_pipes",
    "ranked_hits",
    "record_charge",
    "repeated_event",
    "replay_tool_state",
    "resolve_param",
    "resolve_sandbox_backend",
    "resolve_store_param",
    "roster",
    "row_fields",
    "row_object_id",
    "run_initialiser",
    "sandbox_cwd",
    "scrub_tree",
    "search_actor_config",
    "semantic_scores",
    "semantic_switch",
    "serialize_base_model",
    "stable_object_id",
    "state_events_after",
    "team_budget_of",
    "typed_values",
    "unavailable_sentence",
    "validate_command",
    "writer_team",
]

__getattr__, __dir__ = lazy_exports(
    __name__, {name: module for module, names in _EXPORTS.items() for name in names}, globals()
)
