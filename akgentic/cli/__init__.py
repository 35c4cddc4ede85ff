"""The ``akgentic`` command line.

The root application holds the kernel's own commands (``plugins``, ``demo``);
every loaded plugin may add more through the ``akgentic_cli`` hook. The listing
command works even when a plugin is broken, so the command that shows what to
disable is never the one that crashes.
"""

from __future__ import annotations

from akgentic.cli.app import build_app, main

__all__ = ["build_app", "main"]
