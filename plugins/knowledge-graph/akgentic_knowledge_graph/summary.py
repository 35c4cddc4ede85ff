"""``KnowledgeGraphSummaryState``: counts, types and roots, never the entities themselves."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from akgentic.plugin_api import ContextState

__all__ = ["MAX_ROOT_DESCRIPTION", "MAX_TYPES_LISTED", "KnowledgeGraphSummaryState", "RootRow"]

MAX_ROOT_DESCRIPTION = 200
MAX_TYPES_LISTED = 50
FOOTER = "Use the get_graph tool to explore the full graph or subgraphs."


class RootRow(BaseModel):
    """A root entity as the summary shows it."""

    model_config = ConfigDict(frozen=True)

    name: str
    entity_type: str
    description: str = ""


def short_description(text: str) -> str:
    """A root description cut to :data:`MAX_ROOT_DESCRIPTION` characters plus an ellipsis."""
    return text if len(text) <= MAX_ROOT_DESCRIPTION else text[:MAX_ROOT_DESCRIPTION] + "…"


def _types(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_TYPES_LISTED])
    more = len(names) - MAX_TYPES_LISTED
    return f"{shown} (+{more} more)" if more > 0 else shown


def _moved(label: str, now: int, before: int) -> str:
    delta = now - before
    return f"{label}: {now} ({'+' if delta > 0 else '-'}{abs(delta)})"


class KnowledgeGraphSummaryState(ContextState):
    """What the model keeps seeing of the graph: sized by types and roots."""

    entity_count: int = 0
    relation_count: int = 0
    entity_types: list[str] = Field(default_factory=list)
    relation_types: list[str] = Field(default_factory=list)
    roots: list[RootRow] = Field(default_factory=list)
    include_schema: bool = True
    include_roots: bool = True

    def render_full(self) -> str:
        if self.entity_count == 0:
            return "Knowledge graph is empty."
        lines = [
            "**Knowledge Graph Summary:**",
            f"Entities: {self.entity_count} | Relations: {self.relation_count}",
        ]
        if self.include_schema:
            lines.append(f"Entity types: {_types(self.entity_types)}")
            if self.relation_types:
                lines.append(f"Relation types: {_types(self.relation_types)}")
        if self.include_roots and self.roots:
            lines.append("Root entities:")
            lines += [f"- {r.name} ({r.entity_type}): {r.description}" for r in self.roots]
        lines += ["", FOOTER]
        return "\n".join(lines)

    def render_delta(self, previous: KnowledgeGraphSummaryState) -> str | None:
        parts: list[str] = []
        counts = []
        if self.entity_count != previous.entity_count:
            counts.append(_moved("Entities", self.entity_count, previous.entity_count))
        if self.relation_count != previous.relation_count:
            counts.append(_moved("Relations", self.relation_count, previous.relation_count))
        if counts:
            parts.append(" | ".join(counts) + ".")
        if self.include_schema:
            for label, now, before in (
                ("entity", self.entity_types, previous.entity_types),
                ("relation", self.relation_types, previous.relation_types),
            ):
                old, new = set(before), set(now)
                parts += [f"New {label} type: {t}." for t in now if t not in old]
                parts += [f"Removed {label} type: {t}." for t in before if t not in new]
        if self.include_roots:
            old_roots = {r.name: r for r in previous.roots}
            new_roots = {r.name: r for r in self.roots}
            for root in self.roots:
                was = old_roots.get(root.name)
                if was is None:
                    parts.append(f"New root: {root.name} ({root.entity_type}).")
                elif was != root:
                    parts.append(
                        f"Changed root: {root.name} ({root.entity_type}): {root.description}."
                    )
            parts += [f"Removed root: {r.name}." for r in previous.roots if r.name not in new_roots]
        return " ".join(parts) if parts else None
