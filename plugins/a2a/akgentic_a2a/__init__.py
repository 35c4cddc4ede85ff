"""A2A for akgentic teams.

- every team running in ``akgentic serve`` is an A2A agent (hook ``akgentic_web_routes``,
  prefix ``/a2a``): its card at ``/a2a/{team_id}/.well-known/agent-card.json``, JSON-RPC
  and streaming at ``/a2a/{team_id}``; tasks are read from the team's event log;
- :class:`~akgentic_a2a.remote.RemoteAgent`: a remote A2A agent as a team member.

Names are imported lazily so that plugin discovery stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from akgentic_a2a.messages import A2ATurn
    from akgentic_a2a.remote import RemoteAgent, RemoteConfig, RemoteState

__all__ = ["A2ATurn", "RemoteAgent", "RemoteConfig", "RemoteState"]

_HOMES = {
    "A2ATurn": "akgentic_a2a.messages",
    "RemoteAgent": "akgentic_a2a.remote",
    "RemoteConfig": "akgentic_a2a.remote",
    "RemoteState": "akgentic_a2a.remote",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'akgentic_a2a' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(home), name)
