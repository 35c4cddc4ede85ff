"""``GraphIndex``: the graph with the lookups every mutation and query needs.

Entities are kept by name and relations by id, each in insertion (graph) order, with
an adjacency map, a triple set, per-type counters and a keyword index per kind of
item, so one mutation costs O(its size) and not O(graph).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from uuid import UUID

from akgentic.plugin_api import KeywordIndex
from akgentic_knowledge_graph.models import (
    Entity,
    GetGraphQuery,
    GraphView,
    KnowledgeGraph,
    KnowledgeGraphStateEvent,
    ManageGraph,
    Relation,
)

__all__ = ["Applied", "GraphIndex", "entity_text", "relation_text"]

Triple = tuple[str, str, str]


def entity_text(entity: Entity) -> str:
    """What an entity's vector is made from."""
    return f"{entity.name}: {entity.description}"


def relation_text(relation: Relation) -> str:
    """What a relation's vector is made from (only relations with a description have one)."""
    return (
        f"{relation.from_entity} {relation.relation_type} {relation.to_entity}: "
        f"{relation.description}"
    )


def _entity_fields(e: Entity) -> list[str]:
    return [e.name, e.description, e.entity_type, *e.observations]


def _relation_fields(r: Relation) -> list[str]:
    return [r.relation_type, r.description, r.from_entity, r.to_entity]


@dataclass
class Applied:
    """What one ``ManageGraph`` did: errors, the event payload, vector work."""

    errors: list[str] = field(default_factory=list)
    event: KnowledgeGraphStateEvent = field(default_factory=KnowledgeGraphStateEvent)
    embed_entities: list[Entity] = field(default_factory=list)
    embed_relations: list[Relation] = field(default_factory=list)
    unindex: list[str] = field(default_factory=list)


