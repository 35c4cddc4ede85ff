"""The ``knowledge_graph`` card: the team's shared graph of entities and relations.

Also importable as ``akgentic.tool.knowledge_graph`` (a seed import path this plugin
serves). The actor module is imported only when a card binds it.
"""

from akgentic_knowledge_graph.card import (
    GetGraph,
    KnowledgeGraphTool,
    SearchGraph,
    UpdateGraph,
    render_graph,
)
from akgentic_knowledge_graph.models import (
    GRAPH_ACTOR_NAME,
    Entity,
    EntityCreate,
    EntityUpdate,
    GetGraphQuery,
    GraphView,
    KnowledgeGraph,
    KnowledgeGraphConfig,
    KnowledgeGraphState,
    KnowledgeGraphStateEvent,
    ManageGraph,
    PathStep,
    Relation,
    RelationCreate,
    RelationDelete,
    SearchQuery,
)
from akgentic_knowledge_graph.summary import KnowledgeGraphSummaryState, RootRow

__all__ = [
    "GRAPH_ACTOR_NAME",
    "Entity",
    "EntityCreate",
    "EntityUpdate",
    "GetGraph",
    "GetGraphQuery",
    "GraphView",
    "KnowledgeGraph",
    "KnowledgeGraphConfig",
    "KnowledgeGraphState",
    "KnowledgeGraphStateEvent",
    "KnowledgeGraphSummaryState",
    "KnowledgeGraphTool",
    "ManageGraph",
    "PathStep",
    "Relation",
    "RelationCreate",
    "RelationDelete",
    "RootRow",
    "SearchGraph",
    "SearchQuery",
    "UpdateGraph",
    "render_graph",
]
