"""The sending fast paths build and deliver exactly what the generic paths do.

``text_message_factory`` stands for ``cls(content=text)``, ``fast_factory`` for
``fast_construct``, ``call_teller`` for a fire-and-forget ``ProxyWrapper`` call and
``live_poster`` for ``ActorAddressImpl.tell``: each is compared with the path it
replaces, and each refuses (or falls back) where the two could differ.
"""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID, uuid4

import pykka
import pytest
from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pykka.messages import ProxyCall

from akgentic.core import ActorSystem, BaseConfig, BaseState
from akgentic.core._pykka_seam import call_teller, live_poster
from akgentic.core.agent import Akgent
from akgentic.core.mailbox import peek_messages
from akgentic.core.messages import ResultMessage, SentMessage, UserMessage
from akgentic.core.messages.message import (
    Message,
    fast_construct,
    fast_factory,
    text_message_factory,
)
from akgentic.core.messages.orchestrator import TelemetryBatch
from akgentic.core.proxy import ProxyWrapper, actor_ref_of
from akgentic.core.utils.fastmodel import SharedFieldsSet


class Tagged(UserMessage):
    """A message with extra defaulted fields, mutable ones included."""

    tags: list[str] = Field(default_factory=list)
    labels: dict[str, str] = {}
    priority: int = 3


class Stripped(UserMessage):
    model_config = ConfigDict(str_strip_whitespace=True)


class Shouting(UserMessage):
    @field_validator("content")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


class Prefixed(UserMessage):
    @model_validator(mode="after")
    def _prefix(self) -> Prefixed:
        self.__dict__["content"] = "> " + self.content
        return self


class Short(UserMessage):
    content: str = Field(max_length=3)


class Numbered(Message):
    content: int


class Addressed(UserMessage):
    to: str


class PostInit(UserMessage):
    def model_post_init(self, context: Any, /) -> None:
        self.__dict__["content"] = self.content + "!"


class Private(UserMessage):
    _seen: int = PrivateAttr(default=0)


class OwnInit(UserMessage):
    def __init__(self, **data: Any) -> None:
        data["content"] = data["content"] * 2
        super().__init__(**data)


def _same_message(fast: Message, validated: Message) -> None:
    assert type(fast) is type(validated)
    assert list(fast.__dict__) == list(validated.__dict__)
    for name, value in validated.__dict__.items():
        if name in ("id", "timestamp"):
            continue
        assert fast.__dict__[name] == value and type(fast.__dict__[name]) is type(value)
    assert isinstance(fast.id, UUID) and fast.id.version == 4 and fast.id != validated.id
    assert fast.timestamp is not None and fast.timestamp.tzinfo is not None
    assert fast.model_fields_set == validated.model_fields_set
    assert fast.__pydantic_extra__ == validated.__pydantic_extra__
    assert fast.__pydantic_private__ == validated.__pydantic_private__
    aligned = fast.model_copy(update={"id": validated.id, "timestamp": validated.timestamp})
    assert aligned.model_dump_json() == validated.model_dump_json()
    assert aligned == validated


@pytest.mark.parametrize("cls", [UserMessage, ResultMessage, Tagged])
@pytest.mark.parametrize("text", ["hello", "", "  padded  ", "é\n\x00"])
def test_the_text_factory_builds_what_validation_builds(cls: type[Message], text: str) -> None:
    build = text_message_factory(cls)
    assert build is not None
    _same_message(build(text), cls(content=text))


def test_text_messages_get_fresh_mutable_defaults_and_a_shared_copy_on_write_set() -> None:
    build = text_message_factory(Tagged)
    assert build is not None
    a, b = build("a"), build("b")
    assert a.tags is not b.tags and a.labels is not b.labels
    assert isinstance(a.model_fields_set, SharedFieldsSet)
    assert a.model_fields_set is b.model_fields_set
    a.content = "changed"  # Message.__setattr__ copies the shared set first
    assert a.model_fields_set == {"content"} and type(a.model_fields_set) is set
    assert b.model_fields_set == {"content"}


@pytest.mark.parametrize(
    "cls", [Stripped, Shouting, Prefixed, Short, Numbered, Addressed, PostInit, Private, OwnInit]
)
def test_the_text_factory_refuses_classes_whose_validation_changes_the_result(
    cls: type[Message],
) -> None:
    assert text_message_factory(cls) is None


