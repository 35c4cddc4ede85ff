"""The ``#VectorStore`` actor in a real team: one per team, bind-time refusals, resume.

Real actors, a real SQLite event store and the real restorer; the only thing not
exercised is an LLM (the consumer is a plain agent doing what a card does).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any
from uuid import UUID

import pykka
import pytest

from akgentic.builtin import inmemory_vectors
from akgentic.core.proxy import ProxyWrapper
from akgentic.plugins import PluginHost, PluginInfo
from akgentic.team import SqliteEventStore, TeamCard, TeamManager, TeamRuntime
from akgentic.team.stores.codec import encode_event
from akgentic.testing import wait_until
from akgentic.vector import VectorEntry, VectorStoreChange, get_backend_spec
from akgentic.vector.registry import DISTRIBUTIONS, available_backends

DIM = 32


def member(name: str, **config: Any) -> dict[str, Any]:
    return {
        "card": {
            "agent_class": "vector_test_agents.StoreUser",
            "description": f"{name} agent",
            "config": {
                "__model__": "vector_test_agents.StoreUserConfig",
                "name": name,
                "role": "User",
                **config,
            },
        }
    }


def card(*members: dict[str, Any]) -> TeamCard:
    return TeamCard.model_validate(
        {
            "name": "vector-team",
            "entry_point": member("@Entry", vector_store=False),
            "members": list(members),
            "message_types": ["akgentic.core.messages.message.UserMessage"],
        }
    )


def inmemory(**fields: Any) -> dict[str, Any]:
    return {
        "backend": "inmemory",
        "dimension": DIM,
        "embedding_provider": "hashing",
        "embedding_model": "hashing",
        **fields,
    }


def store_of(runtime: TeamRuntime) -> Any:
    found = [m for m in runtime.members if m.name == "#VectorStore"]
    assert len(found) == 1, [m.name for m in runtime.members]
    store = ProxyWrapper(found[0], timeout=60)
    # Members create their collection in on_start, which runs after create_team returns.
    wait_until(lambda: "planning" in store.list_collections(), timeout=30)
    return store


def rows(n: int, start: int = 0, seed: int = 7) -> list[VectorEntry]:
    rng = random.Random(seed + start)
    return [
        VectorEntry(
            ref_type="task",
            ref_id=str(i),
            text=f"task {i}",
            vector=[rng.gauss(0, 1) for _ in range(DIM)],
        )
        for i in range(start, start + n)
    ]


def test_two_consumers_on_inmemory_share_exactly_one_store_actor(manager: TeamManager) -> None:
    runtime = manager.create_team(
        card(member("@A", vector_store=inmemory()), member("@B", vector_store=inmemory()))
    )
    store = store_of(runtime)
    assert store.list_collections() == ["planning"]


def test_a_declined_store_and_a_cluster_backend_create_no_store_actor(
    manager: TeamManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKGENTIC_QDRANT_URL", ":memory:")
    runtime = manager.create_team(
        card(
            member("@A", vector_store=False), member("@B", vector_store=inmemory(backend="qdrant"))
        )
    )
    assert "#VectorStore" not in {m.name for m in runtime.members}


def test_a_cluster_backend_without_its_url_fails_the_build_and_writes_nothing(
    manager: TeamManager, event_store: SqliteEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKGENTIC_QDRANT_URL", "")  # exported but empty counts as unset
    with pytest.raises(ValueError, match="AKGENTIC_QDRANT_URL is not set"):
        manager.create_team(card(member("@A", vector_store=inmemory(backend="qdrant"))))
    assert event_store.list_teams() == []


def test_an_unknown_backend_lists_the_installed_ones(
    manager: TeamManager, event_store: SqliteEventStore
) -> None:
    with pytest.raises(ValueError) as caught:
        manager.create_team(card(member("@A", vector_store=inmemory(backend="nosuch"))))
    message = str(caught.value)
    assert "'nosuch'" in message
    assert f"installed: {', '.join(available_backends())}" in message
    assert "akgentic_vector_backends hook: pip install" in message
    assert event_store.list_teams() == []


def test_an_unknown_backend_names_the_distributions_of_known_ones_not_installed(
    plugin_host: PluginHost, register_plugin: Callable[..., PluginInfo]
) -> None:
    register_plugin(inmemory_vectors, "inmemory-vectors")
    with pytest.raises(ValueError) as caught:
        get_backend_spec("nosuch")
    message = str(caught.value)
    assert "installed: inmemory." in message
    for name, distribution in DISTRIBUTIONS["vector_backends"].items():
        assert f"{name!r} (pip install '{distribution}')" in message


def test_a_known_backend_that_is_not_installed_names_its_distribution(
    plugin_host: PluginHost, register_plugin: Callable[..., PluginInfo]
) -> None:
    register_plugin(inmemory_vectors, "inmemory-vectors")
    with pytest.raises(ValueError) as caught:
        get_backend_spec("weaviate")
    assert "installed: inmemory" in str(caught.value)
    assert "pip install 'akgentic-weaviate'" in str(caught.value)


def _restart(manager: TeamManager, runtime: TeamRuntime) -> TeamRuntime:
    manager.stop_team(runtime.id)
    return manager.resume_team(runtime.id)


def test_a_resumed_team_answers_the_same_query_with_the_same_ids_and_scores(
    manager: TeamManager,
) -> None:
    runtime = manager.create_team(card(member("@A", vector_store=inmemory())))
    store = store_of(runtime)
    for start in range(0, 10_000, 1_000):
        store.add("planning", rows(1_000, start))
    store.add("planning", rows(1, 5, seed=99))  # an upsert replacing row 5
    store.remove("planning", ["17", "18"])
    probe = rows(3, 20_000, seed=3)
    before = [store.search("planning", p.vector, 10).hits for p in probe]
    count = store.count("planning")
    resumed = _restart(manager, runtime)
    again = store_of(resumed)
    assert again.count("planning") == count == 9_998
    after = [again.search("planning", p.vector, 10).hits for p in probe]
    assert [[(h.ref_id, h.score) for h in hits] for hits in after] == [
        [(h.ref_id, h.score) for h in hits] for hits in before
    ]


def _store_events(event_store: SqliteEventStore, team_id: UUID) -> list[str]:
    return [
        encode_event(e)
        for e in event_store.load_events(team_id)
        if isinstance(getattr(e.event, "event", None), VectorStoreChange)
    ]


def test_the_log_grows_by_the_change_not_by_the_size_of_the_store(
    manager: TeamManager, event_store: SqliteEventStore
) -> None:
    runtime = manager.create_team(card(member("@A", vector_store=inmemory())))
    store = store_of(runtime)
    store.add("planning", rows(1, 0))
    store.add("planning", rows(5_000, 1))
    store.add("planning", rows(1, 9_000))
    wait_until(lambda: len(_store_events(event_store, runtime.id)) == 4, timeout=20)
    sizes = [len(e) for e in _store_events(event_store, runtime.id)]
    small, big, last = sizes[1], sizes[2], sizes[3]
    assert big > 500 * small  # 5,000 rows cost about 5,000 times one row
    assert abs(last - small) < 200  # the one-row add after 5,000 rows costs what the first did
    states = event_store.load_agent_states(runtime.id)
    assert all(len(s.model_dump_json()) < 20_000 for s in states)


def test_naming_weaviate_without_its_url_fails_the_build_and_writes_nothing(
    manager: TeamManager, event_store: SqliteEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("akgentic_weaviate", reason="the weaviate plugin is not installed")
    monkeypatch.delenv("AKGENTIC_WEAVIATE_URL", raising=False)
    actors_before = len(pykka.ActorRegistry.get_all())
    with pytest.raises(ValueError, match="AKGENTIC_WEAVIATE_URL is not set"):
        manager.create_team(card(member("@A", vector_store=inmemory(backend="weaviate"))))
    assert event_store.list_teams() == []
    assert len(pykka.ActorRegistry.get_all()) == actors_before  # no actor was started


def test_four_threads_adding_through_the_store_actor_lose_nothing(manager: TeamManager) -> None:
    import threading

    runtime = manager.create_team(card(member("@A", vector_store=inmemory())))
    store = store_of(runtime)
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        try:
            for i in range(50):
                store.add("planning", rows(1, worker * 1000 + i))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert store.count("planning") == 200


def test_the_store_actor_refuses_bad_input_as_the_spec_says(manager: TeamManager) -> None:
    from akgentic.tool.errors import RetriableError

    runtime = manager.create_team(card(member("@A", vector_store=inmemory())))
    store = store_of(runtime)
    bad = VectorEntry(ref_type="task", ref_id="x", text="x", vector=[0.0] * DIM)
    with pytest.raises(ValueError, match="no direction"):
        store.add("planning", [bad])
    with pytest.raises(ValueError, match="never created"):
        store.add("nowhere", rows(1))
    with pytest.raises(RetriableError, match="wildcards"):
        store.search("planning", rows(1)[0].vector, 3, path_prefix="a*")
    with pytest.raises(RetriableError, match="top_k"):
        store.search("planning", rows(1)[0].vector, 0)
    assert store.count("planning") == 0


def test_unicode_and_a_lone_surrogate_survive_the_log_and_a_resume(
    manager: TeamManager, event_store: SqliteEventStore
) -> None:
    runtime = manager.create_team(card(member("@A", vector_store=inmemory())))
    store = store_of(runtime)
    text = "Straße 🚀 مرحبا broken \ud800 half"
    [row] = rows(1)
    store.add("planning", [row.model_copy(update={"text": text, "ref_id": "ü-🚀"})])
    wait_until(lambda: len(_store_events(event_store, runtime.id)) == 2, timeout=20)
    resumed = store_of(_restart(manager, runtime))
    hit = resumed.search("planning", row.vector, 1).hits[0]
    assert (hit.ref_id, hit.text) == ("ü-🚀", text)
