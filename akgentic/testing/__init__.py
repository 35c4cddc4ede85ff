"""Test kits for akgentic and its plugins.

Installed as a pytest plugin (entry point ``pytest11: akgentic``), so any
project that has akgentic installed gets these fixtures without configuration:

- ``plugin_host``: an isolated, empty plugin host installed as the process host
  for one test (autoload off; nothing from the real environment leaks in).
- ``register_plugin``: registers an inline plugin object into ``plugin_host``
  and always unregisters it after the test.
- ``fake_distributions``: makes "installed" distributions with entry points out
  of temporary ``*.dist-info`` folders on ``sys.path``, so discovery itself is
  tested without pip.
- ``llm_server``: a started scripted OpenAI-compatible server on 127.0.0.1
  (:class:`~akgentic.llm.scripted_server.ScriptedLLMServer`) for offline
  end-to-end runs of real LLM clients (``EmbeddingsServer`` does the same for
  ``/v1/embeddings``).

``-p akgentic.testing.loop_guard`` (opt-in; this repository's ``addopts`` has it) fails
a test that leaves an open event loop as its thread's current loop, which the collector
would later free with a ``ResourceWarning`` in an unrelated test.

``wait_until(predicate, timeout)`` and ``poll_until`` (:mod:`akgentic.testing.waiting`)
are the bounded waits on a condition every test here uses instead of sleeping.
``entry_echo_team_yaml`` and ``human_worker_team_yaml`` (:mod:`akgentic.testing.cards`)
write the small team cards many tests put in a card file. ``TeamLog``
(:mod:`akgentic.testing.team_log`) writes a team's log by hand, message by message,
for tests and benchmarks of what is computed from a log (the console's pictures).

Contract kits for each plugin kind live in this package too and are imported
lazily, so loading the pytest plugin stays cheap. An implementation subclasses its
kit in its own test suite:

- ``EventStoreContract``: every event store (say where fresh storage lives);
- ``ToolCardContract``: every tool card (give the card with every capability on,
  and the name and plugin that register it);
- ``AgentClassContract``: every agent class a team card can name (give the class,
  a config to start it with, a sample of each message it handles, and the name and
  plugin that register it);
- ``MessageTypeContract``: every message type that can reach an event log (give a
  sample message, and the name and plugin that register it);
- ``VectorBackendContract``: every vector backend (give ``make_backend``: backends
  of several teams over one fresh storage);
- ``EmbedderContract``: every embedder (give its registered name and a model).
- ``RuntimeContract``: every runtime (give a client, the store it writes and, for a
  fleet, its worker processes); failover, drain, split brain and no loss;
- ``VirtualRuntimeContract``: every runtime whose hosts passivate idle teams (give a
  client and the store it writes): passivation, activation where the runtime places
  the team, one activation and one owner for concurrent messages, broken teams;
- ``SandboxBackendContract``: every sandbox backend (give a new backend and the reason
  it cannot run here, if any); it runs the hostile escape probes too.
- ``WorkspaceContract``: every workspace card's file tools against a hostile tree
  (give the bound card's tree and tools): links swapped in mid-listing, deep trees,
  huge directories, names with control or bidi characters.
- ``WebRoutesContract``: every plugin serving routes from ``akgentic serve`` (give its
  registered name, plugin and a path to probe); the console's access rules cover them.

``FakeSandboxBackend`` runs commands as plain host subprocesses, with no isolation,
for tests of code that uses a sandbox; a test registers it explicitly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from akgentic.llm.scripted_server import ScriptedLLMServer
    from akgentic.testing.agent_class_contract import AgentClassContract
    from akgentic.testing.cards import entry_echo_team_yaml, human_worker_team_yaml
    from akgentic.testing.embedder_contract import EmbedderContract
    from akgentic.testing.embeddings_server import EmbeddingsServer
    from akgentic.testing.event_store_contract import EventStoreContract
    from akgentic.testing.fake_sandbox import FakeSandboxBackend
    from akgentic.testing.message_type_contract import MessageTypeContract
    from akgentic.testing.plugins import FakeDistributions, inline_plugin
    from akgentic.testing.runtime_contract import RuntimeContract
    from akgentic.testing.sandbox_contract import SandboxBackendContract
    from akgentic.testing.tool_card_contract import ToolCardContract
    from akgentic.testing.vector_contract import VectorBackendContract
    from akgentic.testing.virtual_runtime_contract import VirtualRuntimeContract
    from akgentic.testing.waiting import poll_until, wait_until
    from akgentic.testing.web_routes_contract import WebRoutesContract
    from akgentic.testing.workspace_contract import WorkspaceContract, WorkspaceUnderTest

__all__ = [
    "AgentClassContract",
    "EmbedderContract",
    "EmbeddingsServer",
    "EventStoreContract",
    "FakeDistributions",
    "FakeSandboxBackend",
    "MessageTypeContract",
    "RuntimeContract",
    "SandboxBackendContract",
    "ScriptedLLMServer",
    "ToolCardContract",
    "VectorBackendContract",
    "VirtualRuntimeContract",
    "WebRoutesContract",
    "WorkspaceContract",
    "WorkspaceUnderTest",
    "entry_echo_team_yaml",
    "human_worker_team_yaml",
    "inline_plugin",
    "poll_until",
    "wait_until",
]

_LAZY = {
    "FakeDistributions": "akgentic.testing.plugins",
    "inline_plugin": "akgentic.testing.plugins",
    "ScriptedLLMServer": "akgentic.llm.scripted_server",
    "EventStoreContract": "akgentic.testing.event_store_contract",
    "ToolCardContract": "akgentic.testing.tool_card_contract",
    "AgentClassContract": "akgentic.testing.agent_class_contract",
    "MessageTypeContract": "akgentic.testing.message_type_contract",
    "VectorBackendContract": "akgentic.testing.vector_contract",
    "EmbedderContract": "akgentic.testing.embedder_contract",
    "EmbeddingsServer": "akgentic.testing.embeddings_server",
    "poll_until": "akgentic.testing.waiting",
    "wait_until": "akgentic.testing.waiting",
    "entry_echo_team_yaml": "akgentic.testing.cards",
    "human_worker_team_yaml": "akgentic.testing.cards",
    "SandboxBackendContract": "akgentic.testing.sandbox_contract",
    "RuntimeContract": "akgentic.testing.runtime_contract",
    "VirtualRuntimeContract": "akgentic.testing.virtual_runtime_contract",
    "FakeSandboxBackend": "akgentic.testing.fake_sandbox",
    "WorkspaceContract": "akgentic.testing.workspace_contract",
    "WorkspaceUnderTest": "akgentic.testing.workspace_contract",
    "WebRoutesContract": "akgentic.testing.web_routes_contract",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
