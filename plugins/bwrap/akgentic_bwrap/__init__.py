"""The bubblewrap sandbox backend of akgentic (``akgentic-bwrap``).

:class:`BwrapBackend` implements :class:`akgentic.sandbox.SandboxBackend`; the plugin
registers it as ``bwrap``. See the package README and ``docs/sandbox.md``.
"""

from __future__ import annotations

from akgentic_bwrap.availability import bwrap_unavailable_reason
from akgentic_bwrap.backend import BwrapBackend

__all__ = ["BwrapBackend", "bwrap_unavailable_reason"]
