"""Graph models: entities, relations, the mutation batch, queries, state, config, events.

Limits apply to the request models only, so a stored graph always loads. The class
paths of the stored models (:class:`Entity`, :class:`Relation`,
:class:`KnowledgeGraph`, :class:`KnowledgeGraphState`, :class:`KnowledgeGraphConfig`,
:class:`KnowledgeGraphStateEvent`) appear in event logs: never move them.
"""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from akgentic.plugin_api import BaseState, SearchActorConfig, SerializableBaseModel

__all__ = [
    "COLLECTION",
    "GRAPH_ACTOR_NAME",
    "MAX_BATCH_ITEMS",
    "Entity",
    "EntityCreate",
    "EntityUpdate",
    "GetGraphQuery",
    "GraphView",
    "KnowledgeGraph",
    "KnowledgeGraphConfig",
    "KnowledgeGraphState",
    "KnowledgeGraphStateEvent",
    "ManageGraph",
    "PathStep",
    "Relation",
    "RelationCreate",
    "RelationDelete",
    "SearchQuery",
]

GRAPH_ACTOR_NAME = "#KnowledgeGraphTool"
COLLECTION = "knowledge_graph"
MAX_BATCH_ITEMS = 1000
"""Most items one ``ManageGraph`` list may carry."""

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
TypeName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
Description = Annotated[str, StringConstraints(max_length=8000)]
Observation = Annotated[str, StringConstraints(max_length=2000)]


class Entity(SerializableBaseModel):
    """A named node; ``name`` is its key in the API, ``id`` in the index."""

    id: UUID = Field(default_factory=uuid4)
    name: str
    entity_type: str
    description: str = ""
    observations: list[str] = Field(default_factory=list)
    is_root: bool = False


class Relation(SerializableBaseModel):
    """A directed, typed edge between two entity names."""

    id: UUID = Field(default_factory=uuid4)
    from_entity: str
    to_entity: str
    relation_type: str
    description: str = ""


class KnowledgeGraph(SerializableBaseModel):
    """Every entity and relation, in graph (insertion) order."""

    entities: list[Entity] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EntityCreate(_Request):
    """A new entity."""

    name: Name
    entity_type: TypeName
    description: Description = ""
    observations: list[Observation] = Field(default_factory=list, max_length=MAX_BATCH_ITEMS)
    is_root: bool = False


class EntityUpdate(_Request):
    """Changes to the entity called ``name`` (no renaming); None fields stay."""

    name: Name
    description: Description | None = None
    entity_type: TypeName | None = None
    add_observations: list[Observation] | None = Field(default=None, max_length=MAX_BATCH_ITEMS)
    remove_observations: list[Observation] | None = Field(default=None, max_length=MAX_BATCH_ITEMS)
    is_root: bool | None = None


class RelationCreate(_Request):
    """A new relation; the (from, to, type) triple is unique."""

    from_entity: Name
    to_entity: Name
    relation_type: TypeName
    description: Description = ""


class RelationDelete(_Request):
    """The relation to delete, by its triple."""

    from_entity: Name
    to_entity: Name
    relation_type: TypeName


class ManageGraph(_Request):
    """One batch, applied as: create entities, create relations, update entities,
    delete relations, delete entities."""

    create_entities: list[EntityCreate] = Field(default_factory=list, max_length=MAX_BATCH_ITEMS)
    update_entities: list[EntityUpdate] = Field(default_factory=list, max_length=MAX_BATCH_ITEMS)
    delete_entities: list[Name] = Field(default_factory=list, max_length=MAX_BATCH_ITEMS)
    create_relations: list[RelationCreate] = Field(default_factory=list, max_length=MAX_BATCH_ITEMS)
    delete_relations: list[RelationDelete] = Field(default_factory=list, max_length=MAX_BATCH_ITEMS)


class PathStep(_Request):
    """Follow an outgoing relation of ``relation_type`` to ``to_entity``."""

    relation_type: str
    to_entity: str


class GetGraphQuery(_Request):
    """Which part of the graph ``get_graph`` returns (the first matching rule wins)."""

    entity_names: list[str] = Field(default_factory=list)
    relation_types: list[str] = Field(default_factory=list)
    depth: int | None = Field(default=None, ge=0)
    roots_only: bool = False
    path: list[PathStep] = Field(default_factory=list)


class GraphView(BaseModel):
    """A subgraph: visited entities in graph order and the relations between them."""

    entities: list[Entity] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)


class SearchQuery(_Request):
    """A graph search; None budgets fall back to the card's."""

    query: str = Field(description="The words or phrase to look for.")
    mode: Literal["hybrid", "vector", "keyword"] = Field(
        default="hybrid", description="hybrid (words and meaning), vector or keyword."
    )
    top_k: int | None = Field(default=None, description="At most this many hits (1 to 100).")
    score_threshold: float | None = Field(
        default=None, description="Minimum semantic score, between 0 and 1."
    )
    include_neighbors: bool = Field(default=False, description="Also list the hits' neighbours.")
    include_edges: bool = Field(
        default=False, description="Also list the relations touching the hits."
    )
    find_paths: bool = Field(default=False, description="Also list paths between the hits.")


class KnowledgeGraphStateEvent(SerializableBaseModel):
    """The payload of a ``#KnowledgeGraphTool`` state event (copies, real changes only)."""

    entities_added: list[Entity] = Field(default_factory=list)
    entities_modified: list[Entity] = Field(default_factory=list)
    entities_removed: list[UUID] = Field(default_factory=list)
    relations_added: list[Relation] = Field(default_factory=list)
    relations_modified: list[Relation] = Field(default_factory=list)
    relations_removed: list[UUID] = Field(default_factory=list)

    def has_changes(self) -> bool:
        """True when anything was added, modified or removed."""
        return any(
            (
                self.entities_added,
                self.entities_modified,
                self.entities_removed,
                self.relations_added,
                self.relations_modified,
                self.relations_removed,
            )
        )


class KnowledgeGraphState(BaseState):
    """The graph as ``#KnowledgeGraphTool`` saves it, and its last event number."""

    knowledge_graph: KnowledgeGraph = Field(default_factory=KnowledgeGraph)
    state_event_seq: int = 0
    snapshot_seq: int = 0
    """The event ``knowledge_graph`` reflects; a restore replays the events after it."""


class KnowledgeGraphConfig(SearchActorConfig):
    """Settings of ``#KnowledgeGraphTool``, fixed by the first card that creates it."""

    search_score_threshold: float = 0.3
