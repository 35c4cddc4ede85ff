"""ActorSystem, ExecutionContext and addresses."""

from __future__ import annotations

import gc
from typing import Any
from uuid import uuid4

import pytest

from akgentic.core import (
    ActorAddressImpl,
    ActorAddressProxy,
    ActorAddressStopped,
    ActorSystem,
    BaseConfig,
    BaseState,
    Orchestrator,
    UserProxy,
)
from akgentic.core.agent import Akgent
from akgentic.core.messages import ResultMessage, UserMessage


class Replier(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, message: UserMessage, sender: Any) -> str:
        self.send(sender, ResultMessage(content=f"re: {message.content}"))
        return "asked"


class HumanProxy(UserProxy):
    pass


def test_the_listener_serializes_as_the_actor_system(system: ActorSystem) -> None:
    data = system.myAddress.serialize()
    assert data["name"] == "@ActorSystem" and data["role"] == "ActorSystem"
    assert data["__actor_address__"] is True


def test_tell_stamps_sender_and_team_and_replies_can_be_listened_to(
    system: ActorSystem,
) -> None:
    actor = system.createActor(Replier)
    message = UserMessage(content="hi")
    system.tell(actor, message)
    assert message.sender == system.myAddress and message.team_id == actor.team_id
    reply = system.listen(timeout=5)
    assert reply.content == "re: hi"
    assert system.ask(actor, UserMessage(content="q")) == "asked"
    assert system.listen(timeout=5).content == "re: q"
    with pytest.raises(TimeoutError):
        system.listen(timeout=0.01)


def test_create_actor_accepts_a_dotted_class_path_and_string_ids(system: ActorSystem) -> None:
    agent_id, team_id = uuid4(), uuid4()
    address = system.createActor(
        "akgentic.core.user_proxy.UserProxy", agent_id=str(agent_id), team_id=str(team_id)
    )
    assert address.agent_id == agent_id and address.team_id == team_id
    assert address.is_user_proxy


def test_private_contexts_have_their_own_listener(system: ActorSystem) -> None:
    actor = system.createActor(Replier)
    with system.private() as private:
        assert private.myAddress != system.myAddress
        private.tell(actor, UserMessage(content="secret"))
        assert private.listen(timeout=5).content == "re: secret"
        listener = private.myAddress
    assert not listener.is_alive()


def test_get_actor_orchestrators_and_stat(system: ActorSystem) -> None:
    orch = system.createActor(Orchestrator, config=BaseConfig(name="@O", role="Orchestrator"))
    actor = system.createActor(Replier)
    assert system.get_actor(actor._snapshot()) == actor
    assert system.get_actor(ActorAddressProxy({"agent_id": str(uuid4())})) is None
    assert system.orchestrators == [orch]
    stats = system.stat()[0]
    assert stats.orchestrator_count == 1 and stats.agent_count >= 2


def test_shutdown_tolerates_being_called_twice(system: ActorSystem) -> None:
    system.createActor(Replier)
    system.shutdown(timeout=5)
    system.shutdown(timeout=5)


def test_is_user_proxy_comes_from_the_class_including_subclasses(system: ActorSystem) -> None:
    human = system.createActor(HumanProxy, config=BaseConfig(name="@Bot", role="Assistant"))
    named_like_a_human = system.createActor(Replier, config=BaseConfig(name="@Human", role="Human"))
    assert human.is_user_proxy and not named_like_a_human.is_user_proxy
    assert human.serialize()["is_user_proxy"] is True


def test_user_proxy_answers_the_sender_of_a_message(system: ActorSystem) -> None:
    human = system.createActor(UserProxy)
    question = UserMessage(content="ready?")
    question.init(system.myAddress)
    system.proxy_ask(human, UserProxy).process_human_input("yes", question)
    answer = system.listen(timeout=5)
    assert isinstance(answer, ResultMessage) and answer.content == "yes"
    assert answer.parent_id == question.id


def test_address_metadata_survives_the_actor_being_collected(system: ActorSystem) -> None:
    actor = system.createActor(Replier, config=BaseConfig(name="@Gone", role="R"))
    assert isinstance(actor, ActorAddressImpl)
    actor.actor_ref.stop(block=True)
    gc.collect()
    assert not actor.is_alive()
    assert actor.name == "@Gone" and actor.serialize()["name"] == "@Gone"
    assert repr(actor) == f"<ActorAddress R @Gone ({actor.agent_id})>"


def test_proxy_and_stopped_addresses_never_equal_live_ones(system: ActorSystem) -> None:
    actor = system.createActor(Replier, config=BaseConfig(name="@X", role="R"))
    data = actor.serialize()
    proxy, stopped = ActorAddressProxy(data), ActorAddressStopped(data)
    assert proxy != actor and stopped != proxy
    assert proxy == ActorAddressProxy(data) and hash(proxy) == hash(actor)
    assert proxy.is_alive() and not stopped.is_alive()
    assert data["__actor_type__"].endswith("test_actor_system.Replier")
    with pytest.raises(RuntimeError):
        proxy.send(actor, UserMessage(content="x"))
    with pytest.raises(RuntimeError):
        stopped.ask(UserMessage(content="x"))


def test_a_proxy_without_is_user_proxy_key_defaults_to_false() -> None:
    assert not ActorAddressProxy({"agent_id": str(uuid4()), "name": "@Old"}).is_user_proxy


def test_live_send_makes_the_actor_itself_send(system: ActorSystem) -> None:
    actor = system.createActor(Replier)
    actor.send(system.myAddress, ResultMessage(content="via address"))
    reply = system.listen(timeout=5)
    assert reply.content == "via address" and reply.sender == actor
