"""ToolCardContract: what every tool card must honour, as one pytest class.

A card (built-in or from a plugin) proves it keeps the
:class:`~akgentic.tool.core.card.ToolCard` contract by subclassing this class in its
test suite and building the card with every capability switched on::

    import pytest
    from akgentic.testing import ToolCardContract
    from akgentic_mycards.cards import MyTool

    class TestMyToolContract(ToolCardContract):
        card_name = "mytool"                 # the name the plugin registers
        plugin = "akgentic_mycards.plugin"   # module with the akgentic_tool_cards hook

        @pytest.fixture
        def card(self) -> MyTool:
            return MyTool()                  # every capability on

What a subclass may set:

- ``card`` (fixture, required): the card with every capability on. Configure params
  away from their defaults where that matters; parametrize the fixture to check
  several configurations.
- ``card_off`` (fixture): the card with every capability off. The default sets every
  ``SomeParam | bool`` field of ``card`` to ``False``.
- ``companions`` (fixture): other cards wired beside it, for a card whose
  ``depends_on`` names them (default none).
- ``card_name`` and ``plugin``: the registered name and the hook implementations
  (an object such as a module, or its dotted import path) that register the card.
  Every test runs in an isolated plugin host holding only ``plugin``; leave both
  ``None`` for a card no plugin registers.
- ``tool_arguments``: sample keyword arguments per tool or command name. The kit
  calls every tool and command once its agent is gone, and makes up arguments from
  the type hints of the ones not listed here.
- :meth:`ToolCardContract.make_observer`: the agent stand-in.
  :class:`ContractObserver` meets every observer protocol of the kernel; override it
  for a card that needs a protocol of its own.

Cards hold their observer weakly, so the kit keeps every observer it makes in a
local variable for as long as the card is used, and drops it on purpose to check
what a card does once its agent is gone.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import inspect
import json
import types
import typing
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import UUID

import pytest
import yaml
from pydantic import TypeAdapter, ValidationError
from pydantic_ai import RunContext, Tool
from pydantic_ai.exceptions import ModelRetry, UserError
from pydantic_ai.toolsets import FunctionToolset

import akgentic.tool
from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent_config import BaseConfig
from akgentic.core.messages.message import Message
from akgentic.core.utils.serializer import MODEL_KEY, class_path
from akgentic.llm.output_spec import FINAL_RESULT_TOOL
from akgentic.plugins import PluginInfo, ToolCardSpec, get_registry
from akgentic.testing.contract_plugin import register_contract_plugin
from akgentic.tool.commands.registry import CommandRegistry
from akgentic.tool.commands.signature import parse_docstring
from akgentic.tool.core.card import CARD_KEY, ToolCard
from akgentic.tool.core.catalog import (
    card_capabilities,
    card_json_schema,
    describe_cards,
    lookup_card_class,
    registered_card_name,
)
from akgentic.tool.core.channels import COMMAND, LLM_CONTEXT, SYSTEM_PROMPT, TOOL_CALL, Channels
from akgentic.tool.core.context_state import ContextProvider, ContextState
from akgentic.tool.core.factory import ToolFactory, wrap_retriable
from akgentic.tool.core.observer import ToolObserver
from akgentic.tool.core.params import BaseToolParam, resolve_param
from akgentic.tool.errors import RetriableError, ToolObserverGone
from akgentic.tool.mailbox import MailboxTool
from akgentic.tool.model import ModelRow
from akgentic.tool.team import TeamTool
from akgentic.tool.testing import RecordingObserver

__all__ = ["AGENT_COMMANDS", "ContractObserver", "ToolCardContract", "sample_arguments"]

AGENT_COMMANDS: tuple[str, ...] = ("compact", "clear")
"""Methods every ``BaseAgent`` registers as commands beside its cards' (``extra_commands``)."""

UNKNOWN_FIELD = "not_a_field_of_this_card"
"""A key no card or param declares, used to check that unknown keys are refused."""

Served = dict[Channels, list[str]]
"""Sorted names of what a card serves, per channel (prompts by function name)."""


