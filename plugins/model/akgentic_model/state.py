"""``ActiveModelState``: which model answers, as context state the model keeps seeing.

The class path ``akgentic_model.state.ActiveModelState`` is stored in agents'
context baselines: never move or rename it.
"""

from __future__ import annotations

from akgentic.plugin_api import ContextState

__all__ = ["ActiveModelState"]


class ActiveModelState(ContextState):
    """The roster key of the model in force.

    Attributes:
        key: ``"<provider>:<model>"``.
    """

    key: str

    def render_full(self) -> str:
        return f"**Active model:** {self.key}"

    def render_delta(self, previous: ActiveModelState) -> str | None:
        if previous.key == self.key:
            return None
        return f"**Active model changed:** {previous.key} → {self.key}"
