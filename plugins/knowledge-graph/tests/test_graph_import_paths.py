"""The seed's ``akgentic.tool.knowledge_graph`` path serves this plugin's own classes."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest


def test_the_seed_import_path_gives_the_plugin_class() -> None:
    import akgentic_knowledge_graph
    from akgentic.tool.knowledge_graph import (  # type: ignore[import-not-found]  # an alias
        KnowledgeGraphTool,
    )

    assert KnowledgeGraphTool is akgentic_knowledge_graph.KnowledgeGraphTool


def test_the_stored_payloads_are_registered_with_the_original_paths() -> None:
    from akgentic_knowledge_graph import plugin

    specs = {spec.name: spec for spec in plugin.akgentic_message_types()}
    assert specs["KnowledgeGraphStateEvent"].aliases == (
        "akgentic.tool.knowledge_graph.models.KnowledgeGraphStateEvent",
    )


class _Empty:
    """A plugin that registers nothing (the host then lacks akgentic-knowledge-graph)."""


def _forget(prefix: str) -> None:
    import akgentic.tool

    for name in [n for n in sys.modules if n == prefix or n.startswith(prefix + ".")]:
        del sys.modules[name]
    vars(akgentic.tool).pop(prefix.rsplit(".", 1)[-1], None)


def test_without_the_plugin_the_seed_path_names_the_distribution(register_plugin: Any) -> None:
    from akgentic.tool.aliases import AliasNotInstalledError

    _forget("akgentic.tool.knowledge_graph")
    try:
        register_plugin(_Empty(), "empty")
        with pytest.raises(AliasNotInstalledError, match="pip install akgentic-knowledge-graph"):
            importlib.import_module("akgentic.tool.knowledge_graph")
    finally:
        _forget("akgentic.tool.knowledge_graph")
