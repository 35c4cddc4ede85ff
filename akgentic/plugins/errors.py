"""Errors raised by plugin discovery and the plugin registry."""

from __future__ import annotations

__all__ = [
    "DuplicatePluginNameError",
    "EssentialPluginError",
    "PluginError",
    "PluginLoadError",
    "UnknownPluginNameError",
]


class PluginError(Exception):
    """Base class of every plugin-system error."""


class PluginLoadError(PluginError):
    """A plugin failed to import or register while strict mode was on."""

    def __init__(self, plugin: str, distribution: str, error: str) -> None:
        self.plugin = plugin
        self.distribution = distribution
        self.error = error
        super().__init__(
            f"plugin {plugin!r} from {distribution or 'an unknown distribution'} failed to load: "
            f"{error} (AKGENTIC_STRICT_PLUGINS=1 turns this into an error; disable it with "
            f"AKGENTIC_DISABLE_PLUGINS={plugin})"
        )


class EssentialPluginError(PluginError):
    """Someone asked to disable a built-in plugin the kernel cannot run without."""


class DuplicatePluginNameError(PluginError):
    """Two plugins registered the same name for the same kind of thing."""

    def __init__(
        self, kind: str, name: str, first: str, second: str, *, plugins: tuple[str, str] = ("", "")
    ) -> None:
        self.kind = kind
        self.name = name
        self.first = first
        self.second = second
        #: The two plugin names (empty when not known), for ``AKGENTIC_DISABLE_PLUGINS``.
        self.plugins = plugins
        names = [plugin for plugin in plugins if plugin]
        if len(names) == 2:
            how = (
                f"disable one of them (AKGENTIC_DISABLE_PLUGINS={names[0]} or "
                f"AKGENTIC_DISABLE_PLUGINS={names[1]}) or uninstall it"
            )
        else:
            how = "uninstall or disable one of them (AKGENTIC_DISABLE_PLUGINS)"
        super().__init__(
            f"{kind} name {name!r} is registered twice: by {first} and by {second}; {how}"
        )


class UnknownPluginNameError(PluginError, LookupError):
    """A lookup named something no loaded plugin provides."""

    def __init__(self, kind: str, name: str, available: list[str], hint: str = "") -> None:
        self.kind = kind
        self.name = name
        self.available = available
        self.hint = hint
        listed = ", ".join(sorted(available)) if available else "none"
        message = f"no {kind} named {name!r} is installed; available: {listed}"
        if hint:
            message += f". {hint}"
        super().__init__(message)