def test_fast_factory_builds_what_fast_construct_builds(system: ActorSystem) -> None:
    sender = system.createActor(Akgent, config=BaseConfig(name="@S", role="S"))
    names = ("message", "recipient", "sender", "team_id", "parent_id")
    inner = UserMessage(content="x")
    for parent in (None, uuid4()):
        values = (inner, sender, sender, uuid4(), parent)
        fast = fast_factory(SentMessage, names)(*values)
        generic = fast_construct(SentMessage, dict(zip(names, values, strict=True)))
        assert list(fast.__dict__) == list(generic.__dict__)
        for name in generic.__dict__:
            if name not in ("id", "timestamp"):
                assert fast.__dict__[name] == generic.__dict__[name]
        assert fast.model_fields_set is generic.model_fields_set  # the same shared set
        assert fast.id != generic.id and fast.timestamp is not None


class Note(Akgent[BaseConfig, BaseState]):
    def on_start(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def note(self, *args: Any) -> None:
        self.calls.append(args)

    def notes(self) -> list[tuple[Any, ...]]:
        return self.calls


class Intercepting(Note):
    """Overrides _handle_receive: proxy calls must go through the override."""

    seen: ClassVar[list[str]] = []

    def _handle_receive(self, message: Any) -> Any:
        Intercepting.seen.append(type(message).__name__)
        return super()._handle_receive(message)


@pytest.mark.parametrize("cls", [Note, Intercepting])
def test_a_call_teller_delivers_what_a_telling_proxy_delivers(
    system: ActorSystem, cls: type[Note]
) -> None:
    Intercepting.seen.clear()
    address = system.createActor(cls, config=BaseConfig(name="@N", role="N"))
    call = call_teller(actor_ref_of(address), "note")
    call(1, "a")
    ProxyWrapper(address, ask=False).note(2, "b")
    call()
    assert ProxyWrapper(address, ask=True, timeout=10).notes() == [(1, "a"), (2, "b"), ()]
    if cls is Intercepting:
        assert Intercepting.seen == ["ProxyCall"] * 4


def test_a_call_teller_posts_a_genuine_proxy_call_and_refuses_a_stopped_actor(
    system: ActorSystem,
) -> None:
    made = tuple.__new__(ProxyCall, (("note",), (1,), {}))
    assert type(made) is ProxyCall
    assert made == ProxyCall(attr_path=("note",), args=(1,), kwargs={})
    address = system.createActor(Note, config=BaseConfig(name="@N", role="N"))
    ref = actor_ref_of(address)
    call = call_teller(ref, "note")
    ref.stop()
    with pytest.raises(pykka.ActorDeadError):
        call(1)
    with pytest.raises(pykka.ActorDeadError):  # as the proxy it stands for
        ProxyWrapper(address, ask=False).note(1)
    assert peek_messages(ref.actor_inbox) == [] and ref.actor_inbox.empty()


def test_a_live_poster_refuses_a_stopped_actor_and_posts_batches_bare(
    system: ActorSystem,
) -> None:
    address = system.createActor(Note, config=BaseConfig(name="@N", role="N"))
    ref = actor_ref_of(address)
    post = live_poster(ref, bare=TelemetryBatch)
    assert post(ProxyCall(attr_path=("note",), args=("x",), kwargs={})) is True
    assert ProxyWrapper(address, ask=True, timeout=10).notes() == [("x",)]
    ref.stop()
    assert post(UserMessage(content="late")) is False
    assert peek_messages(ref.actor_inbox) == []


def test_pykkas_nested_attribute_calls_still_reach_the_actor(system: ActorSystem) -> None:
    class Holder(Akgent[BaseConfig, BaseState]):
        def on_start(self) -> None:
            self.box: list[int] = []

    address = system.createActor(Holder, config=BaseConfig(name="@H", role="H"))
    ref = actor_ref_of(address)
    ref.tell(ProxyCall(attr_path=("box", "append"), args=(7,), kwargs={}))
    assert ref.ask(ProxyCall(attr_path=("box", "copy"), args=(), kwargs={})) == [7]
