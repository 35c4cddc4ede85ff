"""The graph on a real ``#KnowledgeGraphTool``: mutations, queries, search, summary, events."""

from __future__ import annotations

from typing import Any

import pytest
from akgentic_knowledge_graph import (
    GRAPH_ACTOR_NAME,
    GetGraphQuery,
    KnowledgeGraphStateEvent,
    KnowledgeGraphSummaryState,
    KnowledgeGraphTool,
    PathStep,
    SearchQuery,
)

from akgentic.core.proxy import ProxyWrapper
from akgentic.testing.tool_team import ToolStateRecorder
from akgentic.testing.waiting import wait_until
from akgentic.tool import RetriableError, ToolFactory
from akgentic.vector import VectorStoreParam

HASHING = VectorStoreParam(embedding_provider="hashing", embedding_model="hashing", dimension=256)

GRAPH: dict[str, list[dict[str, Any]]] = {
    "create_entities": [
        {"name": "Alice", "entity_type": "person", "description": "runs the mailing list"},
        {"name": "Bob", "entity_type": "person", "description": "writes the newsletter"},
        {"name": "Acme", "entity_type": "company", "description": "the employer", "is_root": True},
        {"name": "Zed", "entity_type": "person", "description": "a contractor"},
    ],
    "create_relations": [
        {"from_entity": "Alice", "to_entity": "Acme", "relation_type": "works_at"},
        {"from_entity": "Bob", "to_entity": "Acme", "relation_type": "works_at"},
        {
            "from_entity": "Zed",
            "to_entity": "Bob",
            "relation_type": "helps",
            "description": "proofreads the newsletter",
        },
    ],
}


class Events(ToolStateRecorder[KnowledgeGraphStateEvent]):
    """The ``GRAPH_ACTOR_NAME`` state events the orchestrator published, in order."""

    def __init__(self) -> None:
        super().__init__(GRAPH_ACTOR_NAME, KnowledgeGraphStateEvent)


def _wire(team: Any, card: KnowledgeGraphTool, name: str = "@A") -> dict[str, Any]:
    ToolFactory([card], observer=team.observer(name))
    return {tool.__name__: tool for tool in card.get_tools()}


def _actor(team: Any) -> Any:
    return ProxyWrapper(team.member(GRAPH_ACTOR_NAME), timeout=30)


def test_a_batch_creates_entities_and_relations_and_skips_a_repeated_triple(team: Any) -> None:
    tools = _wire(team, KnowledgeGraphTool(vector_store=False))
    assert tools["update_graph"](GRAPH) == "Done"
    again = {"create_relations": [GRAPH["create_relations"][0]]}
    assert tools["update_graph"](again) == "Done"  # silently skipped
    view = _actor(team).get_graph(None)
    assert [e.name for e in view.entities] == ["Alice", "Bob", "Acme", "Zed"]
    assert len(view.relations) == 3


def test_errors_are_collected_and_everything_else_applies(team: Any) -> None:
    tools = _wire(team, KnowledgeGraphTool(vector_store=False))
    tools["update_graph"](GRAPH)
    batch = {
        "create_entities": [{"name": "Alice", "entity_type": "person"}],
        "create_relations": [
            {"from_entity": "Nobody", "to_entity": "Acme", "relation_type": "x"},
            {"from_entity": "Acme", "to_entity": "Ghost", "relation_type": "x"},
        ],
        "update_entities": [
            {"name": "Ghost", "description": "?"},
            {"name": "Bob", "is_root": True},
        ],
        "delete_relations": [{"from_entity": "Bob", "to_entity": "Zed", "relation_type": "helps"}],
        "delete_entities": ["Ghost"],
    }
    with pytest.raises(RetriableError) as refused:
        tools["update_graph"](batch)
    message = str(refused.value)
    assert message == (
        "Update errors: Entity 'Alice' already exists; "
        "Relation references non-existent from_entity 'Nobody'; "
        "Relation references non-existent to_entity 'Ghost'; "
        "Entity 'Ghost' not found for update; "
        "Relation (Bob -> Zed [helps]) not found; "
        "Entity 'Ghost' not found for deletion"
    )
    assert [r.name for r in _actor(team).summary(True, True).roots] == ["Acme", "Bob"]


