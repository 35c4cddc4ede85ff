"""AgentClassContract: what every agent class a team card can name must honour.

An agent class registered through ``akgentic_agent_classes`` (built-in or from a
plugin) proves it is a well-behaved team member by subclassing this class in its
test suite::

    import pytest
    from akgentic.core.messages import Message
    from akgentic.testing import AgentClassContract
    from akgentic_review.agents import ReviewConfig, Reviewer, ReviewRequest

    class TestReviewerContract(AgentClassContract):
        agent_name = "reviewer"               # the name the plugin registers
        plugin = "akgentic_review.plugin"     # module with the akgentic_agent_classes hook

        @pytest.fixture
        def agent_class(self) -> type[Reviewer]:
            return Reviewer

        @pytest.fixture
        def config(self) -> ReviewConfig:
            return ReviewConfig(name="@Reviewer", role="Reviewer", strictness=3)

        @pytest.fixture
        def sample_messages(self) -> list[Message]:
            return [ReviewRequest(diff="+ print('hi')")]   # one per message it handles

What a subclass may set:

- ``agent_class`` (fixture, required): the class under test.
- ``config`` (fixture): a configuration to start it with, of the config type the class
  declares (``Akgent[ConfigType, StateType]``), with a name and a role. The default is
  that type with only a name and a role. Set fields away from their defaults where
  that matters. An LLM agent needs a model it can reach offline: point its
  ``model_cfg`` at the ``llm_server`` fixture and give that server a ``fallback``
  reply (no ``api_key``: secrets are masked in dumps, so they never round-trip).
- ``sample_messages`` (fixture): one message per ``receiveMsg_<Type>`` handler the
  class adds. The kit sends each one from a team member and checks the turn ends
  without an error; a handler with no sample fails the test that says so.
- ``agent_name`` and ``plugin``: the registered name and the hook implementations
  (an object such as a module, or its dotted import path) that register the class.
  Every test runs in an isolated plugin host holding only ``plugin``; leave both
  ``None`` for a class no plugin registers.
- :meth:`AgentClassContract.start_agent`: how the class is started in a team (by
  default, as a child of the orchestrator).
- ``timeout``: seconds any single wait may take (a start, a turn, a stop).

Everything runs for real: a fresh :class:`~akgentic.core.ActorSystem` and
:class:`~akgentic.core.Orchestrator` per test, a :class:`ContractPeer` that sends
the samples, and for the restore test a :class:`~akgentic.team.TeamManager` over
an SQLite store under ``tmp_path``. Nothing sleeps: each wait is on an actor's
reply or on a condition, bounded by ``timeout``.
"""

from __future__ import annotations

import copy
import inspect
import json
import threading
import typing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from uuid import UUID

import pytest
import yaml
from pydantic import ValidationError

from akgentic.core.actor_address import ActorAddress, ActorAddressProxy
from akgentic.core.actor_refs import ActorDeadError, ActorRef, ActorTimeout, team_actors
from akgentic.core.actor_system import ActorSystem
from akgentic.core.agent import Akgent
from akgentic.core.agent_card import AgentCard, config_type_of
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.dispatch import resolve_handlers
from akgentic.core.event_subscriber import EventSubscriber
from akgentic.core.messages.message import CancelMessage, Message, UserMessage
from akgentic.core.messages.orchestrator import (
    ErrorMessage,
    EventMessage,
    ProcessedMessage,
    SentMessage,
    StartMessage,
    StopMessage,
)
from akgentic.core.orchestrator import Orchestrator
from akgentic.core.proxy import ProxyWrapper, actor_ref_of
from akgentic.core.user_proxy import UserProxy
from akgentic.core.utils.serializer import MODEL_KEY, TYPE_KEY, class_path, import_class, serialize
from akgentic.llm.scripted_server import (
    ScriptedLLMServer,
    ScriptStep,
    context_length_exceeded,
    hang,
    server_error,
    truncated,
    unknown_tool,
)
from akgentic.plugins import AgentClassSpec, PluginInfo, get_registry
from akgentic.team.card import TeamCard, TeamCardMember
from akgentic.team.card_yaml import dump_yaml
from akgentic.team.factory import ORCHESTRATOR_NAME
from akgentic.team.manager import TeamManager
from akgentic.team.models import AgentStateSnapshot
from akgentic.team.resolve import resolve_agent_class
from akgentic.team.stores.codec import decode_state, encode_state
from akgentic.team.stores.sqlite import SqliteEventStore
from akgentic.testing.contract_plugin import register_contract_plugin
from akgentic.testing.waiting import poll_until

__all__ = [
    "UNKNOWN_FIELD",
    "AgentClassContract",
    "ContractPeer",
    "ContractRecorder",
    "ContractTeam",
    "live_actors",
]