class ContractObserver(RecordingObserver):
    """The agent stand-in of the kit: every observer protocol of the kernel, no actor.

    Meets :class:`~akgentic.tool.core.observer.ActorToolObserver`,
    :class:`~akgentic.tool.team.TeamManagementToolObserver`,
    :class:`~akgentic.tool.mailbox.MailboxToolObserver` and
    :class:`~akgentic.tool.model.ModelSwitchToolObserver`. It belongs to no team
    (``orchestrator`` is None), its inbox and model roster are empty, and it refuses
    to create actors.

    Attributes:
        hired: Addresses passed to :meth:`on_hire`, in order.
        fired: Addresses passed to :meth:`on_fire`, in order.
    """

    def __init__(self, *, name: str = "@contract", user_id: str | None = None) -> None:
        super().__init__(name=name, user_id=user_id)
        self.hired: list[ActorAddress] = []
        self.fired: list[ActorAddress] = []

    def createActor(self, actor_class: type[Any], *, config: BaseConfig) -> ActorAddress:
        """Not available outside an actor system."""
        raise RuntimeError("ContractObserver cannot create actors; use a real actor test")

    def on_hire(self, address: ActorAddress) -> None:
        """Record a hire."""
        self.hired.append(address)

    def on_fire(self, address: ActorAddress) -> None:
        """Record a departure."""
        self.fired.append(address)

    def get_mailbox(self) -> list[Message]:
        """An empty inbox."""
        return []

    def consume_mailbox(self, ids: Sequence[UUID] | Sequence[str]) -> list[Message]:
        """Nothing is queued, so nothing is taken."""
        return []

    def list_model_rows(self) -> list[ModelRow]:
        """An empty roster."""
        return []

    def switch_model(self, key: str) -> str:
        """Every key is unknown: the roster is empty."""
        raise RetriableError(f"There is no model {key!r}: the roster is empty.")


class _StandIn:
    """What the agent's own commands are bound to: the registry only reads their shape."""


def _agent_commands() -> list[Callable[..., Any]]:
    from akgentic.agent.agent import BaseAgent

    stand_in = _StandIn()
    return [types.MethodType(getattr(BaseAgent, name), stand_in) for name in AGENT_COMMANDS]


def _name(func: object) -> str:
    name = getattr(func, "__name__", None)
    return name if isinstance(name, str) else repr(func)


def _callables(card: ToolCard) -> list[tuple[str, Callable[..., Any]]]:
    """The card's tools and commands, labelled, as the factory would collect them."""
    found: list[tuple[str, Callable[..., Any]]] = [("tool", tool) for tool in card.get_tools()]
    found.extend(("command", command) for command in card.get_commands().values())
    return found


def _takes_run_context(func: Callable[..., Any]) -> bool:
    try:
        hints = typing.get_type_hints(func)
    except Exception:
        return False
    first = next(iter(inspect.signature(func).parameters), None)
    hint = hints.get(first) if first is not None else None
    return hint is RunContext or typing.get_origin(hint) is RunContext


_FORMATTED: dict[str, str] = {
    "uuid": "00000000-0000-4000-8000-000000000001",
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "00:00:00",
}
"""Sample strings for the string formats pydantic gives common types (UUID, datetime...)."""


