"""The akgentic plugin system: hook specifications, records, discovery, registry.

Plugin authors need three names from here: :data:`hookimpl` to mark their hook
functions, the record types their hooks return (``ToolCardSpec``...), and,
in tests, the fixtures of :mod:`akgentic.testing`. The kernel takes a
:class:`PluginRegistry` where it needs one and otherwise asks
:func:`current_registry` (the one :func:`use_registry` installed, else the
process-wide :func:`get_registry`); discovery happens on the first such call,
never on import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
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
    from akgentic.plugins.registry import PluginRegistry, current_registry, use_registry
    from akgentic.plugins.specs import (
        KINDS,
        AgentClassSpec,
        ConsolePaneSpec,
        EmbedderSpec,
        EventStoreSpec,
        MessageTypeSpec,
        RuntimeSpec,
        SandboxBackendSpec,
        Spec,
        ToolCardSpec,
        VectorBackendSpec,
        WebRoutesSpec,
    )

# Names load on first use: importing the package (as the error classes' importers do)
# must not pay for discovery machinery (importlib.metadata, pluggy, stevedore).
_LAZY: dict[str, str] = {
    "DuplicatePluginNameError": "akgentic.plugins.errors",
    "EssentialPluginError": "akgentic.plugins.errors",
    "PluginError": "akgentic.plugins.errors",
    "PluginLoadError": "akgentic.plugins.errors",
    "UnknownPluginNameError": "akgentic.plugins.errors",
    "ENTRY_POINT_GROUP": "akgentic.plugins.host",
    "ESSENTIAL_PLUGINS": "akgentic.plugins.host",
    "PluginHost": "akgentic.plugins.host",
    "PluginInfo": "akgentic.plugins.host",
    "get_host": "akgentic.plugins.host",
    "reset_host": "akgentic.plugins.host",
    "use_host": "akgentic.plugins.host",
    "PROJECT_NAME": "akgentic.plugins.markers",
    "hookimpl": "akgentic.plugins.markers",
    "hookspec": "akgentic.plugins.markers",
    "PluginRegistry": "akgentic.plugins.registry",
    "current_registry": "akgentic.plugins.registry",
    "use_registry": "akgentic.plugins.registry",
    "KINDS": "akgentic.plugins.specs",
    "AgentClassSpec": "akgentic.plugins.specs",
    "ConsolePaneSpec": "akgentic.plugins.specs",
    "EmbedderSpec": "akgentic.plugins.specs",
    "EventStoreSpec": "akgentic.plugins.specs",
    "MessageTypeSpec": "akgentic.plugins.specs",
    "RuntimeSpec": "akgentic.plugins.specs",
    "SandboxBackendSpec": "akgentic.plugins.specs",
    "Spec": "akgentic.plugins.specs",
    "ToolCardSpec": "akgentic.plugins.specs",
    "VectorBackendSpec": "akgentic.plugins.specs",
    "WebRoutesSpec": "akgentic.plugins.specs",
}

__all__ = [
    "ENTRY_POINT_GROUP",
    "ESSENTIAL_PLUGINS",
    "KINDS",
    "PROJECT_NAME",
    "AgentClassSpec",
    "ConsolePaneSpec",
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
    "RuntimeSpec",
    "SandboxBackendSpec",
    "Spec",
    "ToolCardSpec",
    "UnknownPluginNameError",
    "VectorBackendSpec",
    "WebRoutesSpec",
    "current_registry",
    "get_host",
    "get_registry",
    "hookimpl",
    "hookspec",
    "reset_host",
    "use_host",
    "use_registry",
]


def get_registry() -> PluginRegistry:
    """The registry of the process-wide plugin host (discovers plugins on first call)."""
    from akgentic.plugins.host import get_host

    return get_host().registry


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