UNKNOWN_FIELD = "not_a_field_of_this_config"
"""A key no configuration declares, used to check that unknown keys are refused."""

ENTRY_NAME = "@ContractEntry"
"""Name of the entry point of the teams the kit builds (a plain :class:`UserProxy`)."""

PEER_NAME = "@ContractPeer"
"""Name of the member that sends the sample messages."""


class ContractRecorder(EventSubscriber):
    """Orchestrator subscriber that keeps every message it is shown and wakes waiters."""

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._changed = threading.Condition()

    def on_message(self, msg: Message) -> None:
        """Keep ``msg`` (subscriber hook; runs on the orchestrator's thread)."""
        with self._changed:
            self._messages.append(msg)
            self._changed.notify_all()

    def messages(self) -> list[Message]:
        """Everything recorded so far, in order."""
        with self._changed:
            return list(self._messages)

    def wait_for(self, predicate: Callable[[list[Message]], bool], timeout: float) -> bool:
        """Wait until ``predicate(messages)`` holds; False once ``timeout`` seconds pass."""
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self._messages), timeout)

    def from_agent(self, agent_id: UUID, kind: type[Message] = Message) -> list[Message]:
        """Recorded messages of class ``kind`` sent by the actor ``agent_id``."""
        return [
            m
            for m in self.messages()
            if isinstance(m, kind) and m.sender is not None and m.sender.agent_id == agent_id
        ]


class ContractPeer(Akgent[BaseConfig, BaseState]):
    """A plain team member: sends the samples (through ``send``) and accepts any reply."""

    def receiveMsg_Message(self, message: Message) -> None:
        """Replies are welcome and need no handling."""


def live_actors(team_id: UUID) -> list[ActorRef[Any]]:
    """References of the running actors that belong to team ``team_id``."""
    return team_actors(team_id)


@dataclass
class ContractTeam:
    """A running team of the kit: orchestrator, recorder and one peer member.

    Attributes:
        system: The actor system (shut down after the test).
        address: The orchestrator's live address.
        orchestrator: A blocking proxy on the orchestrator.
        recorder: Subscriber holding everything the orchestrator recorded.
        peer: A :class:`ContractPeer` member that sends the samples.
        timeout: Seconds any ask may take.
    """

    system: ActorSystem
    address: ActorAddress
    orchestrator: Orchestrator
    recorder: ContractRecorder
    peer: ActorAddress
    timeout: float

    @property
    def team_id(self) -> UUID:
        """The team's id."""
        return self.address.team_id

    def settle(self, *members: ActorAddress) -> None:
        """Return once ``members`` and then the orchestrator handled everything queued so far.

        An actor handles its mailbox in order, so an answered ask means every
        earlier message was handled and its telemetry (held-back reports included)
        is queued at the orchestrator, which the final ask then waits for.
        """
        for member in members:
            ProxyWrapper(member, timeout=self.timeout).get_mailbox()
        self.orchestrator.get_team()

    def errors_of(self, agent_id: UUID) -> list[ErrorMessage]:
        """The error reports the actor ``agent_id`` produced so far."""
        found = self.recorder.from_agent(agent_id, ErrorMessage)
        return [m for m in found if isinstance(m, ErrorMessage)]


@dataclass(frozen=True)
class ModelFault:
    """A misbehaving model the kit plays to an LLM agent, and what its one line must say."""

    name: str
    step: ScriptStep
    says: str


#: The model faults every LLM agent class must turn into one plain line (a TurnFailed).
MODEL_FAULTS = (
    ModelFault("http-500", server_error(500, "boom"), "answered HTTP 500: boom"),
    ModelFault(
        "context-length",
        context_length_exceeded(10119, 2048),
        "the prompt (10,119 tokens) exceeds the model's context (2,048)",
    ),
    ModelFault("unknown-tool", unknown_tool("no_such_tool"), "unknown tool 'no_such_tool'"),
    ModelFault("truncated", truncated('{"messages": [], "note": "cut here"}'), "was cut off"),
)


def _without_http_retries(config: BaseConfig) -> BaseConfig:
    """``config`` with the model client's own HTTP retries off (a 5xx fails at once)."""
    runtime = getattr(config, "runtime_cfg", None)
    http = getattr(runtime, "http_client_config", None)
    if runtime is None or http is None:
        return config
    http = http.model_copy(update={"max_retries": 0})
    runtime = runtime.model_copy(update={"http_client_config": http})
    return config.model_copy(update={"runtime_cfg": runtime})


def _describe(errors: Sequence[ErrorMessage]) -> str:
    lines: list[str] = []
    for error in errors:
        lines.append(f"{error.content_type}: {error.content}")
        if error.traceback:
            # Where it was raised: the last frame's location and source line.
            lines.extend(error.traceback.rstrip().splitlines()[-3:-1])
    return "\n".join(lines)


