"""The ``#VectorStore`` state: settings only, and snapshots of the original form still load."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pykka
import pytest

from akgentic.core import ActorSystem
from akgentic.core.proxy import ProxyWrapper
from akgentic.vector import VectorStoreActor, VectorStoreConfig, VectorStoreParam
from akgentic.vector.actor import VectorStoreState

DIM = 8


@pytest.fixture
def store() -> Iterator[Any]:
    system = ActorSystem()
    address = system.createActor(
        VectorStoreActor, config=VectorStoreConfig(name="#VectorStore", role="ToolActor")
    )
    yield ProxyWrapper(address, timeout=30)
    system.shutdown(timeout=10)
    pykka.ActorRegistry.stop_all(block=True, timeout=10)


def vector(seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(0, 1) for _ in range(DIM)]


def test_a_snapshot_holding_whole_indexes_as_float_lists_still_loads(store: Any) -> None:
    param = VectorStoreParam(backend="inmemory", dimension=DIM, embedding_provider="hashing")
    legacy = VectorStoreState(
        collection_configs={"planning": param.model_dump(mode="json")},
        backend_states={
            "planning": {
                "collections": {
                    "planning": {
                        "dimension": DIM,
                        "rows": [
                            {"ref_type": "task", "ref_id": "1", "text": "one", "vector": vector(1)},
                            {"ref_type": "task", "ref_id": "2", "text": "two", "vector": vector(2)},
                        ],
                    }
                }
            }
        },
    )
    store.init_state(legacy)
    assert store.count("planning") == 2
    assert store.search("planning", vector(2), 1).hits[0].ref_id == "2"


def test_the_state_never_holds_rows(store: Any) -> None:
    from akgentic.vector import VectorEntry

    param = VectorStoreParam(backend="inmemory", dimension=DIM, embedding_provider="hashing")
    store.create_collection("planning", param)
    store.add(
        "planning",
        [VectorEntry(ref_type="t", ref_id=str(i), text="t", vector=vector(i)) for i in range(500)],
    )
    state = store.state
    assert state.backend_states == {}
    assert len(state.model_dump_json()) < 2_000
