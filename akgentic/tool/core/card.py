"""``ToolCard``: the serializable declaration of what a tool offers an agent."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Self, cast

from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    model_validator,
)

from akgentic.core.lookup import declare_kind_base
from akgentic.core.utils.serializer import (
    MODEL_KEY,
    SerializableBaseModel,
    UnresolvableClassError,
    class_path,
    import_class,
)
from akgentic.tool.core.channels import Channels
from akgentic.tool.core.context_state import ContextProvider
from akgentic.tool.core.observer import ToolObserver, weak_observer
from akgentic.tool.core.params import BaseToolParam, P, resolve_param
from akgentic.tool.errors import ToolObserverGone

__all__ = ["CARD_KEY", "ToolCard"]

CARD_KEY = "card"
"""Key naming a card by its registered name in YAML and in serialized cards."""


class ToolCard(SerializableBaseModel, ABC):
    """Base class of every tool card: configuration only, capabilities on demand.

    A card is a pydantic model that round-trips through ``model_dump()`` /
    ``model_validate()`` and YAML, so its fields are plain data (usually one
    ``SomeParam | bool`` field per capability). Anything live (an actor proxy, a
    client, a file handle) goes in a ``PrivateAttr`` set up in :meth:`observer`.

    Lifecycle: the :class:`~akgentic.tool.core.factory.ToolFactory` orders cards by
    :attr:`depends_on`, calls :meth:`observer` on each with the owning agent, then
    asks the five hooks for what each channel serves: :meth:`get_tools`
    (``TOOL_CALL``), :meth:`get_system_prompts` (``SYSTEM_PROMPT``),
    :meth:`get_context_states` (``LLM_CONTEXT``), :meth:`get_commands` (``COMMAND``)
    and :meth:`get_toolsets` (ready-made toolsets of the LLM library).

    The observer is held through a weak reference so that a card, its closures and
    its commands never keep a stopped agent alive. Read it with ``self._observer``
    (raises :class:`~akgentic.tool.errors.ToolObserverGone` when the agent is gone)
    or ``self._observer_or_none()`` (returns None), never store it yourself.

    Serialized, a card carries its registered name under ``card`` and its class path
    under ``__model__``. Validating a mapping through ``ToolCard`` (or a field typed
    ``ToolCard``) picks the class from either:
    ``ToolCard.model_validate({"card": "shout", "shout": {"suffix": "!!"}})``.

    The name is recorded when the card is validated, never looked up when it is
    dumped: the name it was loaded by, else the name its class is registered under
    in the :func:`~akgentic.plugins.current_registry` of the validating code (None
    when no plugin registers the class). A dump is therefore the same whatever
    plugins the dumping process has.
    """

    # Built at class definition, not on first use: a deferred build snapshots the
    # locals of whichever frame first instantiates the card (often one holding the
    # agent), and a bad field type should fail when the card class is defined.
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=False, defer_build=False)

    card: str | None = Field(
        default=None,
        repr=False,
        description="Registered name of the card; selects the card class when loading.",
    )

    _observer_ref: Callable[[], ToolObserver | None] | None = PrivateAttr(default=None)

    # A card must round-trip through YAML; arbitrary (non-pydantic) field types cannot.
    _forbidden_config: ClassVar[tuple[str, ...]] = ("arbitrary_types_allowed",)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for option in cls._forbidden_config:
            if cls.model_config.get(option):
                raise TypeError(
                    f"{cls.__qualname__} sets {option}=True: tool card fields must be "
                    "serializable; keep runtime objects in PrivateAttr instead"
                )

    # ----------------------------------------------------------- loading

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """Validate ``obj``; a mapping naming a card (``card`` or ``__model__``) yields it.

        ``ToolCard.model_validate({"card": "shout"})`` returns the card class registered
        as ``shout``; on a concrete class the named card must be that class or a subclass.
        """
        if isinstance(obj, dict):
            try:
                target, payload = _select(cls, obj)
            except ValueError as error:
                raise ValidationError.from_exception_data(
                    cls.__name__,
                    [{"type": "value_error", "loc": (), "input": obj, "ctx": {"error": error}}],
                ) from None
            if target is not cls:
                return cast(Self, target.model_validate(payload, *args, **kwargs))
            obj = payload
        return super().model_validate(obj, *args, **kwargs)

    @model_validator(mode="wrap")
    @classmethod
    def _select_card_class(
        cls, data: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        # The path taken when a card is a field of another model (``tools: list[ToolCard]``).
        if not isinstance(data, dict):
            return handler(data)
        target, payload = _select(cls, data)
        if target is not cls:
            return target.model_validate(payload, context=info.context)
        return handler(payload)

    @model_validator(mode="after")
    def _record_registered_name(self) -> Self:
        if self.card is None:
            from akgentic.tool.core.catalog import registered_card_name

            # Through __dict__: a recorded name is not a field the caller set.
            self.__dict__[CARD_KEY] = registered_card_name(type(self))
        return self

    # ---------------------------------------------------------- observer

    def observer(self, observer: ToolObserver) -> Self:
        """Attach the owning agent; called once by the factory, in dependency order.

        Override to bind runtime resources (always call ``super().observer(observer)``
        first and return ``self``). Keep the parameter typed ``ToolObserver``: the
        factory passes the same observer to every card, so narrow it in a private
        accessor (``cast(MyObserver, self._observer)``) rather than in the signature.
        """
        self._observer = observer
        return self

    @property
    def _observer(self) -> ToolObserver:
        """The attached observer; raises ToolObserverGone when it no longer exists."""
        observer = self._observer_or_none()
        if observer is None:
            if self._observer_ref is None:
                raise ToolObserverGone(
                    f"{type(self).__name__} has no observer: wire it through a ToolFactory "
                    "(or call observer()) before using its capabilities"
                )
            raise ToolObserverGone(
                f"the agent that owned this {type(self).__name__} has been stopped"
            )
        return observer

    @_observer.setter
    def _observer(self, observer: ToolObserver) -> None:
        self._observer_ref = weak_observer(observer)

    def _observer_or_none(self) -> ToolObserver | None:
        """The attached observer, or None when none was attached or it is gone."""
        ref = self._observer_ref
        return None if ref is None else ref()

    # ------------------------------------------------------------- hooks

    @property
    def depends_on(self) -> list[str]:
        """Class names of cards that must be wired before this one (default none)."""
        return []

    @abstractmethod
    def get_tools(self) -> list[Callable[..., Any]]:
        """Functions the model may call (``TOOL_CALL``); their docstrings teach it."""

    def get_system_prompts(self) -> list[Callable[[], str]]:
        """Static prompt text (``SYSTEM_PROMPT``), rendered once into the cached prefix."""
        return []

    def get_context_states(self) -> list[ContextProvider]:
        """Providers of volatile state (``LLM_CONTEXT``), diffed and sent per turn.

        Each provider returns a snapshot or None and never raises; its ``__name__`` is
        its key, unique per agent.
        """
        return []

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        """Named commands (``COMMAND``), keyed by the param class that configures them."""
        return {}

    def get_toolsets(self) -> list[Any]:
        """Ready-made toolsets of the LLM library (for example an MCP server's)."""
        return []

    def host_processes(self) -> list[str]:
        """Host processes this card would start outside any sandbox (default none).

        One human-readable line per process (``"stdio MCP server: uvx some-server"``).
        A card that runs a program on the host, rather than through a sandbox
        backend, must list it here: a team created from an untrusted source (the
        console, a remote runtime) is refused unless the operator allowed host
        processes (see ``akgentic.cluster.admission``).
        """
        return []

    # ----------------------------------------------------------- helpers

    @staticmethod
    def _param(value: P | bool | None, cls: type[P], channel: Channels | None = None) -> P | None:
        """Shortcut for :func:`~akgentic.tool.core.params.resolve_param` inside hooks."""
        return resolve_param(value, cls, channel)


def _select(cls: type[ToolCard], data: dict[str, Any]) -> tuple[type[ToolCard], dict[str, Any]]:
    """The class to build and the payload to build it from (the ``card`` name kept)."""
    target = _target_class(cls, data)
    payload = dict(data)
    if MODEL_KEY in payload:
        # Keep a marker (stored payloads get the serializer's tolerance for fields
        # removed since), but the one naming the class actually chosen.
        payload[MODEL_KEY] = class_path(target)
    return target, payload


def _target_class(cls: type[ToolCard], data: dict[str, Any]) -> type[ToolCard]:
    """The card class a mapping asks for: its ``__model__`` path, else its ``card`` name."""
    path = data.get(MODEL_KEY)
    name = data.get(CARD_KEY)
    if isinstance(path, str) and path != class_path(cls):
        try:
            found = import_class(path)
        except UnresolvableClassError as error:
            if name is None:
                raise ValueError(f"cannot load tool card: {error}") from None
        else:
            return _checked_subclass(cls, found, path)
    if name is not None:
        if path == class_path(cls):
            return cls  # the class path is exact; the name was informative
        if not isinstance(name, str):
            raise ValueError(f"'{CARD_KEY}' must be a registered card name, got {name!r}")
        from akgentic.tool.core.catalog import lookup_card_class

        return _checked_subclass(cls, lookup_card_class(name), f"card {name!r}")
    if inspect.isabstract(cls):
        from akgentic.tool.core.catalog import installed_card_names

        listed = ", ".join(installed_card_names()) or "none"
        raise ValueError(
            f"a tool card needs '{CARD_KEY}: <name>' naming an installed card (installed: {listed})"
        )
    return cls


def _checked_subclass(cls: type[ToolCard], found: Any, origin: str) -> type[ToolCard]:
    if not (isinstance(found, type) and issubclass(found, ToolCard)):
        raise ValueError(f"{origin} resolves to {found!r}, which is not a ToolCard subclass")
    if not issubclass(found, cls):
        raise ValueError(f"{origin} is a {found.__name__}, not a {cls.__name__}")
    return found


# The plugin registry checks tool card records against this class without importing it.
declare_kind_base("tool card", ToolCard)