def _plain_config(config: BaseConfig) -> dict[str, Any]:
    """``config`` dumped without its squad, which ``createActor`` fills in."""
    dumped: dict[str, Any] = serialize(config)
    dumped.pop("squad_id", None)
    return dumped


def _same_state(a: BaseState, b: BaseState) -> bool:
    # Field by field, not with ==: a live state also holds its observer and baseline.
    # Not by dump either: a tuple and the list it becomes in JSON dump alike.
    return type(a) is type(b) and dict(a) == dict(b)


def _own_handlers(agent_class: type) -> dict[str, Callable[..., Any]]:
    """``receiveMsg_*`` handlers the class has beyond those of :class:`Akgent` itself."""
    found: dict[str, Callable[..., Any]] = {}
    for name in dir(agent_class):
        if not name.startswith("receiveMsg_"):
            continue
        handler = getattr(agent_class, name)
        if getattr(Akgent, name, None) is handler or not callable(handler):
            continue
        found[name] = handler
    return found


def _handled_type(handler: Callable[..., Any]) -> type | None:
    """The class a handler's message parameter is annotated with, if it can be read."""
    try:
        hints = typing.get_type_hints(handler)
        parameters = [
            p for p in inspect.signature(handler).parameters if p not in ("self", "sender")
        ]
    except Exception:
        return None
    hint = hints.get(parameters[0]) if parameters else None
    return hint if isinstance(hint, type) else None


def _refusal(validate: Callable[[Any], object], data: dict[str, Any]) -> ValidationError | None:
    try:
        validate(data)
    except ValidationError as error:
        return error
    return None