def _sample_json(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A JSON value the (pydantic-generated) ``schema`` accepts, kept minimal but not empty."""
    if "$ref" in schema:
        return _sample_json(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [option for option in schema.get(key, []) if option.get("type") != "null"]
        if options:
            return _sample_json(options[0], defs)
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "string":
        return _FORMATTED.get(
            schema.get("format", ""), "x" * max(1, int(schema.get("minLength", 1)))
        )
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return float(max(1, schema.get("minimum", 1)))
    if kind == "boolean":
        return True
    if kind == "array":
        item = _sample_json(schema.get("items", {}), defs)
        return [item] * max(1, int(schema.get("minItems", 1)))
    if kind == "object":
        properties: dict[str, Any] = schema.get("properties", {})
        return {
            key: _sample_json(value, defs)
            for key, value in properties.items()
            if key in schema.get("required", [])
        }
    return None


def sample_arguments(func: Callable[..., Any]) -> dict[str, Any]:
    """Keyword arguments for every required parameter of ``func``, made up from its hints.

    Each value is the smallest non-empty value its type's JSON schema allows (``"x"``,
    ``1``, ``["x"]``...), validated into the hinted type.

    Raises:
        TypeError: A parameter cannot be given by keyword, or its type has no JSON
            schema or refuses the made-up value.
    """
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception as error:  # a hint naming something the function cannot see
        raise TypeError(f"cannot read the type hints: {error}") from error
    arguments: dict[str, Any] = {}
    for name, parameter in inspect.signature(func).parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.default is not parameter.empty:
            continue
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise TypeError(f"parameter {name!r} is positional-only")
        adapter: TypeAdapter[Any] = TypeAdapter(hints.get(name, Any))
        try:
            schema = adapter.json_schema()
            arguments[name] = adapter.validate_python(_sample_json(schema, schema.get("$defs", {})))
        except Exception as error:
            raise TypeError(f"no sample value for parameter {name!r}: {error}") from error
    return arguments


def _call(func: Callable[..., Any], arguments: dict[str, Any]) -> Any:
    result = func(**arguments)
    if inspect.isawaitable(result):
        awaitable = result

        async def wait() -> Any:
            return await awaitable

        return asyncio.run(wait())
    return result


@dataclass
class _Wired:
    """Everything a card served, kept after its observer was let go.

    An agent keeps exactly these (tools, prompts, providers, its command registry),
    so they are what must not keep the observer alive.
    """

    observer: weakref.ReferenceType[ToolObserver]
    callables: list[tuple[str, Callable[..., Any]]]
    prompts: list[Callable[[], str]]
    providers: list[ContextProvider]
    registry: CommandRegistry


def _served_by(card: ToolCard) -> Served:
    return {
        SYSTEM_PROMPT: sorted(_name(prompt) for prompt in card.get_system_prompts()),
        TOOL_CALL: sorted(_name(tool) for tool in card.get_tools()),
        COMMAND: sorted(_name(command) for command in card.get_commands().values()),
        LLM_CONTEXT: sorted(_name(provider) for provider in card.get_context_states()),
    }


def _show(served: Served) -> dict[str, list[str]]:
    """``served`` keyed by channel value, for readable assertion messages."""
    return {channel.value: names for channel, names in served.items() if names}


def _removed(before: list[str], after: list[str]) -> list[str]:
    return sorted((Counter(before) - Counter(after)).elements())


def _variant(card: ToolCard, changes: dict[str, Any]) -> ToolCard:
    """A fresh, validated card like ``card`` with some fields replaced (no runtime state)."""
    return type(card).model_validate({**dict(card), **changes})


def _capabilities(card: ToolCard) -> list[tuple[str, BaseToolParam]]:
    """The card's capabilities that are on, with the param each one resolves to."""
    found: list[tuple[str, BaseToolParam]] = []
    for capability in card_capabilities(type(card)):
        param = resolve_param(getattr(card, capability.name), capability.param)
        if param is not None:
            found.append((capability.name, param))
    return found


def _refusal(validate: Callable[[Any], object], data: dict[str, Any]) -> ValidationError | None:
    """The error ``validate(data)`` raises, or None when ``data`` validates."""
    try:
        validate(data)
    except ValidationError as error:
        return error
    return None


def _extra_forbidden(error: ValidationError, field: str, key: str | None = None) -> bool:
    """True when ``error`` refuses ``key`` inside ``field`` (or ``field`` itself) as unknown."""
    for detail in error.errors():
        location = detail["loc"]
        if detail["type"] != "extra_forbidden" or not location:
            continue
        if key is None and location == (field,):
            return True
        if key is not None and location[0] == field and location[-1] == key:
            return True
    return False


