"""Documents as text for the index, through MarkItDown (the ``docs`` extra) only.

Without the extra a document is counted as needing it (the index call's install
tail); no other extractor stands in, so what the index holds is what the read path
shows. The text is cached in the read path's ``<meta>/cache/documents`` under the
same key.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from akgentic_workspace.rag.errors import SourceError

__all__ = ["DOCS_HINT", "docs_available", "extract_text"]

DOCS_HINT = 'documents need the docs extra: pip install "akgentic-workspace[docs]"'


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def docs_available(ext: str) -> bool:
    """Whether a document of type ``ext`` can be extracted here (MarkItDown is installed)."""
    del ext  # every document type goes through the same extractor
    return _has("markitdown")


def extract_text(cache_dir: Path, key: str, ext: str, data: bytes) -> str:
    """The document's text; SourceError (permanent) when it has none or cannot be read."""
    if not _has("markitdown"):
        raise SourceError(DOCS_HINT, True)
    from akgentic.plugin_api import RetriableError
    from akgentic_workspace.documents import extract_document

    try:
        text = extract_document(cache_dir, key, ext, data, enabled=True, force=False)
    except RetriableError as error:
        raise SourceError(str(error), True) from None
    if text.startswith("<!-- markitdown: no text extracted -->"):
        raise SourceError("no text could be extracted", True)
    return text
