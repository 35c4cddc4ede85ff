"""Runtime model switching: the contract a model-switching card needs from its agent."""

from akgentic.tool.model.observer import ModelRow, ModelSwitchToolObserver

__all__ = ["ModelRow", "ModelSwitchToolObserver"]
