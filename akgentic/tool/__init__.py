"""ToolCard contracts: how capabilities are declared, wired and served to agents.

This package root is the stable surface for card authors: everything in
:mod:`akgentic.tool.core` is re-exported here. Concrete cards are plugins; their
classes are reachable here too, lazily: ``from akgentic.tool import ShoutTool`` asks
the plugin registry for a card whose class (or registered name) is ``ShoutTool`` and
raises an ImportError naming the distribution to install when none is.
"""

from __future__ import annotations

from typing import Any

from akgentic.tool import core as _core
from akgentic.tool.core import *  # noqa: F403  (the card-author surface, re-exported whole)
from akgentic.tool.lazy import CardNotInstalledError, resolve_card_attribute

__all__ = ["CardNotInstalledError"]
__all__ += _core.__all__


def __getattr__(name: str) -> Any:
    """Resolve a registered card class (``ShoutTool``) or name (``shout``) lazily."""
    return resolve_card_attribute(__name__, name)
