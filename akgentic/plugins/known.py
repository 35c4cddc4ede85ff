"""Names of well-known plugins and the distributions that provide them.

Used only to make "unknown name" errors actionable: when a lookup misses a name
listed here, the error says which distribution to ``pip install``.
"""

from __future__ import annotations

__all__ = ["KNOWN_PROVIDERS", "provider_hint"]

KNOWN_PROVIDERS: dict[str, dict[str, str]] = {
    "tool_cards": {
        "workspace": "akgentic-workspace",
        "planning": "akgentic-planning",
        "knowledge_graph": "akgentic-knowledge-graph",
        "search": "akgentic-search",
        "mcp": "akgentic-mcp",
        "notification": "akgentic-notification",
        "skill": "akgentic-skill",
        "metadata": "akgentic-metadata",
        "model": "akgentic-model",
        "shout": "akgentic-hello",
    },
    "event_stores": {
        "postgres": "akgentic-postgres",
        "postgresql": "akgentic-postgres",
        "mongo": "akgentic-mongo",
        "mongodb": "akgentic-mongo",
        "mongodb+srv": "akgentic-mongo",
    },
    "vector_backends": {"qdrant": "akgentic-qdrant", "weaviate": "akgentic-weaviate"},
    "sandbox_backends": {"bwrap": "akgentic-bwrap", "docker": "akgentic-docker"},
    "embedders": {},
    "runtimes": {"nats": "akgentic-nats"},
    "agent_classes": {},
    "message_types": {},
}


def provider_hint(kind: str, name: str) -> str:
    """A ``pip install`` suggestion for a missing name, or an empty string."""
    distribution = KNOWN_PROVIDERS.get(kind, {}).get(name)
    if distribution is None:
        return ""
    return f"It is provided by {distribution}: pip install {distribution}"
