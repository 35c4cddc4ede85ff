"""The ``metadata`` card: the team's business metadata as a system-prompt block.

Also importable as ``akgentic.tool.metadata`` (a seed import path this plugin serves).
"""

from akgentic_metadata.card import MetadataTool, RenderMetadata
from akgentic_metadata.template import TemplateError, placeholders

__all__ = ["MetadataTool", "RenderMetadata", "TemplateError", "placeholders"]