class ToolCardContract:
    """The tool card contract as pytest tests; subclass it (see the module docstring)."""

    #: The name the card is registered under (``- card: <name>`` in team files).
    card_name: ClassVar[str | None] = None
    #: What registers it: hook implementations (a module...) or their dotted import path.
    plugin: ClassVar[object | None] = None
    #: Keyword arguments to call a tool or command with, by its name (else made up).
    tool_arguments: ClassVar[dict[str, dict[str, Any]]] = {}

    # -- fixtures ---------------------------------------------------------
    @pytest.fixture
    def card(self) -> ToolCard:
        """The card under test with every capability on: every subclass must override it."""
        raise NotImplementedError(
            f"{type(self).__name__} must define a `card` fixture returning the card with "
            "every capability switched on"
        )

    @pytest.fixture
    def card_off(self, card: ToolCard) -> ToolCard:
        """The same card with every capability off (every param field set to False)."""
        return _variant(card, {cap.name: False for cap in card_capabilities(type(card))})

    @pytest.fixture
    def companions(self) -> list[ToolCard]:
        """Cards wired beside the card under test (those its ``depends_on`` names)."""
        return []

    @pytest.fixture(autouse=True)
    def _card_plugin(self, register_plugin: Callable[..., PluginInfo]) -> None:
        register_contract_plugin(
            self,
            self.card_name,
            self.plugin,
            register_plugin,
            name_attribute="card_name",
            what="card",
        )

    def make_observer(self) -> ToolObserver:
        """A new agent stand-in; the caller must keep it referenced while it is used."""
        return ContractObserver()

    # -- helpers ----------------------------------------------------------
    def served(self, card: ToolCard, companions: Sequence[ToolCard]) -> Served:
        """What ``card`` serves on each channel once wired (its own items only)."""
        observer = self.make_observer()
        ToolFactory([*companions, card], observer=observer)
        return _served_by(card)

    def _wire_and_forget(self, card: ToolCard, companions: Sequence[ToolCard]) -> _Wired:
        # The observer lives only in this frame, so it is collectable once this returns.
        observer = self.make_observer()
        factory = ToolFactory([*companions, card], observer=observer)
        return _Wired(
            observer=weakref.ref(observer),
            callables=_callables(card),
            prompts=card.get_system_prompts(),
            providers=card.get_context_states(),
            registry=factory.get_command_registry(),
        )

    def _misbehaviour_without_an_agent(
        self, callables: Iterable[tuple[str, Callable[..., Any]]], providers: list[ContextProvider]
    ) -> list[str]:
        problems: list[str] = []
        for kind, func in callables:
            if _takes_run_context(func):
                continue  # reaches its agent through the run context, not the observer
            name = _name(func)
            arguments = self.tool_arguments.get(name)
            if arguments is None:
                try:
                    arguments = sample_arguments(func)
                except TypeError as error:
                    pytest.fail(
                        f"cannot make up arguments for {kind} {name!r} ({error}); "
                        f"give them in {type(self).__name__}.tool_arguments[{name!r}]"
                    )
            try:
                _call(func, arguments)
            except (ToolObserverGone, RetriableError):
                continue
            except Exception as error:
                problems.append(f"{kind} {name}(**{arguments!r}): {type(error).__name__}: {error}")
        for provider in providers:
            try:
                state: object = provider()  # loosely typed: this checks the annotation holds
            except Exception as error:
                problems.append(
                    f"context provider {_name(provider)}: {type(error).__name__}: {error}"
                )
                continue
            if state is not None and not isinstance(state, ContextState):
                problems.append(
                    f"context provider {_name(provider)} returned {state!r}, "
                    "not a ContextState or None"
                )
        return problems

    # -- the card under test ----------------------------------------------
    def test_the_fixtures_give_the_card_all_on_and_all_off(
        self, card: ToolCard, card_off: ToolCard
    ) -> None:
        assert isinstance(card, ToolCard), f"`card` returned {card!r}, not a ToolCard"
        assert type(card_off) is type(card), (
            f"`card_off` is a {type(card_off).__name__}, not a {type(card).__name__}"
        )
        on = [name for name, _ in _capabilities(card)]
        off = [name for name, _ in _capabilities(card_off)]
        every = [capability.name for capability in card_capabilities(type(card))]
        assert on == every, (
            f"`card` must switch every capability on; off: {sorted(set(every) - set(on))}"
        )
        assert off == [], f"`card_off` must switch every capability off; on: {off}"

    # -- serialization ----------------------------------------------------
    def test_a_dump_names_the_class_path_and_the_registered_name(self, card: ToolCard) -> None:
        for dumped in (card.model_dump(), json.loads(card.model_dump_json())):
            assert dumped.get(MODEL_KEY) == class_path(type(card)), (
                f"the dump must carry the class path under {MODEL_KEY!r}: {dumped}"
            )
            assert dumped.get(CARD_KEY) == self.card_name, (
                f"the dump must carry the registered name ({self.card_name!r}) under "
                f"{CARD_KEY!r}: {dumped}"
            )

    def test_a_dump_loads_back_as_an_equal_card_of_the_same_class(
        self, card: ToolCard, card_off: ToolCard
    ) -> None:
        for label, subject in (("card", card), ("card_off", card_off)):
            dumped = subject.model_dump()
            for loader in (ToolCard, type(subject)):
                loaded = loader.model_validate(dumped)
                assert type(loaded) is type(subject), (
                    f"{loader.__name__}.model_validate(<{label} dump>) built a "
                    f"{type(loaded).__name__}, not a {type(subject).__name__}"
                )
                assert loaded == subject, f"{label} changed in a round trip: {loaded!r}"
                assert loaded.model_dump() == dumped, f"{label} dumps differently once loaded"

    def test_json_and_yaml_round_trips_give_an_equal_card(
        self, card: ToolCard, card_off: ToolCard
    ) -> None:
        for label, subject in (("card", card), ("card_off", card_off)):
            from_json = ToolCard.model_validate(json.loads(subject.model_dump_json()))
            assert from_json == subject, f"{label} changed through JSON: {from_json!r}"
            try:
                text = yaml.safe_dump(subject.model_dump(mode="json"))
            except yaml.YAMLError as error:
                pytest.fail(f"{label} does not dump to plain YAML: {error}")
            from_yaml = ToolCard.model_validate(yaml.safe_load(text))
            assert from_yaml == subject, f"{label} changed through YAML:\n{text}"

    def test_a_deep_copy_is_an_equal_card(self, card: ToolCard) -> None:
        # Agent configurations (and the cards in them) are deep-copied for each hire.
        for duplicate in (card.model_copy(deep=True), copy.deepcopy(card)):
            assert type(duplicate) is type(card)
            assert duplicate == card, f"a deep copy differs: {duplicate!r}"

    def test_unknown_card_fields_are_refused(self, card: ToolCard) -> None:
        fields = {**dict(card), UNKNOWN_FIELD: 1}
        attempts: list[tuple[str, Callable[[Any], object], dict[str, Any]]] = [
            (type(card).__name__, type(card).model_validate, fields)
        ]
        if self.card_name is not None:
            named = {**fields, CARD_KEY: self.card_name}
            attempts.append(("ToolCard", ToolCard.model_validate, named))
        for label, validate, data in attempts:
            refused = _refusal(validate, data)
            assert refused is not None and _extra_forbidden(refused, UNKNOWN_FIELD), (
                f"{label}.model_validate did not refuse the unknown key "
                f"{UNKNOWN_FIELD!r} (the card must keep extra='forbid'): {refused}"
            )

    def test_unknown_param_fields_are_refused(self, card: ToolCard) -> None:
        for capability in card_capabilities(type(card)):
            fields = {**dict(card), capability.name: {UNKNOWN_FIELD: 1}}
            refused = _refusal(type(card).model_validate, fields)
            assert refused is not None and _extra_forbidden(
                refused, capability.name, UNKNOWN_FIELD
            ), (
                f"{capability.param.__name__} (field {capability.name!r}) accepted the "
                f"unknown key {UNKNOWN_FIELD!r}; params must keep extra='forbid': {refused}"
            )

    def test_the_card_class_has_a_json_schema(self, card: ToolCard) -> None:
        schema = type(card).model_json_schema()
        missing = set(type(card).model_fields) - set(schema.get("properties", {}))
        assert not missing, f"fields missing from the JSON schema: {sorted(missing)}"

    # -- registration -----------------------------------------------------
    def test_the_plugin_registers_the_card_under_its_name(self, card: ToolCard) -> None:
        name = self.card_name
        if name is None:
            pytest.skip("the card is not registered by a plugin (card_name is None)")
        specs = get_registry().tool_cards()
        spec = specs.get(name)
        assert spec is not None, (
            f"plugin {self.plugin!r} registers no tool card {name!r}; it registers {sorted(specs)}"
        )
        assert isinstance(spec, ToolCardSpec)
        assert spec.card is type(card), f"{name!r} is registered as {spec.card!r}"
        assert lookup_card_class(name) is type(card)
        assert registered_card_name(type(card)) == name
        assert name in {info.name for info in describe_cards()}, "`akgentic cards` omits it"
        assert getattr(akgentic.tool, type(card).__name__) is type(card), (
            f"`from akgentic.tool import {type(card).__name__}` does not find the card"
        )

    def test_the_registered_name_selects_the_card_class(self, card: ToolCard) -> None:
        name = self.card_name
        if name is None:
            pytest.skip("the card is not registered by a plugin (card_name is None)")
        # As a team file writes it: the name and plain fields, no class path.
        mapping = {
            key: value
            for key, value in card.model_dump(mode="json").items()
            if key not in (MODEL_KEY, CARD_KEY)
        }
        loaded = ToolCard.model_validate({CARD_KEY: name, **mapping})
        assert type(loaded) is type(card), f"card: {name} loads a {type(loaded).__name__}"
        assert loaded == card
        schema = card_json_schema(name)
        assert schema["properties"][CARD_KEY]["const"] == name

    # -- the observer -----------------------------------------------------
    def test_observer_attaches_the_agent_and_returns_the_card(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        observer = self.make_observer()
        ToolFactory(companions, observer=observer)
        assert card.observer(observer) is card, "observer() must return the card itself"
        assert card._observer_or_none() is observer, (
            "observer() did not attach the agent: an override must call super().observer()"
        )

    def test_nothing_the_card_serves_keeps_its_agent_alive(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        wired = self._wire_and_forget(card, companions)
        gc.collect()
        assert wired.observer() is None, (
            "the observer is still alive although only the card, its tools, commands, "
            "prompts and context providers are kept: something stores it strongly "
            "(read it through self._observer / self._observer_or_none() on each use)"
        )

    def test_with_its_agent_gone_the_card_fails_only_with_tool_observer_gone(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        wired = self._wire_and_forget(card, companions)
        gc.collect()
        if wired.observer() is not None:
            pytest.fail("the observer is kept alive (see the test on keeping the agent alive)")
        problems = self._misbehaviour_without_an_agent(wired.callables, wired.providers)
        assert problems == [], (
            "once the agent is gone, tools and commands must work or raise ToolObserverGone "
            "(or RetriableError), and context providers must return None or a state:\n"
            + "\n".join(problems)
        )

    def test_before_it_is_wired_the_card_fails_only_with_tool_observer_gone(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        ToolFactory([*companions, card])  # the factory allows building without an agent
        problems = self._misbehaviour_without_an_agent(_callables(card), card.get_context_states())
        assert problems == [], (
            "without an agent, tools and commands must work or raise ToolObserverGone "
            "(or RetriableError), and context providers must return None or a state:\n"
            + "\n".join(problems)
        )

    # -- tools ------------------------------------------------------------
    def test_tools_are_named_and_documented_callables(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        observer = self.make_observer()
        ToolFactory([*companions, card], observer=observer)
        tools = card.get_tools()
        for tool in tools:
            assert callable(tool), f"get_tools() returned {tool!r}, which is not callable"
            name = _name(tool)
            assert name.isidentifier(), f"tool {tool!r} needs an identifier as __name__"
            assert (inspect.getdoc(tool) or "").strip(), (
                f"tool {name!r} has no docstring: it is what teaches the model to use it"
            )
        duplicates = [name for name, n in Counter(map(_name, tools)).items() if n > 1]
        assert duplicates == [], f"tool names offered twice: {duplicates}"

    def test_pydantic_ai_builds_a_schema_for_every_tool(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        observer = self.make_observer()
        ToolFactory([*companions, card], observer=observer)
        built: list[Tool[Any]] = []
        # Wrapped for retries exactly as an agent's factory wraps them.
        for func in (wrap_retriable(tool, ModelRetry) for tool in card.get_tools()):
            try:
                tool: Tool[Any] = Tool(func)
                schema = tool.function_schema.json_schema
            except Exception as error:
                pytest.fail(f"pydantic-ai cannot build tool {_name(func)!r}: {error}")
            assert tool.name == _name(func)
            assert schema.get("type") == "object", f"{tool.name}: schema {schema}"
            assert (tool.description or "").strip(), f"{tool.name}: empty description"
            built.append(tool)
        try:
            FunctionToolset(built)
        except UserError as error:
            pytest.fail(f"the card's tools do not fit in one toolset: {error}")

    def test_instructions_reach_the_docstring_of_every_tool_they_configure(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        on = self.served(card, companions)[TOOL_CALL]
        for name, param in _capabilities(card):
            if TOOL_CALL not in param.expose:
                continue
            note = f"Contract note for {name}."
            marked = param.model_copy(update={"instructions": note})
            expected = _removed(
                on, self.served(_variant(card, {name: False}), companions)[TOOL_CALL]
            )
            variant = _variant(card, {name: marked})
            observer = self.make_observer()
            ToolFactory([*companions, variant], observer=observer)
            # What the model reads: the description pydantic-ai builds from the docstring.
            carrying = sorted(
                _name(tool)
                for tool in variant.get_tools()
                if note in (Tool(wrap_retriable(tool, ModelRetry)).description or "")
            )
            assert carrying == expected, (
                f"instructions set on {name!r} must reach the description of the tools it "
                f"serves ({expected}); they reach {carrying} (use param.apply_instructions(func))"
            )

    def test_tool_schemas_keep_every_documented_argument_description(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        variants = [("as configured", card)]
        for name, param in _capabilities(card):
            if TOOL_CALL in param.expose:
                marked = param.model_copy(update={"instructions": f"Contract note for {name}."})
                variants.append((f"with instructions on {name!r}", _variant(card, {name: marked})))
        for label, variant in variants:
            observer = self.make_observer()
            ToolFactory([*companions, variant], observer=observer)
            for func in variant.get_tools():
                tool = Tool(wrap_retriable(func, ModelRetry))
                _summary, documented = parse_docstring(func.__doc__)
                properties = tool.function_schema.json_schema.get("properties", {})
                lost = sorted(
                    arg
                    for arg in documented
                    if arg in properties and not properties[arg].get("description")
                )
                assert not lost, (
                    f"{tool.name} ({label}): the schema the model sees lost the description of "
                    f"{lost}, documented in the docstring's Args section"
                )
                description = tool.description or ""
                leaked = [arg for arg in documented if f"{arg}: {documented[arg]}" in description]
                assert not leaked, (
                    f"{tool.name} ({label}): the Args block leaks into the tool description "
                    f"{description!r}; keep docstrings parseable (param.apply_instructions)"
                )

    # -- commands, prompts, context ---------------------------------------
    def test_commands_register_in_a_command_registry(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        observer = self.make_observer()
        factory = ToolFactory([*companions, card], observer=observer)
        commands = card.get_commands()
        params = [capability.param for capability in card_capabilities(type(card))]
        for key in commands:
            assert isinstance(key, type) and any(issubclass(key, p) for p in params), (
                f"command {_name(commands[key])!r} is keyed by {key!r}: key each command by "
                f"the param class of the capability that configures it ({params})"
            )
        try:
            registry = factory.get_command_registry()
        except (TypeError, ValueError) as error:
            pytest.fail(f"the card's commands do not register: {error}")
        descriptors = {d.name: d for d in registry.descriptors()}
        for command in commands.values():
            name = _name(command)
            assert name in descriptors, f"command {name!r} is missing from the registry"
            assert descriptors[name].tool_card == type(card).__name__
            assert descriptors[name].description, (
                f"command {name!r} has no docstring: its first paragraph is what people "
                "see in the command list"
            )

    def test_system_prompts_render_text(self, card: ToolCard, companions: list[ToolCard]) -> None:
        observer = self.make_observer()
        ToolFactory([*companions, card], observer=observer)
        for prompt in card.get_system_prompts():
            assert callable(prompt), f"get_system_prompts() returned {prompt!r}"
            text = prompt()
            assert isinstance(text, str), f"system prompt {_name(prompt)} returned {text!r}"

    def test_context_providers_are_uniquely_named_and_return_serializable_states(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        observer = self.make_observer()
        ToolFactory([*companions, card], observer=observer)
        providers = card.get_context_states()
        names = [_name(provider) for provider in providers]
        for name in names:
            assert name.isidentifier(), (
                f"context provider {name!r}: its __name__ keys its baseline in the agent's "
                "state, so give it a real function name"
            )
        assert len(set(names)) == len(names), f"context provider names repeat: {names}"
        for provider in providers:
            try:
                state = provider()
            except Exception as error:
                pytest.fail(f"context provider {_name(provider)} raised: {error!r}")
            if state is None:
                continue
            assert isinstance(state, ContextState), f"{_name(provider)} returned {state!r}"
            assert isinstance(state.render_full(), str)
            loaded = type(state).model_validate(state.model_dump())
            assert loaded == state, f"{_name(provider)}: the state does not round-trip"
            assert state.render_delta(loaded) is None, (
                f"{_name(provider)}: render_delta must return None when nothing changed"
            )

    # -- capabilities and channels ----------------------------------------
    def test_a_card_with_every_capability_off_serves_nothing(
        self, card_off: ToolCard, companions: list[ToolCard]
    ) -> None:
        served = self.served(card_off, companions)
        assert served == {channel: [] for channel in served}, (
            f"with every capability off the card still serves {_show(served)}"
        )

    def test_switching_one_capability_off_removes_what_it_served(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        on = self.served(card, companions)
        for name, param in _capabilities(card):
            off = self.served(_variant(card, {name: False}), companions)
            for channel in Channels:
                if channel in param.expose:
                    assert _removed(on[channel], off[channel]), (
                        f"{name!r} is exposed on {channel.value} but switching it off removed "
                        f"nothing there ({on[channel]}): no hook serves it on that channel"
                    )
                    assert not _removed(off[channel], on[channel]), (
                        f"switching {name!r} off added {channel.value} items"
                    )
                else:
                    assert off[channel] == on[channel], (
                        f"{name!r} is not exposed on {channel.value}, yet switching it off "
                        f"changed it: {on[channel]} -> {off[channel]}"
                    )

    def test_a_capability_is_served_only_on_the_channels_it_exposes(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        on = self.served(card, companions)
        for name, param in _capabilities(card):
            off = self.served(_variant(card, {name: False}), companions)
            hidden = param.model_copy(update={"expose": set()})
            nowhere = self.served(_variant(card, {name: hidden}), companions)
            assert nowhere == off, (
                f"{name!r} with an empty expose set still serves "
                f"{_show({c: nowhere[c] for c in Channels if nowhere[c] != off[c]})}: "
                "each hook must pass its channel to self._param(...)"
            )
            for channel in param.expose:
                only = param.model_copy(update={"expose": {channel}})
                served = self.served(_variant(card, {name: only}), companions)
                for other in Channels:
                    expected = on[other] if other is channel else off[other]
                    assert served[other] == expected, (
                        f"{name!r} exposed on {channel.value} only: {other.value} serves "
                        f"{served[other]}, expected {expected}"
                    )

    # -- beside other cards -----------------------------------------------
    def test_the_card_fits_beside_the_cards_every_agent_carries(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        # BaseAgent adds MailboxTool and TeamTool when absent, plus its own commands;
        # names clashing with theirs stop the agent from starting.
        carried: list[ToolCard] = [
            other for other in (MailboxTool(), TeamTool()) if not isinstance(card, type(other))
        ]
        observer = self.make_observer()
        factory = ToolFactory(
            [*carried, *companions, card], observer=observer, retry_exception=ModelRetry
        )
        tools = factory.get_tools()
        assert FINAL_RESULT_TOOL not in {_name(tool) for tool in card.get_tools()}, (
            f"{FINAL_RESULT_TOOL!r} is the name of the agent's output tool"
        )
        try:
            FunctionToolset([Tool(tool) for tool in tools])
        except UserError as error:
            pytest.fail(f"a tool name clashes with one every agent has: {error}")
        try:
            factory.get_context_states()
            factory.get_command_registry(extra_commands=_agent_commands())
        except ValueError as error:
            pytest.fail(f"a name clashes with one every agent has: {error}")

    def test_declared_dependencies_are_among_the_companions(
        self, card: ToolCard, companions: list[ToolCard]
    ) -> None:
        depends_on = card.depends_on
        assert isinstance(depends_on, list) and all(isinstance(n, str) for n in depends_on), (
            f"depends_on must be a list of card class names, got {depends_on!r}"
        )
        present = {type(companion).__name__ for companion in companions}
        missing = [name for name in depends_on if name not in present]
        assert missing == [], (
            f"the card depends on {missing}: return such cards from the `companions` fixture"
        )
        order = ToolFactory([card, *companions]).tool_cards
        for companion in companions:
            if type(companion).__name__ in depends_on:
                assert order.index(companion) < order.index(card)