def test_deleting_an_entity_cascades_to_its_relations_in_one_event(team: Any) -> None:
    events = Events()
    team.proxy.subscribe(events)
    tools = _wire(team, KnowledgeGraphTool(vector_store=False))
    tools["update_graph"](GRAPH)
    tools["update_graph"](
        {"update_entities": [{"name": "Bob", "description": "writes the newsletter"}]}
    )
    tools["update_graph"](
        {
            "delete_relations": [
                {"from_entity": "Alice", "to_entity": "Acme", "relation_type": "works_at"}
            ],
            "delete_entities": ["Acme"],
        }
    )
    view = _actor(team).get_graph(None)
    assert [e.name for e in view.entities] == ["Alice", "Bob", "Zed"]
    assert [(r.from_entity, r.to_entity) for r in view.relations] == [("Zed", "Bob")]
    wait_until(lambda: len(events.seen) >= 2, timeout=30)
    assert [e.seq for e in events.seen] == [1, 2]  # the no-op update used no number
    payload = events.seen[1].payload
    assert isinstance(payload, KnowledgeGraphStateEvent)
    assert len(payload.entities_removed) == 1 and len(payload.relations_removed) == 2


def test_get_graph_follows_path_then_roots_then_names(team: Any) -> None:
    tools = _wire(team, KnowledgeGraphTool(vector_store=False))
    tools["update_graph"](GRAPH)
    actor = _actor(team)
    path = actor.get_graph(
        GetGraphQuery(
            entity_names=["Alice"], path=[PathStep(relation_type="works_at", to_entity="Acme")]
        )
    )
    assert [e.name for e in path.entities] == ["Alice", "Bob", "Acme"]
    missing = GetGraphQuery(
        entity_names=["Alice"], path=[PathStep(relation_type="x", to_entity="Acme")]
    )
    assert actor.get_graph(missing).entities == []
    roots = actor.get_graph(GetGraphQuery(roots_only=True, entity_names=["Zed"]))
    assert [e.name for e in roots.entities] == ["Acme"]
    near = actor.get_graph(GetGraphQuery(entity_names=["Zed", "Unknown"]))
    assert [e.name for e in near.entities] == ["Bob", "Zed"]
    assert [r.relation_type for r in near.relations] == ["helps"]
    deep = actor.get_graph(GetGraphQuery(entity_names=["Zed"], depth=3, relation_types=["helps"]))
    assert [e.name for e in deep.entities] == ["Bob", "Zed"]


def test_keyword_search_renders_hits_and_the_expansions(team: Any) -> None:
    tools = _wire(team, KnowledgeGraphTool(vector_store=False))
    tools["update_graph"](GRAPH)
    text = tools["search_graph"](
        SearchQuery(
            query="newsletter",
            mode="keyword",
            include_neighbors=True,
            include_edges=True,
            find_paths=True,
        )
    )
    assert text.splitlines()[:3] == [
        "Search Results:",
        "  - [entity] Bob (person): writes the newsletter (score: 1.00)",
        "  - [relation] Zed --[helps]--> Bob (score: 1.00)",
    ]
    assert "Neighbors:\n  - Acme\n  - Zed" in text
    assert "Connected relations:\n  - Bob --[works_at]--> Acme\n  - Zed --[helps]--> Bob" in text
    both = tools["search_graph"](SearchQuery(query="person", mode="keyword", find_paths=True))
    assert "Paths:" in both and "Alice --[works_at]-- Acme --[works_at]-- Bob" in both
    assert tools["search_graph"](SearchQuery(query="nothing here", mode="keyword")) == (
        "No results found."
    )


