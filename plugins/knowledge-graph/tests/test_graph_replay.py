"""Restore from the log alone: a graph past its checkpoint is rebuilt from its events."""

from __future__ import annotations

from typing import Any

from akgentic_knowledge_graph import (
    GRAPH_ACTOR_NAME,
    KnowledgeGraphConfig,
    KnowledgeGraphState,
    ManageGraph,
)
from akgentic_knowledge_graph.actor import KnowledgeGraphActor

from akgentic.core.messages.orchestrator import EventMessage
from akgentic.core.proxy import ProxyWrapper
from akgentic.testing.waiting import wait_until

from .test_graph import GRAPH, Events


def test_a_graph_without_a_checkpoint_is_rebuilt_from_its_state_events(team: Any) -> None:
    events = Events()
    team.proxy.subscribe(events)
    config = KnowledgeGraphConfig(name=GRAPH_ACTOR_NAME, role="ToolActor")
    graph = ProxyWrapper(
        team.proxy.getChildrenOrCreate(KnowledgeGraphActor, config=config), timeout=30
    )
    graph.update_graph(ManageGraph.model_validate(GRAPH))
    graph.update_graph(
        ManageGraph.model_validate(
            {"delete_entities": ["Acme"], "update_entities": [{"name": "Zed", "is_root": True}]}
        )
    )
    wait_until(lambda: len(events.seen) == 2, timeout=30)
    expected = graph.get_graph(None)

    fresh_config = KnowledgeGraphConfig(name="#GraphReplay", role="ToolActor")
    created = team.proxy.createActor(KnowledgeGraphActor, config=fresh_config)
    fresh = ProxyWrapper(created, timeout=30)
    fresh.init_state(KnowledgeGraphState())
    fresh.init_llm_context([EventMessage(event=e) for e in events.seen])
    assert fresh.get_graph(None) == expected
    assert fresh.state.state_event_seq == 2
    assert [r.name for r in fresh.summary(True, True).roots] == ["Zed"]