class AgentClassContract:
    """The agent class contract as pytest tests; subclass it (see the module docstring)."""

    #: The name the class is registered under (``agent_class: <name>`` in team cards).
    agent_name: ClassVar[str | None] = None
    #: What registers it: hook implementations (a module...) or their dotted import path.
    plugin: ClassVar[object | None] = None
    #: Seconds any single wait may take (a start, a turn, a stop).
    timeout: ClassVar[float] = 30.0

    # -- fixtures ---------------------------------------------------------
    @pytest.fixture
    def agent_class(self) -> type[Akgent[Any, Any]]:
        """The class under test: every subclass must override it."""
        raise NotImplementedError(
            f"{type(self).__name__} must define an `agent_class` fixture returning the "
            "agent class under test"
        )

    @pytest.fixture
    def config(self, agent_class: type[Akgent[Any, Any]]) -> BaseConfig:
        """A configuration to start the class with (its declared config type, defaults)."""
        return config_type_of(agent_class)(name="@Contract", role="Contract")

    @pytest.fixture
    def sample_messages(self) -> list[Message]:
        """One message per ``receiveMsg_<Type>`` handler the class adds (default none)."""
        return []

    @pytest.fixture(autouse=True)
    def _agent_plugin(self, register_plugin: Callable[..., PluginInfo]) -> None:
        register_contract_plugin(
            self,
            self.agent_name,
            self.plugin,
            register_plugin,
            name_attribute="agent_name",
            what="class",
        )

    @pytest.fixture
    def contract_team(self) -> Iterator[ContractTeam]:
        """A fresh actor system with an orchestrator, a recorder and a peer member."""
        system = ActorSystem()
        try:
            address = system.createActor(
                Orchestrator, config=BaseConfig(role="Orchestrator", name=ORCHESTRATOR_NAME)
            )
            orchestrator = system.proxy_ask(address, Orchestrator, self.timeout)
            recorder = ContractRecorder()
            orchestrator.subscribe(recorder)
            peer = orchestrator.createActor(
                ContractPeer, config=BaseConfig(name=PEER_NAME, role="ContractPeer")
            )
            yield ContractTeam(system, address, orchestrator, recorder, peer, self.timeout)
        finally:
            system.shutdown(timeout=self.timeout)

    def start_agent(
        self, team: ContractTeam, agent_class: type[Akgent[Any, Any]], config: BaseConfig
    ) -> ActorAddress:
        """Start ``agent_class`` in ``team``, as a child of the orchestrator.

        It gets a copy of ``config``: starting an actor fills in the name, role and
        squad of the config it is given.
        """
        address: ActorAddress = team.orchestrator.createActor(
            agent_class, config=config.model_copy(deep=True)
        )
        return address

    # -- helpers ----------------------------------------------------------
    def _started(
        self, team: ContractTeam, agent_class: type[Akgent[Any, Any]], config: BaseConfig
    ) -> ActorAddress:
        """Start the class and fail with its error reports if it is not running afterwards."""
        address = self.start_agent(team, agent_class, config)
        try:
            team.settle(address)
        except ActorDeadError:
            team.settle()  # collect the error reports of a start that failed
        if not address.is_alive():
            pytest.fail(
                f"{agent_class.__name__} stopped while starting (on_start raised?):\n"
                + _describe(team.errors_of(address.agent_id))
            )
        return address

    def _deliver(self, team: ContractTeam, address: ActorAddress, sample: Message) -> Message:
        """Send ``sample`` from the peer and return once its turn and its reports are done."""
        sent: Message = ProxyWrapper(team.peer, timeout=self.timeout).send(address, sample)
        team.settle(address, team.peer)
        return sent

    def _team_card(self, agent_class: type[Akgent[Any, Any]], config: BaseConfig) -> TeamCard:
        """A team card with a user proxy as entry point and the class as its one member."""
        entry = AgentCard(
            agent_class=UserProxy,
            description="Entry point of the contract team",
            config=BaseConfig(name=ENTRY_NAME, role="ContractEntry"),
        )
        member = AgentCard(
            agent_class=agent_class,
            description="The agent class under contract",
            config=config.model_copy(deep=True),
        )
        return TeamCard(
            name="agent-class-contract",
            entry_point=TeamCardMember(card=entry),
            members=[TeamCardMember(card=member)],
        )

    # -- the class --------------------------------------------------------
    def test_the_class_is_an_akgent_importable_from_its_class_path(
        self, agent_class: type[Akgent[Any, Any]]
    ) -> None:
        assert isinstance(agent_class, type) and issubclass(agent_class, Akgent), (
            f"{agent_class!r} is not an Akgent subclass: team members are Akgent actors"
        )
        path = class_path(agent_class)
        try:
            found = import_class(path)
        except Exception as error:
            pytest.fail(
                f"{path!r} does not import ({error}): a StartMessage records the class path "
                "and a resumed team imports it again, so define the class at module level"
            )
        assert found is agent_class, f"{path!r} imports {found!r}, not the class under test"

    def test_the_config_is_of_the_type_the_class_declares(
        self, agent_class: type[Akgent[Any, Any]], config: BaseConfig
    ) -> None:
        declared = config_type_of(agent_class)
        assert isinstance(config, declared), (
            f"`config` is a {type(config).__name__}, but {agent_class.__name__} declares "
            f"{declared.__name__} (Akgent[ConfigType, StateType]); a team card's config "
            f"mapping is validated as {declared.__name__}, so declare the type the class uses"
        )
        assert config.name and config.role, (
            f"`config` needs a name and a role to sit in a team card: {config!r}"
        )

    # -- the configuration ------------------------------------------------
    def test_the_config_loads_back_equal_from_its_dump_json_and_yaml(
        self, config: BaseConfig
    ) -> None:
        dumped = config.model_dump()
        assert dumped.get(MODEL_KEY) == class_path(type(config)), (
            f"the dump must carry the class path under {MODEL_KEY!r}: {dumped}"
        )
        texts = {
            "its dump": dumped,
            "JSON": json.loads(config.model_dump_json()),
            "YAML": yaml.safe_load(yaml.safe_dump(dumped)),
        }
        for label, data in texts.items():
            for loader in (type(config), BaseConfig):
                loaded = loader.model_validate(data)
                assert type(loaded) is type(config), (
                    f"{loader.__name__}.model_validate({label}) built a "
                    f"{type(loaded).__name__}, not a {type(config).__name__}"
                )
                assert loaded == config, (
                    f"the config changed through {label} (a secret such as api_key is masked "
                    f"in dumps on purpose: leave it out of the fixture): {loaded!r}"
                )
        for duplicate in (config.model_copy(deep=True), copy.deepcopy(config)):
            # Every hire starts from a deep copy of the card's config.
            assert duplicate == config, f"a deep copy differs: {duplicate!r}"

    def test_the_config_refuses_unknown_keys(self, config: BaseConfig) -> None:
        fields = {name: getattr(config, name) for name in type(config).model_fields}
        refused = _refusal(type(config).model_validate, {**fields, UNKNOWN_FIELD: 1})
        assert refused is not None and any(
            d["type"] == "extra_forbidden" and d["loc"] == (UNKNOWN_FIELD,)
            for d in refused.errors()
        ), (
            f"{type(config).__name__} accepted the unknown key {UNKNOWN_FIELD!r}: configs "
            f"are written by people and must keep extra='forbid' so a typo fails"
            + ("" if refused is None else f": {refused}")
        )

    def test_a_stored_config_with_a_retired_field_still_loads(self, config: BaseConfig) -> None:
        stored = {**config.model_dump(), UNKNOWN_FIELD: "written by an older version"}
        loaded = BaseConfig.model_validate(stored)
        assert type(loaded) is type(config) and loaded == config, (
            f"a stored config (it carries {MODEL_KEY!r}) holding a field removed since must "
            f"still load, without that field: {loaded!r}"
        )

    # -- in a team --------------------------------------------------------
    def test_it_starts_in_a_team_and_joins_the_roster(
        self,
        contract_team: ContractTeam,
        agent_class: type[Akgent[Any, Any]],
        config: BaseConfig,
    ) -> None:
        address = self._started(contract_team, agent_class, config)
        assert actor_ref_of(address).actor_class is agent_class
        roster = {m.agent_id: m for m in contract_team.orchestrator.get_team()}
        member = roster.get(address.agent_id)
        assert member is not None, f"the orchestrator's roster lacks it: {list(roster.values())}"
        assert (member.name, member.role) == (config.name, config.role), (
            f"it joined as {member.name!r} ({member.role!r}), configured as "
            f"{config.name!r} ({config.role!r})"
        )
        assert member.is_user_proxy == issubclass(agent_class, UserProxy), (
            "is_user_proxy must say whether the class is a UserProxy subclass"
        )
        starts = contract_team.recorder.from_agent(address.agent_id, StartMessage)
        assert len(starts) == 1, f"expected one StartMessage from it, got {starts}"
        start = starts[0]
        assert isinstance(start, StartMessage) and isinstance(start.sender, ActorAddressProxy)
        assert start.sender.actor_type == class_path(agent_class), (
            f"the StartMessage names the class {start.sender.actor_type!r}; a resumed team "
            f"imports that path, so it must be {class_path(agent_class)!r}"
        )
        assert _plain_config(start.config) == _plain_config(config), (
            "the StartMessage must record the config the agent was started with (a resumed "
            f"team starts it again from that record): {start.config!r}"
        )
        errors = contract_team.errors_of(address.agent_id)
        assert errors == [], f"starting reported errors:\n{_describe(errors)}"

    def test_stopped_it_leaves_the_roster_and_no_live_actor(
        self,
        contract_team: ContractTeam,
        agent_class: type[Akgent[Any, Any]],
        config: BaseConfig,
    ) -> None:
        before = {ref.actor_urn for ref in live_actors(contract_team.team_id)}
        address = self._started(contract_team, agent_class, config)
        ProxyWrapper(address, timeout=self.timeout).stop()
        # pykka marks an actor stopped before its on_stop runs; the StopMessage that
        # Akgent.on_stop sends last is what says the stop is complete.
        reported = contract_team.recorder.wait_for(
            lambda messages: any(
                isinstance(m, StopMessage)
                and m.sender is not None
                and m.sender.agent_id == address.agent_id
                for m in messages
            ),
            self.timeout,
        )
        assert reported, (
            f"{agent_class.__name__} sent no StopMessage within {self.timeout} s of stop() "
            "(an on_stop override must call super().on_stop() last)"
        )
        assert actor_ref_of(address).actor_stopped.is_set()
        contract_team.settle()
        left = [
            ref.actor_class.__name__
            for ref in live_actors(contract_team.team_id)
            if ref.actor_urn not in before
        ]
        assert left == [], (
            f"after it stopped, actors it started still run: {left} (stop() must stop the "
            "children it created; create them with self.createActor)"
        )
        roster = [m.agent_id for m in contract_team.orchestrator.get_team()]
        assert address.agent_id not in roster, "it is still on the orchestrator's roster"
        stops = contract_team.recorder.from_agent(address.agent_id, StopMessage)
        assert len(stops) == 1, f"expected one StopMessage from it, got {len(stops)}"
        errors = contract_team.errors_of(address.agent_id)
        assert errors == [], f"stopping reported errors:\n{_describe(errors)}"

    def test_the_team_teardown_stops_it_and_everything_it_started(
        self,
        contract_team: ContractTeam,
        agent_class: type[Akgent[Any, Any]],
        config: BaseConfig,
    ) -> None:
        self._started(contract_team, agent_class, config)
        done = contract_team.orchestrator.stop(self.timeout)
        assert done.wait(self.timeout + 5), f"the team did not stop within {self.timeout} s"
        left = [ref.actor_class.__name__ for ref in live_actors(contract_team.team_id)]
        assert left == [], f"actors of the team still run after its teardown: {left}"

    # -- messages ---------------------------------------------------------
    def test_every_message_handler_has_a_sample(
        self, agent_class: type[Akgent[Any, Any]], sample_messages: list[Message]
    ) -> None:
        for sample in sample_messages:
            assert isinstance(sample, Message), f"sample {sample!r} is not a Message"
        missing: list[str] = []
        for name, handler in sorted(_own_handlers(agent_class).items()):
            handled = _handled_type(handler)
            if handled is not None and not issubclass(handled, Message):
                continue  # a plain (non-Message) request such as a dataclass
            if not any(
                handler in (fn for fn, _ in resolve_handlers(agent_class, type(sample)))
                for sample in sample_messages
            ):
                missing.append(name)
        assert missing == [], (
            f"{agent_class.__name__} handles messages no sample reaches: {missing}; return "
            f"one message for each from {type(self).__name__}.sample_messages"
        )

    def test_it_handles_every_sample_without_an_error(
        self,
        contract_team: ContractTeam,
        agent_class: type[Akgent[Any, Any]],
        config: BaseConfig,
        sample_messages: list[Message],
    ) -> None:
        address = self._started(contract_team, agent_class, config)
        for sample in sample_messages:
            sent = self._deliver(contract_team, address, sample)
            label = f"{type(sample).__name__} {sent.id}"
            closed = [
                m
                for m in contract_team.recorder.from_agent(address.agent_id, ProcessedMessage)
                if isinstance(m, ProcessedMessage) and m.message_id == sent.id
            ]
            assert len(closed) == 1, (
                f"the turn of {label} was not closed by one ProcessedMessage: {closed}"
            )
            failed = [
                e
                for e in contract_team.errors_of(address.agent_id)
                if e.current_message is not None and e.current_message.id == sent.id
            ]
            assert failed == [], f"handling {label} failed:\n{_describe(failed)}"
            assert address.is_alive(), f"{agent_class.__name__} stopped while handling {label}"

    @pytest.mark.parametrize("fault", MODEL_FAULTS, ids=lambda fault: fault.name)
    def test_a_model_fault_fails_the_turn_in_one_plain_line(
        self,
        contract_team: ContractTeam,
        agent_class: type[Akgent[Any, Any]],
        config: BaseConfig,
        sample_messages: list[Message],
        llm_server: ScriptedLLMServer,
        fault: ModelFault,
    ) -> None:
        """A model fault ends the turn with one TurnFailed event, one ErrorMessage, same line."""
        from akgentic.llm.events import TurnFailed

        model_cfg = getattr(config, "model_cfg", None)
        if getattr(model_cfg, "base_url", None) != llm_server.base_url or not sample_messages:
            pytest.skip("no model on the kit's llm_server fixture, or no sample to run it")
        address = self._started(contract_team, agent_class, _without_http_retries(config))
        before = len(llm_server.requests)
        normal, llm_server.fallback = llm_server.fallback, fault.step
        try:
            sent = self._deliver(contract_team, address, sample_messages[0])
        finally:
            llm_server.fallback = normal
        if len(llm_server.requests) == before:
            pytest.skip("its first sample does not run the model")
        failures = [
            m.event
            for m in contract_team.recorder.from_agent(address.agent_id, EventMessage)
            if isinstance(m, EventMessage) and isinstance(m.event, TurnFailed)
        ]
        assert len(failures) == 1, f"{fault.name}: one TurnFailed event expected, got {failures}"
        cause = failures[0].cause
        assert fault.says in cause and "\n" not in cause, (
            f"{fault.name}: the TurnFailed cause must say {fault.says!r} on one line: {cause!r}"
        )
        errors = [
            e
            for e in contract_team.errors_of(address.agent_id)
            if e.current_message is not None and e.current_message.id == sent.id
        ]
        assert [e.content for e in errors] == [cause], (
            f"{fault.name}: the turn's one error report must carry the same line:\n"
            + _describe(errors)
        )
        assert address.is_alive(), f"{agent_class.__name__} stopped after a model fault"

    def test_a_message_refused_as_too_long_is_not_sent_again(
        self,
        contract_team: ContractTeam,
        agent_class: type[Akgent[Any, Any]],
        config: BaseConfig,
        sample_messages: list[Message],
        llm_server: ScriptedLLMServer,
    ) -> None:
        """After a context-length refusal the next request carries a note, not the message."""
        import json

        model_cfg = getattr(config, "model_cfg", None)
        if getattr(model_cfg, "base_url", None) != llm_server.base_url or not sample_messages:
            pytest.skip("no model on the kit's llm_server fixture, or no sample to run it")
        address = self._started(contract_team, agent_class, _without_http_retries(config))
        before = len(llm_server.requests)
        normal, llm_server.fallback = llm_server.fallback, context_length_exceeded(10119, 2048)
        try:
            self._deliver(contract_team, address, sample_messages[0])
        finally:
            llm_server.fallback = normal
        if len(llm_server.requests) == before:
            pytest.skip("its first sample does not run the model")
        refused = len(llm_server.requests)
        self._deliver(contract_team, address, sample_messages[0])
        if len(llm_server.requests) == refused:
            pytest.skip("its second sample does not run the model")
        body = json.dumps(llm_server.requests[refused])
        assert "Message withheld" in body, (
            "the request refused as longer than the context must be replaced by a note in "
            f"the history the model is sent again: {body[:500]}"
        )

    def test_a_human_cancel_ends_a_hung_model_request_and_it_goes_on(
        self,
        contract_team: ContractTeam,
        agent_class: type[Akgent[Any, Any]],
        config: BaseConfig,
        sample_messages: list[Message],
        llm_server: ScriptedLLMServer,
    ) -> None:
        """A human's CancelMessage ends a run whose model request hangs, at once; no failure."""
        model_cfg = getattr(config, "model_cfg", None)
        if getattr(model_cfg, "base_url", None) != llm_server.base_url or not sample_messages:
            pytest.skip("no model on the kit's llm_server fixture, or no sample to run it")
        address = self._started(contract_team, agent_class, config)
        human = contract_team.orchestrator.createActor(
            UserProxy, config=BaseConfig(name="@ContractHuman", role="Human")
        )
        before = len(llm_server.requests)
        normal, llm_server.fallback = llm_server.fallback, hang()
        try:
            sample = sample_messages[0]
            ProxyWrapper(contract_team.peer, ask=False).send(address, sample)
            if not poll_until(lambda: len(llm_server.requests) > before, self.timeout):
                pytest.skip("its first sample does not run the model")
        finally:
            llm_server.fallback = normal
        ProxyWrapper(human, timeout=self.timeout).send(address, CancelMessage(reason="contract"))
        try:
            contract_team.settle(address, contract_team.peer)
        except ActorTimeout:
            pytest.fail(f"{agent_class.__name__} still waits on its model after a human cancel")
        assert address.is_alive(), f"{agent_class.__name__} stopped after a human cancel"
        assert contract_team.errors_of(address.agent_id) == [], (
            "a cancelled run is not a failure:\n"
            + _describe(contract_team.errors_of(address.agent_id))
        )
        served = len(llm_server.requests)
        self._deliver(contract_team, address, sample)
        assert len(llm_server.requests) > served, "the agent took no new message after the cancel"

    def test_a_user_proxy_answers_the_message_it_is_given(
        self,
        contract_team: ContractTeam,
        agent_class: type[Akgent[Any, Any]],
        config: BaseConfig,
        sample_messages: list[Message],
    ) -> None:
        if not issubclass(agent_class, UserProxy):
            pytest.skip("not a UserProxy: it does not answer for a human")
        address = self._started(contract_team, agent_class, config)
        question = sample_messages[0] if sample_messages else UserMessage(content="Ready?")
        asked = self._deliver(contract_team, address, question)
        answer = "The contract's answer."
        ProxyWrapper(address, timeout=self.timeout).process_human_input(answer, asked)
        contract_team.settle(address, contract_team.peer)
        replies = [
            m.message
            for m in contract_team.recorder.from_agent(address.agent_id, SentMessage)
            if isinstance(m, SentMessage) and m.message.parent_id == asked.id
        ]
        assert len(replies) == 1, (
            f"process_human_input must send one answer linked to the message (parent_id); "
            f"sent {replies}"
        )
        reply = replies[0]
        sent_to = [
            m.recipient.agent_id
            for m in contract_team.recorder.from_agent(address.agent_id, SentMessage)
            if isinstance(m, SentMessage) and m.message.id == reply.id
        ]
        assert sent_to == [contract_team.peer.agent_id], (
            f"the answer must go to the sender of the message, went to {sent_to}"
        )
        assert getattr(reply, "content", None) == answer, (
            f"the answer must carry the human's text as its content: {reply!r}"
        )

    # -- state ------------------------------------------------------------
    def test_its_state_serializes_and_restores(
        self,
        contract_team: ContractTeam,
        agent_class: type[Akgent[Any, Any]],
        config: BaseConfig,
        sample_messages: list[Message],
    ) -> None:
        address = self._started(contract_team, agent_class, config)
        for sample in sample_messages:
            self._deliver(contract_team, address, sample)
        live: BaseState = ProxyWrapper(address, timeout=self.timeout).state
        assert isinstance(live, BaseState), f"its state is a {type(live).__name__}, not a BaseState"
        state = live.serializable_copy()
        assert _same_state(state, live), (
            f"its state changes when copied through its dump: {dict(live)} became "
            f"{dict(state)} (a tuple or a set comes back as a list: declare the field's type)"
        )
        dumped = state.model_dump()
        for label, loaded in (
            ("model_validate", BaseState.model_validate(dumped)),
            ("model_validate_json", BaseState.model_validate_json(state.model_dump_json())),
        ):
            assert type(loaded) is type(state) and loaded == state, (
                f"BaseState.{label} of its dump gave {loaded!r}; snapshots are stored as "
                f"BaseState and must come back as an equal {type(state).__name__}"
            )
        snapshot = AgentStateSnapshot(
            team_id=contract_team.team_id, agent_id=str(address.agent_id), state=state
        )
        decoded = decode_state(encode_state(snapshot), contract_team.team_id, "contract")
        assert _same_state(decoded.state, state), (
            f"the state changed through the event store codec: {decoded.state!r}"
        )
        twin_config = config.model_copy(update={"name": f"{config.name}-twin"})
        twin = self._started(contract_team, agent_class, twin_config)
        ProxyWrapper(twin, timeout=self.timeout).init_state(decoded.state)
        restored: BaseState = ProxyWrapper(twin, timeout=self.timeout).state
        assert _same_state(restored, state), (
            f"init_state(snapshot) on a fresh instance left its state at {restored!r}"
        )
        contract_team.settle(twin)
        errors = contract_team.errors_of(twin.agent_id)
        assert errors == [], f"restoring the state reported errors:\n{_describe(errors)}"

    def test_it_comes_back_from_a_stored_team_with_its_id_config_and_state(
        self,
        tmp_path: Path,
        agent_class: type[Akgent[Any, Any]],
        config: BaseConfig,
        sample_messages: list[Message],
    ) -> None:
        store = SqliteEventStore(tmp_path / "contract.db", synchronous="normal")
        system = ActorSystem()
        manager = TeamManager(system, store)
        try:
            runtime = manager.create_team(self._team_card(agent_class, config))
            team_id = runtime.id
            for sample in sample_messages:
                runtime.send_to(config.name, sample)
            assert runtime.wait_idle(timeout=self.timeout), "the team did not become idle"
            first = runtime.resolve(config.name)
            started = _plain_config(ProxyWrapper(first, timeout=self.timeout).config)
            manager.stop_team(team_id)
            states = {s.agent_id: s for s in store.load_agent_states(team_id)}

            resumed = manager.resume_team(team_id)
            again = resumed.resolve(config.name)
            assert again.agent_id == first.agent_id, "it came back under another agent id"
            assert actor_ref_of(again).actor_class is agent_class, (
                f"it came back as a {actor_ref_of(again).actor_class.__name__}"
            )
            proxy = ProxyWrapper(again, timeout=self.timeout)
            assert _plain_config(proxy.config) == started, (
                f"it came back with another config: {proxy.config!r}"
            )
            snapshot = states.get(str(first.agent_id))
            if snapshot is not None:
                assert _same_state(proxy.state, snapshot.state), (
                    f"it came back with the state {proxy.state!r}, stored {snapshot.state!r}"
                )
            manager.stop_team(team_id)
            left = [ref.actor_class.__name__ for ref in live_actors(team_id)]
            assert left == [], f"actors of the resumed team still run after its stop: {left}"
        finally:
            manager.stop_all()
            system.shutdown(timeout=self.timeout)
            store.close()

    # -- registration -----------------------------------------------------
    def test_the_plugin_registers_the_class_under_its_name(
        self, agent_class: type[Akgent[Any, Any]]
    ) -> None:
        name = self.agent_name
        if name is None:
            pytest.skip("the class is not registered by a plugin (agent_name is None)")
        registry = get_registry()
        specs = registry.agent_classes()
        spec = specs.get(name)
        assert spec is not None, (
            f"plugin {self.plugin!r} registers no agent class {name!r}; it registers "
            f"{sorted(specs)}"
        )
        assert isinstance(spec, AgentClassSpec)
        assert spec.agent_class is agent_class, f"{name!r} is registered as {spec.agent_class!r}"
        owner = registry.owner("agent_classes", name)
        assert owner is not None and owner.name == f"contract-{name}", (
            f"{name!r} is registered by {owner!r}, not by {self.plugin!r}"
        )

    def test_its_name_and_class_path_resolve_to_the_class(
        self, agent_class: type[Akgent[Any, Any]]
    ) -> None:
        path = class_path(agent_class)
        references: list[object] = [path, {TYPE_KEY: path}, agent_class]
        if self.agent_name is not None:
            references.append(self.agent_name)
        for reference in references:
            found = resolve_agent_class(reference)
            assert found is agent_class, f"resolve_agent_class({reference!r}) gave {found!r}"

    def test_a_team_card_file_names_it_and_loads_back_equal(
        self, agent_class: type[Akgent[Any, Any]], config: BaseConfig
    ) -> None:
        card = self._team_card(agent_class, config)
        data = card.to_data()
        # As a person writes it: the registered name (when there is one), no type tags.
        data["members"][0]["card"]["agent_class"] = self.agent_name or class_path(agent_class)
        text = dump_yaml(data)
        loaded = TeamCard.from_yaml(text)
        member = loaded.members[0].card
        assert member.agent_class is agent_class, (
            f"agent_class: {data['members'][0]['card']['agent_class']} loads {member.agent_class!r}"
        )
        assert type(member.config) is type(config), (
            f"the card's config mapping loads as {type(member.config).__name__}, not "
            f"{type(config).__name__}:\n{text}"
        )
        assert loaded == card, f"the card changed through YAML:\n{text}"
        assert TeamCard.from_yaml(loaded.to_yaml()) == card