def test_hybrid_and_vector_search_with_the_hashing_embedder(team: Any) -> None:
    tools = _wire(team, KnowledgeGraphTool(vector_store=HASHING, search_score_threshold=0.0))
    tools["update_graph"](GRAPH)
    vector = tools["search_graph"](
        SearchQuery(query="Alice: runs the mailing list", mode="vector", top_k=1)
    )
    assert vector.splitlines()[1].startswith("  - [entity] Alice (person)")
    hybrid = tools["search_graph"](SearchQuery(query="mailing"))
    assert hybrid.splitlines()[1].startswith("  - [entity] Alice (person)")


def test_searches_refuse_blank_queries_and_bad_budgets_and_say_when_vectors_are_off(
    team: Any,
) -> None:
    tools = _wire(team, KnowledgeGraphTool(vector_store=False))
    with pytest.raises(RetriableError, match=r"Search query is empty; give a word or phrase\."):
        tools["search_graph"]({"query": "   "})
    with pytest.raises(RetriableError, match="top_k must be at least 1"):
        tools["search_graph"]({"query": "a", "top_k": -3})
    with pytest.raises(RetriableError, match="score_threshold must be between 0 and 1"):
        tools["search_graph"]({"query": "a", "score_threshold": 2})
    assert tools["search_graph"]({"query": "a", "mode": "vector"}).startswith(
        "Semantic search is switched off"
    )


def test_hostile_batches_are_refused_whole(team: Any) -> None:
    tools = _wire(team, KnowledgeGraphTool(vector_store=False))
    for payload in (
        {"create_entities": [{"name": "x" * 1_000_000, "entity_type": "t"}]},
        {"create_entities": [{"name": "ok", "entity_type": "t", "description": "d" * 1_000_000}]},
        {"create_entities": [{"name": f"e{i}", "entity_type": "t"} for i in range(10_000)]},
        {"create_entities": [{"name": "   ", "entity_type": "t"}]},
    ):
        with pytest.raises(RetriableError, match=r"^Invalid update: ") as refused:
            tools["update_graph"](payload)
        assert len(str(refused.value)) < 600
    assert _actor(team).get_graph(None).entities == []
    odd = 'O\'Brien "quoted" ../../etc/passwd Ünïcødé 🚀'
    tools["update_graph"]({"create_entities": [{"name": odd, "entity_type": "person"}]})
    assert odd in tools["search_graph"]({"query": "ÜNÏCØDÉ", "mode": "keyword"})


def test_read_only_removes_only_update_graph(team: Any) -> None:
    tools = _wire(team, KnowledgeGraphTool(vector_store=False, read_only=True))
    assert sorted(tools) == ["search_graph"]
    card = KnowledgeGraphTool(vector_store=False, read_only=True)
    assert sorted(c.__name__ for c in card.get_commands().values()) == ["get_graph", "search_graph"]


def test_the_summary_is_sized_by_types_and_roots_not_entities(team: Any) -> None:
    tools = _wire(team, KnowledgeGraphTool(vector_store=False))
    tools["update_graph"](GRAPH)
    actor = _actor(team)
    before = actor.summary(True, True)
    assert before.render_full() == "\n".join(
        [
            "**Knowledge Graph Summary:**",
            "Entities: 4 | Relations: 3",
            "Entity types: company, person",
            "Relation types: helps, works_at",
            "Root entities:",
            "- Acme (company): the employer",
            "",
            "Use the get_graph tool to explore the full graph or subgraphs.",
        ]
    )
    tools["update_graph"](
        {
            "create_entities": [
                {"name": f"P{i}", "entity_type": "person", "description": "x"} for i in range(300)
            ],
            "update_entities": [{"name": "Zed", "is_root": True}],
            "delete_relations": [
                {"from_entity": "Zed", "to_entity": "Bob", "relation_type": "helps"}
            ],
        }
    )
    after = actor.summary(True, True)
    assert after.render_delta(before) == (
        "Entities: 304 (+300) | Relations: 2 (-1). Removed relation type: helps. "
        "New root: Zed (person)."
    )
    assert len(after.render_full()) < len(before.render_full()) + 60
    assert KnowledgeGraphSummaryState().render_full() == "Knowledge graph is empty."