class GraphIndex:
    """The graph and its indexes; the actor's only way to read or change it."""

    def __init__(self, graph: KnowledgeGraph | None = None) -> None:
        self.entities: dict[str, Entity] = {}
        self.relations: dict[UUID, Relation] = {}
        self.triples: dict[Triple, UUID] = {}
        self.adjacent: dict[str, dict[UUID, None]] = {}
        self.entity_types: Counter[str] = Counter()
        self.relation_types: Counter[str] = Counter()
        self.roots: dict[str, None] = {}
        self.by_id: dict[UUID, Entity] = {}
        # Keyword search, entities and relations apart, each in graph order.
        self.entity_words: KeywordIndex[UUID] = KeywordIndex()
        self.relation_words: KeywordIndex[UUID] = KeywordIndex()
        for entity in (graph or KnowledgeGraph()).entities:
            self._put_entity(entity)
        for relation in (graph or KnowledgeGraph()).relations:
            self._put_relation(relation)

    # ------------------------------------------------------------- storage

    def snapshot(self) -> KnowledgeGraph:
        """The graph as a state model (lists in graph order)."""
        return KnowledgeGraph(
            entities=list(self.entities.values()), relations=list(self.relations.values())
        )

    def _put_entity(self, entity: Entity) -> None:
        old = self.entities.get(entity.name)
        if old is not None:
            self.entity_types[old.entity_type] -= 1
            if not self.entity_types[old.entity_type]:
                del self.entity_types[old.entity_type]
            self.by_id.pop(old.id, None)
            if old.id != entity.id:
                self.entity_words.discard(old.id)
        self.entities[entity.name] = entity
        self.by_id[entity.id] = entity
        self.entity_types[entity.entity_type] += 1
        if entity.is_root:
            self.roots[entity.name] = None
        else:
            self.roots.pop(entity.name, None)
        self.adjacent.setdefault(entity.name, {})
        self.entity_words.put(entity.id, _entity_fields(entity))

    def _drop_entity(self, entity: Entity) -> None:
        del self.entities[entity.name]
        self.by_id.pop(entity.id, None)
        self.entity_words.discard(entity.id)
        self.roots.pop(entity.name, None)
        self.adjacent.pop(entity.name, None)
        self.entity_types[entity.entity_type] -= 1
        if not self.entity_types[entity.entity_type]:
            del self.entity_types[entity.entity_type]

    def _put_relation(self, relation: Relation) -> None:
        self.relations[relation.id] = relation
        self.triples[(relation.from_entity, relation.to_entity, relation.relation_type)] = (
            relation.id
        )
        self.adjacent.setdefault(relation.from_entity, {})[relation.id] = None
        self.adjacent.setdefault(relation.to_entity, {})[relation.id] = None
        self.relation_types[relation.relation_type] += 1
        self.relation_words.put(relation.id, _relation_fields(relation))

    def _drop_relation(self, relation: Relation) -> None:
        del self.relations[relation.id]
        self.triples.pop((relation.from_entity, relation.to_entity, relation.relation_type), None)
        for end in (relation.from_entity, relation.to_entity):
            links = self.adjacent.get(end)
            if links is not None:
                links.pop(relation.id, None)
        self.relation_words.discard(relation.id)
        self.relation_types[relation.relation_type] -= 1
        if not self.relation_types[relation.relation_type]:
            del self.relation_types[relation.relation_type]

    # ------------------------------------------------------------ mutation

    def apply(self, update: ManageGraph) -> Applied:
        """Apply ``update`` in the fixed order; errors are collected, the rest applies."""
        done = Applied()
        added: dict[str, Entity] = {}
        modified: dict[str, Entity] = {}
        relations_added: dict[UUID, Relation] = {}
        removed_entities: list[UUID] = []
        removed_relations: dict[UUID, None] = {}
        embed: dict[str, None] = {}

        for create in update.create_entities:
            if create.name in self.entities:
                done.errors.append(f"Entity '{create.name}' already exists")
                continue
            entity = Entity(**create.model_dump())
            self._put_entity(entity)
            added[entity.name] = entity
            embed[entity.name] = None

        for rc in update.create_relations:
            if rc.from_entity not in self.entities:
                done.errors.append(
                    f"Relation references non-existent from_entity '{rc.from_entity}'"
                )
                continue
            if rc.to_entity not in self.entities:
                done.errors.append(f"Relation references non-existent to_entity '{rc.to_entity}'")
                continue
            if (rc.from_entity, rc.to_entity, rc.relation_type) in self.triples:
                continue  # a repeated triple is skipped without a word
            relation = Relation(**rc.model_dump())
            self._put_relation(relation)
            relations_added[relation.id] = relation

        for change in update.update_entities:
            old = self.entities.get(change.name)
            if old is None:
                done.errors.append(f"Entity '{change.name}' not found for update")
                continue
            fields: dict[str, object] = {}
            if change.description is not None and change.description != old.description:
                fields["description"] = change.description
            if change.entity_type is not None and change.entity_type != old.entity_type:
                fields["entity_type"] = change.entity_type
            if change.is_root is not None and change.is_root != old.is_root:
                fields["is_root"] = change.is_root
            observations = list(old.observations)
            if change.add_observations:
                observations += change.add_observations
            if change.remove_observations:
                gone = set(change.remove_observations)
                observations = [o for o in observations if o not in gone]
            if observations != old.observations:
                fields["observations"] = observations
            if not fields:
                continue
            new = old.model_copy(update=fields)
            self._put_entity(new)
            if "description" in fields:
                embed[new.name] = None
            if new.name in added:
                added[new.name] = new
            else:
                modified[new.name] = new

        for rd in update.delete_relations:
            rid = self.triples.get((rd.from_entity, rd.to_entity, rd.relation_type))
            if rid is None:
                done.errors.append(
                    f"Relation ({rd.from_entity} -> {rd.to_entity} [{rd.relation_type}]) not found"
                )
                continue
            self._drop_relation(self.relations[rid])
            if relations_added.pop(rid, None) is None:
                removed_relations[rid] = None

        for name in update.delete_entities:
            doomed = self.entities.get(name)
            if doomed is None:
                done.errors.append(f"Entity '{name}' not found for deletion")
                continue
            for rid in list(self.adjacent.get(name, {})):
                self._drop_relation(self.relations[rid])
                if relations_added.pop(rid, None) is None:
                    removed_relations[rid] = None
            self._drop_entity(doomed)
            embed.pop(name, None)
            modified.pop(name, None)
            if added.pop(name, None) is None:
                removed_entities.append(doomed.id)

        done.embed_entities = [self.entities[n] for n in embed if n in self.entities]
        done.embed_relations = [r for r in relations_added.values() if r.description.strip()]
        done.unindex = [str(i) for i in removed_entities] + [str(i) for i in removed_relations]
        done.event = KnowledgeGraphStateEvent(
            entities_added=[e.model_copy(deep=True) for e in added.values()],
            entities_modified=[e.model_copy(deep=True) for e in modified.values()],
            entities_removed=removed_entities,
            relations_added=[r.model_copy(deep=True) for r in relations_added.values()],
            relations_removed=list(removed_relations),
        )
        return done

    def replay(self, event: KnowledgeGraphStateEvent) -> None:
        """Apply a logged state event (restore): removals, then additions and changes."""
        for rid in event.relations_removed:
            relation = self.relations.get(rid)
            if relation is not None:
                self._drop_relation(relation)
        for uid in event.entities_removed:
            entity = self.by_id.get(uid)
            if entity is not None:
                for rel_id in list(self.adjacent.get(entity.name, {})):
                    self._drop_relation(self.relations[rel_id])
                self._drop_entity(entity)
        for entity in [*event.entities_added, *event.entities_modified]:
            self._put_entity(entity)
        for relation in event.relations_added:
            self._put_relation(relation)

    # ---------------------------------------------------------------- reads

    def neighbours(self, name: str, relation_types: set[str] | None = None) -> list[str]:
        """Entities one relation away from ``name`` (either direction), first seen first."""
        found: dict[str, None] = {}
        for rid in self.adjacent.get(name, {}):
            relation = self.relations[rid]
            if relation_types and relation.relation_type not in relation_types:
                continue
            other = relation.to_entity if relation.from_entity == name else relation.from_entity
            found[other] = None
        return list(found)

    def _bfs(
        self,
        starts: list[str],
        depth: int,
        relation_types: set[str] | None,
        blocked: set[str] | None = None,
    ) -> set[str]:
        seen = {s for s in starts if s in self.entities}
        frontier = deque((s, 0) for s in seen)
        while frontier:
            name, level = frontier.popleft()
            if level >= depth:
                continue
            for other in self.neighbours(name, relation_types):
                if other in seen or (blocked and other in blocked):
                    continue
                seen.add(other)
                frontier.append((other, level + 1))
        return seen

    def _view(self, names: set[str]) -> GraphView:
        return GraphView(
            entities=[e for n, e in self.entities.items() if n in names],
            relations=[
                r
                for r in self.relations.values()
                if r.from_entity in names and r.to_entity in names
            ],
        )

    def get_graph(self, query: GetGraphQuery | None) -> GraphView:
        """The subgraph ``query`` selects (path, then roots, then names, else all)."""
        if query is None:
            return GraphView(
                entities=list(self.entities.values()), relations=list(self.relations.values())
            )
        types = set(query.relation_types) or None
        if query.path:
            if not query.entity_names or query.entity_names[0] not in self.entities:
                return GraphView()
            trail = [query.entity_names[0]]
            for step in query.path:
                here = trail[-1]
                if (here, step.to_entity, step.relation_type) not in self.triples:
                    return GraphView()
                trail.append(step.to_entity)
            depth = 1 if query.depth is None else query.depth
            reached = self._bfs([trail[-1]], depth, types, blocked=set(trail[:-1]))
            return self._view(reached | set(trail))
        if query.roots_only:
            if not self.roots:
                return GraphView()
            depth = 0 if query.depth is None else query.depth
            return self._view(self._bfs(list(self.roots), depth, types))
        if query.entity_names:
            depth = 1 if query.depth is None else query.depth
            return self._view(self._bfs(query.entity_names, depth, types))
        return GraphView(
            entities=list(self.entities.values()), relations=list(self.relations.values())
        )

    def keyword_hits(
        self, query: str, limit: int | None = None
    ) -> tuple[list[Entity], list[Relation]]:
        """Entities then relations whose fields hold every word of ``query``.

        With ``limit``, the first ``limit`` of that list (entities first), found
        without looking at the rest.
        """
        entity_ids = self.entity_words.search(query, limit)
        rest = None if limit is None else limit - len(entity_ids)
        relation_ids = self.relation_words.search(query, rest) if rest != 0 else []
        return [self.by_id[k] for k in entity_ids], [self.relations[k] for k in relation_ids]

    def shortest_path(self, start: str, goal: str) -> list[Entity | Relation] | None:
        """A shortest alternating path entity, relation, entity... (either direction)."""
        if start not in self.entities or goal not in self.entities:
            return None
        back: dict[str, tuple[str, UUID] | None] = {start: None}
        frontier = deque([start])
        while frontier:
            name = frontier.popleft()
            if name == goal:
                break
            for rid in self.adjacent.get(name, {}):
                relation = self.relations[rid]
                other = relation.to_entity if relation.from_entity == name else relation.from_entity
                if other not in back:
                    back[other] = (name, rid)
                    frontier.append(other)
        if goal not in back:
            return None
        steps: list[Entity | Relation] = [self.entities[goal]]
        cursor = back[goal]
        while cursor is not None:
            previous, rid = cursor
            steps += [self.relations[rid], self.entities[previous]]
            cursor = back[previous]
        steps.reverse()
        return steps
