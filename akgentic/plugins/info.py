"""What the plugin host records about one plugin: :class:`PluginInfo`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["PluginInfo", "PluginStatus"]

#: ``conflict``: loaded, but something it provides is also claimed by another party
#: (see :attr:`PluginInfo.conflicts`); the plugin's hooks still run.
PluginStatus = Literal["loaded", "disabled", "failed", "conflict"]


@dataclass
class PluginInfo:
    """What the host knows about one plugin, loaded or not."""

    name: str
    distribution: str = ""
    version: str = ""
    builtin: bool = False
    status: PluginStatus = "loaded"
    error: str | None = None
    hooks: list[str] = field(default_factory=list)
    provides: dict[str, list[str]] = field(default_factory=dict)
    entry_point: str = ""
    #: One line per clash with another party (a plugin, a built-in command); while
    #: the status is ``conflict``, ``error`` joins them.
    conflicts: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """``name (distribution)`` for error messages."""
        return f"plugin {self.name!r} ({self.distribution or 'not installed'})"

    @property
    def active(self) -> bool:
        """Whether its hooks run: ``loaded``, or loaded with a ``conflict``."""
        return self.status in ("loaded", "conflict")

    def as_json(self) -> dict[str, object]:
        """The machine-readable form printed by ``akgentic plugins --json``."""
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "builtin": self.builtin,
            "status": self.status,
            "error": self.error,
            "hooks": list(self.hooks),
            "provides": {kind: list(names) for kind, names in self.provides.items()},
        }
