"""The akgentic plugin system: hook specifications, records, discovery, registry.

Plugin authors need three names from here: :data:`hookimpl` to mark their hook
functions, the record types their hooks return (``ToolCardSpec``...), and,
in tests, the fixtures of :mod:`akgentic.testing`. The kernel asks
:func:`get_registry` for what is installed; discovery happens on that first
call, never on import.
"""

from __future__ import annotations

from akgentic.plugins.errors import (
    DuplicatePluginNameError,
    EssentialPluginError,
    PluginError,
    PluginLoadError,
    UnknownPluginNameError,
)
from akgentic.plugins.host import (
    ENTRY_POINT_GROUP,
    ESSENTIAL_PLUGINS,
    PluginHost,
    PluginInfo,
    get_host,
    reset_host,
    use_host,
)
from akgentic.plugins.markers import PROJECT_NAME, hookimpl, hookspec
from akgentic.plugins.registry import PluginRegistry
from akgentic.plugins.specs import (
    KINDS,
    AgentClassSpec,
    EmbedderSpec,
    EventStoreSpec,
    MessageTypeSpec,
    SandboxBackendSpec,
    Spec,
    ToolCardSpec,
    VectorBackendSpec,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "ESSENTIAL_PLUGINS",
    "KINDS",
    "PROJECT_NAME",
    "AgentClassSpec",
    "DuplicatePluginNameError",
    "EmbedderSpec",
    "EssentialPluginError",
    "EventStoreSpec",
    "MessageTypeSpec",
    "PluginError",
    "PluginHost",
    "PluginInfo",
    "PluginLoadError",
    "PluginRegistry",
    "SandboxBackendSpec",
    "Spec",
    "ToolCardSpec",
    "UnknownPluginNameError",
    "VectorBackendSpec",
    "get_host",
    "get_registry",
    "hookimpl",
    "hookspec",
    "reset_host",
    "use_host",
]


def get_registry() -> PluginRegistry:
    """The registry of the process-wide plugin host (discovers plugins on first call)."""
    return get_host().registry
