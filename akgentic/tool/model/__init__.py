"""Runtime model switching: the contract a model-switching card needs from its agent.

This is a kernel module and is never shadowed by a plugin. The ``model`` card
(``akgentic-model``) declares this path in its registration record, so names this
module lacks (``ModelTool``, ``SwitchModel``, ``ListModels``...) are forwarded to
that plugin's package: ``from akgentic.tool.model import SwitchModel`` works when it
is installed and names the distribution when it is not.
"""

from typing import Any

from akgentic.tool.model.observer import ModelRow, ModelSwitchToolObserver

__all__ = ["ModelRow", "ModelSwitchToolObserver"]


def __getattr__(name: str) -> Any:
    """Forward a name this module lacks to the plugin serving ``akgentic.tool.model``."""
    from akgentic.tool.aliases import forward_attribute

    return forward_attribute(__name__, name)
