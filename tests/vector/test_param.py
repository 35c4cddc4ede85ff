"""VectorStoreParam: the default backend from the environment, declared flags, bind checks."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import pytest

from akgentic.builtin import inmemory_vectors
from akgentic.plugins import EmbedderSpec, PluginHost, PluginInfo, VectorBackendSpec, hookimpl
from akgentic.vector import VectorStoreParam, bind_store, default_backend, resolve_store_param

Register = Callable[..., PluginInfo]


def plugin_of(**hooks: Callable[..., object]) -> object:
    """A plugin object whose hooks are the given functions."""
    return type("InlinePlugin", (), {k: staticmethod(v) for k, v in hooks.items()})()


def cluster(name: str, priority: int, variable: str) -> object:
    import os

    @hookimpl
    def akgentic_vector_backends() -> Iterable[VectorBackendSpec]:
        def configured() -> bool:
            return bool(os.environ.get(variable, "").strip())

        def require(owner: str) -> None:
            if not configured():
                raise ValueError(f"{owner} configures backend={name!r} but {variable} is not set.")

        return [
            VectorBackendSpec(
                name=name,
                factory=lambda context: None,
                default_priority=priority,
                is_configured=configured,
                require_configured=require,
            )
        ]

    return plugin_of(akgentic_vector_backends=akgentic_vector_backends)


@pytest.fixture
def clusters(plugin_host: PluginHost, register_plugin: Register) -> PluginHost:
    register_plugin(inmemory_vectors, "inmemory-vectors")
    register_plugin(cluster("weaviate", 20, "AKGENTIC_WEAVIATE_URL"), "fake-weaviate")
    register_plugin(cluster("qdrant", 10, "AKGENTIC_QDRANT_URL"), "fake-qdrant")

    @hookimpl
    def akgentic_embedders() -> Iterable[EmbedderSpec]:
        return [
            EmbedderSpec(
                name="openai",
                factory=lambda m, d, t: None,
                models={"text-embedding-3-small": 1536, "text-embedding-3-large": 3072},
                available=lambda: "OPENAI_API_KEY is not set",
            ),
            EmbedderSpec(name="hashing", factory=lambda m, d, t: None),
        ]

    register_plugin(plugin_of(akgentic_embedders=akgentic_embedders), "fake-embedders")
    return plugin_host


def test_with_no_cluster_exported_the_default_is_inmemory_and_not_declared(
    clusters: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AKGENTIC_QDRANT_URL", raising=False)
    monkeypatch.setenv("AKGENTIC_WEAVIATE_URL", "")
    param = VectorStoreParam()
    assert (param.backend, param.backend_declared) == ("inmemory", False)
    again = VectorStoreParam.model_validate(param.model_dump())
    assert (again.backend, again.backend_declared) == ("inmemory", False)
    assert VectorStoreParam(backend="qdrant").backend_declared is True


def test_the_highest_configured_priority_is_the_default_read_each_time(
    clusters: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKGENTIC_QDRANT_URL", ":memory:")
    assert VectorStoreParam().backend == "qdrant"
    monkeypatch.setenv("AKGENTIC_WEAVIATE_URL", "http://localhost:8080")
    assert default_backend() == "weaviate"
    monkeypatch.setenv("AKGENTIC_WEAVIATE_URL", "   ")
    assert default_backend() == "qdrant"


def test_true_false_and_a_param_resolve_at_the_point_of_use(clusters: PluginHost) -> None:
    assert resolve_store_param(False) is None
    assert isinstance(resolve_store_param(True), VectorStoreParam)
    param = VectorStoreParam(backend="inmemory")
    assert resolve_store_param(param) is param


def test_a_named_cluster_without_its_url_fails_the_bind(
    clusters: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AKGENTIC_WEAVIATE_URL", raising=False)
    with pytest.raises(ValueError, match="AKGENTIC_WEAVIATE_URL is not set"):
        bind_store("PlanningTool", VectorStoreParam(backend="weaviate"))
    assert bind_store("PlanningTool", False) is None


def test_a_dimension_the_model_cannot_produce_fails_with_the_sentence(
    clusters: PluginHost,
) -> None:
    param = VectorStoreParam(backend="inmemory", dimension=3072)
    with pytest.raises(ValueError) as caught:
        bind_store("PlanningTool", param)
    assert str(caught.value).startswith(
        "PlanningTool declares dimension=3072 for embedding_model='text-embedding-3-small', "
        "which produces 1536-dimensional vectors."
    )


def test_a_named_missing_embedder_raises_and_a_defaulted_one_only_warns(
    clusters: PluginHost, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(ValueError, match="installed embedders: hashing, openai"):
        bind_store("KG", VectorStoreParam(backend="inmemory", embedding_provider="minilm"))
    with caplog.at_level(logging.WARNING):
        binding = bind_store("KG", VectorStoreParam(backend="inmemory"))
    assert binding is not None
    assert binding.unavailable == "OPENAI_API_KEY is not set"
    assert binding.needs_actor is False  # no store without an embedder
    assert [r.levelno for r in caplog.records].count(logging.WARNING) == 1


def test_a_usable_embedder_on_inmemory_needs_the_store_actor(clusters: PluginHost) -> None:
    param = VectorStoreParam(
        backend="inmemory", embedding_provider="hashing", embedding_model="h", dimension=64
    )
    binding = bind_store("KG", param)
    assert binding is not None and binding.unavailable is None and binding.needs_actor


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(ValueError):
        VectorStoreParam.model_validate({"backend": "inmemory", "url": "http://x"})
