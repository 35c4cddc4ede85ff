"""The pluggy markers of the ``akgentic`` project.

Plugins decorate their hook functions with :data:`hookimpl`; the kernel marks
its hook specifications with :data:`hookspec`.
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "akgentic"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]
