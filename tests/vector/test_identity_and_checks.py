"""Row identity, the shared-collection rule and the argument checks every backend shares."""

from __future__ import annotations

import subprocess
import sys

import pytest

from akgentic.vector.protocol import (
    SHARED_COLLECTIONS,
    VectorQuery,
    check_filters,
    check_path_prefix,
    is_shared,
    require_scope,
    row_object_id,
    stable_object_id,
)


def test_the_stable_object_id_of_the_spec_check_value() -> None:
    assert stable_object_id("team-1", None, "42") == "62f51157-852f-5186-9300-57667a1e3f5f"


def test_a_shared_collection_drops_the_team_from_the_id() -> None:
    assert row_object_id("workspace_chunks", "team-1", None, "42") == stable_object_id(
        None, None, "42"
    )
    assert row_object_id("planning", "team-1", None, "42") == stable_object_id("team-1", None, "42")


def test_tenant_and_team_both_change_the_id() -> None:
    ids = {
        stable_object_id("t", None, "1"),
        stable_object_id("t", "x", "1"),
        stable_object_id("u", None, "1"),
        stable_object_id(None, None, "1"),
    }
    assert len(ids) == 4


def test_the_shared_set_is_compared_without_case() -> None:
    assert frozenset({"workspace_chunks"}) == SHARED_COLLECTIONS
    assert is_shared("Workspace_chunks") and is_shared("WORKSPACE_CHUNKS")
    assert not is_shared("planning") and not is_shared("knowledge_graph")
    with pytest.raises(ValueError, match="shared across teams"):
        require_scope("Workspace_chunks", None)


@pytest.mark.parametrize("key", ["team_id", "tenant", "vector", "__dict__", "x" * 10_000])
def test_filters_on_anything_but_row_fields_raise(key: str) -> None:
    with pytest.raises(ValueError):
        check_filters(VectorQuery(filters={key: "v"}))


def test_filter_values_must_be_scalars_and_a_list_means_any_of() -> None:
    assert check_filters(VectorQuery(filters={"ref_type": ["a", "b"], "ordinal": 3})) == {
        "ref_type": ["a", "b"],
        "ordinal": [3],
    }
    with pytest.raises(ValueError):
        VectorQuery.model_validate({"filters": {"ref_type": {"$ne": 1}}})


@pytest.mark.parametrize("prefix", ["a*", "?", "docs/*.md"])
def test_wildcard_prefixes_raise(prefix: str) -> None:
    with pytest.raises(ValueError):
        check_path_prefix(prefix)


def test_importing_the_vector_package_loads_no_vector_library() -> None:
    code = (
        "import sys, akgentic.vector, akgentic.tool.vector_store;"
        "import akgentic.vector.param, akgentic.vector.hybrid, akgentic.vector.clients;"
        "import akgentic.vector.backend_support, akgentic.vector.registry;"
        "bad = [m for m in ('numpy', 'qdrant_client', 'qdrant_edge', 'weaviate', 'openai',"
        " 'torch', 'akgentic.vector.engine', 'akgentic_qdrant', 'akgentic_weaviate')"
        " if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_fast_id_equals_the_uuid5_of_the_compact_json_for_hostile_ids() -> None:
    import json
    import random
    import uuid

    from akgentic.vector.protocol import OBJECT_ID_NAMESPACE

    rng = random.Random(1)
    alphabet = 'ab"\\/\n\t é🚀\u2028\x00,[]'
    for _ in range(300):
        parts = ["".join(rng.choices(alphabet, k=rng.randint(0, 8))) for _ in range(3)]
        team, tenant, ref = parts[0] or None, parts[1] or None, parts[2]
        key = json.dumps([team or "", tenant or "", ref], ensure_ascii=True, separators=(",", ":"))
        assert stable_object_id(team, tenant, ref) == str(uuid.uuid5(OBJECT_ID_NAMESPACE, key))


def test_the_seed_import_path_serves_the_kernel_objects_and_the_hybrid_rule() -> None:
    """``akgentic.tool.vector_store`` is the seed's path: the same objects, not copies."""
    import akgentic.vector.clients
    import akgentic.vector.hybrid
    import akgentic.vector.param
    from akgentic.tool.vector_store import VectorStoreParam, close_all, get_client, hybrid
    from akgentic.tool.vector_store.hybrid import DEFAULT_ALPHA, fuse

    assert VectorStoreParam is akgentic.vector.param.VectorStoreParam
    assert get_client is akgentic.vector.clients.get_client
    assert close_all is akgentic.vector.clients.close_all
    assert hybrid.hybrid_search is akgentic.vector.hybrid.hybrid_search
    assert DEFAULT_ALPHA == 0.7
    ranked = fuse(["a", "b"], {"c": 0.9, "a": 0.5, "d": 0.5})
    assert [key for key, _ in ranked] == ["c", "a", "b", "d"]
    assert VectorStoreParam(backend="inmemory").backend == "inmemory"
