"""The ``model`` card: list and switch an agent's models at run time.

Its names are also importable from the kernel module ``akgentic.tool.model``, which
forwards what it lacks to this package (``from akgentic.tool.model import
SwitchModel``); the kernel's ``ModelRow`` and ``ModelSwitchToolObserver`` are
re-exported here.
"""

from akgentic.plugin_api import ModelRow, ModelSwitchToolObserver
from akgentic_model.card import (
    NO_ROSTER,
    ActiveModel,
    ListModels,
    ModelTool,
    SwitchModel,
    render_rows,
    render_tokens,
)
from akgentic_model.state import ActiveModelState

__all__ = [
    "NO_ROSTER",
    "ActiveModel",
    "ActiveModelState",
    "ListModels",
    "ModelRow",
    "ModelSwitchToolObserver",
    "ModelTool",
    "SwitchModel",
    "render_rows",
    "render_tokens",
]
