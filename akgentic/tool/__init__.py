"""ToolCard contracts and the machinery that turns tool cards into agent capabilities.

Cards expose capabilities on channels (tool calls, prompt text, context state and
slash commands). This package root will become the stable façade; for now import
from the submodules (``akgentic.tool.errors``, ``akgentic.tool.commands``).
"""
