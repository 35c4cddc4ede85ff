"""akgentic: teams of LLM agents running as event-sourced actors.

Importing this package is cheap on purpose: it loads no plugin and no LLM or
backend library. Subpackages are imported on demand (``akgentic.core``,
``akgentic.tool``, ``akgentic.team``, ...), and plugins are discovered the first
time something asks the plugin registry for them.
"""

# The distribution's only version: pyproject.toml reads it from here, and
# `akgentic version` / `akgentic --version` print it. Keep it a plain string literal.
__version__ = "0.1.0"

__all__ = ["__version__"]
