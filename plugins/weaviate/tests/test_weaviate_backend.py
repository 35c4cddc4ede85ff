"""The ``weaviate`` backend, tested at the network boundary (no server can run here).

What is verified: the contract kit runs against ``FakeWeaviateClient``, which
evaluates the very filter objects weaviate-client builds (so the team predicate,
scope, ``like("<prefix>*")``, any-of lists and hostile literal values are checked as
objects, not as strings), capitalises class names and keys objects by uuid; the
tests below also check team stamping, ids, naming, tenants and the configuration
errors. What is NOT verified here: the server's own evaluation of those filters
(tokenisation of TEXT properties, HNSW recall and distance arithmetic), gRPC and
HTTP transport, authentication, batching back-pressure. ``TestWeaviateServer``
runs the same kit against a real cluster when ``AKGENTIC_TEST_WEAVIATE_URL`` is set
and skips otherwise, even under CI=true (documented in the plugin README).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from akgentic_weaviate.backend import WeaviateBackend
from akgentic_weaviate.filters import build_filter, class_name
from akgentic_weaviate.testing import FakeWeaviateClient
from weaviate.collections.classes.filters import _FilterAnd, _FilterValue

from akgentic.testing import VectorBackendContract
from akgentic.vector import VectorEntry, VectorStoreParam, bind_store, row_object_id

PARAM = VectorBackendContract.param.model_copy(update={"backend": "weaviate"})


class TestWeaviateFake(VectorBackendContract):
    param = PARAM

    @pytest.fixture
    def make_backend(self) -> Any:
        client = FakeWeaviateClient()
        return lambda team_id, tenant=None: WeaviateBackend(client, team_id, tenant)


@pytest.mark.skipif(
    not os.environ.get("AKGENTIC_TEST_WEAVIATE_URL"),
    reason="AKGENTIC_TEST_WEAVIATE_URL is not set: no Weaviate server to test against",
)
class TestWeaviateServer(VectorBackendContract):
    param = PARAM

    @pytest.fixture
    def make_backend(self) -> Iterator[Any]:
        import weaviate
        from akgentic_weaviate.connect import connect_url

        client = connect_url(os.environ["AKGENTIC_TEST_WEAVIATE_URL"])
        for name in ("Planning", "Notes", "Workspace_chunks"):
            if client.collections.exists(name):
                client.collections.delete(name)
        assert isinstance(client, weaviate.WeaviateClient)
        yield lambda team_id, tenant=None: WeaviateBackend(client, team_id, tenant)


def entry(ref_id: str, **fields: Any) -> VectorEntry:
    fields.setdefault("text", "t")
    return VectorEntry(
        ref_type="task", ref_id=ref_id, vector=[1.0, 0.5, 0.25, 0, 0, 0, 0, 1], **fields
    )


def test_objects_are_stamped_with_the_team_and_keyed_by_row_id() -> None:
    client = FakeWeaviateClient()
    backend = WeaviateBackend(client, "team-1")
    backend.create_collection("planning", PARAM)
    backend.create_collection("workspace_chunks", PARAM)
    backend.add("planning", [entry("42")])
    backend.add("workspace_chunks", [entry("42", scope="ws")])
    [planning] = client.collections.get("Planning").iterator()
    [chunk] = client.collections.get("Workspace_chunks").iterator()
    assert planning.properties["team_id"] == "team-1"
    assert planning.uuid == row_object_id("planning", "team-1", None, "42")
    assert chunk.properties["team_id"] == ""
    assert chunk.uuid == row_object_id("workspace_chunks", None, None, "42")
    assert "scope" not in planning.properties and "ordinal" not in planning.properties


def test_class_names_are_capitalised_and_the_shared_guard_ignores_case() -> None:
    client = FakeWeaviateClient()
    backend = WeaviateBackend(client, None)
    backend.create_collection("workspace_chunks", PARAM)
    assert class_name("workspace_chunks") == "Workspace_chunks"
    listed = backend.list_collections()
    assert listed == ["Workspace_chunks"]
    with pytest.raises(ValueError, match="shared across teams"):
        backend.delete_by_team(listed[0], "team-1")


def test_filters_are_the_clients_own_objects_with_literal_values() -> None:
    hostile = "' OR 1=1 -- \" } { $ne"
    condition = build_filter(
        "planning", "team-1", scope=hostile, path_prefix="docs/", filters={"ref_type": [hostile]}
    )
    assert isinstance(condition, _FilterAnd)
    parts = [f for f in condition.filters if isinstance(f, _FilterValue)]
    assert len(parts) == len(condition.filters)
    values = {(f.target, f.operator.value, f.value) for f in parts}
    assert values == {
        ("team_id", "Equal", "team-1"),
        ("scope", "Equal", hostile),
        ("path", "Like", "docs/*"),
        ("ref_type", "Equal", hostile),
    }
    assert build_filter("workspace_chunks", "team-1") is None


def test_a_tenant_is_weaviates_own_and_created_once() -> None:
    client = FakeWeaviateClient()
    a = WeaviateBackend(client, "team-1", tenant="acme")
    a.create_collection("notes", PARAM)
    a.create_collection("notes", PARAM)  # the tenant exists already: no second create
    other = WeaviateBackend(client, "team-1", tenant="globex")
    other.create_collection("notes", PARAM)
    a.add("notes", [entry("1")])
    assert a.count("notes") == 1 and other.count("notes") == 0
    admin = WeaviateBackend(client, None)
    assert admin.delete_by_team("notes", "team-1") == 1


def test_naming_weaviate_without_its_url_fails_the_bind_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AKGENTIC_WEAVIATE_URL", "")
    with pytest.raises(ValueError) as caught:
        bind_store("PlanningTool", VectorStoreParam(backend="weaviate"))
    assert str(caught.value).startswith(
        "PlanningTool configures backend='weaviate' but AKGENTIC_WEAVIATE_URL is not set."
    )


def test_an_exported_url_makes_weaviate_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AKGENTIC_WEAVIATE_URL", "http://localhost:8080")
    monkeypatch.setenv("AKGENTIC_QDRANT_URL", ":memory:")
    assert VectorStoreParam().backend == "weaviate"
