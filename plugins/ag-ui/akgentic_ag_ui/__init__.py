"""AG-UI for akgentic teams: ``POST /ag-ui/{team_id}`` in ``akgentic serve``.

A run of a team is streamed as AG-UI 1.0 events produced from the team's stored
event log (:mod:`akgentic_ag_ui.projection`), served by :mod:`akgentic_ag_ui.app`
and registered by :mod:`akgentic_ag_ui.plugin`. See ``docs/ag-ui.md``.
"""

from __future__ import annotations

__all__: list[str] = []
