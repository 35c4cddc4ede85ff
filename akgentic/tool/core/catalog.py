"""Finding tool cards by their registered name, and describing what they offer.

Cards are plugins: a distribution registers card classes through the
``akgentic_tool_cards`` hook, and YAML or stored payloads name them (``card: shout``).
Every function takes the :class:`~akgentic.plugins.PluginRegistry` to read
(``registry=``), defaulting to :func:`akgentic.plugins.current_registry`; plugins
are discovered on the first lookup, never on import.
"""

from __future__ import annotations

import logging
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from akgentic.tool.core.card import CARD_KEY, ToolCard
from akgentic.tool.core.channels import Channels
from akgentic.tool.core.params import BaseToolParam

__all__ = [
    "CapabilityInfo",
    "CardInfo",
    "card_capabilities",
    "card_json_schema",
    "describe_cards",
    "installed_card_names",
    "installed_cards",
    "lookup_card_class",
    "registered_card_name",
]

if TYPE_CHECKING:
    from akgentic.plugins import PluginRegistry

logger = logging.getLogger(__name__)


def _registry(registry: PluginRegistry | None) -> PluginRegistry:
    if registry is not None:
        return registry
    # Imported here: importing the tool package must not import the plugin system.
    from akgentic.plugins.registry import current_registry

    return current_registry()


def installed_cards(registry: PluginRegistry | None = None) -> dict[str, type[ToolCard]]:
    """Registered name -> card class, for every card the loaded plugins provide.

    Every class is a ``ToolCard`` subclass: the registry checked each record when it
    collected it, and a plugin registering anything else is reported failed.
    """
    return {name: spec.card for name, spec in _registry(registry).tool_cards().items()}


def installed_card_names(registry: PluginRegistry | None = None) -> list[str]:
    """Sorted registered card names (empty when the registry cannot be read)."""
    from akgentic.plugins.errors import PluginError

    try:
        return sorted(installed_cards(registry))
    except PluginError:
        return []


def lookup_card_class(name: str, registry: PluginRegistry | None = None) -> type[ToolCard]:
    """The card class registered as ``name``.

    Raises:
        ValueError: No loaded plugin provides ``name``; the message lists the installed
            cards and, for well-known names, the distribution to ``pip install``.
    """
    from akgentic.plugins import ToolCardSpec, UnknownPluginNameError

    try:
        spec = _registry(registry).get("tool_cards", name)
    except UnknownPluginNameError as error:
        raise ValueError(str(error)) from None
    assert isinstance(spec, ToolCardSpec)
    return spec.card


def registered_card_name(
    card: type[ToolCard], registry: PluginRegistry | None = None
) -> str | None:
    """The first name under which ``card`` is registered, or None.

    Never raises: a broken plugin setup only loses the informative name, the class
    path still identifies the card.
    """
    from akgentic.plugins.errors import PluginError

    try:
        specs = _registry(registry).tool_cards()
    except PluginError as error:
        logger.debug("cannot read tool card names: %s", error)
        return None
    for name, spec in specs.items():
        if spec.card is card:
            return name
    return None


@dataclass(frozen=True)
class CapabilityInfo:
    """One capability of a card class: a ``SomeParam | bool`` field.

    Attributes:
        name: The field name on the card.
        param: The param class configuring it.
        channels: Channels it is served on with the field's default value (empty when
            the capability is off by default).
        default_on: False when the field defaults to ``False``.
    """

    name: str
    param: type[BaseToolParam]
    channels: tuple[Channels, ...]
    default_on: bool


@dataclass(frozen=True)
class CardInfo:
    """What ``akgentic cards`` shows for one installed card."""

    name: str
    card_class: str
    plugin: str | None
    distribution: str | None
    capabilities: tuple[CapabilityInfo, ...]
    description: str = ""

    @property
    def channels(self) -> tuple[Channels, ...]:
        """Union of the channels its capabilities use by default, in enum order."""
        used = {channel for cap in self.capabilities for channel in cap.channels}
        return tuple(channel for channel in Channels if channel in used)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly form."""
        return {
            "name": self.name,
            "class": self.card_class,
            "plugin": self.plugin,
            "distribution": self.distribution,
            "description": self.description,
            "channels": [channel.value for channel in self.channels],
            "capabilities": [
                {
                    "name": cap.name,
                    "param": cap.param.__name__,
                    "channels": [channel.value for channel in cap.channels],
                    "default_on": cap.default_on,
                }
                for cap in self.capabilities
            ],
        }


def _param_class(annotation: Any) -> type[BaseToolParam] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseToolParam):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        for member in typing.get_args(annotation):
            found = _param_class(member)
            if found is not None:
                return found
    return None


def card_capabilities(card: type[ToolCard]) -> list[CapabilityInfo]:
    """The capability fields of a card class, in declaration order."""
    capabilities: list[CapabilityInfo] = []
    for name, field in card.model_fields.items():
        param = _param_class(field.annotation)
        if param is None:
            continue
        default = field.get_default(call_default_factory=True)
        resolved: BaseToolParam | None
        if isinstance(default, BaseToolParam):
            resolved = default
        elif default is True:
            resolved = param()
        else:
            resolved = None
        channels = tuple(c for c in Channels if resolved is not None and c in resolved.expose)
        capabilities.append(
            CapabilityInfo(
                name=name, param=param, channels=channels, default_on=resolved is not None
            )
        )
    return capabilities


def describe_cards(registry: PluginRegistry | None = None) -> list[CardInfo]:
    """Every installed card with its plugin, distribution and capabilities, by name."""
    from akgentic.core.utils.serializer import class_path

    registry = _registry(registry)
    specs = registry.tool_cards()
    infos: list[CardInfo] = []
    for name, card in sorted(installed_cards(registry).items()):
        owner = registry.owner("tool_cards", name)
        spec = specs.get(name)
        infos.append(
            CardInfo(
                name=name,
                card_class=class_path(card),
                plugin=owner.name if owner is not None else None,
                distribution=(owner.distribution or None) if owner is not None else None,
                capabilities=tuple(card_capabilities(card)),
                description=spec.description if spec is not None else "",
            )
        )
    return infos


def card_json_schema(name: str, registry: PluginRegistry | None = None) -> dict[str, Any]:
    """JSON Schema of the YAML mapping that configures the card registered as ``name``.

    The mapping is ``{card: <name>, ...fields}``; the schema pins ``card`` to ``name``
    and refuses unknown keys, so a team file can be checked before anything starts.

    Raises:
        ValueError: ``name`` is not an installed card.
    """
    card = lookup_card_class(name, registry)
    schema = card.model_json_schema()
    properties = dict(schema.get("properties", {}))
    properties[CARD_KEY] = {
        "const": name,
        "title": "Card",
        "description": "Registered name of the card.",
    }
    schema["properties"] = {CARD_KEY: properties.pop(CARD_KEY), **properties}
    required = [key for key in schema.get("required", []) if key != CARD_KEY]
    schema["required"] = [CARD_KEY, *required]
    schema["additionalProperties"] = False
    schema.setdefault("title", card.__name__)
    return schema
